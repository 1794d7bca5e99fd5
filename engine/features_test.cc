// Tests of the counts read off a lowered program: hand-made programs, and programs lower() makes.
#include "engine/features.h"

#include <doctest/doctest.h>

#include "engine/bind.h"
#include "engine/lower.h"
#include "engine/planner.h"
#include "engine/stencils.h"
#include "tests/fixtures.h"

namespace cartplan::engine {
namespace {

Loc block(Loc::Kind kind, int index, std::int64_t bytes, bool contiguous = true) {
  return Loc{kind, index, 0, bytes, contiguous};
}
Loc staging(std::int64_t offset, std::int64_t bytes) { return Loc{Loc::Kind::kStaging, 0, offset, bytes, true}; }

Message message(bool recv, int round, std::vector<Loc> parts, bool trailer = false) {
  Message m;
  m.recv = recv;
  m.peer = 1;
  m.round = round;
  for (const Loc& l : parts) m.bytes += l.bytes;
  m.parts = std::move(parts);
  m.trailer = trailer;
  return m;
}

TEST_CASE("one_run: one part in its own layout, or parts that follow each other") {
  using K = Loc::Kind;
  CHECK(one_run({block(K::kSend, 3, 40)}));
  CHECK_FALSE(one_run({block(K::kSend, 3, 40, false)}));  // a strided block
  CHECK(one_run({block(K::kSend, 3, 40), block(K::kSend, 4, 40)}));
  CHECK_FALSE(one_run({block(K::kSend, 3, 40), block(K::kSend, 5, 40)}));
  CHECK(one_run({staging(0, 40), staging(40, 8)}));
  CHECK_FALSE(one_run({staging(0, 40), staging(48, 8)}));
  CHECK_FALSE(one_run({staging(0, 40), block(K::kRecv, 1, 40)}));
  CHECK_FALSE(one_run({block(K::kScratch, 0, 40), block(K::kScratch, 1, 40)}));
}

TEST_CASE("count_features: messages, bytes and protocols of a hand-made program") {
  using K = Loc::Kind;
  Program p;
  p.phases.resize(2);
  // Phase 0, round 0: a packed send of 120 bytes and the matching receive, unpacked.
  p.phases[0].before.push_back({block(K::kSend, 0, 60), staging(0, 60)});
  p.phases[0].before.push_back({block(K::kSend, 1, 60), staging(60, 60)});
  p.phases[0].messages.push_back(message(true, 0, {staging(120, 120)}));
  p.phases[0].messages.push_back(message(false, 0, {staging(0, 120)}));
  p.phases[0].after.push_back({staging(120, 60), block(K::kRecv, 0, 60)});
  // Phase 1: round 0 a struct message above the eager limit (pipelined), round 1 one
  // contiguous block above it (the single copy).
  for (const Message& m : {message(true, 0, {block(K::kRecv, 2, 100), staging(240, 100)}),
                           message(true, 1, {block(K::kRecv, 4, 200)}),
                           message(false, 0, {block(K::kSend, 2, 100), block(K::kSend, 3, 100)}),
                           message(false, 1, {block(K::kSend, 4, 200)})}) {
    Message with_phase = m;
    with_phase.phase = 1;
    p.phases[1].messages.push_back(with_phase);
  }
  p.final_steps.push_back({block(K::kSend, 5, 30), block(K::kRecv, 5, 30)});
  const Features f = count_features(p, {{1.0}, {1.0, 1.0}}, 150);
  CHECK(f.messages == 3);
  CHECK(f.phases == 2);
  CHECK(f.wire_bytes == 120 + 200 + 200);
  CHECK(f.copy_bytes == 120 + 60 + 30);
  CHECK(f.rendezvous == 1);
  CHECK(f.single_copy_bytes == 200);
  CHECK(f.pipelined == 1);
  CHECK(f.pipelined_bytes == 200);
  // Weights (a mesh): a round counts for its share, and so do the steps packing and unpacking
  // its staging regions; the final copy is the process's own.
  const Features w = count_features(p, {{0.5}, {1.0, 0.0}}, 150);
  CHECK(w.messages == doctest::Approx(1.5));
  CHECK(w.copy_bytes == doctest::Approx(0.5 * 180 + 30));
  CHECK(w.rendezvous == 0);
  CHECK(w.phases == 2);
}

TEST_CASE("count_features: a combine counts with the weight of the receive that filled its scratch block") {
  using K = Loc::Kind;
  Program p;
  p.op = ir::Op::kAllreduce;
  p.phases.resize(1);
  p.phases[0].messages.push_back(message(true, 0, {block(K::kScratch, 0, 8)}));
  p.phases[0].messages.push_back(message(false, 0, {block(K::kSend, 0, 8)}));
  Step combine{block(K::kScratch, 0, 8), block(K::kRecv, 0, 8), true};
  p.phases[0].after.push_back(combine);
  p.final_steps.push_back({block(K::kSend, 1, 8), block(K::kRecv, 1, 8), true});
  CHECK(count_features(p, {{1.0}}, 100).copy_bytes == 16);
  CHECK(count_features(p, {{0.25}}, 100).copy_bytes == doctest::Approx(0.25 * 8 + 8));
}

TEST_CASE("round_weights: 1 on a torus and without a grid, the peer's share on a mesh") {
  const ir::Plan p = plan_combining(ir::Op::kAlltoall, testing::moore9(), {0, 1});
  const std::vector<std::vector<double>> torus = round_weights(p, *Grid::create({4, 4}, {true, true}));
  for (const auto& phase : torus)
    for (double w : phase) CHECK(w == 1);
  CHECK(round_weights(p, std::nullopt) == torus);
  const std::vector<std::vector<double>> mesh = round_weights(p, *Grid::create({4, 2}, {false, false}));
  REQUIRE(mesh.size() == 2);
  for (double w : mesh[0]) CHECK(w == doctest::Approx(0.75));
  for (double w : mesh[1]) CHECK(w == doctest::Approx(0.5));
}

TEST_CASE("count_features on the representative program: a trailer is one byte more and pipelines") {
  // Direct box d=2 on a large torus, 4096-byte blocks: 8 single-part messages; with trailers
  // from 4096 bytes on, each carries a byte more and becomes a struct of two parts per side.
  const ir::Plan plan = plan_direct(ir::Op::kAlltoall, *stencils::box(2, 3, -1));
  const Result<BoundPlan> rep = bind_representative(plan, std::nullopt, {4096});
  REQUIRE(rep.ok());
  LowerOptions lo;
  const Features plain = count_features(*lower(plan, *rep, contiguous_layout(plan, *rep), lo), round_weights(plan, std::nullopt), 4064);
  lo.trailer_min_bytes = 4096;
  const Features trailed = count_features(*lower(plan, *rep, contiguous_layout(plan, *rep), lo), round_weights(plan, std::nullopt), 4064);
  CHECK(plain.messages == 8);
  CHECK(plain.rendezvous == 8);
  CHECK(trailed.wire_bytes == plain.wire_bytes + 8);
  CHECK(trailed.rendezvous == 0);
  CHECK(trailed.pipelined == 8);
}

}  // namespace
}  // namespace cartplan::engine
