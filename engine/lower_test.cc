// lower(): programs for known cases (messages, copied bytes, staging) and layout errors.
#include "engine/lower.h"

#include <doctest/doctest.h>

#include "engine/bind.h"
#include "engine/optimizer.h"
#include "engine/planner.h"
#include "engine/stencils.h"
#include "tests/fixtures.h"

#include <map>
#include <tuple>

namespace cartplan::engine {
namespace {

// The programs of every rank of `grid`.
std::vector<Program> all_programs(const ir::Plan& plan, const Grid& grid, std::vector<std::int64_t> block_bytes) {
  const Result<Binder> b = Binder::create(plan);
  REQUIRE(b.ok());
  std::vector<Program> out;
  for (int r = 0; r < grid.size(); ++r) {
    const Result<BoundPlan> bound = b->bind(grid, grid.coords(r), block_bytes);
    REQUIRE_MESSAGE(bound.ok(), (bound.ok() ? "" : bound.error()));
    const Result<Program> p = lower(plan, *bound, contiguous_layout(plan, *bound));
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

}  // namespace
}  // namespace cartplan::engine
