// Rank schedules from combining patterns (seed 003's Alg. 3), and the linear schedule.
#include "engine/graph/schedule.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <utility>

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
using ir::graph::Topology;

namespace {

// Builds one rank's schedule: where each block is on this rank, and the phases.
class ScheduleBuilder {
 public:
  ScheduleBuilder(GraphOp op, const RankEdges& edges, int rank)
      : op_(op), edges_(edges), rank_(rank), where_(send_locations(op, edges, rank)) {}

  GraphPhase& phase(int f) { return phase_at(s_, f); }

  // The blocks of items for `target`: allgather one per origin, alltoall one per parallel edge.
  std::vector<BlockId> blocks(int target, const std::vector<Item>& items) const {
    std::vector<BlockId> out;
    for (auto [origin, edges] : items) {
      if (op_ == GraphOp::kAllgather) out.push_back(BlockId{origin, -1, 0});
      else for (int c = 0; c < edges; ++c) out.push_back(BlockId{origin, target, c});
    }
    return out;
  }

  Message send_of(int peer, const std::vector<BlockId>& blocks) const {
    Message m{peer, {}};
    for (const BlockId& b : blocks) m.parts.push_back(Part{b, where_.at(b)});
    return m;
  }

  // A received forwarded block goes to a new temp slot (the first place it lands on this rank).
  Message receive_to_temps(int peer, const std::vector<BlockId>& blocks) {
    Message m{peer, {}};
    for (const BlockId& b : blocks) {
      const Loc slot{LocKind::kTemp, static_cast<int>(s_.temps.size())};
      s_.temps.push_back(b);
      where_.emplace(b, slot);
      m.parts.push_back(Part{b, slot});
    }
    return m;
  }

  // An odd number of common neighbours leaves one side nothing to hand over: no message then
  // (the partner computes the same halves, so it expects none).
  void exchange(const Stage& st) {
    GraphPhase& ph = phase(st.phase);
    const std::vector<BlockId> out = distinct_blocks(st.handed_out), in = distinct_blocks(st.handed_in);
    if (!out.empty()) ph.sends.push_back(send_of(st.partner, out));
    if (!in.empty()) ph.recvs.push_back(receive_to_temps(st.partner, in));
  }

