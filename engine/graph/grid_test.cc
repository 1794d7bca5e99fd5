// Tests of the virtual-grid routing: dims, the Moore graph's message count, distributed ==
// sequential, verified schedules for both ops with parallel and self edges.
#include "engine/graph/grid.h"

#include <doctest/doctest.h>

#include "engine/graph/generators.h"
#include "engine/graph/grid_schedule.h"
#include "engine/graph/grid_setup.h"
#include "ir/graph/verify.h"

namespace cartplan::engine::graph {
namespace {

using ir::graph::GraphOp;

void check_verified(const ir::graph::Topology& t, const std::vector<int>& dims) {
  Result<GridSetupRun> run = run_grid_setup(t, dims);
  REQUIRE_MESSAGE(run.ok(), run.error());
  CHECK(run->patterns == sequential_grid_patterns(t, dims));
  for (GraphOp op : {GraphOp::kAllgather, GraphOp::kAlltoall}) {
    const std::vector<std::string> errors = ir::graph::verify(grid_plan(op, t, dims, run->patterns));
    CHECK_MESSAGE(errors.empty(), (errors.empty() ? "" : errors[0]));
  }
}

}  // namespace

TEST_CASE("grid dims: balanced factors, extents of 1 dropped, coordinates row-major") {
  CHECK(grid_dims(256, 2) == std::vector<int>{16, 16});
  CHECK(grid_dims(256, 3) == std::vector<int>{8, 8, 4});
  CHECK(grid_dims(12, 2) == std::vector<int>{4, 3});
  CHECK(grid_dims(13, 3) == std::vector<int>{13});
  CHECK(grid_dims(1, 2).empty());
  const std::vector<int> dims{4, 3};
  CHECK(grid_coords(7, dims) == std::vector<int>{2, 1});
  CHECK(grid_rank({2, 1}, dims) == 7);
  CHECK(grid_hop(7, 11, 0, dims) == 10);  // (2,1) takes 11's coordinate 0 (3): (3,1)
  CHECK(grid_hop(7, 11, 1, dims) == 8);   // (2,1) takes 11's coordinate 1 (2): (2,2)
}

TEST_CASE("Moore graph 16x16, r=2, on a 16x16 grid: 8 messages per rank instead of 24") {
  Result<ir::graph::Topology> t = moore({16, 16}, 2, true, 0.0, 1);
  REQUIRE(t.ok());
  const std::vector<int> dims = grid_dims(256, 2);
  const std::vector<GridPattern> ps = sequential_grid_patterns(*t, dims);
  for (const GridPattern& p : ps) {
    CHECK(p.sends.size() == 8);  // 4 in each dimension
    CHECK(p.recvs.size() == 8);
  }
  // Phase 0 moves along the first dimension: the flows of 5 targets per row offset.
  CHECK(ps[0].sends[0].phase == 0);
  CHECK(ps[0].sends[0].flows.size() == 5);
  const ir::graph::GraphPlan plan = grid_plan(GraphOp::kAllgather, *t, dims, ps);
  CHECK(ir::graph::verify(plan).empty());
  CHECK(plan.phases() == 2);
}

TEST_CASE("distributed grid construction == sequential, verified, on random multigraphs") {
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    const int p = 1 + static_cast<int>(seed * 7 % 40);
    Result<ir::graph::Topology> t = erdos_renyi(p, 0.2, seed);
    REQUIRE(t.ok());
    for (int d : {1, 2, 3}) check_verified(*t, grid_dims(p, d));
  }
}

TEST_CASE("Moore graphs with holes on a larger communicator, and wrapped ones (parallel and self edges)") {
  // As the MPI tests run them: the graph's ranks first, then ranks without edges up to p.
  Result<ir::graph::Topology> holes = moore({2, 4}, 2, false, 0.2, 3);
  REQUIRE(holes.ok());
  for (int p : {holes->size(), 6, 8}) {
    ir::graph::Topology t = *holes;
    t.ranks.resize(static_cast<std::size_t>(p));
    for (int d : {1, 2, 3}) check_verified(t, grid_dims(p, d));
  }
  for (int p : {4, 6, 8}) {
    Result<ir::graph::Topology> wrapped = moore({2, (p + 1) / 2}, 2, true, 0.0, 1);
    REQUIRE(wrapped.ok());
    for (int d : {1, 2, 3}) check_verified(*wrapped, grid_dims(wrapped->size(), d));
  }
}

