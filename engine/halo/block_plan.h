// One rank's plan in a block decomposition (engine/halo/uneven.h): its own interior, planned in
// the choice every rank shares. The one place that plan is made: the CLI's `cartplan halo
// plan/rank/simulate --global` and the simulator's simulate_halo_blocks call it, so the plans the
// CLI prints are the plans the simulator checks. (Not in uneven.h: make_halo_plan's library
// depends on uneven's.)
//
//   const std::vector<std::vector<int>> extents = {{4, 3, 3}, {5, 4}};  // block_extents(10, 3), (9, 2)
//   largest_blocks(extents);                                             // {4, 5}
//   Result<ir::halo::HaloPlan> p = plan_block(like, extents, {2, 1}, HaloPlanOptions{});  // interior {3, 4}
#pragma once

#include <vector>

#include "engine/halo/choose.h"
#include "engine/halo/description.h"
#include "ir/halo/plan.h"
#include "ir/result.h"

namespace cartplan::engine::halo {

// The largest extent per dimension (the shared description's interior, choice_interior).
// Every extents[k] must be non-empty (a bug otherwise).
std::vector<int> largest_blocks(const std::vector<std::vector<int>>& extents);

// The plan of the rank at `coords` when dimension k is cut into the blocks extents[k]: `like`
// (ghost widths, element size, memory order, stencil, grid; its interior is ignored) with the
// interior interior_at(extents, coords), planned by make_halo_plan with options.choice_interior
// = largest_blocks(extents). Errors: extents or coords of another dimension than like's array, an
// empty extents[k], a coordinate outside extents[k], extents that do not fit like.grid (dims[k]
// blocks in dimension k), the rank's own description (e.g. a ghost side wider than its block),
// make_halo_plan's.
Result<ir::halo::HaloPlan> plan_block(const HaloDescription& like, const std::vector<std::vector<int>>& extents, const std::vector<int>& coords,
                                      HaloPlanOptions options);

}  // namespace cartplan::engine::halo
