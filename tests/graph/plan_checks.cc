// The property tests' whole-plan checks: verify, simulate, JSON round trip.
#include "tests/graph/plan_checks.h"

#include <vector>

#include "backends/sim/graph/graph_sim.h"
#include "ir/graph/json.h"
#include "ir/graph/verify.h"

namespace cartplan::engine::graph {

std::string check_plan(const ir::graph::GraphPlan& plan, std::uint64_t seed, bool round_trip) {
  const std::vector<std::string> errors = ir::graph::verify(plan, 3);
  if (!errors.empty()) return "verify: " + errors[0];
  const BlockSizes sizes = BlockSizes::varied(plan.op(), plan.topology(), 24, seed);
  Result<sim::graph::GraphSimReport> r = sim::graph::simulate_graph(plan, sizes, {});
  if (!r) return "simulate: " + r.error();
  if (!r->ok) return "simulate: " + r->errors.at(0);
  if (round_trip) {
    const std::string text = ir::graph::to_json_string(plan);
    Result<ir::graph::GraphPlan> back = ir::graph::graph_plan_from_json_string(text);
    if (!back) return "json: " + back.error();
    if (!(*back == plan) || ir::graph::to_json_string(*back) != text) return "json: the round trip changed the plan";
  }
  return "";
}

}  // namespace cartplan::engine::graph
