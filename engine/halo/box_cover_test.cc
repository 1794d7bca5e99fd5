// Tests of disjoint box covers.
#include "engine/halo/box_cover.h"

#include <doctest/doctest.h>

namespace cartplan::engine::halo {

namespace ih = ir::halo;

TEST_CASE("overlapping slabs: three pieces labelled by who needs them") {
  const std::vector<CoverPiece> c = disjoint_cover({ih::Box{{0, 0}, {2, 4}}, ih::Box{{0, 2}, {2, 4}}});
  REQUIRE(c.size() == 3);
  CHECK(c[0].box == ih::Box{{0, 0}, {2, 2}});
  CHECK(c[0].covered_by == std::vector<int>{0});
  CHECK(c[1].box == ih::Box{{0, 2}, {2, 2}});
  CHECK(c[1].covered_by == std::vector<int>{0, 1});
  CHECK(c[2].covered_by == std::vector<int>{1});
}

TEST_CASE("an L of two slabs is two boxes; nested boxes cut the outer one") {
  // Low slabs of a 6x6 interior in both dimensions: their union is an L.
  std::vector<CoverPiece> c = disjoint_cover({ih::Box{{0, 0}, {1, 6}}, ih::Box{{0, 0}, {6, 1}}});
  std::int64_t cells = 0;
  for (const CoverPiece& p : c) cells += p.box.cells();
  CHECK(cells == 11);
  CHECK(c.size() == 3);  // the shared cell, and one arm each
  c = disjoint_cover({ih::Box{{0, 0}, {4, 4}}, ih::Box{{1, 1}, {2, 2}}, ih::Box{{0, 0}, {0, 3}}});
  cells = 0;
  for (const CoverPiece& p : c) cells += p.box.cells();
  CHECK(cells == 16);
}

}  // namespace cartplan::engine::halo
