// Tests of the placement counts: which rounds leave a node, per node, and what predict makes of them.
#include "engine/placement.h"

#include <doctest/doctest.h>

#include "engine/optimizer.h"
#include "engine/planner.h"
#include "engine/predict.h"
#include "engine/stencils.h"

namespace cartplan::engine {
namespace {

Grid grid(std::vector<int> dims, std::vector<bool> periods) { return *Grid::create(std::move(dims), std::move(periods)); }

TEST_CASE("shift_traffic: a node is a slab of the last dimensions under block placement") {
  const Grid torus = grid({16, 16}, {true, true});
  // 16 ranks per node: a node is one row; dimension 0 always leaves it, dimension 1 never.
  const auto across = shift_traffic(torus, 16, {1, 0});
  CHECK(across->off_share == 1.0);
  CHECK(across->node_out.size() == 16);
  for (double n : across->node_out) CHECK(n == 16);
  for (double n : across->node_in) CHECK(n == 16);
  const auto along = shift_traffic(torus, 16, {0, 1});
  CHECK(along->off_share == 0.0);
  for (double n : along->node_out) CHECK(n == 0);
  // 32 ranks per node: two rows; a shift of one row leaves the node from one row of the two.
  const auto half = shift_traffic(torus, 32, {-1, 0});
  CHECK(half->off_share == 0.5);
  for (double n : half->node_out) CHECK(n == 16);
  CHECK(shift_traffic(torus, 32, {2, 1})->off_share == 1.0);
  // A shift that wraps to the process itself never leaves its node.
  CHECK(shift_traffic(torus, 4, {16, 0})->off_share == 0.0);
}

TEST_CASE("shift_traffic: meshes have no peer beyond the edge; partial last nodes") {
  const Grid mesh = grid({4, 4}, {false, false});
  const auto down = shift_traffic(mesh, 4, {1, 0});
  CHECK(down->off_share == doctest::Approx(12.0 / 16));
  CHECK(down->node_out == std::vector<double>{4, 4, 4, 0});  // the last row has no peer below
  CHECK(down->node_in == std::vector<double>{0, 4, 4, 4});   // the first row none above
  // 16 ranks in nodes of 6: nodes 0-1 full, node 2 holds 4 ranks. +1 in dimension 1 leaves a
  // node where its block ends inside a row (rank 5 -> 6); rank 11 ends a row and has no peer.
  const auto right = shift_traffic(mesh, 6, {0, 1});
  CHECK(node_count(mesh, 6) == 3);
  CHECK(right->node_out == std::vector<double>{1, 0, 0});
  CHECK(right->node_in == std::vector<double>{0, 1, 0});
}

TEST_CASE("shift_traffic agrees with Grid::relative_rank on every rank") {
  for (const auto& [dims, periods] : std::vector<std::pair<std::vector<int>, std::vector<bool>>>{
           {{3, 5, 2}, {true, false, true}}, {{6, 4}, {false, true}}, {{2, 3, 2, 2}, {true, true, false, true}}}) {
    const Grid g = grid(dims, periods);
    for (int per_node : {1, 3, 4, 7}) {
      for (const Offset& shift : std::vector<Offset>{Offset(dims.size(), 1), Offset(dims.size(), -2)}) {
        std::vector<double> out(node_count(g, per_node), 0.0), in(out.size(), 0.0);
        for (int r = 0; r < g.size(); ++r) {
          const int to = g.relative_rank(g.coords(r), shift);
          Offset back = shift;
          for (int& s : back) s = -s;
          const int from = g.relative_rank(g.coords(r), back);
          if (to != kNoRank && to / per_node != r / per_node) out[r / per_node] += 1;
          if (from != kNoRank && from / per_node != r / per_node) in[r / per_node] += 1;
        }
        const auto t = shift_traffic(g, per_node, shift);
        CHECK(t->node_out == out);
        CHECK(t->node_in == in);
      }
    }
  }
}

TEST_CASE("Placement: cyclic puts rank r on node r mod N; the first p mod N nodes hold one more") {
  const Placement c = Placement::cyclic(4);
  CHECK(c.is_cyclic());
  CHECK(c.node_of(0) == 0);
  CHECK(c.node_of(5) == 1);
  CHECK(c.node_of(11) == 3);
  CHECK(c.node_count(10) == 4);
  CHECK(c.largest_node(10) == 3);  // nodes 0-1 hold 3 ranks, nodes 2-3 hold 2
  CHECK(c.node_count(3) == 3);     // fewer ranks than nodes: one rank per node
  CHECK(c.spans_nodes(10));
  CHECK(!c.spans_nodes(1));
  CHECK(c.describe() == "cyclic over 4 nodes");
  const Placement b = 16;  // a bare int is block placement, as before
  CHECK(b == Placement::block(16));
  CHECK(!b.is_cyclic());
  CHECK(b.node_of(31) == 1);
  CHECK(b.spans_nodes(17));
  CHECK(!b.spans_nodes(16));
  CHECK(!Placement{}.spans_nodes(64));
  CHECK(!(b == Placement::cyclic(16)));
}

TEST_CASE("shift_traffic under cyclic placement: r and r + N share a node") {
  const Grid torus = grid({16, 16}, {true, true});
  // 4 nodes, cyclic: a rank's neighbours in dimension 0 (r +- 16) are on its node, those in
  // dimension 1 (r +- 1, or r -+ 15 across the wrap) never are.
  const auto across = shift_traffic(torus, Placement::cyclic(4), {1, 0});
  CHECK(across->off_share == 0.0);
  const auto along = shift_traffic(torus, Placement::cyclic(4), {0, 1});
  CHECK(along->off_share == 1.0);
  CHECK(along->node_out == std::vector<double>{64, 64, 64, 64});
  CHECK(along->node_in == std::vector<double>{64, 64, 64, 64});
  // Block and cyclic placements of the same sizes are counted apart (the cache key has both).
  CHECK(shift_traffic(torus, Placement::block(4), {1, 0})->off_share == 1.0);
}

TEST_CASE("shift_traffic under cyclic placement agrees with a brute-force count on every rank") {
  for (const auto& [dims, periods] : std::vector<std::pair<std::vector<int>, std::vector<bool>>>{
           {{3, 5, 2}, {true, false, true}}, {{6, 4}, {false, true}}, {{2, 3, 2, 2}, {true, true, false, true}},
           {{7, 3}, {false, false}}, {{4, 4, 4}, {true, true, true}}}) {
    const Grid g = grid(dims, periods);
    for (int nodes : {2, 3, 4, 5, 7}) {  // sizes 30, 24, 24, 21, 64: most leave a partial last round of nodes
      const Placement c = Placement::cyclic(nodes);
      for (const Offset& shift : std::vector<Offset>{Offset(dims.size(), 1), Offset(dims.size(), -2)}) {
        std::vector<double> out(std::min(nodes, g.size()), 0.0), in(out.size(), 0.0);
        double off = 0;
        for (int r = 0; r < g.size(); ++r) {
          const int to = g.relative_rank(g.coords(r), shift);
          Offset back = shift;
          for (int& s : back) s = -s;
          const int from = g.relative_rank(g.coords(r), back);
          if (to != kNoRank && to % nodes != r % nodes) {
            out[r % nodes] += 1;
            off += 1;
          }
          if (from != kNoRank && from % nodes != r % nodes) in[r % nodes] += 1;
        }
        const auto t = shift_traffic(g, c, shift);
        CHECK(node_count(g, c) == static_cast<int>(out.size()));
        CHECK(t->node_out == out);
        CHECK(t->node_in == in);
        CHECK(t->off_share == doctest::Approx(off / g.size()));
      }
    }
  }
}

TEST_CASE("round_traffic and predict under cyclic placement") {
  const Neighborhood n = *stencils::box(2, 3, -1);
  const ir::Plan p = plan_direct(ir::Op::kAlltoall, n);
  const Grid g = grid({8, 8}, {true, true});
  CHECK(round_traffic(p, g, Placement::cyclic(4)).size() == 1);
  CHECK(round_traffic(p, g, Placement::cyclic(4))[0].size() == 8);
  CHECK(round_traffic(p, g, Placement::cyclic(1)).empty());
  // Direct alltoall of box d = 2 on 8x8 over 4 cyclic nodes: the 2 rounds of dimension 0 alone
  // (r +- 8) stay on the node, the 6 others leave it from every rank.
  PredictOptions o;
  o.placement = Placement::cyclic(4);
  const CostBreakdown c = predict(p, {1000}, CostModel::linear(1.0, 0.001), g, o);
  CHECK(c.counts.off_node_messages == 6);
  CHECK(c.counts.off_node_bytes == 6 * 1000);
  REQUIRE(c.counts.sides.size() == 1);
  CHECK(c.counts.sides[0].on.messages == 2);
  CHECK(c.counts.sides[0].off.messages == 6);
  // Every node holds 16 ranks; 6 rounds x 16 ranks x 1000 B leave each node.
  CHECK(c.counts.node_link_bytes == 6 * 16 * 1000);
}

TEST_CASE("round_traffic: nothing without a node map, a grid, or with one node") {
  const Neighborhood n = *stencils::box(2, 3, -1);
  const ir::Plan p = plan_direct(ir::Op::kAlltoall, n);
  const Grid g = grid({4, 4}, {true, true});
  CHECK(round_traffic(p, g, 0).empty());
  CHECK(round_traffic(p, std::nullopt, 4).empty());
  CHECK(round_traffic(p, g, 16).empty());
  CHECK(round_traffic(p, g, 4).size() == 1);
  CHECK(round_traffic(p, g, 4)[0].size() == 8);
}

TEST_CASE("predict: the dimension that stays on a node decides the node link's bytes") {
  // Allgather of box d = 2 on 16x16, 16 ranks per node (a row): the phase in dimension 0 leaves
  // the node. First it forwards 1 block per message, last 3 (the SMPI calibration's rows:
  // 20.82 against 64.70 us on the torus, bench/results/smpi/placement.md).
  const Neighborhood n = *stencils::box(2, 3, -1);
  const Grid g = grid({16, 16}, {true, true});
  PredictOptions o;
  o.placement = Placement::block(16);
  const CostModel m;
  const CostBreakdown first = predict(plan_combining(ir::Op::kAllgather, n, {0, 1}), {4096}, m, g, o);
  const CostBreakdown last = predict(plan_combining(ir::Op::kAllgather, n, {1, 0}), {4096}, m, g, o);
  CHECK(first.counts.node_link_bytes == 16 * 2 * 4096);
  CHECK(last.counts.node_link_bytes == 16 * 2 * 3 * 4096);
  CHECK(first.counts.off_node_messages == 2);
  CHECK(first.counts.off_node_bytes == 2 * 4096);
  CHECK(last.counts.off_node_bytes == 2 * 3 * 4096);
  // The built-in model prices none of it: the totals are those without a node map.
  CHECK(first.total_us() == predict(plan_combining(ir::Op::kAllgather, n, {0, 1}), {4096}, m, g).total_us());
  CHECK(first.total_us() == last.total_us());
  CostModel linked = m;
  linked.node_link_us_per_byte = 1.0 / 6900;  // 6.9 GB/s
  CHECK(predict(plan_combining(ir::Op::kAllgather, n, {0, 1}), {4096}, linked, g, o).total_us() <
        predict(plan_combining(ir::Op::kAllgather, n, {1, 0}), {4096}, linked, g, o).total_us());
}

TEST_CASE("plan_candidates: the node link moves auto's dimension order for allgather") {
  const Neighborhood n = *stencils::box(2, 3, -1);
  PlanOptions o;
  o.grid = grid({16, 16}, {true, true});
  o.block_bytes = 4096;
  o.model = CostModel::linear(1.0, 0.0005);
  o.placement = Placement::block(16);
  const ir::Plan without = *make_plan(ir::Op::kAllgather, n, o);
  o.model.node_link_us_per_byte = 1.0 / 6900;
  const ir::Plan with = *make_plan(ir::Op::kAllgather, n, o);
  CHECK(with.kind() == ir::PlanKind::kCombining);
  CHECK(predict(with, {4096}, o.model, o.grid, PredictOptions{{}, {}, 16}).counts.node_link_bytes == 16 * 2 * 4096);
  CHECK(predict(without, {4096}, o.model, o.grid, PredictOptions{{}, {}, 16}).counts.node_link_bytes >=
        16 * 2 * 4096);
}

TEST_CASE("predict: each phase's sends split into on-node and off-node sides; phase_overlap prices the dearer") {
  // Direct alltoall of box d = 2 (8 blocks of 1000 B) on 8x8, 16 ranks per node (two rows): the
  // 6 rounds that move in dimension 0 leave the node from half the ranks.
  const Neighborhood n = *stencils::box(2, 3, -1);
  const Grid g = grid({8, 8}, {true, true});
  PredictOptions o;
  o.placement = Placement::block(16);
  CostModel m = CostModel::linear(1.0, 0.001);
  m.off_node_beta_us_per_byte = 0.004;
  const ir::Plan direct = plan_direct(ir::Op::kAlltoall, n);
  const CostBreakdown sum = predict(direct, {1000}, m, g, o);
  REQUIRE(sum.counts.sides.size() == 1);
  const PhaseSides& s = sum.counts.sides[0];
  CHECK(s.on.messages == 5);
  CHECK(s.off.messages == 3);
  CHECK(s.on.messages + s.off.messages == sum.counts.messages);
  CHECK(s.off.wire_bytes == 3000);
  CHECK(s.off.off_node_bytes == sum.counts.off_node_bytes);
  CHECK(s.on.phases == 0);
  const double on = 5 * (1.0 + 1.0), off = 3 * (1.0 + 1.0 + 4.0);
  CHECK(sum.total_us() == doctest::Approx(on + off));
  m.phase_overlap = 1;
  const CostBreakdown overlapped = predict(direct, {1000}, m, g, o);
  CHECK(overlapped.overlap_us == doctest::Approx(-on));
  CHECK(overlapped.total_us() == doctest::Approx(off));
  m.phase_overlap = 0.5;
  CHECK(predict(direct, {1000}, m, g, o).total_us() == doctest::Approx(off + on / 2));
  // Without a node map: no sides, the sum.
  CHECK(predict(direct, {1000}, m, g).counts.sides.empty());
  CHECK(predict(direct, {1000}, m, g).total_us() == doctest::Approx(8 * 2.0));
  CHECK(prices_placement(m));
}

}  // namespace
}  // namespace cartplan::engine
