// Planners: turn a neighbourhood into a plan (seed 000, Sect. 3).
//  - plan_direct:    one round per non-zero offset (Listing 4), all rounds in one phase.
//  - plan_combining: one phase per dimension in dim_order, one round per distinct non-zero
//    coordinate value; alltoall routes each block along its non-zero coordinates
//    (Algorithm 1, ping-pong between two temp slots, last hop writes the recv block);
//    allgather routes along the prefix tree of the offsets (Algorithm 2).
// Both run in O(t*d) (plus sorting) and produce plans that pass ir::verify(). Their stats hold
// t, rounds, volume, phase_rounds; the optimizer (optimizer.h) adds the cost prediction.
//
//   ir::Plan p = plan_combining(ir::Op::kAllgather, nbh, auto_dim_order(nbh));
#pragma once

#include <vector>

#include "engine/neighborhood.h"
#include "ir/plan.h"
#include "ir/result.h"

namespace cartplan::engine {

ir::Plan plan_direct(ir::Op op, const Neighborhood& nbh);
// dim_order must be a permutation of 0..d-1 (see check_dim_order).
ir::Plan plan_combining(ir::Op op, const Neighborhood& nbh, const std::vector<int>& dim_order);

// Increasing C_k, ties by dimension index (the papers' choice for allgather trees).
std::vector<int> auto_dim_order(const Neighborhood& nbh);
std::vector<int> natural_dim_order(int ndims);
// Error unless `order` is a permutation of 0..ndims-1.
Result<std::vector<int>> check_dim_order(const std::vector<int>& order, int ndims);

}  // namespace cartplan::engine
