// What the simulators put into send blocks and what every recv block must hold afterwards:
// rank- and block-dependent bytes and integers, and each recv block's expected contributions.
// Shared by the plan simulator (simulator.h) and the program simulator (program_sim.h), so
// both check exactly the same semantics of the collectives.
//
//   std::vector<Label> want = expected_labels(plan, grid, rank, block);  // sorted; empty: untouched
//   std::vector<std::uint8_t> bytes = expected_bytes(ir::is_reduction(plan.op()), want, 16);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/grid.h"
#include "ir/plan.h"
#include "ir/result.h"

namespace cartplan::sim {

// What recv blocks and scratch memory hold before anything is written into them.
inline constexpr std::uint8_t kSentinel = 0xA5;

// Byte j of send block `block` of rank `rank` (alltoall, allgather and the rooted ops without a
// reduction): depends on all three, so data from a wrong source or of a wrong block shows up.
std::uint8_t pattern(int rank, int block, std::int64_t j);

// Element j (8 bytes) of send block `block` of rank `rank` in reductions: non-zero, different
// for different ranks and blocks, small enough that sums of 2^20 of them cannot overflow.
std::int64_t int_value(int rank, int block, std::int64_t j);
// The same as a double that is inexact in binary (sums depend on the order of additions).
double double_value(int rank, int block, std::int64_t j);

// One contribution to a block: block `block` of the send buffer of rank `rank`.
struct Label {
  int rank = -1;
  int block = -1;
  friend bool operator==(const Label&, const Label&) = default;
};
bool operator<(const Label& a, const Label& b);

// "block 3 of rank 5", or "nothing" for the default label.
std::string label_text(const Label& label);

// The contributions recv block `block` of rank `rank` must hold after the collective, sorted:
// the block of the process at -offset (alltoall, allgather, bcast, scatter, gather), or every
// neighbour's block (allreduce, reduce_scatter, reduce). Empty when no source is in the mesh:
// then the block must keep its sentinel. Whether the block is significant at all on this rank
// (rooted ops) is BoundPlan::recv_result's business.
std::vector<Label> expected_labels(const ir::Plan& plan, const engine::Grid& grid, int rank, int block);

// The bytes of a location that holds `labels` (one label: a send block's own data; several:
// their element-wise int64 sum, for reductions), `bytes` long. `reduction` selects int_value
// elements (8 bytes each; bytes must be a multiple of 8) instead of pattern bytes.
std::vector<std::uint8_t> expected_bytes(bool reduction, const std::vector<Label>& labels, std::int64_t bytes);

// Element-wise sum of `bytes / 8` 8-byte elements of `from` into `to` (the collective's op in
// the simulators): int64 with wrapping (never undefined), or double.
void add_elements(std::uint8_t* to, const std::uint8_t* from, std::int64_t bytes, bool doubles = false);

// A simulator report's error list: every error is counted, the first `max_errors` are kept.
template <class Report>
class ErrorList {
 public:
  ErrorList(Report& report, int max_errors) : report_(report), max_(max_errors) {}
  void error(std::string msg) {
    ++report_.error_count;
    if (static_cast<int>(report_.errors.size()) < max_) report_.errors.push_back(std::move(msg));
  }

 private:
  Report& report_;
  int max_;
};

// The simulators' common argument checks: reductions need blocks of whole 8-byte elements,
// rooted ops a root rank of the grid (returned as coordinates), the others root -1.
Result<std::optional<engine::Coords>> check_simulation(ir::Op op, const engine::Grid& grid,
                                                       const std::vector<std::int64_t>& block_bytes, int root);

}  // namespace cartplan::sim
