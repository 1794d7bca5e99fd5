// final_homes(): chains of local moves into untouched recv blocks, and every rule that stops one.
#include "engine/final_home.h"

#include <doctest/doctest.h>

namespace cartplan::engine {
namespace {

using ir::BufKind;
using ir::BufRef;

BufRef S(int i) { return BufRef{BufKind::kSend, i, false}; }
BufRef R(int i) { return BufRef{BufKind::kRecv, i, false}; }
BufRef T(int i) { return BufRef{BufKind::kTemp, i, false}; }
Move received(int step, BufRef to) { return Move{step, std::nullopt, to}; }
Move sent(int step, BufRef from) { return Move{step, from, std::nullopt}; }
Move local(int step, BufRef from, BufRef to) { return Move{step, from, to}; }

TEST_CASE("final_homes: a received value moved on locally, through slots, ends in its recv block") {
  // t0 -> t1 -> r3 (two rounds to the process itself), t2 -> r1 (a final copy); the home is
  // reported for every move that writes the value into a slot, in any order of the list.
  const std::vector<Move> moves = {local(2, T(1), R(3)), received(0, T(0)), local(1, T(0), T(1)), received(0, T(2)),
                                   local(9, T(2), R(1)), local(9, S(0), R(0))};
  CHECK(final_homes(moves, 3, 4) == std::vector<int>{-1, 3, 3, 1, -1, -1});
}

TEST_CASE("final_homes: a reused slot holds one value after another") {
  // Slot 0 brings a block that is forwarded, then, later, one that goes home to r2.
  const std::vector<Move> moves = {received(0, T(0)), sent(1, T(0)), received(1, T(0)), local(2, T(0), R(2))};
  CHECK(final_homes(moves, 1, 3) == std::vector<int>{-1, -1, 2, -1});
  // Read and rewritten in one step: the read sees the value before the step.
  const std::vector<Move> same_step = {received(0, T(0)), local(1, T(0), R(0)), received(1, T(0)), sent(2, T(0))};
  CHECK(final_homes(same_step, 1, 1) == std::vector<int>{0, -1, -1, -1});
}

TEST_CASE("final_homes: what stops a home") {
  SUBCASE("forwarded to another process") {
    CHECK(final_homes({received(0, T(0)), sent(1, T(0))}, 1, 1)[0] == -1);
  }
  SUBCASE("read twice (allgather's duplicates)") {
    CHECK(final_homes({received(0, T(0)), local(1, T(0), R(0)), local(1, T(0), R(1))}, 1, 2)[0] == -1);
  }
  SUBCASE("the recv block is read later") {
    CHECK(final_homes({received(0, T(0)), local(1, T(0), R(0)), sent(2, R(0))}, 1, 1)[0] == -1);
  }
  SUBCASE("the recv block is written by something else too") {
    CHECK(final_homes({received(0, T(0)), local(1, T(0), R(0)), local(2, S(0), R(0))}, 1, 1)[0] == -1);
  }
  SUBCASE("a combine into the slot or the block") {
    BufRef into = R(0);
    into.reduce = true;
    CHECK(final_homes({received(0, T(0)), local(1, T(0), into)}, 1, 1)[0] == -1);
    BufRef slot = T(0);
    slot.reduce = true;
    CHECK(final_homes({received(0, T(0)), received(1, slot), local(2, T(0), R(0))}, 1, 1) == std::vector<int>{-1, -1, -1});
  }
  SUBCASE("never read, or a chain whose end is blocked") {
    CHECK(final_homes({received(0, T(0))}, 1, 1)[0] == -1);
    CHECK(final_homes({received(0, T(0)), local(1, T(0), T(1)), sent(2, T(1))}, 2, 1) == std::vector<int>{-1, -1, -1});
  }
}

}  // namespace
}  // namespace cartplan::engine
