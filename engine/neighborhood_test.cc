// Tests for Neighborhood: validation messages, limits, and the counts t, C_k and z_i.
#include "engine/neighborhood.h"

#include <doctest/doctest.h>

#include <climits>

#include "tests/fixtures.h"

namespace cartplan::engine {
namespace {

using cartplan::testing::nbh;

std::string error_of(int ndims, std::vector<Offset> offsets) {
  auto n = Neighborhood::create(ndims, std::move(offsets));
  REQUIRE_FALSE(n.ok());
  return n.error();
}

TEST_CASE("create keeps offsets in user order, duplicates and zero included") {
  auto n = Neighborhood::create(2, {{1, 0}, {0, 0}, {1, 0}, {-1, 2}});
  REQUIRE(n.ok());
  CHECK(n->ndims() == 2);
  CHECK(n->size() == 4);
  CHECK((*n)[0] == Offset{1, 0});
  CHECK((*n)[1] == Offset{0, 0});
  CHECK((*n)[3] == Offset{-1, 2});
  CHECK(n->offsets() == std::vector<Offset>{{1, 0}, {0, 0}, {1, 0}, {-1, 2}});
  CHECK(n->nonzero_count() == 3);
  CHECK(n->distinct_nonzero(0) == 2);  // {1, -1}; the duplicate 1 counts once
  CHECK(n->distinct_nonzero(1) == 1);  // {2}
}

TEST_CASE("counts of the 9-point Moore neighbourhood") {
  Neighborhood n = cartplan::testing::moore9();
  CHECK(n.size() == 9);
  CHECK(n.nonzero_count() == 8);
  CHECK(n.distinct_nonzero(0) == 2);
  CHECK(n.distinct_nonzero(1) == 2);
}

TEST_CASE("seed 000 Figure 2 offsets: C_k per dimension") {
  Neighborhood n = nbh(3, {{-2, 1, 1}, {-1, 1, 1}, {1, 1, 1}, {2, 1, 1}});
  CHECK(n.nonzero_count() == 4);
  CHECK(n.distinct_nonzero(0) == 4);
  CHECK(n.distinct_nonzero(1) == 1);
  CHECK(n.distinct_nonzero(2) == 1);
}

TEST_CASE("only-zero neighbourhood") {
  Neighborhood n = nbh(3, {{0, 0, 0}, {0, 0, 0}});
  CHECK(n.size() == 2);
  CHECK(n.nonzero_count() == 0);
  for (int k = 0; k < 3; ++k) CHECK(n.distinct_nonzero(k) == 0);
}

TEST_CASE("is_zero and nonzeros") {
  CHECK(Neighborhood::is_zero({0, 0, 0}));
  CHECK_FALSE(Neighborhood::is_zero({0, 0, -1}));
  CHECK(Neighborhood::nonzeros({0, 0, 0}) == 0);
  CHECK(Neighborhood::nonzeros({3, 0, -1}) == 2);
  CHECK(Neighborhood::nonzeros({1, 1, 1, 1}) == 4);
}

TEST_CASE("create errors name the bad input") {
  CHECK(error_of(0, {{}}) == "ndims = 0: a neighbourhood needs between 1 and 16 dimensions");
  CHECK(error_of(17, {Offset(17, 0)}) ==
        "ndims = 17: a neighbourhood needs between 1 and 16 dimensions");
  CHECK(error_of(-1, {{1}}) == "ndims = -1: a neighbourhood needs between 1 and 16 dimensions");
  CHECK(error_of(2, {}) == "a neighbourhood needs at least one offset");
  CHECK(error_of(3, {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1}}) ==
        "offset 3 has 2 coordinates, expected 3");
  CHECK(error_of(1, {{1, 2}}) == "offset 0 has 2 coordinates, expected 1");
  CHECK(error_of(2, {{0, 0}, {1, (1 << 28) + 1}}) ==
        "offset 1 coordinate 1 = 268435457: |coordinate| must be at most 268435456");
  CHECK(error_of(1, {{INT_MIN}}) ==
        "offset 0 coordinate 0 = -2147483648: |coordinate| must be at most 268435456");
  CHECK(error_of(1, {{INT_MAX}}).find("= 2147483647:") != std::string::npos);
}

TEST_CASE("limits are inclusive") {
  const int m = Neighborhood::kMaxCoordinate;
  Neighborhood n = nbh(2, {{m, -m}, {-m, m}});
  CHECK(n.distinct_nonzero(0) == 2);
  CHECK(nbh(16, {Offset(16, 1)}).ndims() == 16);

  std::vector<Offset> many(Neighborhood::kMaxOffsets, Offset{1});
  auto ok = Neighborhood::create(1, many);
  REQUIRE(ok.ok());
  CHECK(ok->size() == Neighborhood::kMaxOffsets);
  CHECK(ok->distinct_nonzero(0) == 1);
  many.push_back({0});
  CHECK(error_of(1, std::move(many)) == "a neighbourhood has at most 1048576 offsets, got 1048577");
}

}  // namespace
}  // namespace cartplan::engine
