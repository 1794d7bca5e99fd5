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

TEST_CASE("bind_representative: a torus rank's binding, with a peer of its own per round") {
  // On a torus every rank binds alike up to peers: the representative has the same entries,
  // bytes, combines and copies as rank 0, and gives each round its own peer number, except
  // rounds that wrap to the process itself, whose peer is the process.
  const Neighborhood n = testing::moore9();
  for (ir::Op op : {ir::Op::kAlltoall, ir::Op::kAllgather, ir::Op::kAllreduce}) {
    CAPTURE(ir::to_string(op));
    const ir::Plan plan = plan_combining(op, n, {0, 1});
    const Grid g = *Grid::create({3, 1}, {true, true});
    const Result<BoundPlan> real = Binder::create(plan)->bind(g, {0, 0}, {16});
    const Result<BoundPlan> rep = bind_representative(plan, g, {16});
    REQUIRE(real.ok());
    REQUIRE(rep.ok());
    CHECK(rep->rank == kRepresentativeRank);
    REQUIRE(rep->rounds.size() == real->rounds.size());
    for (std::size_t r = 0; r < rep->rounds.size(); ++r) {
      const BoundRound &a = rep->rounds[r], &b = real->rounds[r];
      CHECK(a.send_entries == b.send_entries);
      CHECK(a.recv_entries == b.recv_entries);
      CHECK(a.recv_combine == b.recv_combine);
      CHECK(a.send_bytes == b.send_bytes);
      CHECK((a.send_peer == kRepresentativeRank) == (b.send_peer == b.recv_peer && b.send_peer == 0));
    }
    // Dimension 1 has size 1: its rounds wrap; dimension 0's have peers 1 and 2.
    CHECK(rep->rounds[0].send_peer == 1);
    CHECK(rep->rounds[1].send_peer == 2);
    CHECK(rep->rounds[2].send_peer == kRepresentativeRank);
    CHECK(rep->copies == real->copies);
    CHECK(rep->phase_copies == real->phase_copies);
    CHECK(rep->recv_result == real->recv_result);
  }
  // Without a grid no round wraps; a grid of another dimension and bad sizes are errors.
  const ir::Plan plan = plan_direct(ir::Op::kAlltoall, n);
  const Result<BoundPlan> free = bind_representative(plan, std::nullopt, {16});
  REQUIRE(free.ok());
  for (const BoundRound& r : free->rounds) CHECK(r.send_peer != kRepresentativeRank);
  CHECK(bind_representative(plan, *Grid::create({2}, {true}), {16}).error() == "grid has 1 dimensions, the plan 2");
  CHECK_FALSE(bind_representative(plan, std::nullopt, {-1}).ok());
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

TEST_CASE("origins of +-2^30 and shifts of INT_MIN do not overflow (fuzz finding)") {
  // tests/fuzz/corpus/plan_json/regress_bind_overflow.json: a plan that verifies, whose block
  // sits at origin 2^30 while its target offset is 2^30; bind added them in int.
  constexpr int kBig = 1 << 30;
  ir::PlanParts p;
  p.op = ir::Op::kAlltoall;
  p.kind = ir::PlanKind::kCombining;
  p.ndims = 1;
  p.neighborhood = {{kBig}};
  p.dim_order = {0};
  p.temp_slots = {{0}, {0}};
  p.phases = {ir::Phase{0, {ir::Round{{-kBig}, 0, {testing::send(0)}, {testing::temp(0)}}}},
              ir::Phase{0, {ir::Round{{kBig}, 1, {testing::temp(0)}, {testing::temp(1)}}}},
              ir::Phase{0, {ir::Round{{kBig}, 2, {testing::temp(1)}, {testing::recv(0)}}}}};
  p.stats.t = 1;
  p.stats.rounds = 3;
  p.stats.volume = 3;
  p.stats.phase_rounds = {1, 1, 1};
  const Result<Binder> b = Binder::create(ir::Plan(p));
  REQUIRE(b.ok());
  // 2^30 = 1 (mod 3): on a 3-ring the shifts are -1, +1, +1, and everything travels.
  const Grid torus = *Grid::create({3}, {true});
  const Result<BoundPlan> t = b->bind(torus, {0}, {8});
  REQUIRE(t.ok());
  REQUIRE(t->rounds.size() == 3);
  CHECK(t->rounds[0].send_peer == 2);
  CHECK(t->rounds[0].recv_peer == 1);
  for (int r = 1; r < 3; ++r) {
    CHECK(t->rounds[r].send_peer == 1);
    CHECK(t->rounds[r].recv_peer == 2);
    CHECK(t->rounds[r].send_entries == std::vector<int>{0});
    CHECK(t->rounds[r].recv_entries == std::vector<int>{0});
  }
  // On a mesh every origin is outside: nothing travels, and bind succeeds.
  const Result<BoundPlan> m = b->bind(*Grid::create({3}, {false}), {1}, {8});
  REQUIRE(m.ok());
  for (const BoundRound& r : m->rounds) CHECK((r.send_entries.empty() && r.recv_entries.empty()));

  // INT_MIN shifts: the receiver's peer is at -INT_MIN (not an int).
  ir::PlanParts q = p;
  q.neighborhood = {{kBig - 1}};  // route: 0 -> -2^30 -> 2^30 -> -(2^30 - 1)
  q.phases = {ir::Phase{0, {ir::Round{{kBig}, 0, {testing::send(0)}, {testing::temp(0)}}}},
              ir::Phase{0, {ir::Round{{-2147483647 - 1}, 1, {testing::temp(0)}, {testing::temp(1)}}}},
              ir::Phase{0, {ir::Round{{2147483647}, 2, {testing::temp(1)}, {testing::recv(0)}}}}};
  const Result<Binder> bq = Binder::create(ir::Plan(q));
  REQUIRE(bq.ok());
  const Result<BoundPlan> tq = bq->bind(*Grid::create({5}, {true}), {0}, {8});
  REQUIRE(tq.ok());
  // -2^31 = 2 (mod 5): the send peer of round 1 is at +2 - 5 = -3, i.e. rank 2; its source at -2, rank 3.
  CHECK(tq->rounds[1].send_peer == 2);
  CHECK(tq->rounds[1].recv_peer == 3);
}

}  // namespace
}  // namespace cartplan::engine

