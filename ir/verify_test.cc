// verify() tests: hand-made plans that break one rule each, and the message that names it.
#include "ir/verify.h"

#include <doctest/doctest.h>

#include <string>

#include "tests/fixtures.h"

namespace cartplan::ir {
namespace {

using testing::recv;
using testing::send;
using testing::temp;

// 1-d alltoall over offsets {+2, -1, 0}: the direct plan, written out by hand.
PlanParts direct_1d() {
  PlanParts p;
  p.op = Op::kAlltoall;
  p.kind = PlanKind::kDirect;
  p.ndims = 1;
  p.neighborhood = {{2}, {-1}, {0}};
  p.dim_order = {0};
  p.phases = {Phase{Phase::kAllDims,
                    {Round{{2}, 0, {send(0)}, {recv(0)}}, Round{{-1}, 1, {send(1)}, {recv(1)}}}}};
  p.copies = {Copy{send(2), recv(2)}};
  p.stats.t = 2;
  p.stats.rounds = 2;
  p.stats.volume = 2;
  p.stats.phase_rounds = {2};
  return p;
}

// 2-d alltoall to (1,1) routed through a temp slot: two phases.
PlanParts two_hop() {
  PlanParts p;
  p.op = Op::kAlltoall;
  p.kind = PlanKind::kCombining;
  p.ndims = 2;
  p.neighborhood = {{1, 1}};
  p.dim_order = {0, 1};
  p.temp_slots = {TempSlot{0}};
  p.phases = {Phase{0, {Round{{1, 0}, 0, {send(0)}, {temp(0)}}}},
              Phase{1, {Round{{0, 1}, 1, {temp(0)}, {recv(0)}}}}};
  p.stats.t = 1;
  p.stats.rounds = 2;
  p.stats.volume = 2;
  p.stats.phase_rounds = {1, 1};
  return p;
}


TEST_CASE("correct hand-made plans verify") {
  CHECK(verify(Plan(direct_1d())).empty());
  CHECK(verify(Plan(two_hop())).empty());
}

TEST_CASE("structural errors name phase, round and entry") {
  SUBCASE("block out of range") {
    PlanParts p = direct_1d();
    p.phases[0].rounds[1].recv[0] = recv(7);
    CHECK(testing::has_error(verify(Plan(p)), "phase 0, round 1, recv entry 0: recv[7] is out of range"));
  }
  SUBCASE("length mismatch") {
    PlanParts p = direct_1d();
    p.phases[0].rounds[0].recv.push_back(recv(1));
    CHECK(testing::has_error(verify(Plan(p)), "phase 0, round 0: sends 1 entries but receives 2"));
  }
  SUBCASE("shape mismatch") {
    PlanParts p = direct_1d();
    p.phases[0].rounds[0].recv[0] = recv(1);
    p.phases[0].rounds[1].recv[0] = recv(0);
    CHECK(testing::has_error(verify(Plan(p)), "phase 0, round 0, recv entry 0: receives recv[1] (shape of block 1) for send[0]"));
  }
  SUBCASE("writing the send buffer") {
    PlanParts p = direct_1d();
    p.phases[0].rounds[0].recv[0] = send(0);
    CHECK(testing::has_error(verify(Plan(p)), "writes send[0], but the send buffer is read-only"));
  }
  SUBCASE("duplicate tags") {
    PlanParts p = direct_1d();
    p.phases[0].rounds[1].tag = 0;
    CHECK(testing::has_error(verify(Plan(p)), "phase 0, round 1: tag 0 is used by another round"));
  }
  SUBCASE("zero shift") {
    PlanParts p = direct_1d();
    p.phases[0].rounds[1].shift = {0};
    CHECK(testing::has_error(verify(Plan(p)), "phase 0, round 1: shift is zero"));
  }
  SUBCASE("shift off the phase's dimension") {
    PlanParts p = two_hop();
    p.phases[0].rounds[0].shift = {1, 1};
    CHECK(testing::has_error(verify(Plan(p)), "phase 0, round 0: shift (1,1) leaves the phase's dimension 0"));
  }
  SUBCASE("a slot read and written in the same phase") {
    PlanParts p = two_hop();
    p.phases[1].rounds[0].recv[0] = temp(0);
    CHECK(testing::has_error(verify(Plan(p)), "phase 1, round 0, recv entry 0: writes temp[0], which phase 1, round 0, send entry 0 reads in the same phase"));
  }
  SUBCASE("a slot written twice in one phase") {
    PlanParts p = direct_1d();
    p.phases[0].rounds[1].recv[0] = recv(0);
    p.phases[0].rounds[1].send[0] = send(0);
    CHECK(testing::has_error(verify(Plan(p)), "phase 0, round 1, recv entry 0: writes recv[0], also written by phase 0, round 0, recv entry 0"));
  }
  SUBCASE("wrong stats") {
    PlanParts p = direct_1d();
    p.stats.volume = 5;
    CHECK(testing::has_error(verify(Plan(p)), "stats.volume = 5, but the plan sends 2 entries"));
  }
  SUBCASE("shape_of out of range") {
    PlanParts p = two_hop();
    p.temp_slots[0].shape_of = 3;
    CHECK(testing::has_error(verify(Plan(p)), "temp_slots[0].shape_of = 3 is out of range"));
  }
  SUBCASE("dim order") {
    PlanParts p = two_hop();
    p.dim_order = {1, 1};
    CHECK(testing::has_error(verify(Plan(p)), "dim_order is not a permutation of 0..1"));
  }
}

TEST_CASE("symbolic errors: wrong origin, unread data, missing and twice-written blocks") {
  SUBCASE("block sent the wrong way arrives from the wrong origin") {
    PlanParts p = direct_1d();
    p.phases[0].rounds[0].shift = {-2};
    CHECK(testing::has_error(verify(Plan(p)), "phase 0, round 0, recv entry 0: writes recv[0] with block 0 from (2), but its final content is block 0 from (-2)"));
  }
  SUBCASE("reading a temp slot before it holds data") {
    PlanParts p = two_hop();
    std::swap(p.phases[0], p.phases[1]);
    p.phases[0].dim = 1;
    p.phases[1].dim = 0;
    p.stats.phase_rounds = {1, 1};
    CHECK(testing::has_error(verify(Plan(p)), "phase 0, round 0, send entry 0: reads temp[0] before it holds data"));
  }
  SUBCASE("a recv block never written") {
    PlanParts p = direct_1d();
    p.copies.clear();
    CHECK(testing::has_error(verify(Plan(p)), "recv[2] is never written (expected block 2 from (0))"));
  }
  SUBCASE("a recv block written twice (with intermediate content)") {
    PlanParts p = two_hop();
    p.phases[0].rounds[0].send.push_back(send(0));
    p.phases[0].rounds[0].recv.push_back(recv(0));
    p.stats.volume = 3;
    const auto errors = verify(Plan(p));
    CHECK(testing::has_error(errors, "phase 0, round 0, recv entry 1: writes recv[0] with block 0 from (-1,0), but its final content is block 0 from (-1,-1)"));
    CHECK(testing::has_error(errors, "phase 1, round 0, recv entry 0: writes recv[0] a second time"));
  }
  SUBCASE("a copy of the wrong block") {
    PlanParts p = direct_1d();
    p.copies[0].from = send(1);
    CHECK(testing::has_error(verify(Plan(p)), "copy 0: copies send[1] into recv[2] of another shape"));
  }
}

TEST_CASE("an offset of INT_MIN is an error, not a negation overflow (fuzz finding)") {
  // tests/fuzz/corpus/plan_json/regress_intmin_neighbor.json: trace() negated the offset to get
  // the block's final origin, and -INT_MIN overflows. Such a block can never be delivered.
  PlanParts p;
  p.op = Op::kAlltoall;
  p.ndims = 1;
  p.neighborhood = {{-2147483647 - 1}};
  p.dim_order = {0};
  p.stats.t = 1;
  const std::vector<std::string> never = verify(Plan(p));
  CHECK(testing::has_error(never, "recv[0] is never written (expected block 0 from minus (-2147483648), more than 2^30 positions away)"));

  // Written by a copy of the send block: wrong content, reported the same way.
  p.copies = {Copy{send(0), recv(0)}};
  CHECK(testing::has_error(verify(Plan(p)), "but its final content is block 0 from minus (-2147483648)"));
}

}  // namespace
}  // namespace cartplan::ir

