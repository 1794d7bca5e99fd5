// Tests of the graph plan JSON: canonical round trips and strict errors naming the JSON path.
#include "ir/graph/json.h"

#include <doctest/doctest.h>

#include "ir/graph/test_plans.h"

namespace cartplan::ir::graph {
namespace {

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  REQUIRE_MESSAGE(pos != std::string::npos, from);
  return text.replace(pos, from.size(), to);
}

std::string error_of(const std::string& text) {
  Result<GraphPlan> r = graph_plan_from_json_string(text);
  REQUIRE_FALSE(r.ok());
  return r.error();
}

}  // namespace

TEST_CASE("print -> parse -> print is identical, both ops") {
  for (GraphOp op : {GraphOp::kAllgather, GraphOp::kAlltoall}) {
    const GraphPlan plan = naive_linear(op, tiny_topology());
    const std::string text = to_json_string(plan);
    Result<GraphPlan> back = graph_plan_from_json_string(text);
    REQUIRE_MESSAGE(back.ok(), back.error());
    CHECK(*back == plan);
    CHECK(to_json_string(*back) == text);
  }
}

TEST_CASE("the canonical form: header, one line per rank's edges, one line per short message") {
  const std::string text = to_json_string(naive_linear(GraphOp::kAllgather, tiny_topology()));
  CHECK(text.rfind("{\n  \"schema\": \"cartplan.graph_plan/1\",\n  \"op\": \"allgather\",\n  \"algorithm\": \"linear\",\n", 0) == 0);
  CHECK(text.find("    {\"rank\": 0, \"out\": [1, 1, 2], \"in\": [1, 2]},\n") != std::string::npos);
  CHECK(text.find("{\"to\": 1, \"parts\": [{\"block\": [0], \"at\": [\"send\", 0]}]}") != std::string::npos);
  CHECK(text.back() == '\n');
}

TEST_CASE("pairing plans carry theta; linear plans must not") {
  GraphPlanParts parts = naive_linear(GraphOp::kAllgather, tiny_topology()).parts();
  parts.algorithm = GraphAlgorithm::kPairing;
  parts.theta = 4;
  const std::string text = to_json_string(GraphPlan(parts));
  CHECK(text.find("\"algorithm\": \"pairing\",\n  \"theta\": 4,") != std::string::npos);
  CHECK(graph_plan_from_json_string(text).ok());
  CHECK(error_of(replaced(text, "  \"theta\": 4,\n", "")) == "$: missing field 'theta' (required by algorithm \"pairing\")");
  const std::string linear = to_json_string(naive_linear(GraphOp::kAllgather, tiny_topology()));
  CHECK(error_of(replaced(linear, "\"algorithm\": \"linear\",", "\"algorithm\": \"linear\", \"theta\": 4,")) ==
        "$.theta: a linear plan has no friendship threshold");
}

TEST_CASE("grid plans carry their dims, which multiply to the ranks, and no theta") {
  GraphPlanParts parts = naive_linear(GraphOp::kAllgather, tiny_topology()).parts();
  parts.algorithm = GraphAlgorithm::kGrid;
  parts.dims = {parts.topology.size()};
  const std::string text = to_json_string(GraphPlan(parts));
  const std::string dims = "\"dims\": [" + std::to_string(parts.topology.size()) + "]";
  CHECK(text.find("\"algorithm\": \"grid\",\n  " + dims + ",") != std::string::npos);
  Result<GraphPlan> back = graph_plan_from_json_string(text);
  REQUIRE_MESSAGE(back.ok(), back.error());
  CHECK(back->dims() == parts.dims);
  CHECK(error_of(replaced(text, "  " + dims + ",\n", "")) == "$: missing field 'dims' (required by algorithm \"grid\")");
  CHECK(error_of(replaced(text, dims, "\"dims\": [2, 7]")) == "$.dims: the grid has 14 places but the topology has " +
                                                                  std::to_string(parts.topology.size()) + " ranks");
  CHECK(error_of(replaced(text, dims, "\"dims\": [0]")) == "$.dims[0]: 0 is out of range [1, 1048576]");
  CHECK(error_of(replaced(text, dims, dims + ", \"theta\": 2")) == "$.theta: a grid plan has no friendship threshold");
  const std::string linear = to_json_string(naive_linear(GraphOp::kAllgather, tiny_topology()));
  CHECK(error_of(replaced(linear, "\"algorithm\": \"linear\",", "\"algorithm\": \"linear\", \"dims\": [3],")) ==
        "$.dims: a linear plan has no virtual grid");
}