namespace cartplan::engine {
namespace {

TEST_CASE("reductions on a mesh: a rank with no source writes nothing; the first arrival is stored") {
  // 1-d allreduce over {+1, +2} on a 4-process line: rank 0 has no source, rank 1 one.
  const Neighborhood n = testing::nbh(1, {{1}, {2}});
  const Grid g = *Grid::create({4}, {false});
  const Result<Binder> b = Binder::create(plan_direct(ir::Op::kAllreduce, n));
  REQUIRE(b.ok());
  const Result<BoundPlan> r0 = b->bind(g, {0}, {8});
  REQUIRE(r0.ok());
  for (const BoundRound& br : r0->rounds) CHECK(br.recv_entries.empty());
  CHECK(r0->recv_result == std::vector<bool>{true});
  const Result<BoundPlan> r1 = b->bind(g, {1}, {8});
  REQUIRE(r1.ok());
  CHECK(r1->rounds[0].recv_entries.size() == 1);
  CHECK(r1->rounds[0].recv_combine == std::vector<bool>{false});  // stored: nothing there yet
  CHECK(r1->rounds[1].recv_entries.empty());
  const Result<BoundPlan> r3 = b->bind(g, {3}, {8});
  REQUIRE(r3.ok());
  CHECK(r3->rounds[0].recv_combine == std::vector<bool>{false});
  CHECK(r3->rounds[1].recv_combine == std::vector<bool>{true});
  CHECK(r3->rounds[0].send_entries.empty());  // +1 leaves the mesh
}

TEST_CASE("rooted ops: only the root's neighbourhood moves data; the root is checked") {
  const Neighborhood n = testing::nbh(1, {{1}, {2}});
  const Grid g = *Grid::create({6}, {true});
  const Result<Binder> bc = Binder::create(plan_direct(ir::Op::kBcast, n));
  REQUIRE(bc.ok());
  CHECK(bc->bind(g, {0}, {8}).error() == "bcast needs a root");
  CHECK(bc->bind(g, {0}, {8}, Coords{6}).error() == "root coordinate 0 = 6 is outside [0, 6)");
  // Root 2 sends to 3 and 4 only.
  for (int r = 0; r < 6; ++r) {
    const BoundPlan bp = *bc->bind(g, {r}, {8}, Coords{2});
    int sends = 0;
    for (const BoundRound& br : bp.rounds) sends += static_cast<int>(br.send_entries.size());
    CHECK(sends == (r == 2 ? 2 : 0));
    CHECK(bp.recv_result == std::vector<bool>{r == 3, r == 4});
  }
  const Result<Binder> ar = Binder::create(plan_direct(ir::Op::kAllreduce, n));
  CHECK(ar->bind(g, {0}, {8}, Coords{2}).error() == "allreduce takes no root");
  // Gather through a combining tree: non-roots forward through recv blocks, which are scratch.
  const Neighborhood m = testing::moore9();
  const Grid g2 = *Grid::create({4, 4}, {true, true});
  const Result<Binder> ga = Binder::create(plan_combining(ir::Op::kGather, m, {0, 1}));
  REQUIRE(ga.ok());
  int scratch = 0;
  for (int r = 0; r < 16; ++r) {
    const BoundPlan bp = *ga->bind(g2, g2.coords(r), {8}, g2.coords(5));
    for (bool s : bp.recv_scratch) scratch += s;
    for (bool res : bp.recv_result) CHECK(res == (r == 5));
  }
  CHECK(scratch > 0);
}

}  // namespace
}  // namespace cartplan::engine
