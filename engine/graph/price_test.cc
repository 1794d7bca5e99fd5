// Tests of graph schedule pricing: per-rank sums, halves per message end, critical path.
#include "engine/graph/price.h"

#include <doctest/doctest.h>

#include "engine/graph/schedule.h"
#include "ir/graph/test_plans.h"

namespace cartplan::engine::graph {

TEST_CASE("linear allgather under the linear model: (sends + receives) / 2 messages per rank") {
  const ir::graph::Topology t = ir::graph::tiny_topology();
  const ir::graph::GraphPlan plan = linear_plan(ir::graph::GraphOp::kAllgather, t);
  const BlockSizes sizes = BlockSizes::uniform(ir::graph::GraphOp::kAllgather, t, 100);
  const CostModel m = CostModel::linear(1.0, 0.01);
  // Rank 0 sends 3 and receives 2 messages of 100 bytes: 2.5 * (1 + 1).
  CHECK(price_rank(plan, 0, sizes, m).us == doctest::Approx(5.0));
  const GraphCost c = price_plan(plan, sizes, m);
  CHECK(c.max_rank_us == doctest::Approx(5.0));
  CHECK(c.max_rank == 0);
  CHECK(c.messages == 5);
  CHECK(c.bytes == 500);
  CHECK(c.critical_path_us == doctest::Approx(5.0));
  CHECK(c.phases == 1);
}

TEST_CASE("phase, copy and rendezvous terms") {
  const ir::graph::Topology t = ir::graph::tiny_topology();
  const ir::graph::GraphPlan plan = linear_plan(ir::graph::GraphOp::kAlltoall, t);
  CostModel m = CostModel::linear(1.0, 0.0);
  m.phase_us = 0.5;
  m.copy_us_per_byte = 0.001;
  m.rendezvous_us = 2.0;
  m.eager_limit_bytes = 4064;
  const BlockSizes sizes = BlockSizes::uniform(ir::graph::GraphOp::kAlltoall, t, 5000);
  // Rank 1: sends 1 (to 0), receives 2 (from 0), copies its self edge: 0.5 + 1.5 * (1 + 2) + 5.
  CHECK(price_rank(plan, 1, sizes, m).us == doctest::Approx(0.5 + 4.5 + 5.0));
}

TEST_CASE("the critical path waits for the sender's previous phase") {
  // Rank 0 sends to 1 in phase 0 and to 2 in phase 1; rank 1 forwards nothing. Rank 2 waits.
  ir::graph::GraphPlanParts parts;
  parts.op = ir::graph::GraphOp::kAllgather;
  parts.topology.ranks = {{{1, 2}, {}}, {{}, {0}}, {{}, {0}}};
  parts.schedules.resize(3);
  using ir::graph::Loc;
  using ir::graph::LocKind;
  const ir::graph::Part own{ir::graph::BlockId{0, -1, 0}, Loc{LocKind::kSend, 0}};
  parts.schedules[0].phases.resize(2);
  parts.schedules[0].phases[0].sends.push_back({1, {own}});
  parts.schedules[0].phases[1].sends.push_back({2, {own}});
  parts.schedules[1].phases.resize(1);
  parts.schedules[1].phases[0].recvs.push_back({0, {{own.block, Loc{LocKind::kRecv, 0}}}});
  parts.schedules[2].phases.resize(2);
  parts.schedules[2].phases[1].recvs.push_back({0, {{own.block, Loc{LocKind::kRecv, 0}}}});
  const ir::graph::GraphPlan plan(parts);
  const CostModel m = CostModel::linear(1.0, 0.0);
  const GraphCost c = price_plan(plan, BlockSizes::uniform(ir::graph::GraphOp::kAllgather, plan.topology(), 8), m);
  CHECK(c.max_rank_us == doctest::Approx(1.0));
  CHECK(c.critical_path_us == doctest::Approx(1.0));  // rank 2 starts phase 1 after rank 0's 0.5
  CHECK(c.phases == 2);
}

}  // namespace cartplan::engine::graph

namespace cartplan::engine::graph {

TEST_CASE("block sizes: uniform, and varied (v forms) deterministic per seed and within [0, max]") {
  const ir::graph::Topology t = ir::graph::tiny_topology();
  const BlockSizes u = BlockSizes::uniform(ir::graph::GraphOp::kAlltoall, t, 12);
  CHECK(u.bytes(ir::graph::BlockId{0, 1, 1}) == 12);
  CHECK(u.mean_bytes() == doctest::Approx(12.0));
  const BlockSizes a = BlockSizes::varied(ir::graph::GraphOp::kAlltoall, t, 40, 7), b = BlockSizes::varied(ir::graph::GraphOp::kAlltoall, t, 40, 7);
  bool differ = false;
  for (int r = 0; r < t.size(); ++r) {
    for (const ir::graph::BlockId& id : ir::graph::send_blocks_of(ir::graph::GraphOp::kAlltoall, t, r)) {
      CHECK(a.bytes(id) == b.bytes(id));
      CHECK(a.bytes(id) >= 0);
      CHECK(a.bytes(id) <= 40);
      differ = differ || a.bytes(id) != a.bytes(ir::graph::BlockId{0, 1, 0});
    }
  }
  CHECK(differ);
  const BlockSizes g = BlockSizes::varied(ir::graph::GraphOp::kAllgather, t, 40, 7);
  CHECK(g.bytes(ir::graph::BlockId{2, -1, 0}) <= 40);
}

}  // namespace cartplan::engine::graph
