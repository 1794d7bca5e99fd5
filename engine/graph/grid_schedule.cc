// Rank schedules from grid patterns: messages per (phase, peer), blocks into recv blocks or temps.
#include "engine/graph/grid_schedule.h"

#include <cassert>
#include <map>
#include <utility>

#include "engine/graph/schedule.h"

namespace cartplan::engine::graph {

using ir::graph::BlockId;
using ir::graph::Copy;
using ir::graph::GraphOp;
using ir::graph::GraphPhase;
using ir::graph::Loc;
using ir::graph::LocKind;
using ir::graph::Message;
using ir::graph::Part;
using ir::graph::RankEdges;
using ir::graph::RankSchedule;

namespace {

class GridScheduleBuilder {
 public:
  GridScheduleBuilder(GraphOp op, const RankEdges& edges, int rank)
      : op_(op), edges_(edges), rank_(rank), where_(send_locations(op, edges, rank)) {
    for (Copy& c : self_edge_copies(op, edges, rank)) phase(0).copies.push_back(std::move(c));
  }

  GraphPhase& phase(int f) { return phase_at(s_, f); }

  // The blocks of a message in wire order: flows are sorted by (origin, target), so an
  // allgather origin's flows are adjacent and its block goes once.
  std::vector<BlockId> blocks(const std::vector<GridFlow>& flows) const {
    std::vector<BlockId> out;
    for (const GridFlow& f : flows) {
      if (op_ == GraphOp::kAllgather) {
        if (out.empty() || out.back().origin != f.origin) out.push_back(BlockId{f.origin, -1, 0});
      } else {
        for (int c = 0; c < f.edges; ++c) out.push_back(BlockId{f.origin, f.target, c});
      }
    }
    return out;
  }

  void send(const GridMessage& g) {
    Message m{g.peer, {}};
    for (const BlockId& b : blocks(g.flows)) m.parts.push_back(Part{b, where_.at(b)});
    phase(g.phase).sends.push_back(std::move(m));
  }

  // Whether this rank is a target of the block (allgather: some flow of its origin ends here).
  bool mine(const BlockId& b, const std::vector<GridFlow>& flows) const {
    if (op_ == GraphOp::kAlltoall) return b.target == rank_;
    for (const GridFlow& f : flows)
      if (f.origin == b.origin && f.target == rank_) return true;
    return false;
  }

  void receive(const GridMessage& g) {
    GraphPhase& ph = phase(g.phase);
    Message m{g.peer, {}};
    for (const BlockId& b : blocks(g.flows)) {
      Loc at{LocKind::kTemp, static_cast<int>(s_.temps.size())};
      if (mine(b, g.flows)) {
        at = Loc{LocKind::kRecv, ir::graph::position_of(edges_.in, b.origin, b.target < 0 ? 0 : b.nth)};
        assert(at.index >= 0);
        for (int c = 1, jc; op_ == GraphOp::kAllgather && (jc = ir::graph::position_of(edges_.in, b.origin, c)) >= 0; ++c)
          ph.copies.push_back(Copy{b, at, Loc{LocKind::kRecv, jc}});
      } else {
        s_.temps.push_back(b);
      }
      where_.emplace(b, at);
      m.parts.push_back(Part{b, at});
    }
    ph.recvs.push_back(std::move(m));
  }

  RankSchedule take() { return std::move(s_); }

 private:
  GraphOp op_;
  const RankEdges& edges_;
  int rank_;
  std::map<BlockId, Loc> where_;  // where each block this rank holds is
  RankSchedule s_;
};

}  // namespace

RankSchedule grid_schedule(GraphOp op, const RankEdges& edges, int rank, const GridPattern& pattern) {
  GridScheduleBuilder b(op, edges, rank);
  // Phase by phase: a block received in phase k is forwarded in a later phase only.
  std::size_t si = 0, ri = 0;
  while (si < pattern.sends.size() || ri < pattern.recvs.size()) {
    const int next_send = si < pattern.sends.size() ? pattern.sends[si].phase : 1 << 30;
    const int next_recv = ri < pattern.recvs.size() ? pattern.recvs[ri].phase : 1 << 30;
    if (next_send <= next_recv) b.send(pattern.sends[si++]);
    else b.receive(pattern.recvs[ri++]);
  }
  return b.take();
}

ir::graph::GraphPlan grid_plan(GraphOp op, const ir::graph::Topology& t, const std::vector<int>& dims,
                               const std::vector<GridPattern>& patterns) {
  ir::graph::GraphPlanParts parts;
  parts.op = op;
  parts.algorithm = ir::graph::GraphAlgorithm::kGrid;
  parts.dims = dims;
  parts.topology = t;
  for (int r = 0; r < t.size(); ++r) parts.schedules.push_back(grid_schedule(op, t.ranks[r], r, patterns[r]));
  return ir::graph::GraphPlan(std::move(parts));
}

}  // namespace cartplan::engine::graph
