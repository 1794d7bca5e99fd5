// Hybrid plans: structure, verify/JSON/simulate on tori and meshes, the greedy choice under the
// model (faces direct, edges and corners combined), and the optimizer's candidate and errors.
#include "engine/hybrid.h"

#include <doctest/doctest.h>

#include <set>

#include "backends/sim/simulator.h"
#include "engine/optimizer.h"
#include "engine/planner.h"
#include "engine/stencils.h"
#include "ir/json.h"
#include "ir/verify.h"
#include "tests/fixtures.h"

namespace cartplan::engine {
namespace {

// verify, JSON round trip and simulated delivery on a few tori and meshes.
void check_plan(const ir::Plan& p) {
  const std::vector<std::string> errors = ir::verify(p);
  CHECK_MESSAGE(errors.empty(), (errors.empty() ? "" : errors.front()));
  const Result<ir::Plan> back = ir::plan_from_json_string(ir::to_json_string(p));
  REQUIRE(back.ok());
  CHECK(*back == p);
  const int d = p.ndims();
  for (int kind = 0; kind < 3; ++kind) {
    std::vector<int> dims(d);
    std::vector<bool> periods(d);
    for (int k = 0; k < d; ++k) {
      dims[k] = 2 + (k + kind) % 3;
      periods[k] = kind == 0 || (kind == 2 && k % 2 == 0);
    }
    sim::SimOptions so;
    so.block_bytes.clear();
    for (int i = 0; i < p.num_blocks(); ++i) so.block_bytes.push_back(1 + i % 5);
    if (p.op() != ir::Op::kAlltoall) so.block_bytes = {4};
    const Result<sim::SimReport> r = sim::simulate(p, *Grid::create(dims, periods), so);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error()));
    CHECK_MESSAGE(r->ok, (r->errors.empty() ? "" : r->errors.front()));
  }
}

std::vector<Offset> faces(const Neighborhood& n) {
  std::vector<Offset> out;
  for (const Offset& o : n.offsets())
    if (Neighborhood::nonzeros(o) == 1) out.push_back(o);
  return out;
}

TEST_CASE("hybrid moore9: faces direct in the first phase, corners combined") {
  const Neighborhood n = testing::moore9();
  for (ir::Op op : {ir::Op::kAlltoall, ir::Op::kAllgather}) {
    CAPTURE(ir::to_string(op));
    const ir::Plan p = plan_hybrid(op, n, {0, 1}, faces(n));
    CHECK(p.kind() == ir::PlanKind::kHybrid);
    CHECK(p.algorithm() == ir::Algorithm::kCombining);
    CHECK(plan_hybrid(op, n, {0, 1}, {}).kind() == ir::PlanKind::kCombining);  // nothing sent directly
    // The 4 direct rounds join the corners' first phase (dimension 0): no extra phase.
    REQUIRE(p.phases().size() == 2);
    CHECK(p.phases()[0].dim == ir::Phase::kAllDims);
    CHECK(p.phases()[1].dim == 1);
    CHECK(p.stats().phase_rounds == std::vector<int>{6, 2});
    // Alltoall: 4 faces + 4 corners x 2 hops; allgather: 4 faces + the corner tree (2 + 4).
    CHECK(p.stats().volume == (op == ir::Op::kAlltoall ? 12 : 10));
    for (const ir::Round& r : p.phases()[0].rounds) CHECK(Neighborhood::nonzeros(r.shift) == 1);
    // Tags 0..7, one per round; temp slots only for the corners' middle hops.
    std::set<int> tags;
    for (const ir::Phase& ph : p.phases())
      for (const ir::Round& r : ph.rounds) tags.insert(r.tag);
    CHECK(tags == std::set<int>{0, 1, 2, 3, 4, 5, 6, 7});
    for (const ir::TempSlot& s : p.temp_slots()) CHECK(Neighborhood::nonzeros(n[s.shape_of]) == 2);
    check_plan(p);
    check_plan(plan_hybrid(op, n, {1, 0}, {{1, 1}, {0, -1}}));  // any split
  }
  // Rooted ops run the symmetric op's hybrid, relabelled.
  CHECK(plan_hybrid(ir::Op::kScatter, n, {0, 1}, faces(n)).op() == ir::Op::kScatter);
  CHECK(ir::verify(plan_hybrid(ir::Op::kScatter, n, {0, 1}, faces(n))).empty());
  CHECK(ir::verify(plan_hybrid(ir::Op::kBcast, n, {0, 1}, faces(n))).empty());
}

