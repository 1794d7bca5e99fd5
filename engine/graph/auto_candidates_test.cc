// Tests of graph auto's candidate set: parsing Info cartplan_auto_candidates and filtering.
#include "engine/graph/auto_candidates.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <utility>

#include "engine/graph/choose.h"
#include "engine/graph/generators.h"
#include "engine/graph/grid.h"
#include "engine/graph/grid_schedule.h"
#include "engine/graph/price.h"
#include "engine/graph/schedule.h"

namespace cartplan::engine::graph {

using ir::graph::GraphAlgorithm;
using ir::graph::GraphOp;

namespace {
const std::vector<TableCandidate> kAll = {{GraphAlgorithm::kLinear, 0}, {GraphAlgorithm::kPairing, 0},
                                          {GraphAlgorithm::kCumulative, 0}, {GraphAlgorithm::kGrid, 2},
                                          {GraphAlgorithm::kGrid, 3}};
}  // namespace

TEST_CASE("all and lists parse; linear is always kept") {
  CHECK(*parse_auto_candidates("all") == AutoCandidates{});
  CHECK(*parse_auto_candidates("auto") == kAutomaticCandidates);
  CHECK(*parse_auto_candidates("grid") == AutoCandidates{false, false, true});
  CHECK(*parse_auto_candidates("linear,grid") == AutoCandidates{false, false, true});
  CHECK(*parse_auto_candidates("cumulative,pairing") == AutoCandidates{true, true, false});
  CHECK(*parse_auto_candidates("linear") == AutoCandidates{false, false, false});
  CHECK(restrict_candidates(kAll, *parse_auto_candidates("linear")) == std::vector<TableCandidate>{kAll[0]});
  CHECK(restrict_candidates(kAll, *parse_auto_candidates("grid")) == std::vector<TableCandidate>{kAll[0], kAll[3], kAll[4]});
  CHECK(restrict_candidates(kAll, *parse_auto_candidates("pairing")) == std::vector<TableCandidate>{kAll[0], kAll[1]});
  CHECK(restrict_candidates(kAll, AutoCandidates{}) == kAll);
}

TEST_CASE("bad words are named") {
  for (const char* bad : {"", "grid,", ",grid", "grids", "auto,grid", "AUTO", "grid;pairing", "ALL"}) {
    Result<AutoCandidates> a = parse_auto_candidates(bad);
    REQUIRE_FALSE(a.ok());
    CHECK(a.error().find("is not a candidate") != std::string::npos);
  }
  CHECK(parse_auto_candidates("grid,bogus").error().find("'bogus'") != std::string::npos);
}

TEST_CASE("grid alone is no candidate where grid is not allowed") {
  CHECK(any_combining(AutoCandidates{}, false));
  CHECK(any_combining({false, false, true}, true));
  CHECK_FALSE(any_combining({false, false, true}, false));
  CHECK_FALSE(any_combining({false, false, false}, true));
  CHECK(any_combining({false, true, false}, false));
}

TEST_CASE("a pick the set leaves out becomes linear") {
  const AutoCandidates grid_only{false, false, true};
  CHECK(allowed_pick(kAll[1], grid_only) == kAll[0]);  // pick_from_prices' fallback with no grid row priced
  CHECK(allowed_pick(kAll[4], grid_only) == kAll[4]);
  CHECK(allowed_pick(kAll[0], grid_only) == kAll[0]);
  for (const TableCandidate& c : kAll) CHECK(allowed_pick(c, AutoCandidates{}) == c);
  const CandidatePrices nothing_priced = {5.0, 0.0, 0.0, 0.0, 0.0};
  CHECK(allowed_pick(pick_from_prices(nothing_priced), grid_only) == kAll[0]);
}

TEST_CASE("keys tell every set apart, auto from all") {
  std::vector<int> keys;
  for (int m = 0; m < 8; ++m) keys.push_back(candidates_key({(m & 1) != 0, (m & 2) != 0, (m & 4) != 0}));
  for (int m = 0; m < 8; ++m) CHECK(keys[static_cast<std::size_t>(m)] == m);
  CHECK(candidates_key(AutoCandidates{}) == 7);
  CHECK(candidates_key(kAutomaticCandidates) == 15);
}

TEST_CASE("auto resolves to the grids where grid may run and p has a usable grid, else keeps seed 003's pair") {
  const AutoCandidates grid_only{false, false, true}, pairs{true, true, false}, every{true, true, true};
  CHECK(resolve_candidates(kAutomaticCandidates, true, 256, 0) == grid_only);
  CHECK(resolve_candidates(kAutomaticCandidates, false, 256, 0) == pairs);
  CHECK(restrict_candidates(kAll, resolve_candidates(kAutomaticCandidates, true, 256, 0)) ==
        std::vector<TableCandidate>{kAll[0], kAll[3], kAll[4]});
  CHECK(restrict_candidates(kAll, resolve_candidates(kAutomaticCandidates, false, 256, 0)) ==
        std::vector<TableCandidate>{kAll[0], kAll[1], kAll[2]});
  // Prime or badly factored p: the grid is one message per peer, or nearly; the pair stays.
  for (int p : {2, 3, 5, 7, 509, 909, 1021, 2039}) {
    CHECK(!grids_suffice(p, 0));
    CHECK(resolve_candidates(kAutomaticCandidates, true, p, 0) == every);
    CHECK(resolve_candidates(kAutomaticCandidates, false, p, 0) == pairs);
  }
  for (int p : {1, 4, 6, 8, 9, 64, 128, 255, 256, 1024, 4096}) CHECK(grids_suffice(p, 0));
  CHECK(grids_suffice(102, 2));   // 17 x 6
  CHECK(!grids_suffice(102, 3));  // 17 x 3 x 2: 17 > 8 x 2
  CHECK(grids_suffice(102, 0));   // the 2-D grid will do
  CHECK(!grids_suffice(202, 0));  // 101 x 2
  CHECK(grids_suffice(256, 4));   // 4 x 4 x 4 x 4
  CHECK(!grids_suffice(102, 4));  // 17 x 3 x 2 again
  CHECK(grids_suffice(256, 8));   // 5 or more: the most-D grid, 2^8
  CHECK(grids_suffice(360, 5));   // 5 x 3 x 3 x 2 x 2 x 2
  CHECK(!grids_suffice(102, 5));  // 17 x 3 x 2
  CHECK(!grids_suffice(97, 6));   // prime: 1-D
  CHECK(resolve_candidates(kAutomaticCandidates, true, 102, 4) == every);
  // all and lists are taken as they are, whether grid may run or not.
  for (bool grid_allowed : {false, true}) {
    CHECK(resolve_candidates(AutoCandidates{}, grid_allowed, 5, 0) == AutoCandidates{});
    CHECK(resolve_candidates(grid_only, grid_allowed, 5, 0) == grid_only);
    CHECK(resolve_candidates(pairs, grid_allowed, 256, 0) == pairs);
    CHECK(any_combining(resolve_candidates(kAutomaticCandidates, grid_allowed, 5, 0), grid_allowed));
  }
}

namespace {

// The largest in- or out-degree of any rank: what creation agrees (GraphComm::max_degree).
int max_degree(const ir::graph::Topology& t) {
  int d = 0;
  for (const ir::graph::RankEdges& r : t.ranks) d = std::max({d, static_cast<int>(r.in.size()), static_cast<int>(r.out.size())});
  return d;
}

int most_ndims(int p) { return static_cast<int>(grid_dims(p, kMaxGridD).size()); }

// max_rank_us of linear and of the most-D grid, allgather of 4-byte blocks.
std::pair<double, double> linear_and_most(const ir::graph::Topology& t, const CostModel& m) {
  const BlockSizes sizes = BlockSizes::uniform(GraphOp::kAllgather, t, 4);
  const std::vector<int> dims = grid_dims(t.size(), kMaxGridD);
  const double lin = price_plan(linear_plan(GraphOp::kAllgather, t), sizes, m).max_rank_us;
  const double most = price_plan(grid_plan(GraphOp::kAllgather, t, dims, sequential_grid_patterns(t, dims)), sizes, m).max_rank_us;
  return {lin, most};
}

// The fat tree's calibration (bench/results/smpi/cost_model_fattree_p256.json) rounded: no
// per-phase price, which favours many phases.
const CostModel kFatTree = CostModel::linear(0.78, 0.00046);

}  // namespace

TEST_CASE("the most-D grid row: only with more than 4 dimensions; named by Info, or a degree above its dimensions") {
  for (const int p : {4096, 256, 360, 32}) {
    const int n = most_ndims(p);  // 12, 8, 6, 5
    REQUIRE(n > 4);
    CHECK_FALSE(auto_prices_most_grid(n, 0, n));  // degree = dimensions: not constructed
    CHECK(auto_prices_most_grid(n, 0, n + 1));
    for (const int named : {5, n, kMaxGridD}) CHECK(auto_prices_most_grid(n, named, 0));  // Info names it: whatever the degree
    for (const int other : {2, 3, 4}) CHECK_FALSE(auto_prices_most_grid(n, other, 1000));  // Info names another grid
  }
  for (const int p : {16, 97, 12, 1}) {  // the most-D grid is the 4-D one or fewer: no row of its own
    CHECK(most_ndims(p) <= 4);
    for (const int d : {0, 5, kMaxGridD}) CHECK_FALSE(auto_prices_most_grid(most_ndims(p), d, 1000));
  }
}

TEST_CASE("where the degree gate drops the most-D grid the model prices it above linear; where it keeps it, it wins") {
  const Result<ir::graph::Topology> moore64 = moore({64, 64}, 1, true, 0.0, 1);  // p = 4096, degree 8, 12-D
  const Result<ir::graph::Topology> moore16 = moore({16, 16}, 1, true, 0.0, 1);  // p = 256, degree 8, 8-D
  REQUIRE(moore64.ok());
  REQUIRE(moore16.ok());
  for (const ir::graph::Topology* t : {&*moore64, &*moore16}) {
    CHECK_FALSE(auto_prices_most_grid(most_ndims(t->size()), 0, max_degree(*t)));
    for (const CostModel& m : {kFatTree, CostModel{}}) {
      const auto [lin, most] = linear_and_most(*t, m);
      CHECK(most > lin);
    }
  }
  const Result<ir::graph::Topology> er = erdos_renyi(256, 0.05, 1);  // degree about 13 on average
  REQUIRE(er.ok());
  CHECK(auto_prices_most_grid(most_ndims(256), 0, max_degree(*er)));
  for (const CostModel& m : {kFatTree, CostModel{}}) {
    const auto [lin, most] = linear_and_most(*er, m);
    CHECK(most < (1 - kGraphGain) * lin);
  }
}

TEST_CASE("the gate is a heuristic: a rank gathering from its nearest ranks gains from the most-D grid at degree = dimensions") {
  // Ranks 1..8 send to rank 0 at p = 256 (8-D hypercube): rank 0's in-degree is 8, not above 8,
  // so auto does not construct the most-D grid, yet combining gathers the 8 blocks in 4 messages.
  std::vector<std::vector<int>> out(256);
  for (int s = 1; s <= 8; ++s) out[static_cast<std::size_t>(s)] = {0};
  const ir::graph::Topology t = from_out_lists(out);
  CHECK(max_degree(t) == most_ndims(256));
  CHECK_FALSE(auto_prices_most_grid(most_ndims(256), 0, max_degree(t)));
  const auto [lin, most] = linear_and_most(t, kFatTree);
  CHECK(most < (1 - kGraphGain) * lin);  // lost to the gate: auto keeps the 2-D, 3-D and 4-D grids and linear
}

}  // namespace cartplan::engine::graph
