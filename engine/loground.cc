// Log-round (Bruck-style) routing inside combining alltoall and allgather plans.
#include "engine/loground.h"

#include <cassert>
#include <cstdlib>
#include <set>
#include <utility>

#include "engine/planner.h"

namespace cartplan::engine {
namespace {

// Bits set in |c|, lowest first.
std::vector<int> bits_of(int c) {
  std::vector<int> out;
  const unsigned a = static_cast<unsigned>(std::abs(static_cast<long long>(c)));
  for (int j = 0; j < 32; ++j)
    if (a >> j & 1u) out.push_back(j);
  return out;
}

}  // namespace

bool supports_log_rounds(ir::Op op) {
  return ir::symmetric_op(op) == ir::Op::kAlltoall || ir::symmetric_op(op) == ir::Op::kAllgather;
}

int linear_rounds(const Neighborhood& nbh, int k) { return nbh.distinct_nonzero(k); }

int log_rounds(const Neighborhood& nbh, int k) {
  std::set<std::pair<int, int>> used;  // (sign, bit)
  for (const Offset& o : nbh.offsets())
    for (int j : bits_of(o[k])) used.emplace(o[k] > 0 ? 1 : -1, j);
  return static_cast<int>(used.size());
}

std::vector<bool> log_round_dims(const Neighborhood& nbh) {
  std::vector<bool> out(nbh.ndims());
  for (int k = 0; k < nbh.ndims(); ++k) {
    bool small = true;  // shifts of 2^j stay in int range
    for (const Offset& o : nbh.offsets()) small = small && std::abs(static_cast<long long>(o[k])) < (1LL << 30);
    out[k] = small && log_rounds(nbh, k) < linear_rounds(nbh, k);
  }
  return out;
}

ir::Plan plan_log_round(ir::Op op, const Neighborhood& nbh, const std::vector<int>& order, const std::vector<bool>& log_dims) {
  assert(supports_log_rounds(op));
  assert(check_dim_order(order, nbh.ndims()).ok());
  ir::PlanParts parts = (ir::symmetric_op(op) == ir::Op::kAllgather ? allgather_tree(nbh, order, log_dims)
                                                                     : alltoall_hops(nbh, order, log_dims))
                            .parts();
  parts.op = op;  // scatter runs the alltoall plan, bcast and gather the allgather plan
  return ir::Plan(std::move(parts));
}

}  // namespace cartplan::engine
