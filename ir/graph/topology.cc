// Edge-list consistency and the k-th edge rule's helpers.
#include "ir/graph/topology.h"

#include <algorithm>
#include <utility>

namespace cartplan::ir::graph {

std::int64_t Topology::edges() const {
  std::int64_t n = 0;
  for (const RankEdges& r : ranks) n += static_cast<std::int64_t>(r.out.size());
  return n;
}

namespace {

std::optional<std::string> range_error(const Topology& t) {
  const int p = t.size();
  for (int r = 0; r < p; ++r) {
    for (std::size_t k = 0; k < t.ranks[r].out.size(); ++k) {
      const int d = t.ranks[r].out[k];
      if (d < 0 || d >= p)
        return "rank " + std::to_string(r) + ", destination " + std::to_string(k) + ": rank " + std::to_string(d) +
               " is out of range [0, " + std::to_string(p) + ")";
    }
    for (std::size_t j = 0; j < t.ranks[r].in.size(); ++j) {
      const int s = t.ranks[r].in[j];
      if (s < 0 || s >= p)
        return "rank " + std::to_string(r) + ", source " + std::to_string(j) + ": rank " + std::to_string(s) +
               " is out of range [0, " + std::to_string(p) + ")";
    }
  }
  return std::nullopt;
}

using Edge = std::pair<int, int>;  // (from, to)

std::string count_text(const std::vector<Edge>& sorted, const Edge& e) {
  auto [lo, hi] = std::equal_range(sorted.begin(), sorted.end(), e);
  return std::to_string(hi - lo);
}

}  // namespace

std::optional<std::string> topology_error(const Topology& t) {
  if (t.size() > kMaxGraphRanks) return "the graph has " + std::to_string(t.size()) + " ranks, more than " + std::to_string(kMaxGraphRanks);
  if (auto e = range_error(t)) return e;
  std::vector<Edge> from_out, from_in;
  for (int r = 0; r < t.size(); ++r) {
    for (int d : t.ranks[r].out) from_out.emplace_back(r, d);
    for (int s : t.ranks[r].in) from_in.emplace_back(s, r);
  }
  std::sort(from_out.begin(), from_out.end());
  std::sort(from_in.begin(), from_in.end());
  if (from_out == from_in) return std::nullopt;
  // The first edge whose multiplicities differ.
  auto [a, b] = std::mismatch(from_out.begin(), from_out.end(), from_in.begin(), from_in.end());
  Edge e = a == from_out.end() ? *b : (b == from_in.end() ? *a : std::min(*a, *b));
  return "rank " + std::to_string(e.first) + " lists rank " + std::to_string(e.second) + " " + count_text(from_out, e) +
         " time(s) among its destinations, but rank " + std::to_string(e.second) + " lists rank " +
         std::to_string(e.first) + " " + count_text(from_in, e) + " time(s) among its sources";
}

int occurrence(const std::vector<int>& list, int pos) {
  return static_cast<int>(std::count(list.begin(), list.begin() + pos, list[pos]));
}

int position_of(const std::vector<int>& list, int value, int nth) {
  for (std::size_t k = 0; k < list.size(); ++k) {
    if (list[k] == value && nth-- == 0) return static_cast<int>(k);
  }
  return -1;
}

int count_of(const std::vector<int>& list, int value) {
  return static_cast<int>(std::count(list.begin(), list.end(), value));
}

const char* to_string(GraphOp op) { return op == GraphOp::kAllgather ? "allgather" : "alltoall"; }

std::string to_string(const BlockId& b) {
  if (b.target < 0) return "(" + std::to_string(b.origin) + ")";
  return "(" + std::to_string(b.origin) + "->" + std::to_string(b.target) + "#" + std::to_string(b.nth) + ")";
}

}  // namespace cartplan::ir::graph
