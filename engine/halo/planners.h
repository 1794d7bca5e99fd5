// Halo planners (docs/halo.md): turn a halo description into a rank-independent halo plan
// (ir/halo/plan.h). Every plan fills exactly the required ghost cells and passes
// ir::halo::verify(); on meshes bind() drops the parts whose cells do not exist.
//  - direct:    one message per stencil offset t (shift -t): the neighbour's interior slab
//               straight into ghost region t. One phase; each ghost cell travels once.
//  - combining: seed 000's Algorithm 1 (engine::plan_combining, alltoall) with each region as
//               a block: blocks forwarded dimension by dimension through temps shaped like their
//               region. Corners travel several hops, in their own parts.
//  - dimwise:   one phase per dimension in dim_order, two messages each (fewer where the stencil
//               lacks a direction). The message of phase k towards side s carries the receiver's
//               ghost regions whose last non-zero coordinate (in dim_order) is k: the sender's
//               slab along k, extended over the ghost cells earlier phases delivered to it. Each
//               cell is sent once; no temps. Requires prefix_closed(): every region's prefix
//               (its last non-zero coordinate zeroed) is in the stencil or zero (box, Moore, von
//               Neumann, and any union of them).
//  - split:     dimwise for any stencil: where a prefix is not in the stencil, the cells in
//               transit go to a temp that holds just the cells later phases forward (the union
//               of the needed slabs, cut into boxes by the regions that need them). Cells that
//               several neighbours need travel once along one tree (seed 000 Sect. 3.4's
//               allgather-like sharing); the temps add wire cells.
//  - hybrid:    dimwise for the largest prefix-closed part of the stencil, the other regions
//               direct in the first phase: no temps, each cell sent once, more messages.
//
//   HaloPlan p = plan_halo_dimwise(h, {0, 1, 2});   // h from describe_halo
#pragma once

#include <vector>

#include "engine/halo/description.h"
#include "ir/halo/plan.h"

namespace cartplan::engine::halo {

ir::halo::HaloPlan plan_halo_direct(const HaloDescription& h);
// dim_order: a permutation of the dimensions (for all planners below).
ir::halo::HaloPlan plan_halo_combining(const HaloDescription& h, const std::vector<int>& dim_order);
// Requires prefix_closed(h, dim_order).
ir::halo::HaloPlan plan_halo_dimwise(const HaloDescription& h, const std::vector<int>& dim_order);
ir::halo::HaloPlan plan_halo_split(const HaloDescription& h, const std::vector<int>& dim_order);
ir::halo::HaloPlan plan_halo_hybrid(const HaloDescription& h, const std::vector<int>& dim_order);

// Every non-empty region's prefix in dim_order is zero or a non-empty region of the stencil.
bool prefix_closed(const HaloDescription& h, const std::vector<int>& dim_order);
// The order seed 000 routes the combining plan in (increasing C_k, ties by index).
std::vector<int> combining_dim_order(const HaloDescription& h);

}  // namespace cartplan::engine::halo
