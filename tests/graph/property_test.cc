// Property tests on 10^4 random multigraphs (1-10 ranks, densities 0.1-0.9, parallel and self
// edges, lists in random order): for both ops and every algorithm (linear, pairing, cumulative
// at theta 1-3), the distributed construction equals the sequential reference, the plan
// verifies, the simulator delivers every block with pseudo-random (v) sizes, and every 16th
// plan survives a JSON round trip byte for byte; no combining phase receives twice from one peer. The grid algorithm: grid_property_test.cc.
#include <doctest/doctest.h>

#include <string>

#include "engine/graph/choose.h"
#include "engine/graph/schedule.h"
#include "engine/graph/setup_run.h"
#include "tests/graph/plan_checks.h"
#include "tests/graph/random_graphs.h"
#include "engine/graph/sequential_pairing.h"

namespace cartplan::engine::graph {
namespace {

using ir::graph::GraphOp;

constexpr int kGraphs = 10000;

}  // namespace

TEST_CASE("10^4 random multigraphs: every algorithm and op verifies, delivers, round-trips") {
  int failures = 0;
  long long plans = 0, combined = 0;
  for (std::uint64_t seed = 1; seed <= kGraphs && failures < 5; ++seed) {
    const int p = 1 + static_cast<int>(seed % 10);
    const double q = 0.1 * static_cast<double>(1 + seed % 9);
    const ir::graph::Topology t = random_multigraph(p, q, seed);
    std::vector<ir::graph::GraphPlan> candidates;
    for (GraphOp op : {GraphOp::kAllgather, GraphOp::kAlltoall}) candidates.push_back(linear_plan(op, t));
    for (bool cumulative : {false, true}) {
      PairingOptions o;
      o.cumulative = cumulative;
      o.theta = 1 + static_cast<int>(seed % 3);
      Result<SetupRun> run = run_setup(t, o);
      REQUIRE_MESSAGE(run.ok(), run.error());
      if (!(run->patterns == sequential_patterns(t, o))) {
        ++failures;
        FAIL_CHECK(("graph " + std::to_string(seed) + ": distributed and reference patterns differ"));
      }
      for (const RankPattern& rp : run->patterns) combined += !rp.stages.empty();
      for (GraphOp op : {GraphOp::kAllgather, GraphOp::kAlltoall}) candidates.push_back(plan_from_patterns(op, t, run->patterns, o));
    }
    for (const ir::graph::GraphPlan& plan : candidates) {
      ++plans;
      std::string e = check_plan(plan, seed, seed % 16 == 0);
      if (e.empty() && plan.algorithm() != ir::graph::GraphAlgorithm::kLinear) e = one_receive_per_peer(plan);
      if (!e.empty()) {
        ++failures;
        FAIL_CHECK(("graph " + std::to_string(seed) + " (p=" + std::to_string(p) + "), " + ir::graph::to_string(plan.algorithm()) + " " +
                    ir::graph::to_string(plan.op()) + ": " + e));
      }
    }
  }
  CHECK(failures == 0);
  CHECK(plans == 6LL * kGraphs);
  CHECK(combined > kGraphs);  // the combining algorithms did pair ranks on many graphs
  MESSAGE("plans checked: " << plans << ", ranks with combining stages: " << combined);
}

}  // namespace cartplan::engine::graph
