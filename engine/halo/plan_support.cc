// The halo planners' shared frame, finish and direct messages.
#include "engine/halo/plan_support.h"

namespace cartplan::engine::halo {

namespace ih = ir::halo;

ih::HaloPlanParts plan_frame(const HaloDescription& h, ih::HaloAlgorithm algorithm, const std::vector<int>& dim_order) {
  ih::HaloPlanParts p;
  p.algorithm = algorithm;
  p.array = h.array;
  p.neighborhood = h.neighborhood;
  p.dim_order = dim_order;
  return p;
}

ih::HaloPlan finish_halo_plan(ih::HaloPlanParts parts) {
  int tag = 0;
  for (ih::Phase& ph : parts.phases) {
    for (ih::Message& m : ph.messages) m.tag = tag++;
  }
  parts.stats = ih::derived_stats(parts);
  return ih::HaloPlan(std::move(parts));
}

ih::Part array_part(const ih::Box& from, const ih::Box& to) {
  return ih::Part{ih::Place{ih::Buffer::kArray, 0, from.lo}, ih::Place{ih::Buffer::kArray, 0, to.lo}, to.extent};
}

ih::Message direct_message(const ih::ArrayShape& array, const ir::Offset& t) {
  ir::Offset shift = t;
  for (int& c : shift) c = -c;
  return ih::Message{shift, 0, {array_part(ih::source_region(array, t), ih::ghost_region(array, t))}};
}

}  // namespace cartplan::engine::halo
