// Tests of the agreed price table: sizes, interpolation between them, and graph auto's pick.
#include "engine/graph/price_table.h"

#include <doctest/doctest.h>

#include "engine/graph/schedule.h"
#include "ir/graph/test_plans.h"

namespace cartplan::engine::graph {

using ir::graph::GraphAlgorithm;
using ir::graph::GraphOp;

TEST_CASE("table sizes are 0 and the powers of two up to 2^24") {
  CHECK(price_table_bytes(0) == 0);
  CHECK(price_table_bytes(1) == 1);
  CHECK(price_table_bytes(kPriceTableSizes - 1) == (std::int64_t{1} << 24));
  for (int c = 0; c < kPriceCandidates; ++c) CHECK(candidate_index(candidate_at(c)) == c);
}

TEST_CASE("prices are the schedule's, interpolated between sizes and extrapolated beyond") {
  const ir::graph::Topology t = ir::graph::tiny_topology();
  const ir::graph::RankSchedule s = linear_schedule(GraphOp::kAlltoall, t.ranks[0], 0);
  const CostModel m = CostModel::linear(1.0, 0.01);
  PriceTable table{};
  add_prices(GraphOp::kAlltoall, {GraphAlgorithm::kLinear, 0}, s, m, &table);
  const double at4 = table_prices(table, GraphOp::kAlltoall, 4)[0];
  const double at8 = table_prices(table, GraphOp::kAlltoall, 8)[0];
  CHECK(table_prices(table, GraphOp::kAlltoall, 6)[0] == doctest::Approx((at4 + at8) / 2));
  const double top = table_prices(table, GraphOp::kAlltoall, std::int64_t{1} << 24)[0];
  const double half = table_prices(table, GraphOp::kAlltoall, std::int64_t{1} << 23)[0];
  CHECK(table_prices(table, GraphOp::kAlltoall, std::int64_t{3} << 23)[0] == doctest::Approx(top + (top - half)));
  // The allgather rows stay untouched.
  CHECK(table_prices(table, GraphOp::kAllgather, 8)[0] == 0.0);
}

TEST_CASE("pick_from_prices keeps linear unless a combining candidate is kGraphGain cheaper") {
  const TableCandidate linear{}, pairing{GraphAlgorithm::kPairing, 0}, cumulative{GraphAlgorithm::kCumulative, 0};
  const TableCandidate grid2{GraphAlgorithm::kGrid, 2}, grid3{GraphAlgorithm::kGrid, 3};
  CHECK(pick_from_prices({10.0, 9.5, 9.8, 9.7, 9.6}) == linear);
  CHECK(pick_from_prices({10.0, 8.0, 8.5, 8.2, 8.1}) == pairing);
  CHECK(pick_from_prices({10.0, 8.0, 7.0, 7.5, 7.2}) == cumulative);
  CHECK(pick_from_prices({10.0, 8.0, 7.0, 3.7, 3.9}) == grid2);
  CHECK(pick_from_prices({10.0, 8.0, 7.0, 3.7, 3.5}) == grid3);
  CHECK(cheaper_combining({1.0, 8.0, 8.0, 8.0, 8.0}) == pairing);
  CHECK(cheaper_combining({1.0, 9.0, 8.0, 8.0, 8.0}) == cumulative);
  CHECK(cheaper_combining({1.0, 9.0, 9.0, 8.0, 8.0}) == grid2);
}

TEST_CASE("a row nobody priced (0: the caller left the candidate out) is never picked") {
  CHECK(cheaper_combining({10.0, 8.0, 9.0, 0.0, 0.0}).algorithm == GraphAlgorithm::kPairing);
  CHECK(cheaper_combining({10.0, 0.0, 0.0, 5.0, 0.0}) == TableCandidate{GraphAlgorithm::kGrid, 2});
  CHECK(cheaper_combining({10.0, 0.0, 0.0, 0.0, 5.0}) == TableCandidate{GraphAlgorithm::kGrid, 3});
  CHECK(pick_from_prices({10.0, 9.5, 0.0, 0.0, 0.0}).algorithm == GraphAlgorithm::kLinear);
}

TEST_CASE("candidate_index tells the three grids apart") {
  CHECK(candidate_index({GraphAlgorithm::kGrid, 2}) == 3);
  CHECK(candidate_index({GraphAlgorithm::kGrid, 3}) == 4);
  CHECK(candidate_index({GraphAlgorithm::kGrid, 4}) == 5);
  CHECK(candidate_at(4) == TableCandidate{GraphAlgorithm::kGrid, 3});
  CHECK(candidate_at(5) == TableCandidate{GraphAlgorithm::kGrid, 4});
  CHECK(candidate_index({GraphAlgorithm::kGrid, kMaxGridD}) == 6);
  CHECK(candidate_index({GraphAlgorithm::kGrid, 5}) == 6);
  CHECK(candidate_at(6) == TableCandidate{GraphAlgorithm::kGrid, kMaxGridD});
}

TEST_CASE("the most-D grid row: picked where cheapest, dropped by without_grid, kept alone by a cartplan_grid_dims of 5 or more") {
  const TableCandidate grid4{GraphAlgorithm::kGrid, 4}, most{GraphAlgorithm::kGrid, kMaxGridD};
  const CandidatePrices us{10.0, 9.5, 9.5, 8.5, 6.0, 4.0, 3.0};
  CHECK(pick_from_prices(us) == most);
  CHECK(pick_from_prices({10.0, 9.5, 9.5, 8.5, 6.0, 3.0, 4.0}) == grid4);
  CHECK(pick_from_prices({10.0, 0.0, 0.0, 0.0, 0.0, 0.0, 9.5}).algorithm == GraphAlgorithm::kLinear);  // not 10 % cheaper
  CHECK(without_grid(us)[6] == 0.0);
  CHECK(pick_from_prices(without_grid(us)).algorithm == GraphAlgorithm::kLinear);
  CHECK(only_grid_d(us, 4)[6] == 0.0);
  CHECK(pick_from_prices(only_grid_d(us, 4)) == grid4);
  for (int d : {5, 8, kMaxGridD}) {
    const CandidatePrices only = only_grid_d(us, d);
    CHECK(only[3] == 0.0);
    CHECK(only[4] == 0.0);
    CHECK(only[5] == 0.0);
    CHECK(only[6] == 3.0);
    CHECK(only[1] == 9.5);
    CHECK(pick_from_prices(only) == most);
  }
  CHECK(only_grid_d(us, 0) == us);
}

TEST_CASE("the 4-D grid row is picked where it is cheapest, and dropped like the other grids") {
  const TableCandidate grid3{GraphAlgorithm::kGrid, 3}, grid4{GraphAlgorithm::kGrid, 4};
  const CandidatePrices us{10.0, 8.0, 7.0, 6.0, 5.0, 4.0};
  CHECK(pick_from_prices(us) == grid4);
  CHECK(pick_from_prices({10.0, 8.0, 7.0, 6.0, 4.0, 5.0}) == grid3);
  CHECK(pick_from_prices({10.0, 0.0, 0.0, 0.0, 0.0, 9.5}).algorithm == GraphAlgorithm::kLinear);  // not 10 % cheaper
  CHECK(without_grid(us)[5] == 0.0);
  CHECK(pick_from_prices(without_grid(us)).algorithm == GraphAlgorithm::kCumulative);
  CHECK(pick_from_prices(only_grid_d(us, 3)) == grid3);
  CHECK(only_grid_d(us, 3)[5] == 0.0);
  CHECK(only_grid_d(us, 4)[3] == 0.0);
  CHECK(only_grid_d(us, 4)[4] == 0.0);
  CHECK(pick_from_prices(only_grid_d(us, 4)) == grid4);
  CHECK(only_grid_d(us, 0) == us);
}

TEST_CASE("auto's rows (only_grid_d): the 4-D grid kept unless cartplan_grid_dims names another; the 10 % rule holds for it") {
  const TableCandidate grid3{GraphAlgorithm::kGrid, 3}, grid4{GraphAlgorithm::kGrid, 4};
  const CandidatePrices us{10.0, 9.5, 9.5, 8.5, 6.0, 4.0};
  CHECK(only_grid_d(us, 0)[5] == 4.0);
  CHECK(pick_from_prices(only_grid_d(us, 0)) == grid4);
  CHECK(only_grid_d(us, 3)[5] == 0.0);
  CHECK(pick_from_prices(only_grid_d(us, 3)) == grid3);
  CHECK(pick_from_prices(only_grid_d(us, 4)) == grid4);
  CHECK(only_grid_d(us, 4)[4] == 0.0);
  // 9.5 against 10 is not 10 % cheaper: linear, whichever grid it is.
  CHECK(pick_from_prices({10.0, 0.0, 0.0, 0.0, 0.0, 9.5}).algorithm == GraphAlgorithm::kLinear);
  CHECK(pick_from_prices({10.0, 0.0, 0.0, 9.5, 0.0, 9.0}) == grid4);
}

TEST_CASE("without_grid drops both grids, however cheap, and keeps the others") {
  const CandidatePrices us{10.0, 8.0, 7.0, 1.0, 0.5};
  CHECK(pick_from_prices(us) == TableCandidate{GraphAlgorithm::kGrid, 3});
  CHECK(without_grid(us)[3] == 0.0);
  CHECK(without_grid(us)[4] == 0.0);
  CHECK(without_grid(us)[2] == 7.0);
  CHECK(pick_from_prices(without_grid(us)).algorithm == GraphAlgorithm::kCumulative);
  CHECK(cheaper_combining(without_grid(us)).algorithm == GraphAlgorithm::kCumulative);
  CHECK(pick_from_prices(without_grid({10.0, 9.5, 9.8, 1.0, 1.0})).algorithm == GraphAlgorithm::kLinear);
}

TEST_CASE("only_grid_d keeps the grid of one dimension count (Info cartplan_grid_dims)") {
  const CandidatePrices us{10.0, 8.0, 7.0, 2.0, 1.0};
  CHECK(pick_from_prices(only_grid_d(us, 2)) == TableCandidate{GraphAlgorithm::kGrid, 2});
  CHECK(pick_from_prices(only_grid_d(us, 3)) == TableCandidate{GraphAlgorithm::kGrid, 3});
  CHECK(only_grid_d(us, 0) == us);
  CHECK(only_grid_d(us, 3)[3] == 0.0);
  CHECK(only_grid_d(us, 2)[4] == 0.0);
  CHECK(only_grid_d(us, 2)[5] == 0.0);
}

TEST_CASE("the grid row is filled and read like the others") {
  const ir::graph::Topology t = ir::graph::tiny_topology();
  const ir::graph::RankSchedule s = linear_schedule(GraphOp::kAllgather, t.ranks[0], 0);
  PriceTable table{};
  add_prices(GraphOp::kAllgather, {GraphAlgorithm::kGrid, 3}, s, CostModel::linear(1.0, 0.01), &table);
  const CandidatePrices us = table_prices(table, GraphOp::kAllgather, 8);
  CHECK(us[4] > 0.0);
  CHECK(us[3] == 0.0);
  CHECK(us[0] == 0.0);
  CHECK(us[1] == 0.0);
  CHECK(us[2] == 0.0);
}

}  // namespace cartplan::engine::graph
