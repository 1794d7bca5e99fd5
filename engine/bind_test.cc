// bind() tests: peers on tori and meshes, the mesh masks, and bad arguments.
#include "engine/bind.h"

#include <doctest/doctest.h>

#include "engine/planner.h"
#include "tests/fixtures.h"

namespace cartplan::engine {
namespace {

TEST_CASE("direct plan on a torus: every round has both peers") {
  const Neighborhood n = testing::nbh(2, {{0, 1}, {1, 0}});
  const Result<Binder> b = Binder::create(plan_direct(ir::Op::kAlltoall, n));
  REQUIRE(b.ok());
  const Grid g = *Grid::create({3, 4}, {true, true});
  const Result<BoundPlan> bp = b->bind(g, {0, 0}, {16});
  REQUIRE(bp.ok());
  REQUIRE(bp->rounds.size() == 2);
  CHECK(bp->rounds[0].send_peer == g.rank({0, 1}));
  CHECK(bp->rounds[0].recv_peer == g.rank({0, 3}));
  CHECK(bp->rounds[1].send_peer == g.rank({1, 0}));
  CHECK(bp->rounds[1].recv_peer == g.rank({2, 0}));
  CHECK(bp->rounds[0].send_bytes == 16);
  CHECK(bp->phase_begin == std::vector<int>{0, 2});
}

TEST_CASE("mesh corner: rounds towards the outside are skipped, and nothing arrives from outside") {
  const Neighborhood n = testing::moore9();
  const Result<Binder> b = Binder::create(plan_combining(ir::Op::kAlltoall, n, {0, 1}));
  REQUIRE(b.ok());
  const Grid g = *Grid::create({3, 3}, {false, false});
  const Result<BoundPlan> corner = b->bind(g, {0, 0}, {8});
  REQUIRE(corner.ok());
  // Phase 0, round 0 has shift (-1,0): from (0,0) that leaves the mesh.
  CHECK(corner->rounds[0].send_peer == kNoRank);
  CHECK(corner->rounds[0].send_entries.empty());
  // ...and its source (1,0) sends to (0,0) only blocks whose origin and target both exist:
  // (-1,-1)'s target from origin (1,0) is (0,-1), outside, so only (-1,0) and (-1,1) travel.
  CHECK(corner->rounds[0].recv_peer == g.rank({1, 0}));
  CHECK(corner->rounds[0].recv_entries == std::vector<int>{1, 2});
  const Result<BoundPlan> origin_side = b->bind(g, {1, 0}, {8});
  CHECK(origin_side->rounds[0].send_entries == std::vector<int>{1, 2});
}

TEST_CASE("masks agree between every sender and receiver") {
  const Neighborhood n = testing::nbh(3, {{1, -1, 2}, {0, 1, 1}, {-2, 0, 1}, {1, 1, 1}, {0, 0, 0}});
  const Grid g = *Grid::create({3, 2, 4}, {false, true, false});
  for (ir::Op op : {ir::Op::kAlltoall, ir::Op::kAllgather}) {
    const Result<Binder> b = Binder::create(plan_combining(op, n, {2, 0, 1}));
    REQUIRE(b.ok());
    std::vector<BoundPlan> all;
    for (int r = 0; r < g.size(); ++r) all.push_back(*b->bind(g, g.coords(r), {4}));
    for (int r = 0; r < g.size(); ++r)
      for (std::size_t k = 0; k < all[r].rounds.size(); ++k) {
        const BoundRound& s = all[r].rounds[k];
        if (s.send_peer == kNoRank) continue;
        const BoundRound& d = all[s.send_peer].rounds[k];
        CHECK(d.recv_peer == r);
        CHECK(d.recv_entries == s.send_entries);
        CHECK(d.recv_bytes == s.send_bytes);
      }
  }
}

TEST_CASE("bad plans and arguments are errors") {
  ir::PlanParts broken = plan_direct(ir::Op::kAlltoall, testing::moore9()).parts();
  broken.phases[0].rounds[0].recv[0].index = 99;
  CHECK(Binder::create(ir::Plan(broken)).error().find("plan does not verify") == 0);

  const Result<Binder> b = Binder::create(plan_direct(ir::Op::kAllgather, testing::moore9()));
  const Grid g2 = *Grid::create({2, 2}, {true, true});
  const Grid g3 = *Grid::create({2, 2, 2}, {true, true, true});
  CHECK(b->bind(g3, {0, 0, 0}, {8}).error() == "grid has 3 dimensions, the plan 2");
  CHECK(b->bind(g2, {0}, {8}).error() == "coordinates have 1 entries, expected 2");
  CHECK(b->bind(g2, {0, 2}, {8}).error() == "coordinate 1 = 2 is outside [0, 2)");
  CHECK(b->bind(g2, {0, 0}, {8, 8}).error() == "block sizes: got 2, expected 1 or 9");
  CHECK(b->bind(g2, {0, 0}, {-8}).error() == "block 0 has negative size -8");
  CHECK(b->bind(g2, {0, 0}, {8, 8, 8, 8, 4, 8, 8, 8, 8}).error().find("allgather blocks must all have") == 0);
}

}  // namespace
}  // namespace cartplan::engine