  // Blocks of several bundles, each once (allgather bundles may share an origin), sorted.
  std::vector<BlockId> distinct_blocks(const std::vector<Bundle>& bundles) const {
    std::vector<BlockId> out;
    for (const Bundle& b : bundles) {
      std::vector<BlockId> mine = blocks(b.target, b.items);
      out.insert(out.end(), mine.begin(), mine.end());
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  // Receives into the recv blocks the k-th edge rule names; allgather fills the other recv
  // blocks of the same origin (parallel edges) by copies after the phase.
  void receive_final(const PatternRecv& r) {
    GraphPhase& ph = phase(r.phase);
    Message m{r.source, {}};
    for (const BlockId& b : blocks(rank_, r.items)) {
      const std::vector<int>& in = edges_.in;
      const int j = ir::graph::position_of(in, b.origin, b.target < 0 ? 0 : b.nth);
      assert(j >= 0);
      m.parts.push_back(Part{b, Loc{LocKind::kRecv, j}});
      if (op_ == GraphOp::kAllgather) {
        for (int c = 1, jc; (jc = ir::graph::position_of(in, b.origin, c)) >= 0; ++c)
          ph.copies.push_back(Copy{b, Loc{LocKind::kRecv, j}, Loc{LocKind::kRecv, jc}});
      }
    }
    ph.recvs.push_back(std::move(m));
  }

  void self_copies() {
    for (Copy& c : self_edge_copies(op_, edges_, rank_)) phase(0).copies.push_back(std::move(c));
  }

  RankSchedule take() { return std::move(s_); }

 private:
  GraphOp op_;
  const RankEdges& edges_;
  int rank_;
  std::map<BlockId, Loc> where_;  // where each block this rank holds is first found
  RankSchedule s_;
};

}  // namespace

std::map<BlockId, Loc> send_locations(GraphOp op, const RankEdges& edges, int rank) {
  std::map<BlockId, Loc> where;
  const std::vector<BlockId> sends = ir::graph::send_blocks_of(op, edges, rank);
  for (int k = 0; k < static_cast<int>(sends.size()); ++k) where.emplace(sends[k], Loc{LocKind::kSend, k});
  return where;
}

GraphPhase& phase_at(RankSchedule& s, int f) {
  if (static_cast<int>(s.phases.size()) <= f) s.phases.resize(f + 1);
  return s.phases[f];
}

std::vector<Copy> self_edge_copies(GraphOp op, const RankEdges& edges, int rank) {
  std::vector<Copy> out;
  for (int c = 0, j; (j = ir::graph::position_of(edges.in, rank, c)) >= 0; ++c) {
    const int k = op == GraphOp::kAllgather ? 0 : ir::graph::position_of(edges.out, rank, c);
    const BlockId b = op == GraphOp::kAllgather ? BlockId{rank, -1, 0} : BlockId{rank, rank, c};
    out.push_back(Copy{b, Loc{LocKind::kSend, k}, Loc{LocKind::kRecv, j}});
  }
  return out;
}

RankSchedule schedule_from_pattern(GraphOp op, const RankEdges& edges, int rank, const RankPattern& pattern) {
  ScheduleBuilder b(op, edges, rank);
  b.self_copies();
  // Stages in iteration order: a later exchange may forward what an earlier one brought.
  for (const Stage& st : pattern.stages) b.exchange(st);
  for (const PatternSend& s : pattern.sends) b.phase(s.phase).sends.push_back(b.send_of(s.target, b.blocks(s.target, s.items)));
  for (const PatternRecv& r : pattern.recvs) b.receive_final(r);
  return b.take();
}

RankSchedule schedule_from_pattern(GraphOp op, const Topology& t, int rank, const RankPattern& pattern) {
  return schedule_from_pattern(op, t.ranks[rank], rank, pattern);
}

ir::graph::GraphPlan plan_from_patterns(GraphOp op, const Topology& t, const std::vector<RankPattern>& patterns,
                                        const PairingOptions& options) {
  ir::graph::GraphPlanParts parts;
  parts.op = op;
  parts.algorithm = options.cumulative ? ir::graph::GraphAlgorithm::kCumulative : ir::graph::GraphAlgorithm::kPairing;
  parts.theta = options.theta;
  parts.topology = t;
  for (int r = 0; r < t.size(); ++r) parts.schedules.push_back(schedule_from_pattern(op, t, r, patterns[r]));
  return ir::graph::GraphPlan(std::move(parts));
}

RankSchedule linear_schedule(GraphOp op, const RankEdges& edges, int r) {
  const std::vector<int>& out = edges.out;
  const std::vector<BlockId> sends = ir::graph::send_blocks_of(op, edges, r);
  const std::vector<BlockId> need = ir::graph::required_blocks_of(op, edges, r);
  GraphPhase ph;
  for (int k = 0; k < static_cast<int>(out.size()); ++k) {
    if (out[k] == r) continue;
    const int sk = op == GraphOp::kAllgather ? 0 : k;
    ph.sends.push_back(Message{out[k], {Part{sends[sk], Loc{LocKind::kSend, sk}}}});
  }
  std::map<int, int> seen;  // source -> edges so far: the k-th message from it is its k-th edge
  for (int j = 0; j < static_cast<int>(need.size()); ++j) {
    const int source = edges.in[j];
    const int nth = seen[source]++;
    if (source != r) {
      ph.recvs.push_back(Message{source, {Part{need[j], Loc{LocKind::kRecv, j}}}});
      continue;
    }
    const int k = op == GraphOp::kAllgather ? 0 : ir::graph::position_of(out, r, nth);
    ph.copies.push_back(Copy{need[j], Loc{LocKind::kSend, k}, Loc{LocKind::kRecv, j}});
  }
  RankSchedule s;
  if (!ph.sends.empty() || !ph.recvs.empty() || !ph.copies.empty()) s.phases.push_back(std::move(ph));
  return s;
}

ir::graph::GraphPlan linear_plan(GraphOp op, const Topology& t) {
  ir::graph::GraphPlanParts parts;
  parts.op = op;
  parts.topology = t;
  for (int r = 0; r < t.size(); ++r) parts.schedules.push_back(linear_schedule(op, t.ranks[r], r));
  return ir::graph::GraphPlan(std::move(parts));
}

}  // namespace cartplan::engine::graph
