// Planners: turn a neighbourhood into a plan (seed 000, Sect. 3).
//  - plan_direct:    one round per non-zero offset (Listing 4), all rounds in one phase.
//  - plan_combining: one phase per dimension in dim_order, one round per distinct non-zero
//    coordinate value; alltoall routes each block along its non-zero coordinates
//    (Algorithm 1, ping-pong between two temp slots, last hop writes the recv block);
//    allgather routes along the prefix tree of the offsets (Algorithm 2).
// Reductions (cartplan.plan/2):
//  - direct allreduce / reduce_scatter: one round per distinct non-zero offset, each received
//    vector reduced into recv[0]; the zero offset is a local reduction.
//  - combining allreduce over a product neighbourhood (every offset distinct and N = S_0 x ..
//    x S_{d-1}, e.g. boxes and Moore): one phase per dimension with a non-zero value, phase k
//    sums along dimension k: one round of one vector per non-zero value, so C rounds and
//    volume C; the own term (0 in S_k) is a local reduction at the end of the phase.
//  - combining allreduce otherwise, and reduce_scatter: partial sums along the prefix tree of
//    the offsets, routed in dim_order; contributions (or blocks) with the same remaining
//    route to the same final target are merged where they meet, so C rounds and at most
//    sum z_i vectors.
//  - rooted ops run the plan of their symmetric op (bcast, gather: allgather; scatter:
//    alltoall; reduce: allreduce), relabelled; bind() restricts it to the root's neighbourhood.
// All run in O(t*d) (plus sorting) and produce plans that pass ir::verify(). Their stats hold
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

// plan_combining's alltoall and allgather plans with the dimensions in `log_dims` routed by log
// rounds (loground.h: a block, or a position of the allgather prefix tree, reaches coordinate c
// through the partial sums of c's bits, one phase per bit); all false gives plan_combining's
// plans. plan_log_round builds on them. Require |value| < 2^30 in the log-routed dimensions
// (see log_round_dims).
ir::Plan alltoall_hops(const Neighborhood& nbh, const std::vector<int>& dim_order, const std::vector<bool>& log_dims);
ir::Plan allgather_tree(const Neighborhood& nbh, const std::vector<int>& dim_order, const std::vector<bool>& log_dims);

// Increasing C_k, ties by dimension index (the papers' choice for allgather trees).
std::vector<int> auto_dim_order(const Neighborhood& nbh);
// The order make_plan uses for `op`: auto_dim_order, reversed for allreduce, reduce_scatter and
// reduce (their merge tree is the allgather tree walked backwards, so the dimensions with few
// values are routed last and partial sums merge early).
std::vector<int> auto_dim_order(ir::Op op, const Neighborhood& nbh);
// Every offset distinct and the offsets are exactly the product of their per-dimension values.
bool is_product(const Neighborhood& nbh);
std::vector<int> natural_dim_order(int ndims);
// Error unless `order` is a permutation of 0..ndims-1.
Result<std::vector<int>> check_dim_order(const std::vector<int>& order, int ndims);

}  // namespace cartplan::engine
