// The direct halo planner: one message per non-empty ghost region, all in one phase.
#include "engine/halo/planners.h"
#include "engine/halo/plan_support.h"
#include "engine/planner.h"

namespace cartplan::engine::halo {

namespace ih = ir::halo;

ih::HaloPlan plan_halo_direct(const HaloDescription& h) {
  ih::HaloPlanParts p = plan_frame(h, ih::HaloAlgorithm::kDirect, natural_dim_order(h.array.ndims));
  ih::Phase phase{ih::Phase::kAllDims, {}};
  for (const ir::Offset& t : nonempty_regions(h)) phase.messages.push_back(direct_message(h.array, t));
  if (!phase.messages.empty()) p.phases.push_back(std::move(phase));
  return finish_halo_plan(std::move(p));
}

}  // namespace cartplan::engine::halo
