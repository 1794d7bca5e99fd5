// Tests of graph schedules: linear and combining plans verify for both ops, on graphs with
// duplicate and self edges, and combining reduces the messages where friends exist.
#include "engine/graph/schedule.h"

#include <doctest/doctest.h>

#include "engine/graph/generators.h"
#include "engine/graph/setup_run.h"
#include "ir/graph/test_plans.h"
#include "ir/graph/verify.h"

namespace cartplan::engine::graph {
namespace {

using ir::graph::GraphOp;

std::string joined(const std::vector<std::string>& errors) {
  std::string s;
  for (const std::string& e : errors) s += e + "\n";
  return s;
}

std::int64_t total_messages(const ir::graph::GraphPlan& plan) {
  std::int64_t n = 0;
  for (const auto& s : plan.schedules())
    for (const auto& ph : s.phases) n += static_cast<std::int64_t>(ph.sends.size());
  return n;
}

}  // namespace

TEST_CASE("the linear plan is the hand-built one and verifies, with duplicates and self edges") {
  for (GraphOp op : {GraphOp::kAllgather, GraphOp::kAlltoall}) {
    const ir::graph::GraphPlan plan = linear_plan(op, ir::graph::tiny_topology());
    CHECK(ir::graph::verify(plan).empty());
    CHECK(plan == ir::graph::naive_linear(op, ir::graph::tiny_topology()));
  }
}

TEST_CASE("combining plans verify on small periodic Moore grids (parallel edges, self edges) and holes") {
  for (bool cumulative : {false, true}) {
    for (const std::vector<int>& dims : std::vector<std::vector<int>>{{3, 3}, {2, 5}, {4, 4}, {6, 5}}) {
      Result<ir::graph::Topology> t = moore(dims, 1, true, dims[0] == 6 ? 0.2 : 0.0, 7);
      REQUIRE(t.ok());
      PairingOptions o;
      o.cumulative = cumulative;
      o.theta = 2;
      Result<SetupRun> run = run_setup(*t, o);
      REQUIRE_MESSAGE(run.ok(), run.error());
      for (GraphOp op : {GraphOp::kAllgather, GraphOp::kAlltoall}) {
        const ir::graph::GraphPlan plan = plan_from_patterns(op, *t, run->patterns, o);
        CHECK_MESSAGE(ir::graph::verify(plan).empty(), joined(ir::graph::verify(plan)));
        CHECK(ir::graph::verify(linear_plan(op, *t)).empty());
      }
    }
  }
}

TEST_CASE("pairing on a Moore grid sends fewer messages than linear, cumulative fewer still") {
  Result<ir::graph::Topology> t = moore({12, 12}, 2, true, 0.0, 1);
  REQUIRE(t.ok());
  std::int64_t messages[3] = {total_messages(linear_plan(GraphOp::kAllgather, *t)), 0, 0};
  for (bool cumulative : {false, true}) {
    PairingOptions o;
    o.cumulative = cumulative;
    Result<SetupRun> run = run_setup(*t, o);
    REQUIRE(run.ok());
    const ir::graph::GraphPlan plan = plan_from_patterns(GraphOp::kAllgather, *t, run->patterns, o);
    CHECK(ir::graph::verify(plan).empty());
    messages[cumulative ? 2 : 1] = total_messages(plan);
  }
  CHECK(messages[0] == 144 * 24);
  CHECK(messages[1] < messages[0]);
  CHECK(messages[2] < messages[1]);
}

}  // namespace cartplan::engine::graph
