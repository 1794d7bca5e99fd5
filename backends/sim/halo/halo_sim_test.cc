// Tests of the halo simulator: correct plans pass on tori and meshes, C and Fortran order;
// injected faults are caught and named; uneven block decompositions (every rank its own plan)
// pass for every algorithm, and interiors that break the block structure are caught.
#include "backends/sim/halo/halo_sim.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "engine/halo/choose.h"
#include "engine/halo/planners.h"
#include "engine/halo/uneven.h"

namespace cartplan::sim::halo {

namespace ih = ir::halo;
namespace eh = engine::halo;

namespace {

eh::HaloDescription desc(ih::Order order, const std::string& spec) {
  Result<eh::HaloDescription> h = eh::describe_halo(ih::ArrayShape{2, {4, 3}, {1, 2}, {2, 1}, 8, order}, spec, std::nullopt);
  REQUIRE(h);
  return *h;
}

engine::Grid grid(std::vector<int> dims, std::vector<bool> periods) {
  Result<engine::Grid> g = engine::Grid::create(std::move(dims), std::move(periods));
  REQUIRE(g);
  return *g;
}

bool has(const std::vector<std::string>& errors, const std::string& text) {
  for (const std::string& e : errors) {
    if (e.find(text) != std::string::npos) return true;
  }
  INFO("first error: " << (errors.empty() ? "(none)" : errors.front()));
  return false;
}

}  // namespace

TEST_CASE("dimwise Moore on tori and meshes, C and Fortran order: every ghost cell once") {
  for (ih::Order order : {ih::Order::kC, ih::Order::kFortran}) {
    const eh::HaloDescription h = desc(order, "moore:d=2,r=1");
    Result<eh::HaloBinder> b = eh::HaloBinder::create(eh::plan_halo_dimwise(h, {0, 1}));
    REQUIRE(b);
    for (const engine::Grid& g : {grid({3, 4}, {true, true}), grid({3, 4}, {false, false}), grid({1, 2}, {true, true}), grid({2, 1}, {false, true})}) {
      Result<HaloSimReport> r = simulate_halo(*b, g);
      REQUIRE(r);
      CHECK(r->ok);
      if (!r->ok) MESSAGE(r->errors.front());
      CHECK(r->written_bytes == r->ghost_bytes);
      CHECK(r->wire_bytes + r->self_bytes == r->ghost_bytes);  // no cell sent twice
    }
  }
}

TEST_CASE("faults are caught: a region dropped, a region moved, a wrong tag") {
  const eh::HaloDescription h = desc(ih::Order::kC, "moore:d=2,r=1");
  Result<eh::HaloBinder> b = eh::HaloBinder::create(eh::plan_halo_dimwise(h, {0, 1}));
  REQUIRE(b);
  const engine::Grid g = grid({3, 3}, {true, true});
  HaloSimOptions o;
  o.tamper = [](eh::HaloProgram& p) {
    if (p.rank == 4) p.phases[0].recvs[0].regions[0].start[1] += 1;  // one column over
  };
  Result<HaloSimReport> r = simulate_halo(*b, g, o);
  REQUIRE(r);
  CHECK_FALSE(r->ok);
  CHECK(has(r->errors, "rank 4 (1,1): array cell (-1,"));
  o.tamper = [](eh::HaloProgram& p) {
    if (p.rank == 0) p.phases[0].sends[0].tag += 100;
  };
  r = simulate_halo(*b, g, o);
  REQUIRE(r);
  CHECK(has(r->errors, "the rank sends no such message"));
  CHECK(has(r->errors, "which does not receive it"));
  o.tamper = [](eh::HaloProgram& p) {
    if (p.rank == 2) p.phases[0].recvs[0].regions.pop_back(), p.phases[0].recvs[0].cells = 0;
  };
  r = simulate_halo(*b, g, o);
  REQUIRE(r);
  CHECK(has(r->errors, "bytes arrive, the receive expects 0"));
  o.tamper = [](eh::HaloProgram& p) {
    if (p.rank == 1 && !p.phases[1].sends.empty()) p.phases[1].recvs[0].regions[0].start = p.phases[1].sends[0].regions[0].start;
  };
  r = simulate_halo(*b, g, o);
  REQUIRE(r);
  CHECK(has(r->errors, "which is sent in the same phase"));
}

TEST_CASE("memory limit and grid mismatch are errors, not crashes") {
  const eh::HaloDescription h = desc(ih::Order::kC, "moore:d=2,r=1");
  Result<eh::HaloBinder> b = eh::HaloBinder::create(eh::plan_halo_direct(h));
  REQUIRE(b);
  HaloSimOptions o;
  o.max_memory_bytes = 1000;
  CHECK(simulate_halo(*b, grid({4, 4}, {true, true}), o).error().find("MiB in the simulator") != std::string::npos);
  CHECK(simulate_halo(*b, grid({4}, {true})).error() == "the grid has 1 dimensions; the plan's array has 2");
}

namespace {

struct BlockCase {
  std::vector<int> dims;
  std::vector<bool> periods;
  std::vector<int> global;
  std::vector<int> ghost_lo, ghost_hi;
  std::string spec;
  bool prefix_closed = true;  // dimwise applies
};

std::vector<std::vector<int>> blocks(const BlockCase& c) {
  std::vector<std::vector<int>> e;
  for (std::size_t k = 0; k < c.dims.size(); ++k) {
    Result<std::vector<int>> b = eh::block_extents(c.global[k], c.dims[k]);
    REQUIRE(b);
    e.push_back(*b);
  }
  return e;
}

// The required ghost bytes of every rank, counted region by region from the interiors alone:
// region t of the rank at x is filled iff t is in the stencil and x + t exists.
std::int64_t expected_ghost_bytes(const BlockCase& c, const std::vector<std::vector<int>>& extents, const eh::HaloDescription& h, std::int64_t elem) {
  const engine::Grid g = grid(c.dims, c.periods);
  std::int64_t bytes = 0;
  for (int r = 0; r < g.size(); ++r) {
    const std::vector<int> n = eh::interior_at(extents, g.coords(r));
    for (const ir::Offset& t : h.neighborhood) {
      if (g.relative_rank(g.coords(r), t) == engine::kNoRank) continue;
      std::int64_t cells = 1;
      for (std::size_t k = 0; k < n.size(); ++k) cells *= t[k] == 0 ? n[k] : t[k] < 0 ? c.ghost_lo[k] : c.ghost_hi[k];
      bytes += cells * elem;
    }
  }
  return bytes;
}

const std::pair<const char*, eh::HaloAlgoChoice> kAllAlgos[] = {{"auto", eh::HaloAlgoChoice::kAuto},      {"direct", eh::HaloAlgoChoice::kDirect},
                                                                {"combining", eh::HaloAlgoChoice::kCombining}, {"dimwise", eh::HaloAlgoChoice::kDimwise},
                                                                {"split", eh::HaloAlgoChoice::kSplit},     {"hybrid", eh::HaloAlgoChoice::kHybrid}};

const char* kCorners3 = "offsets:1,1,1;-1,-1,-1;1,0,0;-1,0,0;0,1,0;0,-1,0;0,0,1;0,0,-1";

}  // namespace

TEST_CASE("uneven block decompositions: every rank its own plan, every algorithm, every ghost cell from the source's own interior") {
  const BlockCase cases[] = {
      {{4}, {true}, {10}, {2}, {1}, "moore:d=1,r=1"},
      {{3}, {false}, {7}, {1}, {2}, "moore:d=1,r=1"},
      {{3, 2}, {true, true}, {10, 9}, {1, 2}, {2, 1}, "moore:d=2,r=1"},
      {{3, 3}, {false, false}, {11, 8}, {2, 1}, {1, 2}, "vonneumann:d=2,r=1"},
      {{2, 3}, {true, false}, {7, 10}, {3, 1}, {1, 3}, "box:d=2,n=3,f=-1"},
      {{3, 2}, {false, true}, {8, 7}, {1, 2}, {2, 1}, "offsets:1,1;-1,-1;1,0;-1,0", false},
      {{2, 2, 2}, {true, false, true}, {5, 6, 7}, {1, 2, 1}, {2, 1, 2}, "moore:d=3,r=1"},
      {{3, 2, 2}, {false, false, false}, {7, 5, 5}, {1, 1, 1}, {1, 1, 1}, "vonneumann:d=3,r=1"},
      {{2, 2, 1}, {false, true, true}, {5, 5, 3}, {1, 1, 1}, {1, 1, 1}, kCorners3, false},
  };
  for (const BlockCase& c : cases) {
    const std::vector<std::vector<int>> extents = blocks(c);
    const engine::Grid g = grid(c.dims, c.periods);
    bool uneven = false;
    for (const std::vector<int>& e : extents) uneven = uneven || std::set<int>(e.begin(), e.end()).size() > 1;
    REQUIRE(uneven);  // every case has ranks of different interiors
    for (ih::Order order : {ih::Order::kC, ih::Order::kFortran}) {
      const std::int64_t elem = order == ih::Order::kC ? 8 : 3;
      const int d = static_cast<int>(c.dims.size());
      Result<eh::HaloDescription> h = eh::describe_halo(ih::ArrayShape{d, std::vector<int>(d, 4), c.ghost_lo, c.ghost_hi, elem, order}, c.spec, std::nullopt);
      REQUIRE_MESSAGE(h, h.error());
      for (const auto& [name, algo] : kAllAlgos) {
        if (algo == eh::HaloAlgoChoice::kDimwise && !c.prefix_closed) continue;
        CAPTURE(c.spec);
        CAPTURE(ir::to_string(c.global));
        CAPTURE(std::string(name));
        eh::HaloPlanOptions o;
        o.algo = algo;
        Result<HaloSimReport> r = simulate_halo_blocks(*h, extents, o, g);
        REQUIRE_MESSAGE(r, r.error());
        CHECK(r->ok);
        if (!r->ok) MESSAGE(r->errors.front());
        CHECK(r->ranks == g.size());
        CHECK(r->ghost_bytes == expected_ghost_bytes(c, extents, *h, elem));
        CHECK(r->written_bytes == r->ghost_bytes);
        if (algo == eh::HaloAlgoChoice::kDirect || algo == eh::HaloAlgoChoice::kDimwise || algo == eh::HaloAlgoChoice::kHybrid)
          CHECK(r->wire_bytes + r->self_bytes == r->ghost_bytes);  // no cell sent twice
      }
    }
  }
}

TEST_CASE("interiors that break the block structure are caught: wrong sizes and cells without a source") {
  // Rank 2 (1,0) claims 4 rows where its column partner (1,1) has 3 (dimension 0), or 4 columns
  // where its row partner (0,0) has 5 (dimension 1). A message carries an extent of dimension k
  // only along the other dimensions, so the faces+corners stencil without (0,+-1) faces (whose
  // exchange stays consistent with rank (1,0)'s 4 rows) is broken in dimension 1 only. Every
  // case, every algorithm, gives both kinds of error: two receives of the wrong size (rank 2
  // receiving or sending) and three ghost cells whose source cell lies outside the
  // source's interior (the same cells for every algorithm; some algorithms also report wrong
  // values, which are not asserted here).
  const std::vector<std::vector<int>> extents = {{4, 3}, {5, 4}};
  const engine::Grid g = grid({2, 2}, {true, true});
  const std::string blocks = " (interiors must form blocks: one extent per coordinate of each dimension)";
  const std::tuple<std::string, std::vector<int>, std::string> broken[] = {
      {"moore:d=2,r=1", {4, 5},
       "rank 2 (1,0): array cell (3,-2) has no source cell: cell (3,-2) lies outside the interior (3,4) of rank 3" + blocks},
      {"moore:d=2,r=1", {3, 4},
       "rank 0 (0,0): array cell (-1,4) has no source cell: cell (2,4) lies outside the interior (3,4) of rank 2" + blocks},
      {"offsets:1,1;-1,-1;1,0;-1,0", {3, 4},
       "rank 0 (0,0): array cell (-1,4) has no source cell: cell (2,4) lies outside the interior (3,4) of rank 2" + blocks}};
  for (const auto& [spec, wrong, first_no_source] : broken) {
    Result<eh::HaloDescription> h = eh::describe_halo(ih::ArrayShape{2, {4, 5}, {1, 2}, {2, 1}, 8, ih::Order::kC}, spec, std::nullopt);
    REQUIRE(h);
    for (const auto& [name, algo] : kAllAlgos) {
      if (algo == eh::HaloAlgoChoice::kDimwise && spec[0] == 'o') continue;
      CAPTURE(spec);
      CAPTURE(ir::to_string(wrong));
      CAPTURE(std::string(name));
      eh::HaloPlanOptions o;
      o.algo = algo;
      o.choice_interior = std::vector<int>{4, 5};
      const HaloPlanOf plan_of = [&](const engine::Coords& x) -> Result<ih::HaloPlan> {
        eh::HaloDescription own = *h;
        own.array.interior = x == engine::Coords{1, 0} ? wrong : eh::interior_at(extents, x);
        return eh::make_halo_plan(own, o);
      };
      HaloSimOptions all_errors;
      all_errors.max_errors = 1000;
      Result<HaloSimReport> r = simulate_halo(plan_of, g, all_errors);
      REQUIRE_MESSAGE(r, r.error());
      CHECK_FALSE(r->ok);
      std::vector<std::string> wrong_size, no_source;
      for (const std::string& e : r->errors) {
        if (e.find(" bytes arrive, the receive expects ") != std::string::npos) wrong_size.push_back(e);
        if (e.find(" has no source cell: ") != std::string::npos) no_source.push_back(e);
      }
      CHECK(wrong_size.size() == 2);
      for (const std::string& e : wrong_size)  // rank 2 receives or sends them
        CHECK_MESSAGE((e.find("rank 2 (1,0), receive tag ") != std::string::npos || e.find(" from rank 2: ") != std::string::npos), e);
      REQUIRE(no_source.size() == 3);
      CHECK(no_source.front() == first_no_source);
    }
  }
}

TEST_CASE("simulate_halo with per-rank plans: a rank whose plan has another phase count than rank 0's is named") {
  // direct has 1 phase, dimwise 2 (one per dimension). Every rank is compared with rank 0, also
  // when rank 0 has the fewer phases.
  const eh::HaloDescription h = desc(ih::Order::kC, "moore:d=2,r=1");
  const ih::HaloPlan direct = eh::plan_halo_direct(h), dimwise = eh::plan_halo_dimwise(h, {0, 1});
  REQUIRE(direct.phases().size() == 1);
  REQUIRE(dimwise.phases().size() == 2);
  const engine::Grid g = grid({2, 2}, {true, true});
  for (const auto& [direct_at, want] : {std::pair<engine::Coords, std::vector<std::string>>{{1, 0}, {"rank 2 (1,0)'s plan has 1 phases, rank 0's 2"}},
                                        {{0, 0},
                                         {"rank 1 (0,1)'s plan has 2 phases, rank 0's 1", "rank 2 (1,0)'s plan has 2 phases, rank 0's 1",
                                          "rank 3 (1,1)'s plan has 2 phases, rank 0's 1"}}}) {
    CAPTURE(ir::to_string(direct_at));
    Result<HaloSimReport> r = simulate_halo([&](const engine::Coords& x) -> Result<ih::HaloPlan> { return x == direct_at ? direct : dimwise; }, g);
    REQUIRE_MESSAGE(r, r.error());
    CHECK_FALSE(r->ok);
    CHECK(r->phases == 2);  // every phase of every rank ran
    std::vector<std::string> phase_errors;
    for (const std::string& e : r->errors) {
      if (e.find(" phases, rank 0's ") != std::string::npos) phase_errors.push_back(e);
    }
    CHECK(phase_errors == want);
  }
}

TEST_CASE("simulate_halo with per-rank plans: one plan for all equals the binder form; errors name the rank") {
  const eh::HaloDescription h = desc(ih::Order::kFortran, "moore:d=2,r=1");
  Result<eh::HaloBinder> b = eh::HaloBinder::create(eh::plan_halo_dimwise(h, {1, 0}));
  REQUIRE(b);
  const engine::Grid g = grid({3, 2}, {false, true});
  Result<HaloSimReport> one = simulate_halo(*b, g);
  Result<HaloSimReport> each = simulate_halo([&](const engine::Coords&) -> Result<ih::HaloPlan> { return b->plan(); }, g);
  REQUIRE(one);
  REQUIRE(each);
  CHECK(each->ok);
  CHECK(each->ghost_bytes == one->ghost_bytes);
  CHECK(each->wire_bytes == one->wire_bytes);
  CHECK(each->transfers == one->transfers);
  CHECK(simulate_halo([](const engine::Coords& x) -> Result<ih::HaloPlan> { return fail("no plan at " + ir::to_string(x)); }, g).error() ==
        "rank 0 (0,0): no plan at (0,0)");
  CHECK(simulate_halo_blocks(h, {{2, 2}}, eh::HaloPlanOptions{}, g).error() == "extents for 1 dimensions; the grid has 2");
  CHECK(simulate_halo_blocks(h, {{2, 2}, {2, 2}}, eh::HaloPlanOptions{}, g).error() ==
        "extents[0] has 2 blocks; the grid has 3 processes in dimension 0");
  // The high ghost width 2 of dimension 0 is wider than the third block (1 cell).
  CHECK(simulate_halo_blocks(h, {{3, 2, 1}, {3, 3}}, eh::HaloPlanOptions{}, g).error().rfind("rank 4 (2,0): ghost_hi[0] = 2 is wider", 0) == 0);
}

}  // namespace cartplan::sim::halo