TEST_CASE("hybrid with duplicates and the zero offset") {
  const Neighborhood n = testing::nbh(2, {{1, 0}, {0, 0}, {1, 1}, {1, 0}, {0, -2}, {1, 1}, {-1, 2}});
  for (ir::Op op : {ir::Op::kAlltoall, ir::Op::kAllgather}) {
    CAPTURE(ir::to_string(op));
    check_plan(plan_hybrid(op, n, {0, 1}, {{1, 0}}));
    check_plan(plan_hybrid(op, n, {1, 0}, {{1, 1}, {0, -2}}));
    // Both duplicates of (1,0) go direct: one round (alltoall: two entries; allgather: one, plus a copy).
    const ir::Plan p = plan_hybrid(op, n, {0, 1}, {{1, 0}});
    const ir::Round& first = p.phases().front().rounds.front();
    CHECK(first.shift == Offset{1, 0});
    CHECK(first.send.size() == (op == ir::Op::kAlltoall ? 2u : 1u));
  }
}

TEST_CASE("greedy search: large faces go direct, small edges and corners are combined") {
  // box d=3: faces of 200 bytes, edges and corners of 8, and copies priced high (0.005 us per
  // byte). The combining rounds' entries average far below the struct threshold, so they are
  // packed and unpacked, faces included; moving each face out of the combining rounds saves
  // 2 x 200 bytes of copies (2 us) for one more message (1 us).
  const Neighborhood n = *stencils::box(3, 3, -1);
  PlanOptions o;
  o.model.copy_us_per_byte = 0.005;
  for (const Offset& off : n.offsets()) o.block_sizes.push_back(Neighborhood::nonzeros(off) == 1 ? 200 : 8);
  const std::optional<HybridChoice> h =
      search_hybrid(ir::Op::kAlltoall, n, auto_dim_order(n), o.block_sizes, o.model, std::nullopt);
  REQUIRE(h.has_value());
  const std::vector<Offset> f = faces(n);
  CHECK(std::set<Offset>(h->direct.begin(), h->direct.end()) == std::set<Offset>(f.begin(), f.end()));
  check_plan(h->plan);

  Result<std::vector<Candidate>> c = plan_candidates(ir::Op::kAlltoall, n, o);
  REQUIRE(c.ok());
  REQUIRE(c->back().name == "hybrid");
  for (std::size_t i = 0; i + 1 < c->size(); ++i) CHECK(c->back().cost.total_us() < (*c)[i].cost.total_us());
  Result<ir::Plan> p = make_plan(ir::Op::kAlltoall, n, o);
  REQUIRE(p.ok());
  CHECK(p->stats().phase_rounds == std::vector<int>{8, 2, 2});  // 6 faces direct with dimension 0, then 2 dimensions
  // Uniform small blocks: combining everything is cheapest, and stays the choice.
  o.block_sizes.clear();
  o.block_bytes = 8;
  p = make_plan(ir::Op::kAlltoall, n, o);
  REQUIRE(p.ok());
  CHECK(p->stats().phase_rounds == std::vector<int>{2, 2, 2});
}

TEST_CASE("greedy search over classes above kMaxHybridUnits offsets; --algo hybrid forces it") {
  const Neighborhood big = *stencils::box(2, 7, -3);  // 48 non-zero offsets: faces (12) and the rest
  PlanOptions o;
  o.algo = AlgoChoice::kHybrid;
  Result<ir::Plan> p = make_plan(ir::Op::kAlltoall, big, o);
  REQUIRE(p.ok());
  check_plan(*p);
  // One class direct (12 faces or the 36 others, one round each), the other combined (6 shifts
  // per dimension), in the combining plan's 2 phases.
  CHECK(p->phases().size() == 2);
  CHECK((p->stats().rounds == 12 + 12 || p->stats().rounds == 36 + 12));

  // Forced on small neighbourhoods too, even where it is not the cheapest.
  const Neighborhood m = testing::moore9();
  Result<ir::Plan> forced = make_plan(ir::Op::kAllgather, m, o);
  REQUIRE(forced.ok());
  CHECK(forced->phases().size() >= 2);
  CHECK(forced->phases()[0].dim == ir::Phase::kAllDims);
  check_plan(*forced);

  // Errors: ops without hybrid plans, and neighbourhoods with nothing to split.
  CHECK(make_plan(ir::Op::kAllreduce, m, o).error() ==
        "hybrid plans exist for alltoall, allgather, scatter, bcast and gather only, not allreduce");
  const Neighborhood one = testing::nbh(2, {{1, 0}, {0, 0}, {1, 0}});
  CHECK(make_plan(ir::Op::kAlltoall, one, o).error().find("no hybrid plan") == 0);
  const Neighborhood line = *stencils::box(1, 41, -20);  // 40 offsets, all faces: one class
  CHECK_FALSE(make_plan(ir::Op::kAlltoall, line, o).ok());
  CHECK_FALSE(supports_hybrid(ir::Op::kReduceScatter));
}

}  // namespace
}  // namespace cartplan::engine
