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
  for (int c = 0; c < 3; ++c) CHECK(candidate_index(candidate_at(c)) == c);
}

TEST_CASE("prices are the schedule's, interpolated between sizes and extrapolated beyond") {
  const ir::graph::Topology t = ir::graph::tiny_topology();
  const ir::graph::RankSchedule s = linear_schedule(GraphOp::kAlltoall, t.ranks[0], 0);
  const CostModel m = CostModel::linear(1.0, 0.01);
  PriceTable table{};
  add_prices(GraphOp::kAlltoall, GraphAlgorithm::kLinear, s, m, &table);
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
  CHECK(pick_from_prices({10.0, 9.5, 9.8}) == GraphAlgorithm::kLinear);
  CHECK(pick_from_prices({10.0, 8.0, 8.5}) == GraphAlgorithm::kPairing);
  CHECK(pick_from_prices({10.0, 8.0, 7.0}) == GraphAlgorithm::kCumulative);
  CHECK(cheaper_combining({1.0, 8.0, 8.0}) == GraphAlgorithm::kPairing);
}

TEST_CASE("the MPI backend's table never offers grid: auto picks among what MPI can run") {
  for (int i = 0; i < 3; ++i) CHECK(candidate_at(i) != GraphAlgorithm::kGrid);
  for (double cheap : {0.0, 1.0, 50.0})
    for (const CandidatePrices& us : {CandidatePrices{100, cheap, 100}, CandidatePrices{100, 100, cheap}, CandidatePrices{cheap, 100, 100}})
      CHECK(pick_from_prices(us) != GraphAlgorithm::kGrid);
}

}  // namespace cartplan::engine::graph
