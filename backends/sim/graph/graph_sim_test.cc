// Tests of the graph simulator: correct plans deliver (both ops, v sizes), faults are caught.
#include "backends/sim/graph/graph_sim.h"

#include <doctest/doctest.h>

#include "engine/graph/generators.h"
#include "engine/graph/grid.h"
#include "engine/graph/grid_schedule.h"
#include "engine/graph/schedule.h"
#include "engine/graph/setup_run.h"
#include "ir/graph/test_plans.h"

namespace cartplan::sim::graph {

using engine::graph::BlockSizes;
using ir::graph::GraphOp;

TEST_CASE("linear and combining plans deliver with uniform and varied sizes") {
  Result<ir::graph::Topology> t = engine::graph::moore({5, 4}, 1, true, 0.1, 3);
  REQUIRE(t.ok());
  engine::graph::PairingOptions o;
  o.theta = 2;
  Result<engine::graph::SetupRun> run = engine::graph::run_setup(*t, o);
  REQUIRE(run.ok());
  for (GraphOp op : {GraphOp::kAllgather, GraphOp::kAlltoall}) {
    for (const BlockSizes& sizes : {BlockSizes::uniform(op, *t, 16), BlockSizes::varied(op, *t, 40, 9)}) {
      for (const ir::graph::GraphPlan& plan : {engine::graph::linear_plan(op, *t), engine::graph::plan_from_patterns(op, *t, run->patterns, o)}) {
        Result<GraphSimReport> r = simulate_graph(plan, sizes, {});
        REQUIRE_MESSAGE(r.ok(), r.error());
        CHECK_MESSAGE(r->ok, (r->errors.empty() ? "" : r->errors[0]));
        CHECK(r->messages > 0);
        CHECK(r->cost.max_rank_us > 0);
      }
    }
  }
}

TEST_CASE("grid on a 16x16 Moore graph, r=2: 8 messages per rank, bytes of the route trees") {
  Result<ir::graph::Topology> t = engine::graph::moore({16, 16}, 2, true, 0.0, 1);
  REQUIRE(t.ok());
  const std::vector<int> dims{16, 16};
  const auto patterns = engine::graph::sequential_grid_patterns(*t, dims);
  // allgather: phase 0 sends the own block to 4 column peers, phase 1 the own block and the 4
  // received ones to 4 row peers; alltoall: 5 blocks per message in both phases.
  for (auto [op, blocks] : {std::pair{GraphOp::kAllgather, 4 + 4 * 5}, std::pair{GraphOp::kAlltoall, 4 * 5 + 4 * 5}}) {
    const ir::graph::GraphPlan plan = engine::graph::grid_plan(op, *t, dims, patterns);
    Result<GraphSimReport> r = simulate_graph(plan, BlockSizes::uniform(op, *t, 8), {});
    REQUIRE_MESSAGE(r.ok(), r.error());
    CHECK_MESSAGE(r->ok, (r->errors.empty() ? "" : r->errors[0]));
    CHECK(r->messages == 256 * 8);
    CHECK(r->max_rank_messages == 16);
    CHECK(r->bytes == 256 * 8 * blocks);
    Result<GraphSimReport> v = simulate_graph(plan, BlockSizes::varied(op, *t, 40, 3), {});
    REQUIRE(v.ok());
    CHECK(v->ok);
  }
}

TEST_CASE("a corrupted byte and a lost message are reported") {
  const ir::graph::Topology t = ir::graph::tiny_topology();
  const ir::graph::GraphPlan plan = engine::graph::linear_plan(GraphOp::kAlltoall, t);
  GraphSimOptions o;
  o.fault = GraphSimOptions::Fault::kCorruptByte;
  Result<GraphSimReport> r = simulate_graph(plan, BlockSizes::uniform(GraphOp::kAlltoall, t, 4), o);
  REQUIRE(r.ok());
  CHECK_FALSE(r->ok);
  CHECK(r->errors.at(0) == "rank 1, recv[0]: does not hold the bytes of block (0->1#0)");
  o.fault = GraphSimOptions::Fault::kDropMessage;
  r = simulate_graph(plan, BlockSizes::uniform(GraphOp::kAlltoall, t, 4), o);
  CHECK_FALSE(r->ok);
  CHECK(r->errors.at(0) == "phase 0, rank 1, recv 1 (from 0): no message arrived");
}

TEST_CASE("a structurally invalid plan is an error, not a report") {
  ir::graph::GraphPlanParts parts = engine::graph::linear_plan(GraphOp::kAllgather, ir::graph::tiny_topology()).parts();
  parts.schedules[1].phases[0].recvs.clear();
  Result<GraphSimReport> r = simulate_graph(ir::graph::GraphPlan(parts), BlockSizes::uniform(GraphOp::kAllgather, parts.topology, 4), {});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().find("the plan is not well-formed: phase 0, rank 0: sends 2 message(s) to rank 1 but it receives 0") == 0);
}

}  // namespace cartplan::sim::graph
