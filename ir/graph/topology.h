// The edge lists of an MPI distributed graph (each rank's destinations and sources, in the
// caller's order, duplicates and self edges allowed) and the identities of the blocks a
// neighbourhood collective moves over it (docs/graphs.md).
//
// MPI's k-th edge rule: when rank a lists b several times among its destinations, the k-th of
// those edges matches the k-th time b lists a among its sources. A block is therefore named by
// (origin, target, nth) -- "the nth edge from origin to target" -- which both ends can compute
// from their own list; an allgather block is named by its origin alone (it goes to every edge).
//
//   ir::graph::Topology t;
//   t.ranks = {{.out = {1, 1}, .in = {}}, {.out = {}, .in = {0, 0}}};   // two edges 0 -> 1
//   if (auto e = topology_error(t)) std::cerr << *e << "\n";
//   int k = position_of(t.ranks[0].out, 1, 1);   // 1: the second edge from 0 to 1
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cartplan::ir::graph {

// The most ranks a graph may have anywhere in cartplan (parsers, generators, planners).
inline constexpr int kMaxGraphRanks = 1 << 20;

struct RankEdges {
  std::vector<int> out;  // destinations, MPI order: send block k goes to out[k] (alltoall)
  std::vector<int> in;   // sources, MPI order: recv block j comes from in[j]
  friend bool operator==(const RankEdges&, const RankEdges&) = default;
};

struct Topology {
  std::vector<RankEdges> ranks;
  int size() const { return static_cast<int>(ranks.size()); }
  std::int64_t edges() const;
  friend bool operator==(const Topology&, const Topology&) = default;
};

// Why the lists do not describe one graph, or nullopt: a rank out of range, or an edge a -> b
// listed a different number of times among a's destinations and b's sources.
std::optional<std::string> topology_error(const Topology& topology);

// How many entries before list[pos] equal list[pos] (the edge's rank among parallel edges).
int occurrence(const std::vector<int>& list, int pos);
// The position of the nth entry equal to value, or -1.
int position_of(const std::vector<int>& list, int value, int nth);
// How many entries equal value.
int count_of(const std::vector<int>& list, int value);

enum class GraphOp { kAllgather, kAlltoall };
const char* to_string(GraphOp op);

// A block: allgather (origin, -1, 0), the send block of origin; alltoall (origin, target, nth),
// the block origin sends over its nth edge to target.
struct BlockId {
  int origin = 0;
  int target = -1;
  int nth = 0;
  friend bool operator==(const BlockId&, const BlockId&) = default;
  friend auto operator<=>(const BlockId&, const BlockId&) = default;
};
// "(3)" or "(3->5#0)".
std::string to_string(const BlockId& block);

}  // namespace cartplan::ir::graph
