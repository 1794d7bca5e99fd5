// Tests of the halo array's shape checks, regions and boxes.
#include "ir/halo/array.h"

#include <doctest/doctest.h>

namespace cartplan::ir::halo {

TEST_CASE("regions and their sources in 2-D with uneven ghost widths") {
  const ArrayShape a{2, {64, 32}, {2, 1}, {3, 0}, 8, Order::kC};
  CHECK(ghost_region(a, {1, 0}) == Box{{64, 0}, {3, 32}});
  CHECK(ghost_region(a, {-1, -1}) == Box{{-2, -1}, {2, 1}});
  CHECK(ghost_region(a, {0, 1}).empty());  // ghost_hi[1] = 0
  CHECK(source_region(a, {1, 0}) == Box{{0, 0}, {3, 32}});
  CHECK(source_region(a, {-1, -1}) == Box{{62, 31}, {2, 1}});
  CHECK(ghost_region(a, {0, 0}) == a.interior_box());
  CHECK(a.whole() == Box{{-2, -1}, {69, 33}});
  CHECK(sign_of(a, {-1, 32}) == Offset{-1, 1});
  CHECK(sign_of(a, {5, 5}) == Offset{0, 0});
}

TEST_CASE("shape errors name the bad value") {
  ArrayShape a{2, {4, 0}, {1, 1}, {1, 1}, 8, Order::kC};
  CHECK(shape_error(a).value().find("interior[1] = 0") != std::string::npos);
  a.interior = {4, 4};
  a.ghost_hi = {1, -1};
  CHECK(shape_error(a).value().find("ghost_hi[1] = -1") != std::string::npos);
  a.ghost_hi = {1, 1};
  a.elem_bytes = 0;
  CHECK(shape_error(a).value().find("elem_bytes = 0") != std::string::npos);
  a.elem_bytes = 8;
  CHECK_FALSE(shape_error(a).has_value());
  a.ndims = 9;
  CHECK(shape_error(a).value().find("1 to 8") != std::string::npos);
}

TEST_CASE("boxes: intersection, containment, text") {
  const Box a{{0, 0}, {4, 4}}, b{{2, 3}, {4, 4}};
  CHECK(intersect(a, b) == Box{{2, 3}, {2, 1}});
  CHECK(overlaps(a, b));
  CHECK_FALSE(overlaps(a, Box{{4, 0}, {1, 4}}));
  CHECK(contains(a, Box{{1, 1}, {3, 3}}));
  CHECK_FALSE(contains(a, b));
  CHECK(to_string(b) == "[2,6)x[3,7)");
  CHECK(translated(a, {64, -1}) == Box{{64, -1}, {4, 4}});
  CHECK(a.cells() == 16);
  CHECK(join(a, Box{{4, 0}, {2, 4}}) == Box{{0, 0}, {6, 4}});
  CHECK(join(Box{{0, -2}, {4, 2}}, a) == Box{{0, -2}, {4, 6}});
  CHECK_FALSE(join(a, Box{{4, 0}, {2, 3}}).has_value());
  CHECK_FALSE(join(a, Box{{5, 0}, {2, 4}}).has_value());
  CHECK_FALSE(join(a, a).has_value());
}

}  // namespace cartplan::ir::halo
