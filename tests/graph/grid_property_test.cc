// Property tests of the grid algorithm on 10^4 graphs: random multigraphs of 1-16 ranks (so
// 2-D and 3-D grids exist; parallel and self edges, lists in random order) and, every 1000th,
// a larger Moore graph with holes or a sparse random graph (p up to 2500). For the distinct 2-
// and 3-D grids (every 4th graph also the 1-D one) and both ops: the distributed construction equals the sequential reference, the plan
// verifies (no phase receives twice from one peer), the simulator delivers every block with pseudo-random (v) sizes, and every 16th
// plan survives a JSON round trip byte for byte.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/graph/generators.h"
#include "engine/graph/grid.h"
#include "engine/graph/grid_schedule.h"
#include "engine/graph/grid_setup.h"
#include "tests/graph/plan_checks.h"
#include "tests/graph/random_graphs.h"

namespace cartplan::engine::graph {
namespace {

using ir::graph::GraphOp;

constexpr int kGraphs = 10000;

// The distinct grids of t in 2 and 3 dimensions (and, every 4th seed, 1) for both ops, the
// distributed construction checked against the reference; a description of the first failure, or "".
std::string check_grid(const ir::graph::Topology& t, std::uint64_t seed, int* plans) {
  std::vector<std::vector<int>> grids;
  for (int d : {1, 2, 3}) {
    const std::vector<int> dims = grid_dims(t.size(), d);
    if ((d > 1 || seed % 4 == 0) && std::find(grids.begin(), grids.end(), dims) == grids.end()) grids.push_back(dims);
  }
  for (const std::vector<int>& dims : grids) {
    Result<GridSetupRun> run = run_grid_setup(t, dims);
    if (!run) return "construction: " + run.error();
    if (!(run->patterns == sequential_grid_patterns(t, dims))) return "distributed and reference patterns differ";
    for (GraphOp op : {GraphOp::kAllgather, GraphOp::kAlltoall}) {
      ++*plans;
      const ir::graph::GraphPlan plan = grid_plan(op, t, dims, run->patterns);
      std::string e = check_plan(plan, seed, seed % 16 == 0);
      if (e.empty()) e = one_receive_per_peer(plan);
      if (!e.empty()) return std::to_string(dims.size()) + "-D grid, " + ir::graph::to_string(op) + ": " + e;
    }
  }
  return "";
}

// Every 1000th seed: a larger graph, Moore with holes or sparse random.
ir::graph::Topology grid_graph(std::uint64_t seed) {
  if (seed % 1000 != 0) return random_multigraph(1 + static_cast<int>(seed % 16), 0.1 * static_cast<double>(1 + seed % 9), seed);
  if (seed % 2000 == 0) return *erdos_renyi(500 + static_cast<int>(seed % 2500), 0.004, seed);
  const int a = 8 + static_cast<int>(seed % 29), b = 6 + static_cast<int>(seed / 7 % 23);
  return *moore({a, b}, 1 + static_cast<int>(seed % 2), seed % 3 != 0, 0.15, seed);
}

}  // namespace

TEST_CASE("grid: 10^4 graphs, distributed = reference, both ops verify, deliver, round-trip") {
  int failures = 0, plans = 0;
  for (std::uint64_t seed = 1; seed <= kGraphs && failures < 5; ++seed) {
    const ir::graph::Topology t = grid_graph(seed);
    const std::string e = check_grid(t, seed, &plans);
    if (!e.empty()) {
      ++failures;
      FAIL_CHECK(("graph " + std::to_string(seed) + " (p=" + std::to_string(t.size()) + "): " + e));
    }
  }
  CHECK(failures == 0);
  CHECK(plans > 2 * kGraphs);
  MESSAGE("grid plans checked: " << plans);
}

}  // namespace cartplan::engine::graph
