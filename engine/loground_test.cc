// Tests of log-round (Bruck-style) plans: round counts against ceil(log2(s+1)), equality with
// plan_combining when no dimension is log-routed, verify(), and delivery by the simulator on
// tori and meshes, including the deep halos where they pay.
#include "engine/loground.h"

#include <doctest/doctest.h>

#include <cmath>

#include "backends/sim/simulator.h"
#include "engine/optimizer.h"
#include "engine/planner.h"
#include "engine/stencils.h"
#include "ir/verify.h"
#include "tests/fixtures.h"

namespace cartplan::engine {
namespace {

int ceil_log2_plus1(int s) { return static_cast<int>(std::ceil(std::log2(s + 1.0))); }

TEST_CASE("offsets {1..s} along one dimension take ceil(log2(s+1)) rounds; {-s..s} twice that") {
  for (int s = 1; s <= 40; ++s) {
    std::vector<ir::Offset> pos, both;
    for (int c = 1; c <= s; ++c) {
      pos.push_back({c});
      both.push_back({c});
      both.push_back({-c});
    }
    const Neighborhood p = testing::nbh(1, pos), b = testing::nbh(1, both);
    CAPTURE(s);
    CHECK(log_rounds(p, 0) == ceil_log2_plus1(s));
    CHECK(log_rounds(b, 0) == 2 * ceil_log2_plus1(s));
    const ir::Plan plan = plan_log_round(ir::Op::kAlltoall, b, {0}, {true});
    CHECK(plan.stats().rounds == 2 * ceil_log2_plus1(s));
    CHECK(plan.phases().size() == static_cast<std::size_t>(ceil_log2_plus1(s)));  // one phase per bit
    int popcounts = 0;
    for (int c = 1; c <= s; ++c) popcounts += __builtin_popcount(static_cast<unsigned>(c));
    CHECK(plan.stats().volume == 2 * popcounts);  // a block hops once per set bit
    CHECK(ir::verify(plan).empty());
    CHECK(log_round_dims(b) == std::vector<bool>{s >= 3});  // s = 1, 2: no fewer rounds
    // Allgather routes positions: every partial sum of {1..s} is a value, so each position is
    // received once (volume 2s, the linear plan's) in the same rounds and phases.
    const ir::Plan gather = plan_log_round(ir::Op::kAllgather, b, {0}, {true});
    CHECK(gather.stats().rounds == 2 * ceil_log2_plus1(s));
    CHECK(gather.phases().size() == static_cast<std::size_t>(ceil_log2_plus1(s)));
    CHECK(gather.stats().volume == 2 * s);
    CHECK(gather.temp_slots().empty());  // every position is some block's own
    CHECK(ir::verify(gather).empty());
  }
  // A value whose partial sums are not values: {5} reaches 1 (bit 0) then 5 (bit 2); the
  // position 1 is a temp slot, so allgather's volume grows by it.
  const Neighborhood five = testing::nbh(1, {{5}});
  const ir::Plan g5 = plan_log_round(ir::Op::kAllgather, five, {0}, {true});
  CHECK(g5.stats().rounds == 2);
  CHECK(g5.stats().volume == 2);
  CHECK(g5.temp_slots().size() == 1);
  CHECK(ir::verify(g5).empty());
  // Multiples of one vector (a linear embedding): {2, 4, 6, 8} uses bits 1..3: 3 rounds, not 4.
  const Neighborhood even = testing::nbh(2, {{0, 2}, {0, 4}, {0, 6}, {0, 8}});
  CHECK(log_rounds(even, 1) == 3);
  CHECK(linear_rounds(even, 1) == 4);
}

TEST_CASE("without log-routed dimensions the plan is plan_combining's") {
  for (const char* name : {"box3", "moore9", "cheb4"}) {
    const Neighborhood n = std::string(name) == "box3"     ? *stencils::box(3, 3, -1)
                           : std::string(name) == "moore9" ? testing::moore9()
                                                           : *stencils::chebyshev(2, 4, 1);
    CAPTURE(name);
    const std::vector<int> order = auto_dim_order(n);
    for (ir::Op op : {ir::Op::kAlltoall, ir::Op::kAllgather, ir::Op::kScatter, ir::Op::kBcast, ir::Op::kGather}) {
      CAPTURE(ir::to_string(op));
      CHECK(plan_log_round(op, n, order, std::vector<bool>(n.ndims(), false)) == plan_combining(op, n, order));
    }
  }
}

TEST_CASE("deep halos: log-round plans verify and the simulator delivers them on tori and meshes") {
  const Neighborhood cheb = *stencils::chebyshev(2, 4, 1);  // 80 offsets, values -4..4
  const Neighborhood box9 = *stencils::box(2, 9, -4);       // 81 offsets, zero included
  for (const Neighborhood* n : {&cheb, &box9}) {
    const std::vector<bool> log = log_round_dims(*n);
    CHECK(log == std::vector<bool>{true, true});
    for (ir::Op op : {ir::Op::kAlltoall, ir::Op::kScatter, ir::Op::kAllgather, ir::Op::kBcast}) {
      CAPTURE(ir::to_string(op));
      const ir::Plan p = plan_log_round(op, *n, {0, 1}, log);
      CHECK(p.kind() == ir::PlanKind::kLogRound);
      CHECK(p.algorithm() == ir::Algorithm::kCombining);
      CHECK(ir::verify(p).empty());
      CHECK(p.stats().rounds == 12);  // per dimension 3 bits x 2 signs, instead of 8 values
      CHECK(p.phases().size() == 6);
      if (ir::symmetric_op(op) == ir::Op::kAllgather)  // the same positions as combining's tree
        CHECK(p.stats().volume == plan_combining(op, *n, {0, 1}).stats().volume);
      if (ir::is_rooted(op)) continue;
      // Grids smaller than the shifts (wrap-around several times), odd sizes, meshes, mixed.
      for (auto [dims, periods] : std::vector<std::pair<std::vector<int>, std::vector<bool>>>{
               {{3, 4}, {true, true}}, {{9, 9}, {false, false}}, {{5, 2}, {true, false}},
               {{1, 7}, {false, true}}, {{6, 6}, {false, false}}}) {
        sim::SimOptions so;
        so.block_bytes.clear();
        if (op == ir::Op::kAlltoall)
          for (int i = 0; i < n->size(); ++i) so.block_bytes.push_back(1 + i % 7);
        else
          so.block_bytes.push_back(5);
        const Result<sim::SimReport> r = sim::simulate(p, *Grid::create(dims, periods), so);
        REQUIRE(r.ok());
        CHECK_MESSAGE(r->ok, (r->errors.empty() ? "" : r->errors.front()));
      }
    }
  }
  CHECK(supports_log_rounds(ir::Op::kAllgather));
  CHECK_FALSE(supports_log_rounds(ir::Op::kAllreduce));
}

TEST_CASE("the optimizer picks log rounds for a deep halo of small blocks, and not for box d=3 n=3") {
  const Neighborhood cheb = *stencils::chebyshev(2, 4, 1);
  PlanOptions o;
  o.block_bytes = 8;
  Result<std::vector<Candidate>> c = plan_candidates(ir::Op::kAlltoall, cheb, o);
  REQUIRE(c.ok());
  REQUIRE(c->size() == 4);  // direct, combining, log-round, hybrid
  CHECK((*c)[2].name == "log-round");
  CHECK((*c)[3].name == "hybrid");
  CHECK((*c)[2].cost.total_us() < (*c)[1].cost.total_us());  // cheaper than combining
  CHECK((*c)[2].cost.total_us() < (*c)[0].cost.total_us());  // and than direct
  CHECK((*c)[2].cost.total_us() < (*c)[3].cost.total_us());  // and than the greedy hybrid
  Result<ir::Plan> p = make_plan(ir::Op::kAlltoall, cheb, o);
  REQUIRE(p.ok());
  CHECK(p->stats().rounds == 12);
  // n = 3 boxes have values {-1, 1}: log rounds save nothing, so there is no such candidate.
  c = plan_candidates(ir::Op::kAlltoall, *stencils::box(3, 3, -1), o);
  REQUIRE(c.ok());
  for (const Candidate& x : *c) CHECK(x.name != "log-round");
  // Asked for explicitly on an op without log-round plans: an error that says so.
  o.algo = AlgoChoice::kLogRound;
  CHECK(make_plan(ir::Op::kAllreduce, cheb, o).error() ==
        "log-round plans exist for alltoall, allgather, scatter, bcast and gather only, not allreduce");
}

}  // namespace
}  // namespace cartplan::engine
