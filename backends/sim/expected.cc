// Data and expected results shared by the simulators: pattern bytes, reduction values, labels.
#include "backends/sim/expected.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace cartplan::sim {

std::uint8_t pattern(int rank, int block, std::int64_t j) {
  std::uint64_t h = (static_cast<std::uint64_t>(rank) + 1) * 0x9E3779B97F4A7C15ull;
  h ^= (static_cast<std::uint64_t>(block) + 1) * 0xC2B2AE3D27D4EB4Full;
  h ^= static_cast<std::uint64_t>(j) * 0x165667B19E3779F9ull;
  h ^= h >> 29;
  return static_cast<std::uint8_t>(h);
}

std::int64_t int_value(int rank, int block, std::int64_t j) {
  std::uint64_t h = (static_cast<std::uint64_t>(rank) + 1) * 0x9E3779B97F4A7C15ull;
  h ^= (static_cast<std::uint64_t>(block) + 1) * 0xC2B2AE3D27D4EB4Full;
  h ^= static_cast<std::uint64_t>(j) * 0x165667B19E3779F9ull;
  h ^= h >> 31;
  return static_cast<std::int64_t>(h % (std::uint64_t{1} << 40)) + 1;
}

double double_value(int rank, int block, std::int64_t j) {
  return static_cast<double>(int_value(rank, block, j)) / 1e6 + 1.0 / 3.0;  // inexact in binary
}

bool operator<(const Label& a, const Label& b) { return a.rank != b.rank ? a.rank < b.rank : a.block < b.block; }

std::string label_text(const Label& l) {
  if (l.rank < 0) return "nothing";
  return "block " + std::to_string(l.block) + " of rank " + std::to_string(l.rank);
}

std::vector<Label> expected_labels(const ir::Plan& plan, const engine::Grid& grid, int rank, int block) {
  const ir::Op op = plan.op();
  const engine::Coords coords = grid.coords(rank);
  auto source_of = [&](int i) {
    ir::Offset back = plan.neighborhood()[i];
    for (int& x : back) x = -x;
    return grid.relative_rank(coords, back);
  };
  std::vector<Label> want;
  switch (op) {
    case ir::Op::kAlltoall:
    case ir::Op::kAllgather:
    case ir::Op::kBcast:
    case ir::Op::kScatter:
    case ir::Op::kGather: {
      const int source = source_of(block);
      if (source != engine::kNoRank) want.push_back(Label{source, ir::blocks_have_own_shape(op) ? block : 0});
      break;
    }
    case ir::Op::kAllreduce:
    case ir::Op::kReduceScatter:
    case ir::Op::kReduce:
      for (int j = 0; j < plan.num_blocks(); ++j) {
        const int source = source_of(j);
        if (source != engine::kNoRank) want.push_back(Label{source, op == ir::Op::kReduceScatter ? j : 0});
      }
      break;
  }
  std::sort(want.begin(), want.end());
  return want;
}

std::vector<std::uint8_t> expected_bytes(bool reduction, const std::vector<Label>& labels, std::int64_t bytes) {
  std::vector<std::uint8_t> out(static_cast<std::size_t>(bytes), kSentinel);
  if (labels.empty()) return out;
  if (!reduction) {
    assert(labels.size() == 1 && "only reductions hold several contributions");
    for (std::int64_t j = 0; j < bytes; ++j) out[static_cast<std::size_t>(j)] = pattern(labels[0].rank, labels[0].block, j);
    return out;
  }
  assert(bytes % 8 == 0 && "reductions are vectors of 8-byte elements");
  for (std::int64_t e = 0; e < bytes / 8; ++e) {
    std::uint64_t sum = 0;  // unsigned: wrapping, like the simulators' combine
    for (const Label& l : labels) sum += static_cast<std::uint64_t>(int_value(l.rank, l.block, e));
    std::memcpy(&out[static_cast<std::size_t>(e * 8)], &sum, 8);
  }
  return out;
}

void add_elements(std::uint8_t* to, const std::uint8_t* from, std::int64_t bytes, bool doubles) {
  for (std::int64_t e = 0; e + 8 <= bytes; e += 8) {
    if (doubles) {
      double a, b;
      std::memcpy(&a, to + e, 8);
      std::memcpy(&b, from + e, 8);
      a += b;
      std::memcpy(to + e, &a, 8);
    } else {
      std::uint64_t a, b;  // unsigned: wrapping, never undefined
      std::memcpy(&a, to + e, 8);
      std::memcpy(&b, from + e, 8);
      a += b;
      std::memcpy(to + e, &a, 8);
    }
  }
}

Result<std::optional<engine::Coords>> check_simulation(ir::Op op, const engine::Grid& grid,
                                                       const std::vector<std::int64_t>& block_bytes, int root) {
  if (ir::is_reduction(op))
    for (std::int64_t bytes : block_bytes)
      if (bytes % 8 != 0)
        return fail("reductions simulate vectors of 8-byte elements: block size " + std::to_string(bytes) +
                    " is not a multiple of 8");
  if (ir::is_rooted(op)) {
    if (root < 0 || root >= grid.size())
      return fail("root " + std::to_string(root) + " is not a rank of the grid (0.." + std::to_string(grid.size() - 1) + ")");
    return std::optional<engine::Coords>(grid.coords(root));
  }
  if (root != -1) return fail(std::string(ir::to_string(op)) + " takes no root");
  return std::optional<engine::Coords>();
}

}  // namespace cartplan::sim
