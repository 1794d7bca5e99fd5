// Tests for Grid: MPI_Cart_create rank order, wrap-around, mesh edges, tiny dims and huge offsets.
#include "engine/grid.h"

#include <doctest/doctest.h>

#include <climits>
#include <set>

namespace cartplan::engine {
namespace {

Grid make(std::vector<int> dims, std::vector<bool> periods) {
  auto g = Grid::create(std::move(dims), std::move(periods));
  REQUIRE(g.ok());
  return *g;
}

// Independent reference: step one unit at a time, so no modulo arithmetic is shared with the code.
int naive_relative_rank(const Grid& g, Coords c, const Offset& o) {
  for (int k = 0; k < g.ndims(); ++k) {
    const int step = o[k] > 0 ? 1 : -1;
    for (int i = 0; i != o[k]; i += step) {
      c[k] += step;
      if (c[k] < 0 || c[k] >= g.dims()[k]) {
        if (!g.periods()[k]) return kNoRank;
        c[k] = c[k] < 0 ? g.dims()[k] - 1 : 0;
      }
    }
  }
  int r = 0;
  for (int k = 0; k < g.ndims(); ++k) r = r * g.dims()[k] + c[k];
  return r;
}

TEST_CASE("3x4x2 grid: row-major ranks, last dimension fastest") {
  Grid g = make({3, 4, 2}, {true, true, true});
  CHECK(g.ndims() == 3);
  CHECK(g.size() == 24);
  int expected = 0;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 4; ++b)
      for (int c = 0; c < 2; ++c) {
        CHECK(g.coords(expected) == Coords{a, b, c});
        CHECK(g.rank({a, b, c}) == expected);
        ++expected;
      }
  CHECK(g.coords(1) == Coords{0, 0, 1});
  CHECK(g.coords(2) == Coords{0, 1, 0});
  CHECK(g.coords(8) == Coords{1, 0, 0});
  CHECK(g.rank({2, 3, 1}) == 23);
}

TEST_CASE("torus wraps in both directions") {
  Grid g = make({3, 4, 2}, {true, true, true});
  CHECK(g.relative_coord({0, 0, 0}, {-1, -1, -1}) == Coords{2, 3, 1});
  CHECK(g.relative_coord({2, 3, 1}, {1, 1, 1}) == Coords{0, 0, 0});
  CHECK(g.relative_coord({1, 2, 0}, {-7, 9, 5}) == Coords{0, 3, 1});
  CHECK(g.relative_rank({0, 0, 0}, {0, -1, 0}) == g.rank({0, 3, 0}));
  CHECK(g.contains({0, 0, 0}, {-100, 100, -3}));
}

TEST_CASE("mesh edges have no neighbour") {
  Grid g = make({4, 3}, {true, false});
  const Coords c = g.coords(5);
  CHECK(c == Coords{1, 2});
  CHECK(g.relative_rank(c, {0, 1}) == kNoRank);
  CHECK_FALSE(g.relative_coord(c, {0, 1}).has_value());
  CHECK_FALSE(g.contains(c, {0, 1}));
  CHECK(g.relative_rank(c, {0, -2}) == g.rank({1, 0}));
  CHECK(g.relative_rank(c, {0, -3}) == kNoRank);
  CHECK(g.relative_rank(c, {-2, 0}) == g.rank({3, 2}));  // dimension 0 is periodic
  CHECK(g.relative_rank({0, 0}, {0, -1}) == kNoRank);
}

TEST_CASE("relative_shift: dest = coords + offset, source = coords - offset") {
  Grid g = make({4, 3}, {true, false});
  auto s = g.relative_shift({1, 1}, {1, 1});
  CHECK(s.dest == g.rank({2, 2}));
  CHECK(s.source == g.rank({0, 0}));
  s = g.relative_shift({1, 2}, {0, 1});  // at the upper mesh edge: only a source
  CHECK(s.dest == kNoRank);
  CHECK(s.source == g.rank({1, 1}));
  s = g.relative_shift({0, 0}, {-1, 1});
  CHECK(s.dest == g.rank({3, 1}));
  CHECK(s.source == kNoRank);
  s = g.relative_shift({0, 1}, {0, 0});
  CHECK(s.dest == g.rank({0, 1}));
  CHECK(s.source == g.rank({0, 1}));
  s = g.relative_shift({0, 1}, {0, 5});
  CHECK(s.dest == kNoRank);
  CHECK(s.source == kNoRank);
}

TEST_CASE("size-1 and size-2 dimensions") {
  Grid g = make({1, 2}, {true, true});
  CHECK(g.size() == 2);
  // Size 1: every offset lands on the same coordinate.
  CHECK(g.relative_coord({0, 0}, {1, 0}) == Coords{0, 0});
  CHECK(g.relative_coord({0, 0}, {-5, 0}) == Coords{0, 0});
  // Size 2: +1 and -1 reach the same rank.
  CHECK(g.relative_rank({0, 0}, {0, 1}) == 1);
  CHECK(g.relative_rank({0, 0}, {0, -1}) == 1);
  auto s = g.relative_shift({0, 1}, {0, 1});
  CHECK(s.dest == 0);
  CHECK(s.source == 0);

  Grid m = make({1, 2}, {false, false});
  CHECK(m.relative_rank({0, 0}, {1, 0}) == kNoRank);
  CHECK(m.relative_rank({0, 0}, {0, 1}) == 1);
  CHECK(m.relative_rank({0, 0}, {0, -1}) == kNoRank);
}

TEST_CASE("huge offsets use 64-bit arithmetic and a proper modulo") {
  Grid g = make({5, 7}, {true, true});
  const int big = 1 << 28;  // 2^28 = 1 (mod 5) and 2^28 = 2 (mod 7)
  CHECK(g.relative_coord({2, 3}, {big, big}) == Coords{3, 5});
  CHECK(g.relative_coord({2, 3}, {-big, -big}) == Coords{1, 1});
  CHECK(g.relative_coord({0, 0}, {-big, -big}) == Coords{4, 5});
  // INT_MAX = 1 (mod 7), INT_MIN = -2 (mod 7); the source side negates INT_MIN.
  CHECK(g.relative_coord({0, 6}, {0, INT_MAX}) == Coords{0, 0});
  CHECK(g.relative_coord({0, 6}, {0, INT_MIN}) == Coords{0, 4});
  auto s = g.relative_shift({0, 6}, {0, INT_MIN});
  CHECK(s.dest == g.rank({0, 4}));
  CHECK(s.source == g.rank({0, 1}));

  Grid m = make({5, 7}, {false, false});
  CHECK(m.relative_rank({4, 6}, {big, 0}) == kNoRank);
  CHECK(m.relative_rank({4, 6}, {0, INT_MAX}) == kNoRank);
  CHECK(m.relative_rank({0, 0}, {INT_MIN, 0}) == kNoRank);
  auto ms = m.relative_shift({4, 6}, {INT_MIN, 0});
  CHECK(ms.dest == kNoRank);
  CHECK(ms.source == kNoRank);
}

TEST_CASE("relative_rank agrees with unit stepping on every rank and offset") {
  Grid g = make({3, 4, 2}, {true, false, true});
  for (int r = 0; r < g.size(); ++r)
    for (int a = -5; a <= 5; ++a)
      for (int b = -5; b <= 5; ++b)
        for (int c = -3; c <= 3; ++c) {
          const Offset o{a, b, c};
          const Coords co = g.coords(r);
          const int want = naive_relative_rank(g, co, o);
          REQUIRE(g.relative_rank(co, o) == want);
          const auto s = g.relative_shift(co, o);
          REQUIRE(s.dest == want);
          REQUIRE(s.source == naive_relative_rank(g, co, {-a, -b, -c}));
        }
}

TEST_CASE("a shift is a permutation on a torus") {
  Grid g = make({3, 4, 2}, {true, true, true});
  std::set<int> dests;
  for (int r = 0; r < g.size(); ++r) {
    const auto s = g.relative_shift(g.coords(r), {1, -3, 1});
    dests.insert(s.dest);
    // Shifting back from dest must reach r: source of dest is r.
    CHECK(g.relative_shift(g.coords(s.dest), {1, -3, 1}).source == r);
  }
  CHECK(dests.size() == 24);
}

TEST_CASE("create rejects bad dims and periods with messages naming the value") {
  auto e = Grid::create({4, 0}, {true, true});
  REQUIRE_FALSE(e.ok());
  CHECK(e.error() == "dims[1] = 0: every dimension needs at least one process");

  e = Grid::create({-3}, {false});
  REQUIRE_FALSE(e.ok());
  CHECK(e.error() == "dims[0] = -3: every dimension needs at least one process");

  e = Grid::create({}, {});
  REQUIRE_FALSE(e.ok());
  CHECK(e.error() == "a grid needs at least one dimension");

  e = Grid::create(std::vector<int>(17, 1), std::vector<bool>(17, true));
  REQUIRE_FALSE(e.ok());
  CHECK(e.error() == "a grid has at most 16 dimensions, got 17");

  e = Grid::create({2, 3}, {true});
  REQUIRE_FALSE(e.ok());
  CHECK(e.error() == "periods has 1 entries but dims has 2");

  e = Grid::create({65536, 32768}, {true, true});  // exactly 2^31
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().find("more than 2147483647 processes") != std::string::npos);
  CHECK(e.error().find("dims[1] = 32768") != std::string::npos);

