// The distributed pattern construction against the reference at p = 10^4 (tagged "manual":
// run it with `bazel test //tests/graph:distributed_large_test`; it takes about a minute).
#include <doctest/doctest.h>

#include <cstdio>

#include "engine/graph/generators.h"
#include "engine/graph/grid.h"
#include "engine/graph/grid_schedule.h"
#include "engine/graph/grid_setup.h"
#include "engine/graph/schedule.h"
#include "engine/graph/setup_run.h"
#include "ir/graph/verify.h"
#include "engine/graph/sequential_pairing.h"

namespace cartplan::engine::graph {

TEST_CASE("p = 10^4: Moore 2-D r=2 with holes, 3-D r=1, and a sparse Erdos-Renyi graph") {
  const std::pair<const char*, ir::graph::Topology> graphs[] = {
      {"moore:dims=100x100,r=2", *moore({100, 100}, 2, true, 0.0, 1)},
      {"moore:dims=23x22x22,r=1,holes=0.06", *moore({23, 22, 22}, 1, true, 0.06, 2)},
      {"random:p=10000,q=0.001", *erdos_renyi(10000, 0.001, 3)},
  };
  for (const auto& [name, t] : graphs) {
    CHECK(t.size() >= 10000);
    for (bool cumulative : {false, true}) {
      PairingOptions o;
      o.cumulative = cumulative;
      Result<SetupRun> run = run_setup(t, o);
      REQUIRE_MESSAGE(run.ok(), run.error());
      const std::vector<RankPattern> ref = sequential_patterns(t, o);
      int mismatches = 0;
      for (std::size_t r = 0; r < ref.size(); ++r) mismatches += !(ref[r] == run->patterns[r]);
      CHECK(mismatches == 0);
      CHECK(ir::graph::verify(plan_from_patterns(ir::graph::GraphOp::kAlltoall, t, run->patterns, o)).empty());
      std::printf("setup %-36s %-10s p=%-6d rounds=%-4d iterations=%-3d messages=%-10lld bytes=%-11lld max/rank: %lld msgs %lld B\n", name,
                  cumulative ? "cumulative" : "pairing", t.size(), run->stats.rounds, run->stats.max_iterations,
                  static_cast<long long>(run->stats.messages), static_cast<long long>(run->stats.bytes),
                  static_cast<long long>(run->stats.max_rank_messages), static_cast<long long>(run->stats.max_rank_bytes));
    }
  }
}

TEST_CASE("p = 10^4, grid in 2 and 3 dimensions: distributed = reference, verified") {
  const std::pair<const char*, ir::graph::Topology> graphs[] = {
      {"moore:dims=100x100,r=2", *moore({100, 100}, 2, true, 0.0, 1)},
      {"moore:dims=23x22x22,r=1,holes=0.06", *moore({23, 22, 22}, 1, true, 0.06, 2)},
      {"random:p=10000,q=0.001", *erdos_renyi(10000, 0.001, 3)},
  };
  for (const auto& [name, t] : graphs) {
    for (int d : {2, 3}) {
      const std::vector<int> dims = grid_dims(t.size(), d);
      Result<GridSetupRun> run = run_grid_setup(t, dims);
      REQUIRE_MESSAGE(run.ok(), run.error());
      CHECK(run->patterns == sequential_grid_patterns(t, dims));
      for (ir::graph::GraphOp op : {ir::graph::GraphOp::kAllgather, ir::graph::GraphOp::kAlltoall})
        CHECK(ir::graph::verify(grid_plan(op, t, dims, run->patterns)).empty());
      std::printf("setup %-36s grid %zu-D p=%-6d rounds=%-2d messages=%-10lld bytes=%-11lld max/rank: %lld msgs %lld B\n", name,
                  dims.size(), t.size(), run->stats.rounds, static_cast<long long>(run->stats.messages),
                  static_cast<long long>(run->stats.bytes), static_cast<long long>(run->stats.max_rank_messages),
                  static_cast<long long>(run->stats.max_rank_bytes));
    }
  }
}

}  // namespace cartplan::engine::graph
