// Tests of halo bind: on a torus every part travels; on a mesh the parts whose cells do not
// exist are dropped on both sides alike.
#include "engine/halo/bind.h"

#include <doctest/doctest.h>

#include "engine/halo/planners.h"

namespace cartplan::engine::halo {

namespace ih = ir::halo;

namespace {

HaloDescription moore2() {
  Result<HaloDescription> h = describe_halo(ih::ArrayShape{2, {4, 4}, {1, 1}, {1, 1}, 8, ih::Order::kC}, "moore:d=2,r=1", std::nullopt);
  REQUIRE(h);
  return *h;
}

Grid grid(std::vector<int> dims, std::vector<bool> periods) {
  Result<Grid> g = Grid::create(std::move(dims), std::move(periods));
  REQUIRE(g);
  return *g;
}

}  // namespace

TEST_CASE("torus: every part of every message travels") {
  Result<HaloBinder> b = HaloBinder::create(plan_halo_dimwise(moore2(), {0, 1}));
  REQUIRE(b);
  const Grid g = grid({3, 3}, {true, true});
  Result<BoundHalo> bound = b->bind(g, {0, 0});
  REQUIRE(bound);
  REQUIRE(bound->messages.size() == 4);
  for (const BoundMessage& m : bound->messages) {
    CHECK(m.send_parts.size() == b->plan().phases()[m.phase].messages[m.message].parts.size());
    CHECK(m.recv_parts.size() == m.send_parts.size());
  }
  CHECK(b->plan().phases()[0].messages[0].shift == ir::Offset{1, 0});
  CHECK(bound->messages[0].send_peer == g.relative_rank({0, 0}, {1, 0}));
  CHECK(bound->messages[0].recv_peer == g.relative_rank({0, 0}, {-1, 0}));
}

TEST_CASE("mesh corner: extended faces lose the ghost rows that have no source") {
  Result<HaloBinder> b = HaloBinder::create(plan_halo_dimwise(moore2(), {0, 1}));
  REQUIRE(b);
  const Grid g = grid({3, 3}, {false, false});
  Result<BoundHalo> corner = b->bind(g, {0, 0});
  REQUIRE(corner);
  // Messages: phase 0 shifts (1,0) and (-1,0), phase 1 shifts (0,1) and (0,-1).
  // Phase 0, shift (1,0): the corner sends its last row down; nothing comes from above.
  CHECK(corner->messages[0].send_peer == g.rank({1, 0}));
  CHECK(corner->messages[0].recv_peer == kNoRank);
  CHECK(corner->messages[1].send_peer == kNoRank);
  CHECK(corner->messages[1].recv_peer == g.rank({1, 0}));
  // Phase 1, shift (0,1): the face goes right, extended over the high ghost row only (parts:
  // low ghost row, interior, high ghost row; the low one has no source in the mesh).
  CHECK(corner->messages[2].send_parts == std::vector<int>{1, 2});
  CHECK(corner->messages[2].recv_peer == kNoRank);
  CHECK(corner->messages[3].send_peer == kNoRank);
  CHECK(corner->messages[3].recv_parts == std::vector<int>{1, 2});
  // The receiver at (0,1) keeps the same parts from (0,0).
  Result<BoundHalo> right = b->bind(g, {0, 1});
  REQUIRE(right);
  CHECK(right->messages[2].recv_parts == std::vector<int>{1, 2});
  CHECK(right->messages[2].recv_peer == g.rank({0, 0}));
}

TEST_CASE("bad coordinates and unverified plans are errors") {
  ih::HaloPlanParts p = plan_halo_direct(moore2()).parts();
  p.phases[0].messages.pop_back();
  p.stats = ih::derived_stats(p);
  Result<HaloBinder> bad = HaloBinder::create(ih::HaloPlan(p));
  REQUIRE_FALSE(bad);
  CHECK(bad.error().find("the halo plan does not verify: ghost region (1,1)") == 0);
  Result<HaloBinder> b = HaloBinder::create(plan_halo_direct(moore2()));
  REQUIRE(b);
  CHECK(b->bind(grid({3, 3}, {true, true}), {3, 0}).error().find("lie outside the grid") != std::string::npos);
  CHECK(b->bind(grid({3}, {true}), {0}).error().find("the grid has 1 dimensions") == 0);
}

}  // namespace cartplan::engine::halo
