// lower(): programs for known cases (messages, copied bytes, staging) and layout errors.
#include "engine/lower.h"

#include <doctest/doctest.h>

#include "engine/bind.h"
#include "engine/optimizer.h"
#include "engine/planner.h"
#include "engine/stencils.h"
#include "tests/fixtures.h"

#include <map>
#include <set>
#include <tuple>

namespace cartplan::engine {
namespace {

// The programs of every rank of `grid`.
std::vector<Program> all_programs(const ir::Plan& plan, const Grid& grid, std::vector<std::int64_t> block_bytes,
                                  const LowerOptions& options = {}) {
  const Result<Binder> b = Binder::create(plan);
  REQUIRE(b.ok());
  std::vector<Program> out;
  for (int r = 0; r < grid.size(); ++r) {
    const Result<BoundPlan> bound = b->bind(grid, grid.coords(r), block_bytes);
    REQUIRE_MESSAGE(bound.ok(), (bound.ok() ? "" : bound.error()));
    const Result<Program> p = lower(plan, *bound, contiguous_layout(plan, *bound), options);
    REQUIRE_MESSAGE(p.ok(), (p.ok() ? "" : p.error()));
    out.push_back(*p);
  }
  return out;
}

// Every send has a receive of the same size at its peer (same phase and tag) and vice versa.
void check_messages_match(const std::vector<Program>& progs) {
  using Key = std::tuple<int, int, int, int>;  // phase, from, to, tag
  std::map<Key, std::int64_t> sent, received;
  for (const Program& p : progs)
    for (std::size_t ph = 0; ph < p.phases.size(); ++ph)
      for (const Message& m : p.phases[ph].messages) {
        std::int64_t parts = 0;
        for (const Loc& l : m.parts) parts += l.bytes;
        CHECK(parts == m.bytes);
        if (m.recv)
          received[{static_cast<int>(ph), m.peer, p.rank, m.tag}] = m.bytes;
        else
          sent[{static_cast<int>(ph), p.rank, m.peer, m.tag}] = m.bytes;
      }
  CHECK(sent == received);
}

TEST_CASE("lower: messages of every rank pair up with the same sizes") {
  const Neighborhood n = testing::moore9();
  for (ir::Op op : {ir::Op::kAlltoall, ir::Op::kAllgather})
    for (bool combining : {false, true})
      for (const auto& [dims, periods] : std::vector<std::pair<std::vector<int>, std::vector<bool>>>{
               {{2, 1}, {true, true}}, {{3, 3}, {true, true}}, {{2, 3}, {false, true}}, {{1, 1}, {true, true}}, {{4, 2}, {false, false}}}) {
        CAPTURE(ir::to_string(op));
        CAPTURE(combining);
        CAPTURE(dims[0]);
        CAPTURE(dims[1]);
        const ir::Plan plan = combining ? plan_combining(op, n, {0, 1}) : plan_direct(op, n);
        std::vector<std::int64_t> bytes;
        for (int i = 0; i < n.size(); ++i) bytes.push_back(op == ir::Op::kAlltoall ? 4 + 4 * i : 8);
        check_messages_match(all_programs(plan, *Grid::create(dims, periods), bytes));
      }
}

Program program_of(const ir::Plan& plan, const Grid& grid, int rank, std::int64_t bytes) {
  return all_programs(plan, grid, {bytes}).at(static_cast<std::size_t>(rank));
}

TEST_CASE("lower: copied bytes of combining alltoall reach the pack-once, place-once minimum at np = 2") {
  // box:d=3 on a 2x1x1 torus. Phase 0 (dimension 0) sends the 9 blocks with x = +1 and the 9
  // with x = -1 to the other rank, each round packed from the caller's blocks: 18 blocks. Its
  // receives bring 2 final blocks ((+-1,0,0)) and 16 temps that only rounds to the rank itself
  // move on, so they are unpacked into their recv blocks at once (final_home.h): 18 blocks. The
  // rounds of dimensions 1 and 2 wrap to the rank itself: the 8 other non-zero blocks (x = 0)
  // are copied once to their final place, the received ones are there already. The zero
  // offset is one copy. So every byte is copied at most once per side: (18 + 18 + 8 + 1) blocks.
  const Neighborhood n = *stencils::box(3, 3, -1);
  const ir::Plan plan = plan_combining(ir::Op::kAlltoall, n, {0, 1, 2});
  const Grid grid = *Grid::create({2, 1, 1}, {true, true, true});
  for (int rank = 0; rank < 2; ++rank) {
    const ProgramCounts c = count(program_of(plan, grid, rank, 8));
    CHECK(c.copied_bytes == (18 + 18 + 8 + 1) * 8);
    CHECK(c.messages == 4);  // one send and one receive per round of phase 0
    CHECK(c.sent_bytes == 18 * 8);
    CHECK(c.received_bytes == 18 * 8);
    CHECK(c.struct_messages == 0);
  }
}

TEST_CASE("lower: deliveries into the caller's blocks run at the end, in block order") {
  // box:d=3 on 2x1x1: the 26 copies into recv blocks (2 unpacked from phase 0's messages, 24
  // after rounds to the rank itself) and the zero offset leave the phases for the final steps,
  // sorted by block, so that neighbouring blocks can go in one memcpy; phases keep only the
  // packing into staging.
  const Neighborhood n = *stencils::box(3, 3, -1);
  const Program p = program_of(plan_combining(ir::Op::kAlltoall, n, {0, 1, 2}), *Grid::create({2, 1, 1}, {true, true, true}), 0, 8);
  for (const PhaseProgram& ph : p.phases)
    for (const std::vector<Step>* list : {&ph.before, &ph.after})
      for (const Step& st : *list) CHECK(st.to.kind == Loc::Kind::kStaging);
  REQUIRE(p.final_steps.size() == 27);
  for (std::size_t i = 0; i < p.final_steps.size(); ++i) {
    CHECK(p.final_steps[i].to.kind == Loc::Kind::kRecv);
    if (i > 0) CHECK(p.final_steps[i - 1].to.index < p.final_steps[i].to.index);
  }
  // Allgather forwards received blocks from the caller's recv blocks in its trees: a recv block
  // that a later step or message reads is filled in its phase, never deferred.
  const ir::Plan g = plan_combining(ir::Op::kAllgather, testing::moore9(), {0, 1});
  for (int rank = 0; rank < 9; ++rank) {
    const Program q = program_of(g, *Grid::create({3, 3}, {true, true}), rank, 8);
    std::set<int> read;
    for (const PhaseProgram& ph : q.phases) {
      for (const Message& m : ph.messages)
        if (!m.recv)
          for (const Loc& l : m.parts)
            if (l.kind == Loc::Kind::kRecv) read.insert(l.index);
    }
    for (const Step& st : q.final_steps) CHECK(read.count(st.to.index) == 0);
  }
}

TEST_CASE("lower: a 3x3 torus packs at the first hop and again where a round mixes forwarded and own blocks") {
  // moore9 alltoall, combining, 8-byte blocks. Phase 0: two rounds of 3 own blocks (packed: 6),
  // receiving 1 final block each (unpacked: 2) and 2 temps. Phase 1: two rounds of 1 own block
  // between 2 forwarded temps (packed: 6, of which 4 forwarded), receiving 3 final blocks each
  // (unpacked: 6). Plus the zero offset (1).
  const ir::Plan plan = plan_combining(ir::Op::kAlltoall, testing::moore9(), {0, 1});
  const Grid grid = *Grid::create({3, 3}, {true, true});
  const Program p = program_of(plan, grid, 4, 8);
  const ProgramCounts c = count(p);
  CHECK(c.copied_bytes == (6 + 2 + 6 + 6 + 1) * 8);
  CHECK(c.messages == 8);
  REQUIRE(p.phases.size() == 2);
  for (const PhaseProgram& ph : p.phases) {
    REQUIRE(ph.messages.size() == 4);
    CHECK(ph.messages[0].recv);  // receives are posted first
    CHECK(ph.messages[1].recv);
    for (const Message& m : ph.messages) {
      CHECK(m.bytes == 24);
      REQUIRE(m.parts.size() == 1);
      CHECK(m.parts[0].kind == Loc::Kind::kStaging);
    }
  }
  CHECK(p.staging_bytes == 8 * 24);  // 4 packed sends and 4 staged receives of 3 blocks
}

TEST_CASE("lower: a send of blocks forwarded together as they arrived is not packed again") {
  // Two alltoall blocks for the same neighbour (1,1): phase 0 packs both into one message along
  // x; they arrive back to back in staging and phase 1 sends them on along y from there.
  const ir::Plan plan = plan_combining(ir::Op::kAlltoall, testing::nbh(2, {{1, 1}, {1, 1}}), {0, 1});
  const Grid grid = *Grid::create({3, 3}, {true, true});
  check_messages_match(all_programs(plan, grid, {8}));
  const Program p = program_of(plan, grid, 4, 8);
  REQUIRE(p.phases.size() == 2);
  CHECK(p.phases[0].before.size() == 2);  // the first hop packs
  CHECK(p.phases[1].before.empty());      // the second does not
  const Message& recv0 = p.phases[0].messages.at(0);
  const Message& send1 = p.phases[1].messages.at(1);
  REQUIRE(recv0.recv);
  REQUIRE(!send1.recv);
  REQUIRE(send1.parts.size() == 1);
  CHECK(send1.parts[0] == recv0.parts.at(0));  // sent from where it was received
  CHECK(count(p).copied_bytes == (2 + 2) * 8);  // packed once, unpacked once
}

TEST_CASE("lower: with struct datatypes for large parts nothing is copied but the zero offset") {
  // moore9 alltoall on a 3x3 torus with 512-byte blocks and struct_min_bytes 256: sends gather
  // the caller's blocks and forwarded temps where they are, receives put final blocks straight
  // into the caller's memory and temps into staging. The only copy left is send[4] -> recv[4].
  const ir::Plan plan = plan_combining(ir::Op::kAlltoall, testing::moore9(), {0, 1});
  const Grid grid = *Grid::create({3, 3}, {true, true});
  LowerOptions o;
  o.struct_min_bytes = 256;
  const std::vector<Program> progs = all_programs(plan, grid, {512}, o);
  check_messages_match(progs);
  for (const Program& p : progs) {
    const ProgramCounts c = count(p);
    CHECK(c.copied_bytes == 512);
    CHECK(c.struct_messages == 8);
    CHECK(p.staging_bytes == 4 * 512);  // the four temps, nothing packed
    REQUIRE(p.final_steps.size() == 1);
    CHECK(p.final_steps[0].from == Loc{Loc::Kind::kSend, 4, 0, 512, true});
    // Phase 0 receives: recv block (+-1,0) and two temps at adjacent staging offsets, which
    // merge into one segment only when they are neighbours in the message.
    for (const Message& m : p.phases[0].messages)
      if (m.recv) CHECK(m.parts.size() == 3);
  }
  // Below the threshold the same plan packs as before.
  const std::vector<Program> small = all_programs(plan, grid, {128}, o);
  CHECK(count(small.at(0)).struct_messages == 0);
  CHECK(count(small.at(0)).copied_bytes == (6 + 2 + 6 + 6 + 1) * 128);
}

TEST_CASE("lower: temps that only rounds to the rank itself move on are received into their recv blocks") {
  // box:d=3 on 2x1x1 with 400-byte blocks (struct datatypes): each dim-0 message brings 9
  // blocks, 7 of which would go to staging as temps and on through aliases to a final copy.
  // All 9 are received straight into the caller's blocks, so the receive is recv[9k..9k+8],
  // in every dimension order that sends them in one round; only the x = 0 blocks (8 non-zero
  // and the zero offset) are copied, and nothing is staged.
  const Neighborhood n = *stencils::box(3, 3, -1);
  const Grid grid = *Grid::create({2, 1, 1}, {true, true, true});
  for (const std::vector<int>& order : {std::vector<int>{0, 1, 2}, std::vector<int>{1, 0, 2}, std::vector<int>{2, 1, 0}}) {
    CAPTURE(order);
    const std::vector<Program> progs = all_programs(plan_combining(ir::Op::kAlltoall, n, order), grid, {400});
    check_messages_match(progs);
    for (const Program& p : progs) {
      const ProgramCounts c = count(p);
      CHECK(c.copied_bytes == (8 + 1) * 400);
      CHECK(p.staging_bytes == 0);
      CHECK(c.received_bytes == 18 * 400);
      for (const PhaseProgram& ph : p.phases)
        for (const Message& m : ph.messages) {
          if (!m.recv) continue;
          REQUIRE(m.parts.size() == 9);
          for (std::size_t i = 0; i < m.parts.size(); ++i) {
            CHECK(m.parts[i].kind == Loc::Kind::kRecv);
            CHECK(m.parts[i].index == m.parts[0].index + static_cast<int>(i));
          }
        }
    }
  }
  // Box d=4 on 2x1x1x1: its plan reuses temp slots (120 slots, 136 temp writes); each value
  // goes home all the same, and only the 27 blocks with x = 0 are copied.
  for (const std::vector<int>& order : {std::vector<int>{0, 1, 2, 3}, std::vector<int>{3, 1, 0, 2}}) {
    CAPTURE(order);
    const ir::Plan plan = plan_combining(ir::Op::kAlltoall, *stencils::box(4, 3, -1), order);
    REQUIRE(plan.temp_slots().size() < static_cast<std::size_t>(plan.stats().volume - 80));
    const Program p = all_programs(plan, *Grid::create({2, 1, 1, 1}, {true, true, true, true}), {400}).at(0);
    CHECK(count(p).copied_bytes == 27 * 400);
    CHECK(p.staging_bytes == 0);
  }
  // On a 2x2x2 torus every round reaches another rank: temps are forwarded, not received home.
  const std::vector<Program> torus = all_programs(plan_combining(ir::Op::kAlltoall, n, {0, 1, 2}),
                                                  *Grid::create({2, 2, 2}, {true, true, true}), {400});
  CHECK(torus.at(0).staging_bytes > 0);
}

TEST_CASE("lower: trailers end the messages from the threshold on, each in a byte of its own past the arena") {
  // Box d=3 on 2x1x1 with 400-byte blocks: the dim-0 receives are recv[9k..9k+8], one run of
  // 3600 bytes, and the sends send[9k..9k+8]; on a 2x2x2 torus combining stages temps.
  const Neighborhood n = *stencils::box(3, 3, -1);
  for (const std::vector<int>& dims : {std::vector<int>{2, 1, 1}, std::vector<int>{2, 2, 2}})
    for (bool combining : {false, true})
      for (std::int64_t threshold : {std::int64_t{0}, std::int64_t{3600}, std::int64_t{3601}, std::int64_t{-1}}) {
        CAPTURE(dims);
        CAPTURE(combining);
        CAPTURE(threshold);
        const Grid grid = *Grid::create(dims, {true, true, true});
        const ir::Plan plan = combining ? plan_combining(ir::Op::kAlltoall, n, {0, 1, 2}) : plan_direct(ir::Op::kAlltoall, n);
        const std::vector<Program> plain = all_programs(plan, grid, {400});
        LowerOptions lo;
        lo.trailer_min_bytes = threshold;
        const std::vector<Program> progs = all_programs(plan, grid, {400}, lo);
        check_messages_match(progs);
        for (std::size_t r = 0; r < progs.size(); ++r) {
          const Program& p = progs[r];
          const Program& q = plain[r];
          REQUIRE(p.phases.size() == q.phases.size());
          std::set<std::int64_t> bytes_used;
          std::int64_t trailers = 0;
          for (std::size_t ph = 0; ph < p.phases.size(); ++ph) {
            // Steps are untouched; each message is the same but for its trailer.
            CHECK(p.phases[ph].before == q.phases[ph].before);
            CHECK(p.phases[ph].after == q.phases[ph].after);
            REQUIRE(p.phases[ph].messages.size() == q.phases[ph].messages.size());
            for (std::size_t i = 0; i < p.phases[ph].messages.size(); ++i) {
              const Message& m = p.phases[ph].messages[i];
              Message without = q.phases[ph].messages[i];
              const bool wants = threshold >= 0 && without.bytes >= threshold;
              CHECK(m.trailer == wants);
              if (!wants) {
                CHECK(m == without);
                continue;
              }
              ++trailers;
              REQUIRE(m.parts.size() == without.parts.size() + 1);
              const Loc& t = m.parts.back();
              CHECK(t.kind == Loc::Kind::kStaging);
              CHECK(t.bytes == 1);
              // Past every region of the arena, with a byte between: no run reaches it.
              CHECK(t.offset > q.staging_bytes);
              CHECK(bytes_used.insert(t.offset).second);
              without.parts.push_back(t);
              without.bytes += 1;
              without.trailer = true;
              CHECK(m == without);
            }
          }
          CHECK(p.staging_bytes == (trailers > 0 ? q.staging_bytes + 1 + trailers : q.staging_bytes));
          if (threshold == 0 || (threshold == 3600 && combining)) CHECK(trailers > 0);
          if (threshold == 3601 && dims[1] == 1) CHECK(trailers == 0);
        }
      }
}

TEST_CASE("lower: wrong layouts are errors that name what is wrong") {
  const ir::Plan plan = plan_combining(ir::Op::kAlltoall, testing::moore9(), {0, 1});
  const Grid grid = *Grid::create({3, 3}, {true, true});
  const BoundPlan bound = *Binder::create(plan)->bind(grid, grid.coords(0), {8});
  Layout l = contiguous_layout(plan, bound);
  l.send.pop_back();
  CHECK(lower(plan, bound, l).error() == "layout has 8 send blocks, the plan 9");
  l = contiguous_layout(plan, bound);
  l.recv[3].bytes = -2;
  CHECK(lower(plan, bound, l).error() == "recv block 3 has -2 bytes");
  l = contiguous_layout(plan, bound);
  l.shape_bytes = {8, 8};
  CHECK(lower(plan, bound, l).error() == "layout has 2 block shapes, expected 1 or 9");
  const ir::Plan other = plan_direct(ir::Op::kAlltoall, testing::moore9());
  CHECK(lower(other, bound, contiguous_layout(plan, bound)).error() == "the bound plan was not bound from this plan");
}

}  // namespace
}  // namespace cartplan::engine
