// Tests of graph auto's candidate set: parsing Info cartplan_auto_candidates and filtering.
#include "engine/graph/auto_candidates.h"

#include <doctest/doctest.h>

namespace cartplan::engine::graph {

using ir::graph::GraphAlgorithm;

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

}  // namespace cartplan::engine::graph
