// Uneven decompositions (docs/halo.md, "Uneven interiors"): ranks whose interiors differ, where
// a rank's extent in dimension k depends only on its coordinate in dimension k (a block
// decomposition of a global array, as MPI_Dims_create users and PETSc's DMDA make). Every rank
// plans its own array with the algorithm and dimension order chosen on one description all
// ranks share (HaloPlanOptions::choice_interior, the largest extent per dimension), so
// neighbouring ranks' messages match part for part: along a dimension a message does not move,
// sender and receiver share the coordinate and hence the extent; along the others its parts
// span ghost widths, which every rank shares.
//
//   Result<std::vector<int>> n = block_extents(100, 3);   // {34, 33, 33}
//   HaloPlanOptions o;
//   o.choice_interior = std::vector<int>{34, 34};           // the largest extent per dimension
//   Result<ir::halo::HaloPlan> mine = make_halo_plan(own, o);  // own.array.interior = {33, 34}
//   // the same for the rank at some coordinates, in one call: plan_block (block_plan.h)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/halo/description.h"
#include "ir/halo/plan.h"
#include "ir/result.h"

namespace cartplan::engine::halo {

// The extents of `parts` consecutive blocks of `global` cells: global / parts each, the first
// global % parts blocks one cell more. Errors: parts < 1, global < parts (an empty block), an
// extent above ir::halo::kMaxHaloExtent.
Result<std::vector<int>> block_extents(std::int64_t global, int parts);

// The interior of the rank at `coords` when dimension k is cut into the blocks extents[k]
// (extents[k].size() == dims[k]).
std::vector<int> interior_at(const std::vector<std::vector<int>>& extents, const std::vector<int>& coords);

// `like`'s algorithm in its dimension order, planned for h (a rank's own array, with the stencil
// `like` was planned for). Errors: dimwise in an order h's stencil is not prefix-closed in.
Result<ir::halo::HaloPlan> plan_like(const HaloDescription& h, const ir::halo::HaloPlan& like);

// What the plans of ranks whose interiors alone differ have in common, as text: the algorithm,
// dimension order, ghost widths, element size, memory order, stencil, temps' count, and per
// phase its dimension and per message its shift and tag. Not the parts: split cuts a temp's
// cells into boxes at positions that depend on the extents, so ranks at other coordinates may
// send a message in more or fewer parts (a rank and its neighbour along the message's shift share
// the extents that decide the cut, so they match). Ranks agree on a fingerprint of it where they
// agreed on the plan's JSON before.
std::string plan_signature(const ir::halo::HaloPlan& plan);

}  // namespace cartplan::engine::halo
