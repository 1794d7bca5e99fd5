// The distributed pattern construction (every rank a state machine over messages, run in one
// process by engine/graph/setup_run.h) against the sequential reference implementation of the
// same algorithm (reference_pairing.h): identical patterns on every rank, and the plans built
// from them verify. Prints the set-up rounds, messages and bytes of the larger cases.
#include <doctest/doctest.h>

#include <cstdio>

#include "engine/graph/generators.h"
#include "engine/graph/schedule.h"
#include "engine/graph/setup_run.h"
#include "ir/graph/verify.h"
#include "tests/graph/random_graphs.h"
#include "engine/graph/sequential_pairing.h"

namespace cartplan::engine::graph {
namespace {

void compare(const ir::graph::Topology& t, const PairingOptions& o, const char* name, bool print) {
  Result<SetupRun> run = run_setup(t, o);
  REQUIRE_MESSAGE(run.ok(), run.error());
  const std::vector<RankPattern> ref = sequential_patterns(t, o);
  REQUIRE(ref.size() == run->patterns.size());
  int mismatches = 0;
  for (std::size_t r = 0; r < ref.size(); ++r) {
    if (!(ref[r] == run->patterns[r]) && ++mismatches <= 3) FAIL_CHECK((std::string(name) + ": rank " + std::to_string(r) + " differs from the reference"));
  }
  CHECK(mismatches == 0);
  const ir::graph::GraphPlan plan = plan_from_patterns(ir::graph::GraphOp::kAllgather, t, run->patterns, o);
  const std::vector<std::string> errors = ir::graph::verify(plan);
  CHECK_MESSAGE(errors.empty(), (std::string(name) + ": " + (errors.empty() ? std::string() : errors[0])));
  if (print)
    std::printf("setup %-34s %-10s p=%-6d rounds=%-4d iterations=%-3d messages=%-10lld bytes=%-11lld max/rank: %lld msgs %lld B\n", name,
                o.cumulative ? "cumulative" : "pairing", t.size(), run->stats.rounds, run->stats.max_iterations,
                static_cast<long long>(run->stats.messages), static_cast<long long>(run->stats.bytes),
                static_cast<long long>(run->stats.max_rank_messages), static_cast<long long>(run->stats.max_rank_bytes));
}

PairingOptions mode(bool cumulative, int theta = 4) {
  PairingOptions o;
  o.cumulative = cumulative;
  o.theta = theta;
  return o;
}

}  // namespace

TEST_CASE("small random multigraphs: distributed = reference, every theta and mode") {
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    const int p = 2 + static_cast<int>(seed % 30);
    const ir::graph::Topology t = random_multigraph(p, 0.1 + 0.6 * static_cast<double>(seed % 7) / 7.0, seed);
    for (int theta : {1, 2, 4}) {
      for (bool cumulative : {false, true}) compare(t, mode(cumulative, theta), "multigraph", false);
    }
  }
}

TEST_CASE("the caps on iterations and matching sub-rounds end the construction alike on both sides") {
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const ir::graph::Topology t = random_multigraph(12 + static_cast<int>(seed % 20), 0.5, seed);
    for (int cap : {1, 2}) {
      PairingOptions o = mode(seed % 2 == 0, 2);
      o.max_iterations = cap;
      o.max_match_rounds = cap;
      compare(t, o, "capped multigraph", false);
      Result<SetupRun> run = run_setup(t, o);
      REQUIRE(run.ok());
      CHECK(run->stats.max_iterations <= cap);
    }
  }
}

TEST_CASE("hundreds of ranks: Erdos-Renyi, Moore with holes, meshes, OSU") {
  for (bool cumulative : {false, true}) {
    compare(*erdos_renyi(256, 0.05, 1), mode(cumulative), "random:p=256,q=0.05", true);
    compare(*moore({16, 16}, 2, true, 0.1, 2), mode(cumulative), "moore:dims=16x16,r=2,holes=0.1", true);
    compare(*mesh_partition({128, 128}, 200, 9), mode(cumulative, 2), "mesh:cells=128x128,parts=200", true);
    compare(*osu_neighborhood(343, 3, 1), mode(cumulative), "osu:p=343,d=3,r=1", true);
  }
}

TEST_CASE("p >= 1000 in the normal suite: Moore 2-D r=2 with holes and Erdos-Renyi") {
  for (bool cumulative : {false, true}) {
    compare(*moore({40, 32}, 2, true, 0.05, 3), mode(cumulative), "moore:dims=40x32,r=2,holes=0.05", true);
    compare(*erdos_renyi(1024, 0.01, 4), mode(cumulative), "random:p=1024,q=0.01", true);
  }
}

}  // namespace cartplan::engine::graph