TEST_CASE("the grid with the most dimensions: p's factorization (kMaxGridD), the binary hypercube for 2^k") {
  CHECK(grid_dims(256, kMaxGridD) == std::vector<int>(8, 2));
  CHECK(grid_dims(1024, kMaxGridD) == std::vector<int>(10, 2));
  CHECK(grid_dims(360, kMaxGridD) == std::vector<int>{5, 3, 3, 2, 2, 2});
  CHECK(grid_dims(256, 6) == std::vector<int>{4, 4, 2, 2, 2, 2});
  CHECK(grid_dims(97, kMaxGridD) == std::vector<int>{97});
  CHECK(grid_dims(1 << 30, kMaxGridD) == std::vector<int>(30, 2));
}

TEST_CASE("distributed == sequential on many dimensions: p = 256 8-D, 1024 10-D, odd factors") {
  struct Case {
    int p;
    double q;
    std::vector<int> ds;
  };
  // 256: 5- to 8-D; 1024: 10-D (the hypercube); 360 = 5 x 3^2 x 2^3 and 270 = 5 x 3^3 x 2: odd
  // factors, the most-D grid and the ones between.
  for (const Case& c : {Case{256, 0.05, {5, 6, 8}}, Case{1024, 0.01, {kMaxGridD}}, Case{360, 0.05, {4, 5, kMaxGridD}},
                        Case{270, 0.05, {5, kMaxGridD}}}) {
    Result<ir::graph::Topology> t = erdos_renyi(c.p, c.q, 7);
    REQUIRE(t.ok());
    for (int d : c.ds) {
      CAPTURE(c.p);
      CAPTURE(d);
      check_verified(*t, grid_dims(c.p, d));
    }
  }
}

TEST_CASE("set-up on the binary hypercube: one message per rank and round, log2 p rounds") {
  Result<ir::graph::Topology> t = erdos_renyi(64, 0.2, 3);
  REQUIRE(t.ok());
  const std::vector<int> dims = grid_dims(64, kMaxGridD);
  REQUIRE(dims.size() == 6);
  Result<GridSetupRun> run = run_grid_setup(*t, dims);
  REQUIRE(run.ok());
  CHECK(run->stats.rounds == 6);
  CHECK(run->stats.max_rank_messages <= 6);
  const std::vector<GridPattern> ps = sequential_grid_patterns(*t, dims);
  for (const GridPattern& p : ps) CHECK(p.sends.size() <= 6);  // at most 1 partner per dimension
}

TEST_CASE("parallel and self edges: the k-th edge rule holds through the grid") {
  // Rank 0 sends twice to 5 and once to itself; 5 lists 0 twice; 3 sends to 4 twice.
  ir::graph::Topology t;
  t.ranks.resize(6);
  t.ranks[0].out = {5, 0, 5};
  t.ranks[0].in = {0};
  t.ranks[5].in = {0, 3, 0};
  t.ranks[3].out = {4, 5, 4};
  t.ranks[4].in = {3, 3};
  REQUIRE(!ir::graph::topology_error(t));
  check_verified(t, {3, 2});
  check_verified(t, {6});
}

TEST_CASE("set-up: d rounds, dims[k]-1 messages per rank and round, 12 bytes per flow") {
  Result<ir::graph::Topology> t = moore({8, 8}, 1, true, 0.0, 1);
  REQUIRE(t.ok());
  Result<GridSetupRun> run = run_grid_setup(*t, {8, 8});
  REQUIRE(run.ok());
  CHECK(run->stats.rounds == 2);
  CHECK(run->stats.messages == 64 * 14);
  CHECK(run->stats.max_rank_messages == 14);
  // Round 0: the 8 own flows go out except the 2 whose first coordinate is the rank's; of the 6
  // received, 2 have arrived, so round 1 sends 4 of them on with the 2 own kept.
  CHECK(run->stats.bytes == 64 * 12 * (6 + 6));
}

}  // namespace cartplan::engine::graph