namespace cartplan::ir {
namespace {

// 1-d allreduce over {+1, -1, 0}: recv[0] = v(-1) + v(+1) + own, written by hand.
PlanParts allreduce_1d() {
  PlanParts p;
  p.op = Op::kAllreduce;
  p.kind = PlanKind::kDirect;
  p.ndims = 1;
  p.neighborhood = {{1}, {-1}, {0}};
  p.dim_order = {0};
  BufRef acc = recv(0);
  acc.reduce = true;
  p.phases = {Phase{Phase::kAllDims, {Round{{1}, 0, {send(0)}, {acc}}, Round{{-1}, 1, {send(0)}, {acc}}}}};
  p.copies = {Copy{send(0), acc}};
  p.stats.t = 2;
  p.stats.rounds = 2;
  p.stats.volume = 2;
  p.stats.phase_rounds = {2};
  return p;
}

TEST_CASE("reductions: multisets of contributions prove each is counted exactly once") {
  CHECK(verify(Plan(allreduce_1d())).empty());

  SUBCASE("the own vector twice") {
    PlanParts p = allreduce_1d();
    p.copies.push_back(p.copies[0]);
    CHECK(testing::has_error(verify(Plan(p)), "copy 1: counts block 0 from (0) in recv[0] 2 times (double counting; required 1)"));
  }
  SUBCASE("a contribution missing") {
    PlanParts p = allreduce_1d();
    p.copies.clear();
    const auto errors = verify(Plan(p));
    REQUIRE(errors.size() == 1);
    CHECK(errors[0] == "recv[0] misses block 0 from (0) (holds it 0 times, required 1)");
  }
  SUBCASE("a duplicate offset needs its contribution twice") {
    PlanParts p = allreduce_1d();
    p.neighborhood.push_back({1});
    p.stats.t = 3;
    CHECK(testing::has_error(verify(Plan(p)), "recv[0] misses block 0 from (-1) (holds it 1 times, required 2)"));
    p.phases[0].rounds[0].send.push_back(send(0));
    p.phases[0].rounds[0].recv.push_back(p.phases[0].rounds[0].recv[0]);
    p.stats.volume = 3;
    CHECK(verify(Plan(p)).empty());
  }
  SUBCASE("a contribution from the wrong direction") {
    PlanParts p = allreduce_1d();
    p.phases[0].rounds[1].shift = {2};
    CHECK(testing::has_error(verify(Plan(p)), "phase 0, round 1, recv entry 0: brings block 0 from (-2) into recv[0], which does not belong there"));
  }
  SUBCASE("an overwrite of recv, and an overwrite sharing a location with a reduce") {
    PlanParts p = allreduce_1d();
    p.phases[0].rounds[1].recv[0].reduce = false;
    const auto errors = verify(Plan(p));
    CHECK(testing::has_error(errors, "phase 0, round 1, recv entry 0: overwrites recv[0]; reduction plans must reduce into recv blocks"));
    CHECK(testing::has_error(errors, "(only reduce entries may share a location)"));
  }
  SUBCASE("reduce entries outside reductions, and a reducing send entry") {
    PlanParts p = allreduce_1d();
    p.op = Op::kAllgather;
    CHECK(testing::has_error(verify(Plan(p)), "reduces into recv[0], but allgather is not a reduction"));
    p = allreduce_1d();
    p.phases[0].rounds[0].send[0].reduce = true;
    CHECK(testing::has_error(verify(Plan(p)), "phase 0, round 0, send entry 0: send[0] is read, so it cannot reduce"));
  }
  SUBCASE("reduce_scatter counts blocks, not only origins") {
    PlanParts p = allreduce_1d();
    p.op = Op::kReduceScatter;
    CHECK(testing::has_error(verify(Plan(p)), "phase 0, round 1, recv entry 0: brings block 0 from (1) into recv[0], which does not belong there"));
    p.phases[0].rounds[0].send[0] = send(0);
    p.phases[0].rounds[1].send[0] = send(1);
    p.copies[0].from = send(2);
    CHECK(verify(Plan(p)).empty());
  }
  SUBCASE("phase copies run after the phase's receives") {
    PlanParts p = allreduce_1d();
    p.phases[0].copies = p.copies;
    p.copies.clear();
    CHECK(verify(Plan(p)).empty());
  }
}

}  // namespace
}  // namespace cartplan::ir
