// The property tests' whole-plan checks: verify, simulate, JSON round trip.
#include "tests/graph/plan_checks.h"

#include <algorithm>
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

// Two receives from one peer in a phase: see plan_checks.h.
std::string one_receive_per_peer(const ir::graph::GraphPlan& plan) {
  for (std::size_t r = 0; r < plan.schedules().size(); ++r) {
    for (std::size_t f = 0; f < plan.schedules()[r].phases.size(); ++f) {
      std::vector<int> peers;
      for (const ir::graph::Message& m : plan.schedules()[r].phases[f].recvs) peers.push_back(m.peer);
      std::sort(peers.begin(), peers.end());
      if (std::adjacent_find(peers.begin(), peers.end()) != peers.end())
        return "rank " + std::to_string(r) + " phase " + std::to_string(f) + " receives twice from one peer";
    }
  }
  return "";
}

}  // namespace cartplan::engine::graph
