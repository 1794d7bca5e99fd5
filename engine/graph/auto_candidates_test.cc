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
  for (const char* bad : {"", "grid,", ",grid", "grids", "auto", "grid;pairing", "ALL"}) {
    Result<AutoCandidates> a = parse_auto_candidates(bad);
    REQUIRE_FALSE(a.ok());
    CHECK(a.error().find("is not a candidate") != std::string::npos);
  }
  CHECK(parse_auto_candidates("grid,bogus").error().find("'bogus'") != std::string::npos);
}

TEST_CASE("keys tell every set apart") {
  std::vector<int> keys;
  for (int m = 0; m < 8; ++m) keys.push_back(candidates_key({(m & 1) != 0, (m & 2) != 0, (m & 4) != 0}));
  for (int m = 0; m < 8; ++m) CHECK(keys[static_cast<std::size_t>(m)] == m);
  CHECK(candidates_key(AutoCandidates{}) == 7);
}

}  // namespace cartplan::engine::graph
