// trace() tests: contents, origins and final targets of every transfer.
#include "ir/trace.h"

#include <doctest/doctest.h>

#include "tests/fixtures.h"

namespace cartplan::ir {
namespace {

using testing::recv;
using testing::send;
using testing::temp;

TEST_CASE("a two-hop alltoall: origins move by -shift, both hops feed the final block") {
  PlanParts p;
  p.op = Op::kAlltoall;
  p.kind = PlanKind::kCombining;
  p.ndims = 2;
  p.neighborhood = {{1, 1}, {1, 0}};
  p.dim_order = {0, 1};
  p.temp_slots = {TempSlot{0}};
  p.phases = {Phase{0, {Round{{1, 0}, 0, {send(0), send(1)}, {temp(0), recv(1)}}}},
              Phase{1, {Round{{0, 1}, 1, {temp(0)}, {recv(0)}}}}};
  p.stats = {2, 2, 3, {1, 1}, {}, {}};
  const Trace tr = trace(Plan(p));
  CHECK(tr.errors.empty());
  REQUIRE(tr.transfers.size() == 3);
  CHECK(tr.round_start == std::vector<std::vector<int>>{{0}, {2}});
  CHECK(tr.transfers[0].content == Content{0, {0, 0}});
  CHECK(tr.transfers[0].targets == std::vector<int>{0});
  CHECK(tr.transfers[1].targets == std::vector<int>{1});
  // After the first hop the holder sees block 0 as coming from (-1, 0).
  CHECK(tr.transfers[2].content == Content{0, {-1, 0}});
  CHECK(tr.transfers[2].targets == std::vector<int>{0});
  REQUIRE(tr.final_recv[0].has_value());
  CHECK(*tr.final_recv[0] == Content{0, {-1, -1}});
}

TEST_CASE("allgather: a shared edge feeds every block below it; copies carry content") {
  PlanParts p;
  p.op = Op::kAllgather;
  p.kind = PlanKind::kCombining;
  p.ndims = 2;
  p.neighborhood = {{1, 0}, {1, 1}, {1, -1}, {1, 1}};
  p.dim_order = {0, 1};
  p.phases = {Phase{0, {Round{{1, 0}, 0, {send(0)}, {recv(0)}}}},
              Phase{1, {Round{{0, -1}, 1, {recv(0)}, {recv(2)}}, Round{{0, 1}, 2, {recv(0)}, {recv(1)}}}}};
  p.copies = {Copy{recv(1), recv(3)}};
  p.stats = {4, 3, 3, {1, 2}, {}, {}};
  const Trace tr = trace(Plan(p));
  CHECK(tr.errors.empty());
  CHECK(tr.transfers[0].targets == std::vector<int>{0, 1, 2, 3});
  CHECK(tr.transfers[1].targets == std::vector<int>{2});
  CHECK(tr.transfers[2].targets == std::vector<int>{1, 3});
  REQUIRE(tr.copy_content.size() == 1);
  CHECK(*tr.copy_content[0] == Content{0, {-1, -1}});
}

TEST_CASE("hostile shifts cannot overflow origins") {
  PlanParts p;
  p.op = Op::kAllgather;
  p.kind = PlanKind::kDirect;
  p.ndims = 1;
  p.neighborhood = {{1}};
  p.dim_order = {0};
  p.phases = {Phase{Phase::kAllDims, {Round{{2000000000}, 0, {send(0)}, {recv(0)}}}}};
  p.stats = {1, 1, 1, {1}, {}, {}};
  const Trace tr = trace(Plan(p));
  REQUIRE(!tr.errors.empty());
  CHECK(tr.errors[0] == "phase 0, round 0, recv entry 0: block travels more than 2^30 positions away");
}

}  // namespace
}  // namespace cartplan::ir
