// Block sizes of graph collectives, uniform or pseudo-random (v forms).
#include "engine/graph/sizes.h"

#include <cassert>

#include "ir/graph/plan.h"

namespace cartplan::engine::graph {
namespace {

// splitmix64: a fixed, portable stream (std:: distributions differ between libraries).
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

std::uint64_t BlockSizes::key(const ir::graph::BlockId& b) {
  return (static_cast<std::uint64_t>(b.origin) << 42) | (static_cast<std::uint64_t>(b.target) << 21) | static_cast<std::uint64_t>(b.nth);
}

std::int64_t BlockSizes::bytes(const ir::graph::BlockId& b) const {
  if (constant_ >= 0) return constant_;
  if (op_ == ir::graph::GraphOp::kAllgather) return of_rank_.at(b.origin);
  auto it = of_edge_.find(key(b));
  assert(it != of_edge_.end());
  return it->second;
}

double BlockSizes::mean_bytes() const {
  if (constant_ >= 0) return static_cast<double>(constant_);
  double sum = 0;
  std::size_t n = 0;
  if (op_ == ir::graph::GraphOp::kAllgather) {
    for (std::int64_t b : of_rank_) sum += static_cast<double>(b), ++n;
  } else {
    for (const auto& [k, b] : of_edge_) sum += static_cast<double>(b), ++n;
  }
  return n ? sum / static_cast<double>(n) : 0.0;
}

BlockSizes BlockSizes::uniform(ir::graph::GraphOp op, const ir::graph::Topology& t, std::int64_t bytes) {
  BlockSizes s;
  s.op_ = op;
  if (op == ir::graph::GraphOp::kAllgather) {
    s.of_rank_.assign(t.size(), bytes);
    return s;
  }
  for (int r = 0; r < t.size(); ++r)
    for (const ir::graph::BlockId& b : ir::graph::send_blocks_of(op, t, r)) s.of_edge_[key(b)] = bytes;
  return s;
}

BlockSizes BlockSizes::constant(ir::graph::GraphOp op, std::int64_t bytes) {
  assert(bytes >= 0);
  BlockSizes s;
  s.op_ = op;
  s.constant_ = bytes;
  return s;
}

BlockSizes BlockSizes::varied(ir::graph::GraphOp op, const ir::graph::Topology& t, std::int64_t max_bytes, std::uint64_t seed) {
  BlockSizes s = uniform(op, t, 0);
  auto pick = [&](std::uint64_t k) { return static_cast<std::int64_t>(mix(seed ^ mix(k)) % static_cast<std::uint64_t>(max_bytes + 1)); };
  for (std::size_t r = 0; r < s.of_rank_.size(); ++r) s.of_rank_[r] = pick(r);
  for (auto& [k, b] : s.of_edge_) b = pick(k);
  return s;
}

}  // namespace cartplan::engine::graph