  e = Grid::create({INT_MAX, INT_MAX, INT_MAX}, {true, true, true});
  REQUIRE_FALSE(e.ok());

  auto ok = Grid::create({46341, 46340}, {true, false});  // 2147441940 < INT_MAX
  REQUIRE(ok.ok());
  CHECK(ok->size() == 46341 * 46340);
  CHECK(ok->coords(ok->size() - 1) == Coords{46340, 46339});
  CHECK(ok->periods() == std::vector<bool>{true, false});

  auto sixteen = Grid::create(std::vector<int>(16, 2), std::vector<bool>(16, false));
  REQUIRE(sixteen.ok());
  CHECK(sixteen->size() == 65536);
}

TEST_CASE("wraps_to_self: a multiple of a periodic dimension, nothing on a mesh") {
  const Grid g = *Grid::create({2, 1, 3}, {true, true, false});
  CHECK(wraps_to_self({2, 0, 0}, g));
  CHECK(wraps_to_self({0, -1, 0}, g));  // any shift along a dimension of size 1
  CHECK(wraps_to_self({-2, 5, 0}, g));
  CHECK_FALSE(wraps_to_self({1, 0, 0}, g));
  CHECK_FALSE(wraps_to_self({0, 0, 3}, g));  // the mesh dimension leaves the grid instead
  CHECK_FALSE(wraps_to_self({2, 0, 3}, g));
}

TEST_CASE("peer_share: the share of processes with a peer at +shift") {
  const Grid mesh = *Grid::create({2, 2}, {false, false});
  CHECK(peer_share({1, 0}, mesh) == doctest::Approx(0.5));
  CHECK(peer_share({1, -1}, mesh) == doctest::Approx(0.25));
  CHECK(peer_share({2, 0}, mesh) == 0);
  // A 4x4 mesh: a face shift reaches a peer from 3 of 4 columns; periodic dimensions always do.
  CHECK(peer_share({1, 0}, *Grid::create({4, 4}, {false, false})) == doctest::Approx(0.75));
  CHECK(peer_share({1, 1}, *Grid::create({4, 4}, {true, false})) == doctest::Approx(0.75));
  CHECK(peer_share({5, 7}, *Grid::create({4, 4}, {true, true})) == 1);
}

}  // namespace
}  // namespace cartplan::engine
