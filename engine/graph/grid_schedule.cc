// Rank schedules from grid patterns: messages per (phase, peer), blocks into recv blocks or temps.
#include "engine/graph/grid_schedule.h"

#include <cassert>
#include <map>
#include <utility>

#include "engine/graph/schedule.h"

namespace cartplan::engine::graph {

namespace ig = ir::graph;

namespace {

class GridScheduleBuilder {
 public:
  GridScheduleBuilder(ig::GraphOp op, const ig::RankEdges& edges, int rank)
      : op_(op), edges_(edges), rank_(rank), where_(send_locations(op, edges, rank)) {
    for (ig::Copy& c : self_edge_copies(op, edges, rank)) phase(0).copies.push_back(std::move(c));
  }

  ig::GraphPhase& phase(int f) { return phase_at(s_, f); }

  // The blocks of a message in wire order: flows are sorted by (origin, target), so an
  // allgather origin's flows are adjacent and its block goes once.
  std::vector<ig::BlockId> blocks(const std::vector<GridFlow>& flows) const {
    std::vector<ig::BlockId> out;
    for (const GridFlow& f : flows) {
      if (op_ == ig::GraphOp::kAllgather) {
        if (out.empty() || out.back().origin != f.origin) out.push_back(ig::BlockId{f.origin, -1, 0});
      } else {
        for (int c = 0; c < f.edges; ++c) out.push_back(ig::BlockId{f.origin, f.target, c});
      }
    }
    return out;
  }

  void send(const GridMessage& g) {
    ig::Message m{g.peer, {}};
    for (const ig::BlockId& b : blocks(g.flows)) m.parts.push_back(ig::Part{b, where_.at(b)});
    phase(g.phase).sends.push_back(std::move(m));
  }

  // Whether this rank is a target of the block (allgather: some flow of its origin ends here).
  bool mine(const ig::BlockId& b, const std::vector<GridFlow>& flows) const {
    if (op_ == ig::GraphOp::kAlltoall) return b.target == rank_;
    for (const GridFlow& f : flows)
      if (f.origin == b.origin && f.target == rank_) return true;
    return false;
  }

  void receive(const GridMessage& g) {
    ig::GraphPhase& ph = phase(g.phase);
    ig::Message m{g.peer, {}};
    for (const ig::BlockId& b : blocks(g.flows)) {
      ig::Loc at{ig::LocKind::kTemp, static_cast<int>(s_.temps.size())};
      if (mine(b, g.flows)) {
        at = ig::Loc{ig::LocKind::kRecv, ir::graph::position_of(edges_.in, b.origin, b.target < 0 ? 0 : b.nth)};
        assert(at.index >= 0);
        for (int c = 1, jc; op_ == ig::GraphOp::kAllgather && (jc = ir::graph::position_of(edges_.in, b.origin, c)) >= 0; ++c)
          ph.copies.push_back(ig::Copy{b, at, ig::Loc{ig::LocKind::kRecv, jc}});
      } else {
        s_.temps.push_back(b);
      }
      where_.emplace(b, at);
      m.parts.push_back(ig::Part{b, at});
    }
    ph.recvs.push_back(std::move(m));
  }

  ig::RankSchedule take() { return std::move(s_); }

 private:
  ig::GraphOp op_;
  const ig::RankEdges& edges_;
  int rank_;
  std::map<ig::BlockId, ig::Loc> where_;  // where each block this rank holds is
  ig::RankSchedule s_;
};

}  // namespace

ig::RankSchedule grid_schedule(ig::GraphOp op, const ig::RankEdges& edges, int rank, const GridPattern& pattern) {
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

ir::graph::GraphPlan grid_plan(ig::GraphOp op, const ir::graph::Topology& t, const std::vector<int>& dims,
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
