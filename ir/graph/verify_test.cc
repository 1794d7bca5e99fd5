// Tests of graph plan verification: correct plans pass; each kind of fault is named.
#include "ir/graph/verify.h"

#include <doctest/doctest.h>

#include "ir/graph/test_plans.h"

namespace cartplan::ir::graph {
namespace {

bool has(const std::vector<std::string>& errors, const std::string& needle) {
  for (const std::string& e : errors) {
    if (e.find(needle) != std::string::npos) return true;
  }
  return false;
}

std::string all(const std::vector<std::string>& errors) {
  std::string s;
  for (const std::string& e : errors) s += e + "\n";
  return s;
}

}  // namespace

TEST_CASE("linear plans with duplicates and self edges verify, both ops") {
  for (GraphOp op : {GraphOp::kAllgather, GraphOp::kAlltoall}) {
    const GraphPlan plan = naive_linear(op, tiny_topology());
    CHECK_MESSAGE(verify(plan).empty(), all(verify(plan)));
  }
}

TEST_CASE("a dropped receive: the unmatched send and the unwritten block are named") {
  GraphPlanParts parts = naive_linear(GraphOp::kAlltoall, tiny_topology()).parts();
  parts.schedules[2].phases[0].recvs.clear();
  const auto errors = verify(GraphPlan(parts));
  CHECK_MESSAGE(has(errors, "phase 0, rank 0: sends 1 message(s) to rank 2 but it receives 0"), all(errors));
}

TEST_CASE("swapped duplicate-edge blocks break the k-th edge rule") {
  GraphPlanParts parts = naive_linear(GraphOp::kAlltoall, tiny_topology()).parts();
  // Rank 1 receives the two edges from 0 into recv[0] and recv[1]; swap where they land.
  auto& recvs = parts.schedules[1].phases[0].recvs;
  REQUIRE(recvs.size() == 2);
  std::swap(recvs[0].parts[0].loc, recvs[1].parts[0].loc);
  const auto errors = verify(GraphPlan(parts));
  CHECK_MESSAGE(has(errors, "rank 1, recv[0]: holds block (0->1#1), expects (0->1#0)"), all(errors));
}

TEST_CASE("a receive naming another block than the sender's is a matching error") {
  GraphPlanParts parts = naive_linear(GraphOp::kAllgather, tiny_topology()).parts();
  parts.schedules[2].phases[0].recvs[0].parts[0].block = BlockId{1, -1, 0};
  const auto errors = verify(GraphPlan(parts));
  CHECK_MESSAGE(has(errors, "phase 0, rank 2, recv 0 (from 0), part 0: block (1) does not match the sender's (0)"), all(errors));
}

TEST_CASE("a send before the block arrived is a read before write") {
  GraphPlanParts parts = naive_linear(GraphOp::kAllgather, tiny_topology()).parts();
  // Rank 2 forwards block (0) from its temp slot to rank 1 in phase 0, before it receives it.
  parts.schedules[2].temps.push_back(BlockId{0, -1, 0});
  parts.schedules[2].phases[0].sends.push_back(Message{1, {Part{BlockId{0, -1, 0}, Loc{LocKind::kTemp, 0}}}});
  parts.schedules[1].phases[0].recvs.push_back(Message{2, {Part{BlockId{0, -1, 0}, Loc{LocKind::kRecv, 0}}}});
  const auto errors = verify(GraphPlan(parts));
  CHECK_MESSAGE(has(errors, "recv 2 (from 2), part 0: recv[0] is written twice in this phase"), all(errors));
  parts.schedules[1].phases[0].recvs.back().parts[0].loc = Loc{LocKind::kTemp, 0};
  parts.schedules[1].temps.push_back(BlockId{0, -1, 0});
  const auto later = verify(GraphPlan(parts));
  CHECK_MESSAGE(has(later, "phase 0, rank 2, send 1 (to 1), part 0: temp[0] holds nothing yet (read before write)"), all(later));
}

TEST_CASE("structural faults: message to itself, empty message, temp declared for another block, send buffer written") {
  GraphPlanParts parts = naive_linear(GraphOp::kAllgather, tiny_topology()).parts();
  parts.schedules[0].phases[0].sends.push_back(Message{0, {}});
  parts.schedules[1].temps.push_back(BlockId{2, -1, 0});
  parts.schedules[1].phases[0].copies.push_back(Copy{BlockId{0, -1, 0}, Loc{LocKind::kRecv, 0}, Loc{LocKind::kTemp, 0}});
  parts.schedules[2].phases[0].copies.push_back(Copy{BlockId{2, -1, 0}, Loc{LocKind::kSend, 0}, Loc{LocKind::kSend, 0}});
  const auto errors = verify(GraphPlan(parts));
  CHECK_MESSAGE(has(errors, "phase 0, rank 0, send 3 (to 0): a message to the rank itself (use a copy)"), all(errors));
  CHECK(has(errors, "phase 0, rank 0, send 3 (to 0): a message without parts"));
  CHECK(has(errors, "phase 0, rank 1, copy 1: temp[0] is declared for block (2), not (0)"));
  CHECK(has(errors, "phase 0, rank 2, copy 0: writes the send buffer"));
}

TEST_CASE("a block written twice over two phases is found by symbolic execution") {
  GraphPlanParts parts = naive_linear(GraphOp::kAllgather, tiny_topology()).parts();
  parts.schedules[0].phases.resize(2);
  parts.schedules[2].phases.resize(2);
  parts.schedules[0].phases[1].sends.push_back(Message{2, {Part{BlockId{0, -1, 0}, Loc{LocKind::kSend, 0}}}});
  parts.schedules[2].phases[1].recvs.push_back(Message{0, {Part{BlockId{0, -1, 0}, Loc{LocKind::kRecv, 0}}}});
  const auto errors = verify(GraphPlan(parts));
  CHECK_MESSAGE(has(errors, "phase 1, rank 2, recv 0 (from 0), part 0: recv[0] is written a second time (it holds (0))"), all(errors));
}

TEST_CASE("errors are capped with a count of the rest") {
  GraphPlanParts parts = naive_linear(GraphOp::kAllgather, tiny_topology()).parts();
  for (auto& s : parts.schedules) s.phases.clear();
  const auto errors = verify(GraphPlan(parts), 2);
  REQUIRE(errors.size() == 3);
  CHECK(errors[2] == "... and 4 more errors");
}

}  // namespace cartplan::ir::graph
