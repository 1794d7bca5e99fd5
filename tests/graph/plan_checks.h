// The whole-plan checks of the property tests: verify, the simulator with pseudo-random (v)
// sizes, and optionally a JSON round trip byte for byte.
//
//   std::string e = check_plan(plan, seed, /*round_trip=*/true);   // "" when all pass
#pragma once

#include <cstdint>
#include <string>

#include "ir/graph/plan.h"

namespace cartplan::engine::graph {

// A description of the first failure, or "".
std::string check_plan(const ir::graph::GraphPlan& plan, std::uint64_t seed, bool round_trip);
// "" when no phase of any rank receives two messages from one peer (docs/graphs-mpi.md, "Blocking
// v calls without a size pass per call": no combining planner makes such phases;
// graph_sized_calls.cc would still take their with-sizes messages in order).
std::string one_receive_per_peer(const ir::graph::GraphPlan& plan);

}  // namespace cartplan::engine::graph
