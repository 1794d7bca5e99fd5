// GraphPlan: the rank-dependent schedule of one neighbourhood collective (allgather or
// alltoall) over a general distributed graph (docs/graphs.md). Unlike the Cartesian ir::Plan,
// every rank has a schedule of its own; the plan holds the graph and all of them, so that
// verify() can prove the whole exchange. A plain value: indices, never pointers.
//
// A rank's schedule is a list of phases; phase f of every rank runs "together": the k-th
// message rank a sends to rank b in phase f is the k-th message b receives from a in phase f.
// Within a phase all messages are concurrent (posted together, completed together); then the
// phase's copies run in list order. Each message part names the block it carries (BlockId) and
// where it is on this rank: the caller's send block k, the caller's recv block j, or temp slot
// s (scratch memory of the plan, declared with the block it will hold).
//
//   const ir::graph::GraphPlan& plan = ...;
//   for (const auto& phase : plan.schedule(rank).phases)
//     for (const auto& m : phase.sends) post_send(m.peer, m.parts);   // parts in wire order
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/graph/topology.h"

namespace cartplan::ir::graph {

// linear: one message per edge in one phase (what MPI libraries do). pairing: seed 003's
// common-neighbour pairing with halving. cumulative: pairing iterated so that a neighbour can
// be covered by several combining stages (seed 003's "cumulative combining", Sect. VII).
// grid: blocks routed dimension by dimension through a virtual grid of the ranks (Selvitopi and
// Aykanat's virtual k-ary n-cube, with Cartesian message combining; engine/graph/grid.h).
enum class GraphAlgorithm { kLinear, kPairing, kCumulative, kGrid };
const char* to_string(GraphAlgorithm algorithm);

enum class LocKind { kSend, kRecv, kTemp };
const char* to_string(LocKind kind);

struct Loc {
  LocKind kind = LocKind::kSend;
  int index = 0;
  friend bool operator==(const Loc&, const Loc&) = default;
  friend auto operator<=>(const Loc&, const Loc&) = default;
};
// "send[0]", "recv[3]", "temp[1]".
std::string to_string(const Loc& loc);

struct Part {
  BlockId block;
  Loc loc;  // sends read it there, receives write it there
  friend bool operator==(const Part&, const Part&) = default;
};

struct Message {
  int peer = 0;             // the destination of a send, the source of a receive
  std::vector<Part> parts;  // wire order
  friend bool operator==(const Message&, const Message&) = default;
};

struct Copy {
  BlockId block;
  Loc from, to;
  friend bool operator==(const Copy&, const Copy&) = default;
};

struct GraphPhase {
  std::vector<Message> sends;
  std::vector<Message> recvs;
  std::vector<Copy> copies;  // after the phase's messages completed, in list order
  friend bool operator==(const GraphPhase&, const GraphPhase&) = default;
};

struct RankSchedule {
  std::vector<BlockId> temps;  // temp slot s holds temps[s] (its size is that block's)
  std::vector<GraphPhase> phases;
  friend bool operator==(const RankSchedule&, const RankSchedule&) = default;
};

struct GraphPlanParts {
  GraphOp op = GraphOp::kAllgather;
  GraphAlgorithm algorithm = GraphAlgorithm::kLinear;
  int theta = 0;  // pairing and cumulative: the friendship threshold; 0 for linear and grid
  std::vector<int> dims;  // grid: the virtual grid (row-major ranks, product = ranks); else empty
  Topology topology;
  std::vector<RankSchedule> schedules;  // one per rank
  friend bool operator==(const GraphPlanParts&, const GraphPlanParts&) = default;
};

// Immutable once built (by a planner or the JSON parser).
class GraphPlan {
 public:
  explicit GraphPlan(GraphPlanParts parts) : p_(std::move(parts)) {}
  GraphOp op() const { return p_.op; }
  GraphAlgorithm algorithm() const { return p_.algorithm; }
  int theta() const { return p_.theta; }
  const std::vector<int>& dims() const { return p_.dims; }
  const Topology& topology() const { return p_.topology; }
  int size() const { return p_.topology.size(); }
  const RankSchedule& schedule(int rank) const { return p_.schedules[rank]; }
  const std::vector<RankSchedule>& schedules() const { return p_.schedules; }
  const GraphPlanParts& parts() const { return p_; }
  // The most phases of any rank.
  int phases() const;
  friend bool operator==(const GraphPlan&, const GraphPlan&) = default;

 private:
  GraphPlanParts p_;
};

// What the caller's buffers hold and need, per the op: the block in send block k of `rank`,
// and the block recv block j of `rank` must end up holding.
BlockId send_block(GraphOp op, const Topology& topology, int rank, int k);
BlockId required_block(GraphOp op, const Topology& topology, int rank, int j);
// Every send block / every required recv block of a rank, in index order (O(d log d)).
std::vector<BlockId> send_blocks_of(GraphOp op, const Topology& topology, int rank);
std::vector<BlockId> required_blocks_of(GraphOp op, const Topology& topology, int rank);
// The same from the rank's own edge lists (what a rank knows without the graph).
std::vector<BlockId> send_blocks_of(GraphOp op, const RankEdges& edges, int rank);
std::vector<BlockId> required_blocks_of(GraphOp op, const RankEdges& edges, int rank);
// Send blocks of a rank: 1 (allgather) or its out-degree (alltoall).
int send_blocks(GraphOp op, const Topology& topology, int rank);

}  // namespace cartplan::ir::graph
