// Tests of the graph optimizer: linear where combining does not pay, combining where it does.
#include "engine/graph/choose.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <utility>

#include "engine/graph/generators.h"
#include "engine/graph/grid.h"
#include "ir/graph/verify.h"

namespace cartplan::engine::graph {

using ir::graph::GraphAlgorithm;
using ir::graph::GraphOp;

TEST_CASE("auto: six candidates for both ops (the 4-D grid too), all verify; a dense Moore grid picks a combining schedule for small blocks") {
  Result<ir::graph::Topology> t = moore({10, 10}, 2, true, 0.0, 1);
  REQUIRE(t.ok());
  const BlockSizes sizes = BlockSizes::uniform(GraphOp::kAllgather, *t, 8);
  Result<std::vector<GraphCandidate>> c = graph_candidates(GraphOp::kAllgather, *t, sizes, GraphPlanOptions{});
  REQUIRE_MESSAGE(c.ok(), c.error());
  REQUIRE(c->size() == 6);  // linear, pairing, cumulative, grid 10x10, grid 5x5x4, grid 5x5x2x2
  CHECK((*c)[0].plan.algorithm() == GraphAlgorithm::kLinear);
  CHECK((*c)[3].plan.dims() == std::vector<int>{10, 10});
  CHECK((*c)[4].plan.dims() == std::vector<int>{5, 5, 4});
  CHECK((*c)[4].setup->rounds == 3);
  CHECK((*c)[5].plan.dims() == std::vector<int>{5, 5, 2, 2});
  CHECK((*c)[5].setup->rounds == 4);
  // Alltoall by default too; a list without 4 (the CLI's --grid-dims 2,3) leaves it out.
  Result<std::vector<GraphCandidate>> a2a = graph_candidates(GraphOp::kAlltoall, *t, BlockSizes::uniform(GraphOp::kAlltoall, *t, 8), {});
  REQUIRE(a2a.ok());
  REQUIRE(a2a->size() == 6);
  CHECK((*a2a)[5].plan.dims() == std::vector<int>{5, 5, 2, 2});
  CHECK(ir::graph::verify((*a2a)[5].plan).empty());
  GraphPlanOptions without4;
  without4.grid_dimensions = {2, 3};
  Result<std::vector<GraphCandidate>> five = graph_candidates(GraphOp::kAllgather, *t, sizes, without4);
  REQUIRE(five.ok());
  REQUIRE(five->size() == 5);
  CHECK((*five)[4].plan.dims() == std::vector<int>{5, 5, 4});
  for (const GraphCandidate& g : *c) CHECK(ir::graph::verify(g.plan).empty());
  CHECK((*c)[1].setup.has_value());
  const std::size_t pick = pick_graph_candidate(*c);
  CHECK((*c)[pick].plan.algorithm() != GraphAlgorithm::kLinear);
  CHECK((*c)[pick].cost.max_rank_us <= 0.9 * (*c)[0].cost.max_rank_us);
}

TEST_CASE("auto keeps linear where no rank has friends, and for large blocks") {
  Result<ir::graph::Topology> sparse = erdos_renyi(64, 0.02, 1);
  REQUIRE(sparse.ok());
  Result<ir::graph::GraphPlan> p = make_graph_plan(GraphOp::kAlltoall, *sparse, BlockSizes::uniform(GraphOp::kAlltoall, *sparse, 8), {});
  REQUIRE(p.ok());
  CHECK(p->algorithm() == GraphAlgorithm::kLinear);
  Result<ir::graph::Topology> t = moore({10, 10}, 2, true, 0.0, 1);
  Result<ir::graph::GraphPlan> big = make_graph_plan(GraphOp::kAlltoall, *t, BlockSizes::uniform(GraphOp::kAlltoall, *t, 1 << 20), {});
  REQUIRE(big.ok());
  CHECK(big->algorithm() == GraphAlgorithm::kLinear);
}

TEST_CASE("pick: a combining candidate must clear the 10 % margin") {
  Result<ir::graph::Topology> t = moore({6, 6}, 1, true, 0.0, 1);
  GraphPlanOptions o;
  Result<std::vector<GraphCandidate>> c = graph_candidates(GraphOp::kAllgather, *t, BlockSizes::uniform(GraphOp::kAllgather, *t, 8), o);
  REQUIRE(c.ok());
  std::vector<GraphCandidate> two = {(*c)[0], (*c)[1]};
  two[1].cost.max_rank_us = 0.95 * two[0].cost.max_rank_us;
  CHECK(pick_graph_candidate(two) == 0);
  two[1].cost.max_rank_us = 0.85 * two[0].cost.max_rank_us;
  CHECK(pick_graph_candidate(two) == 1);
  o.pairing.theta = 0;
  CHECK(graph_candidates(GraphOp::kAllgather, *t, BlockSizes::uniform(GraphOp::kAllgather, *t, 8), o).error() == "theta must be at least 1, got 0");
}

TEST_CASE("grid: forced, the cheapest of 2, 3, 4 and the most dimensions; a prime p falls back to a 1-D grid") {
  Result<ir::graph::Topology> t = moore({16, 16}, 2, true, 0.0, 1);
  REQUIRE(t.ok());
  GraphPlanOptions o;
  o.algo = GraphAlgoChoice::kGrid;
  const BlockSizes sizes = BlockSizes::uniform(GraphOp::kAllgather, *t, 8);
  Result<std::vector<GraphCandidate>> c = graph_candidates(GraphOp::kAllgather, *t, sizes, o);
  REQUIRE(c.ok());
  REQUIRE(c->size() == 4);
  // 8 messages per rank on the 16x16 grid against 24 direct ones.
  CHECK((*c)[0].cost.max_rank_messages == 16);
  CHECK((*c)[2].plan.dims() == std::vector<int>{4, 4, 4, 4});
  CHECK((*c)[3].plan.dims() == std::vector<int>(8, 2));  // the most-D grid: the binary hypercube
  const std::size_t pick = pick_graph_candidate(*c);
  for (const GraphCandidate& g : *c) CHECK(g.cost.max_rank_us >= (*c)[pick].cost.max_rank_us);
  o.sequential_construction = true;
  Result<std::vector<GraphCandidate>> seq = graph_candidates(GraphOp::kAllgather, *t, sizes, o);
  REQUIRE(seq.ok());
  CHECK((*seq)[0].plan == (*c)[0].plan);
  CHECK(!(*seq)[0].setup.has_value());
  Result<ir::graph::Topology> prime = erdos_renyi(13, 0.3, 2);
  Result<ir::graph::GraphPlan> p = make_graph_plan(GraphOp::kAlltoall, *prime, BlockSizes::uniform(GraphOp::kAlltoall, *prime, 8), o);
  REQUIRE(p.ok());
  CHECK(p->algorithm() == GraphAlgorithm::kGrid);
  CHECK(p->dims() == std::vector<int>{13});
  CHECK(ir::graph::verify(*p).empty());
  // Auto has no 1-D grid: linear covers it.
  Result<std::vector<GraphCandidate>> autos = graph_candidates(GraphOp::kAlltoall, *prime, BlockSizes::uniform(GraphOp::kAlltoall, *prime, 8), {});
  REQUIRE(autos.ok());
  CHECK(autos->size() == 3);
}

TEST_CASE("Erdos-Renyi q = 0.05 at p = 256: more grid dimensions, fewer messages on the busiest rank, more bytes") {
  Result<ir::graph::Topology> t = erdos_renyi(256, 0.05, 1);
  REQUIRE(t.ok());
  GraphPlanOptions o;
  o.sequential_construction = true;
  o.model = CostModel::linear(1.0, 0.001);  // 1 us a message, 1 ns a byte
  for (std::int64_t bytes : {8, 1 << 16}) {
    const BlockSizes sizes = BlockSizes::uniform(GraphOp::kAlltoall, *t, bytes);
    Result<std::vector<GraphCandidate>> c = graph_candidates(GraphOp::kAlltoall, *t, sizes, o);
    REQUIRE(c.ok());
    REQUIRE(c->size() == 7);  // linear, pairing, cumulative, grid 16x16, 8x8x4, 4x4x4x4, 2^8
    const GraphCandidate &linear = (*c)[0], &grid3 = (*c)[4], &grid4 = (*c)[5], &most = (*c)[6];
    REQUIRE(grid4.plan.dims() == std::vector<int>{4, 4, 4, 4});
    REQUIRE(most.plan.dims() == std::vector<int>(8, 2));
    // The hypercube: at most 1 peer each way per phase, 16 message ends; more bytes again.
    CHECK(most.cost.max_rank_messages <= 16);
    CHECK(most.cost.max_rank_messages < grid4.cost.max_rank_messages);
    CHECK(most.cost.bytes > grid4.cost.bytes);
    for (const GraphCandidate& g : *c) CHECK(ir::graph::verify(g.plan).empty());
    // A 4-D grid rank talks to at most 3 peers each way per phase: 24 message ends.
    CHECK(grid4.cost.max_rank_messages <= 24);
    CHECK(grid4.cost.max_rank_messages < grid3.cost.max_rank_messages);
    CHECK(grid3.cost.max_rank_messages < linear.cost.max_rank_messages);
    // Every block crosses one hop per coordinate it differs in: more bytes than linear's.
    CHECK(grid4.cost.bytes > grid3.cost.bytes);
    CHECK(grid3.cost.bytes > linear.cost.bytes);
    const std::size_t pick = pick_graph_candidate(*c);
    if (bytes == 8) CHECK((*c)[pick].plan.dims() == std::vector<int>(8, 2));
    else CHECK((*c)[pick].plan.algorithm() == GraphAlgorithm::kLinear);
  }
  // Allgather at 8 B: auto prices the 4-D and most-D grids for allgather too (simulated there
  // since, docs/graphs.md) and picks the hypercube; --grid-dims 2,3,4 the 4-D grid; a list
  // without 4 (--grid-dims 2,3) picks the 3-D grid.
  const BlockSizes gather = BlockSizes::uniform(GraphOp::kAllgather, *t, 8);
  Result<std::vector<GraphCandidate>> seven = graph_candidates(GraphOp::kAllgather, *t, gather, o);
  REQUIRE(seven.ok());
  REQUIRE(seven->size() == 7);
  CHECK((*seven)[pick_graph_candidate(*seven)].plan.dims() == std::vector<int>(8, 2));
  Result<ir::graph::GraphPlan> plan = make_graph_plan(GraphOp::kAllgather, *t, gather, o);
  REQUIRE(plan.ok());
  CHECK(plan->dims() == std::vector<int>(8, 2));
  o.grid_dimensions = {2, 3, 4};
  Result<std::vector<GraphCandidate>> six = graph_candidates(GraphOp::kAllgather, *t, gather, o);
  REQUIRE(six.ok());
  REQUIRE(six->size() == 6);
  CHECK((*six)[5].plan.dims() == std::vector<int>{4, 4, 4, 4});
  CHECK((*six)[pick_graph_candidate(*six)].plan.dims() == std::vector<int>{4, 4, 4, 4});
  CHECK((*seven)[6].cost.max_rank_us < (*six)[5].cost.max_rank_us);
  o.grid_dimensions = {2, 3};
  Result<std::vector<GraphCandidate>> five = graph_candidates(GraphOp::kAllgather, *t, gather, o);
  REQUIRE(five.ok());
  REQUIRE(five->size() == 5);
  CHECK((*five)[pick_graph_candidate(*five)].plan.dims() == std::vector<int>{8, 8, 4});
  CHECK((*six)[5].cost.max_rank_us < (*five)[4].cost.max_rank_us);
}

TEST_CASE("auto: the most-D grid only where some rank's degree exceeds its dimensions, as the MPI backend's auto") {
  GraphPlanOptions o;
  o.sequential_construction = true;
  const auto count_most = [&](const ir::graph::Topology& t, const GraphPlanOptions& opts) {
    Result<std::vector<GraphCandidate>> c = graph_candidates(GraphOp::kAllgather, t, BlockSizes::uniform(GraphOp::kAllgather, t, 8), opts);
    REQUIRE(c.ok());
    return std::count_if(c->begin(), c->end(), [](const GraphCandidate& g) { return g.plan.dims() == std::vector<int>(8, 2); });
  };
  // Moore r = 1 on 16x16: degree 8, the most-D grid 2^8 has 8 dimensions -> not built.
  Result<ir::graph::Topology> r1 = moore({16, 16}, 1, true, 0.0, 1);
  REQUIRE(r1.ok());
  CHECK(count_most(*r1, o) == 0);
  // Named in the list (the CLI's --grid-dims 2,3,4,30), or forced grid: built whatever the degree.
  GraphPlanOptions named = o;
  named.grid_dimensions = {2, 3, 4, kMaxGridD};
  CHECK(count_most(*r1, named) == 1);
  GraphPlanOptions forced = o;
  forced.algo = GraphAlgoChoice::kGrid;
  CHECK(count_most(*r1, forced) == 1);
  // Moore r = 2: degree 24 > 8 -> built under auto.
  Result<ir::graph::Topology> r2 = moore({16, 16}, 2, true, 0.0, 1);
  REQUIRE(r2.ok());
  CHECK(count_most(*r2, o) == 1);
}

}  // namespace cartplan::engine::graph