TEST_CASE("errors name the JSON path") {
  const std::string a2a = to_json_string(naive_linear(GraphOp::kAlltoall, tiny_topology()));
  const std::string ag = to_json_string(naive_linear(GraphOp::kAllgather, tiny_topology()));
  CHECK(error_of(replaced(ag, "graph_plan/1", "graph_plan/9")) == "$.schema: expected \"cartplan.graph_plan/1\", got \"cartplan.graph_plan/9\"");
  CHECK(error_of(replaced(ag, "\"op\": \"allgather\"", "\"op\": \"scan\"")) == "$.op: unknown value \"scan\" (expected allgather, alltoall)");
  CHECK(error_of(replaced(ag, "\"op\": \"allgather\",", "\"op\": \"allgather\", \"extra\": 1,")) == "$: unknown field 'extra'");
  CHECK(error_of(replaced(ag, "\"out\": [1, 1, 2]", "\"out\": [1, 1, 3]")) == "$.topology[0].out[2]: 3 is out of range [0, 2]");
  CHECK(error_of(replaced(ag, "\"out\": [1, 1, 2]", "\"out\": [1, 2]")) ==
        "$.topology: rank 0 lists rank 1 1 time(s) among its destinations, but rank 1 lists rank 0 2 time(s) among its sources");
  CHECK(error_of(replaced(ag, "\"at\": [\"send\", 0]", "\"at\": [\"tmp\", 0]")) ==
        "$.schedules[0].phases[0].send[0].parts[0].at[0]: unknown value \"tmp\" (expected send, recv, temp)");
  CHECK(error_of(replaced(ag, "\"at\": [\"send\", 0]", "\"at\": [\"send\", 1]")) ==
        "$.schedules[0].phases[0].send[0].parts[0].at[1]: 1 is out of range [0, 0]");
  CHECK(error_of(replaced(ag, "\"at\": [\"send\", 0]", "\"at\": [\"temp\", 0]")) ==
        "$.schedules[0].phases[0].send[0].parts[0].at: rank 0 has no temp blocks");
  CHECK(error_of(replaced(ag, "\"block\": [0]", "\"block\": [0, 1, 0]")) ==
        "$.schedules[0].phases[0].send[0].parts[0].block: a block of allgather is [origin], got [0,1,0]");
  CHECK(error_of(replaced(a2a, "\"block\": [0, 1, 0]", "\"block\": [0, 1, 2]")) ==
        "$.schedules[0].phases[0].send[0].parts[0].block[2]: 2 is out of range [0, 1]");
  CHECK(error_of(replaced(a2a, "\"block\": [0, 1, 0]", "\"block\": [2, 1, 0]")) ==
        "$.schedules[0].phases[0].send[0].parts[0].block: rank 2 has no edge to rank 1");
  CHECK(error_of(replaced(ag, "\"rank\": 1,\n      \"temps\"", "\"rank\": 2,\n      \"temps\"")) == "$.schedules[1].rank: 2 is out of range [1, 1]");
  CHECK(error_of(replaced(ag, "\"op\": \"allgather\",", "\"op\": \"allgather\", \"op\": \"allgather\",")) == "$: duplicate field 'op'");
  CHECK(error_of("{\"schema\": ").find("invalid JSON at byte") == 0);
  CHECK(error_of(std::string(40, '[')).find("nesting deeper than 32 levels") != std::string::npos);
}

}  // namespace cartplan::ir::graph
