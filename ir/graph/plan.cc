// GraphPlan helpers: names, and the blocks the caller's buffers hold and need.
#include "ir/graph/plan.h"

#include <algorithm>
#include <map>
#include <utility>

namespace cartplan::ir::graph {

const char* to_string(GraphAlgorithm a) {
  switch (a) {
    case GraphAlgorithm::kLinear: return "linear";
    case GraphAlgorithm::kPairing: return "pairing";
    case GraphAlgorithm::kCumulative: return "cumulative";
    case GraphAlgorithm::kGrid: return "grid";
  }
  return "?";
}

const char* to_string(LocKind k) {
  switch (k) {
    case LocKind::kSend: return "send";
    case LocKind::kRecv: return "recv";
    case LocKind::kTemp: return "temp";
  }
  return "?";
}

std::string to_string(const Loc& loc) { return std::string(to_string(loc.kind)) + "[" + std::to_string(loc.index) + "]"; }

int GraphPlan::phases() const {
  std::size_t n = 0;
  for (const RankSchedule& s : p_.schedules) n = std::max(n, s.phases.size());
  return static_cast<int>(n);
}

BlockId send_block(GraphOp op, const Topology& t, int rank, int k) {
  if (op == GraphOp::kAllgather) return BlockId{rank, -1, 0};
  const std::vector<int>& out = t.ranks[rank].out;
  return BlockId{rank, out[k], occurrence(out, k)};
}

BlockId required_block(GraphOp op, const Topology& t, int rank, int j) {
  const std::vector<int>& in = t.ranks[rank].in;
  if (op == GraphOp::kAllgather) return BlockId{in[j], -1, 0};
  return BlockId{in[j], rank, occurrence(in, j)};
}

namespace {

// (list[i], how many earlier entries equal it) for every i.
std::vector<std::pair<int, int>> with_occurrence(const std::vector<int>& list) {
  std::map<int, int> seen;
  std::vector<std::pair<int, int>> out;
  out.reserve(list.size());
  for (int v : list) out.emplace_back(v, seen[v]++);
  return out;
}

}  // namespace

std::vector<BlockId> send_blocks_of(GraphOp op, const RankEdges& edges, int rank) {
  if (op == GraphOp::kAllgather) return {BlockId{rank, -1, 0}};
  std::vector<BlockId> out;
  for (auto [target, nth] : with_occurrence(edges.out)) out.push_back(BlockId{rank, target, nth});
  return out;
}

std::vector<BlockId> required_blocks_of(GraphOp op, const RankEdges& edges, int rank) {
  std::vector<BlockId> out;
  for (auto [source, nth] : with_occurrence(edges.in))
    out.push_back(op == GraphOp::kAllgather ? BlockId{source, -1, 0} : BlockId{source, rank, nth});
  return out;
}

std::vector<BlockId> send_blocks_of(GraphOp op, const Topology& t, int rank) { return send_blocks_of(op, t.ranks[rank], rank); }

std::vector<BlockId> required_blocks_of(GraphOp op, const Topology& t, int rank) {
  return required_blocks_of(op, t.ranks[rank], rank);
}

int send_blocks(GraphOp op, const Topology& t, int rank) {
  return op == GraphOp::kAllgather ? 1 : static_cast<int>(t.ranks[rank].out.size());
}

}  // namespace cartplan::ir::graph
