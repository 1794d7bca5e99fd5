// Tests of halo descriptions: normalized stencils and the errors for bad ones.
#include "engine/halo/description.h"

#include <doctest/doctest.h>

namespace cartplan::engine::halo {

namespace ih = ir::halo;

namespace {
ih::ArrayShape shape2(int n = 8, int g = 2) { return ih::ArrayShape{2, {n, n}, {g, g}, {g, g}, 8, ih::Order::kC}; }
}  // namespace

TEST_CASE("stencils are sign-vector sets: zero and duplicates dropped, sorted") {
  Result<HaloDescription> h = describe_halo(shape2(), "moore:d=2,r=1", std::nullopt);
  REQUIRE(h);
  CHECK(h->neighborhood.size() == 8);
  CHECK(h->neighborhood.front() == ir::Offset{-1, -1});
  h = describe_halo(shape2(), {{1, 0}, {0, 0}, {1, 0}, {-1, 0}}, std::nullopt);
  REQUIRE(h);
  CHECK(h->neighborhood == std::vector<ir::Offset>{{-1, 0}, {1, 0}});
}

TEST_CASE("regions of width 0 hold no cells") {
  ih::ArrayShape a = shape2();
  a.ghost_lo = {0, 2};
  Result<HaloDescription> h = describe_halo(a, "moore:d=2,r=1", std::nullopt);
  REQUIRE(h);
  CHECK(nonempty_regions(*h).size() == 5);  // no (-1, *)
}

TEST_CASE("bad descriptions are named") {
  CHECK(describe_halo(shape2(), "moore:d=2,r=2", std::nullopt).error().find("offset (-2,-2) is not a sign vector") == 0);
  CHECK(describe_halo(shape2(), "moore:d=3,r=1", std::nullopt).error() == "the stencil has 3 dimensions; the array has 2");
  CHECK(describe_halo(shape2(4, 5), "vonneumann:d=2,r=1", std::nullopt).error().find("ghost_lo[0] = 5 is wider than the interior (4 cells)") == 0);
  ih::ArrayShape a = shape2();
  a.interior = {8, -1};
  CHECK(describe_halo(a, "moore:d=2,r=1", std::nullopt).error().find("interior[1] = -1") == 0);
  Result<Grid> g = Grid::create({2, 2, 2}, {true, true, true});
  CHECK(describe_halo(shape2(), "moore:d=2,r=1", *g).error() == "the grid has 3 dimensions; the array has 2");
  CHECK(describe_halo(shape2(), {{1, 0, 0}}, std::nullopt).error().find("offset (1,0,0) has 3 coordinates") == 0);
  CHECK_FALSE(describe_halo(shape2(), "ring:d=2", std::nullopt).ok());
}

TEST_CASE("a ghost wider than the interior is fine on a side the stencil never fills") {
  ih::ArrayShape a = shape2(4, 1);
  a.ghost_hi = {9, 1};
  CHECK(describe_halo(a, {{-1, 0}, {0, 1}}, std::nullopt).ok());
}

}  // namespace cartplan::engine::halo
