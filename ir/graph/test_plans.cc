// Hand-built graph plans for tests.
#include "ir/graph/test_plans.h"

namespace cartplan::ir::graph {

Topology tiny_topology() {
  Topology t;
  t.ranks = {RankEdges{{1, 1, 2}, {1, 2}}, RankEdges{{0, 1}, {0, 0, 1}}, RankEdges{{0}, {0}}};
  return t;
}

GraphPlan naive_linear(GraphOp op, const Topology& t) {
  GraphPlanParts parts;
  parts.op = op;
  parts.topology = t;
  parts.schedules.resize(t.size());
  for (int r = 0; r < t.size(); ++r) parts.schedules[r].phases.resize(1);
  for (int r = 0; r < t.size(); ++r) {
    const std::vector<BlockId> sends = send_blocks_of(op, t, r);
    for (int k = 0; k < static_cast<int>(t.ranks[r].out.size()); ++k) {
      const int to = t.ranks[r].out[k];
      const int sk = op == GraphOp::kAllgather ? 0 : k;
      const BlockId b = sends[sk];
      const std::vector<BlockId> need = required_blocks_of(op, t, to);
      // The recv block of `to` this edge fills: the k-th edge rule.
      const int nth = occurrence(t.ranks[r].out, k);
      const int j = position_of(t.ranks[to].in, r, nth);
      if (to == r) {
        parts.schedules[r].phases[0].copies.push_back(Copy{b, Loc{LocKind::kSend, sk}, Loc{LocKind::kRecv, j}});
        continue;
      }
      parts.schedules[r].phases[0].sends.push_back(Message{to, {Part{b, Loc{LocKind::kSend, sk}}}});
      parts.schedules[to].phases[0].recvs.push_back(Message{r, {Part{b, Loc{LocKind::kRecv, j}}}});
    }
  }
  return GraphPlan(std::move(parts));
}

}  // namespace cartplan::ir::graph
