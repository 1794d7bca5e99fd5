// Uneven decompositions: block extents, a rank's own plan in the shared choice, plan signatures.
#include "engine/halo/uneven.h"

#include "engine/halo/planners.h"
#include "ir/plan.h"  // ir::to_string of an offset or order

namespace cartplan::engine::halo {

namespace ih = ir::halo;

Result<std::vector<int>> block_extents(std::int64_t global, int parts) {
  if (parts < 1) return fail("cannot cut " + std::to_string(global) + " cells into " + std::to_string(parts) + " blocks");
  if (global < parts)
    return fail(std::to_string(global) + " cells cut into " + std::to_string(parts) + " blocks leave a block empty (every interior extent is at least 1)");
  const std::int64_t each = global / parts, more = global % parts;
  if (each + (more > 0 ? 1 : 0) > ih::kMaxHaloExtent)
    return fail(std::to_string(global) + " cells cut into " + std::to_string(parts) + " blocks give blocks larger than " + std::to_string(ih::kMaxHaloExtent));
  std::vector<int> out(static_cast<std::size_t>(parts));
  for (int c = 0; c < parts; ++c) out[static_cast<std::size_t>(c)] = static_cast<int>(each + (c < more ? 1 : 0));
  return out;
}

std::vector<int> interior_at(const std::vector<std::vector<int>>& extents, const std::vector<int>& coords) {
  std::vector<int> n;
  for (std::size_t k = 0; k < extents.size(); ++k) n.push_back(extents[k].at(static_cast<std::size_t>(coords.at(k))));
  return n;
}

Result<ih::HaloPlan> plan_like(const HaloDescription& h, const ih::HaloPlan& like) {
  const std::vector<int>& order = like.dim_order();
  switch (like.algorithm()) {
    case ih::HaloAlgorithm::kDirect: return plan_halo_direct(h);
    case ih::HaloAlgorithm::kCombining: return plan_halo_combining(h, order);
    case ih::HaloAlgorithm::kDimwise:
      if (!prefix_closed(h, order)) return fail("dimwise: the stencil is not prefix-closed in the order " + ir::to_string(order));
      return plan_halo_dimwise(h, order);
    case ih::HaloAlgorithm::kSplit: return plan_halo_split(h, order);
    case ih::HaloAlgorithm::kHybrid: return plan_halo_hybrid(h, order);
  }
  return fail("unknown halo algorithm");
}

std::string plan_signature(const ih::HaloPlan& plan) {
  const ih::ArrayShape& a = plan.array();
  std::string s = std::string(ih::to_string(plan.algorithm())) + " order " + ir::to_string(plan.dim_order()) + " ghost " + ir::to_string(a.ghost_lo) + ir::to_string(a.ghost_hi) +
                  " elem " + std::to_string(a.elem_bytes) + " " + ih::to_string(a.order) + " temps " + std::to_string(plan.temps().size()) + " stencil";
  for (const ir::Offset& t : plan.neighborhood()) s += " " + ir::to_string(t);
  for (const ih::Phase& f : plan.phases()) {
    s += "\nphase " + std::to_string(f.dim);
    for (const ih::Message& m : f.messages) s += " | " + ir::to_string(m.shift) + " tag " + std::to_string(m.tag);
  }
  return s;
}

}  // namespace cartplan::engine::halo
