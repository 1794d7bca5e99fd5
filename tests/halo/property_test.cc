// Property tests of the halo planners on random descriptions (docs/halo.md): d = 1..4, grids of
// 1-4 processes per dimension, tori and meshes, interiors of 1-6 cells, ghost widths 0-3 per
// side, element sizes 1-12 bytes, C and Fortran order, Moore, von Neumann and random stencils.
// Every candidate plan must verify at element level, survive a JSON round trip and pass the
// simulator on every rank; direct, dimwise and hybrid plans put exactly the required ghost
// bytes on the wire (no cell twice), split and combining at least those.
#include <algorithm>
#include <random>
#include <string>

#include <doctest/doctest.h>

#include "backends/sim/halo/halo_sim.h"
#include "engine/halo/choose.h"
#include "engine/planner.h"
#include "engine/halo/planners.h"
#include "ir/halo/json.h"
#include "ir/halo/verify.h"

namespace cartplan {
namespace {

namespace ih = ir::halo;
namespace eh = engine::halo;

struct Case {
  eh::HaloDescription h;
  engine::Grid grid;
  std::string text;
};

std::vector<ir::Offset> random_stencil(std::mt19937_64& rng, int d, std::string& name) {
  std::vector<ir::Offset> all;
  ir::Offset o(d, -1);
  while (true) {
    all.push_back(o);
    int k = d - 1;
    while (k >= 0 && o[k] == 1) o[k--] = -1;
    if (k < 0) break;
    ++o[k];
  }
  const int kind = static_cast<int>(rng() % 4);
  std::vector<ir::Offset> out;
  for (const ir::Offset& t : all) {
    int nz = 0;
    for (int c : t) nz += c != 0;
    const bool keep = kind == 0 ? true : kind == 1 ? nz <= 1 : kind == 2 ? (nz == 1 || nz == d) : rng() % 2 == 0;
    if (keep) out.push_back(t);
  }
  name = kind == 0 ? "moore" : kind == 1 ? "vonneumann" : kind == 2 ? "faces+corners" : "random";
  return out;
}

Case random_case(std::mt19937_64& rng) {
  const int d = rng() % 10 == 0 ? 4 : 1 + static_cast<int>(rng() % 3);
  const int max_n = d == 4 ? 3 : 6, max_p = d == 4 ? 2 : 4;
  ih::ArrayShape a{d, {}, {}, {}, std::vector<std::int64_t>{1, 2, 3, 4, 8, 12}[rng() % 6], rng() % 2 ? ih::Order::kC : ih::Order::kFortran};
  std::vector<int> dims;
  std::vector<bool> periods;
  for (int k = 0; k < d; ++k) {
    a.interior.push_back(1 + static_cast<int>(rng() % max_n));
    a.ghost_lo.push_back(static_cast<int>(rng() % (std::min(3, a.interior[k]) + 1)));
    a.ghost_hi.push_back(static_cast<int>(rng() % (std::min(3, a.interior[k]) + 1)));
    dims.push_back(1 + static_cast<int>(rng() % max_p));
    periods.push_back(rng() % 2 == 0);
  }
  std::string stencil;
  const std::vector<ir::Offset> offsets = random_stencil(rng, d, stencil);
  Result<engine::Grid> g = engine::Grid::create(dims, periods);
  REQUIRE(g);
  Result<eh::HaloDescription> h = eh::describe_halo(a, offsets, *g);
  REQUIRE(h);
  std::string text = "d=" + std::to_string(d) + " interior=" + ir::to_string(a.interior) + " ghost_lo=" + ir::to_string(a.ghost_lo) +
                     " ghost_hi=" + ir::to_string(a.ghost_hi) + " elem=" + std::to_string(a.elem_bytes) + " order=" + ih::to_string(a.order) +
                     " dims=" + ir::to_string(dims) + " periods=" + std::to_string(periods[0]) + ".. stencil=" + stencil;
  return Case{*h, *g, text};
}

std::vector<int> random_order(std::mt19937_64& rng, int d) {
  std::vector<int> o = engine::natural_dim_order(d);
  std::shuffle(o.begin(), o.end(), rng);
  return o;
}

// Verify, round trip, simulate; returns the simulator's report.
sim::halo::HaloSimReport check_plan(const ih::HaloPlan& plan, const Case& c) {
  INFO(std::string(ih::to_string(plan.algorithm())) << " order " << ir::to_string(plan.dim_order()));
  const std::vector<std::string> errors = ih::verify(plan);
  REQUIRE_MESSAGE(errors.empty(), errors.front());
  const std::string text = ih::to_json_string(plan);
  Result<ih::HaloPlan> back = ih::halo_plan_from_json_string(text);
  REQUIRE(back);
  CHECK(*back == plan);
  CHECK(ih::to_json_string(*back) == text);
  Result<eh::HaloBinder> b = eh::HaloBinder::create(plan);
  REQUIRE(b);
  Result<sim::halo::HaloSimReport> r = sim::halo::simulate_halo(*b, c.grid);
  REQUIRE(r);
  REQUIRE_MESSAGE(r->ok, r->errors.front());
  CHECK(r->written_bytes == r->ghost_bytes);
  return *r;
}

}  // namespace

TEST_CASE("random halo descriptions: every planner verified and simulated") {
  std::mt19937_64 rng(20240613);
  int plans = 0;
  for (int i = 0; i < 700; ++i) {
    const Case c = random_case(rng);
    INFO("case " << i << ": " << c.text);
    const std::vector<int> order = random_order(rng, c.h.array.ndims);
    for (const ih::HaloPlan& p : {eh::plan_halo_direct(c.h), eh::plan_halo_hybrid(c.h, order)}) {
      const sim::halo::HaloSimReport r = check_plan(p, c);
      CHECK(r.wire_bytes + r.self_bytes == r.ghost_bytes);  // each required cell sent once
      ++plans;
    }
    if (eh::prefix_closed(c.h, order)) {
      const sim::halo::HaloSimReport r = check_plan(eh::plan_halo_dimwise(c.h, order), c);
      CHECK(r.wire_bytes + r.self_bytes == r.ghost_bytes);
      ++plans;
    }
    for (const ih::HaloPlan& p : {eh::plan_halo_split(c.h, order), eh::plan_halo_combining(c.h, order),
                                  eh::plan_halo_combining(c.h, eh::combining_dim_order(c.h))}) {
      const sim::halo::HaloSimReport r = check_plan(p, c);
      CHECK(r.wire_bytes + r.self_bytes >= r.ghost_bytes);
      ++plans;
    }
    Result<ih::HaloPlan> chosen = eh::make_halo_plan(c.h, eh::HaloPlanOptions{});
    REQUIRE(chosen);
    check_plan(*chosen, c);
    ++plans;
  }
  MESSAGE(plans << " plans verified at element level and simulated on every rank");
}

TEST_CASE("Moore and box stencils: the overlap-aware plan's bytes are the ghost volume, counted per rank") {
  for (int d = 1; d <= 3; ++d) {
    for (int g = 1; g <= 3; ++g) {
      const std::vector<int> n(d, 3 + g);
      Result<engine::Grid> grid = engine::Grid::create(std::vector<int>(d, 3), std::vector<bool>(d, true));
      REQUIRE(grid);
      Result<eh::HaloDescription> h = eh::describe_halo(ih::ArrayShape{d, n, std::vector<int>(d, g), std::vector<int>(d, g), 8, ih::Order::kC},
                                                        "box:d=" + std::to_string(d) + ",n=3,f=-1", *grid);
      REQUIRE(h);
      eh::HaloPlanOptions o;
      o.algo = eh::HaloAlgoChoice::kDimwise;
      Result<ih::HaloPlan> p = eh::make_halo_plan(*h, o);
      REQUIRE(p);
      Result<eh::HaloBinder> b = eh::HaloBinder::create(*p);
      REQUIRE(b);
      Result<eh::HaloProgram> prog = eh::lower_halo(*b, *grid, std::vector<int>(d, 1));
      REQUIRE(prog);
      std::int64_t ghost = 1, inner = 1;
      for (int k = 0; k < d; ++k) ghost *= n[k] + 2 * g, inner *= n[k];
      ghost -= inner;
      const eh::HaloCounts c = eh::count(*prog);
      CHECK(c.sent_bytes == ghost * 8);
      CHECK(c.received_bytes == ghost * 8);
      CHECK(c.sends == 2 * d);
      CHECK(c.regions == 2 * d);  // each message one subarray: extended faces
      const sim::halo::HaloSimReport r = check_plan(*p, Case{*h, *grid, ""});
      CHECK(r.wire_bytes == 27 / (d == 1 ? 9 : d == 2 ? 3 : 1) * ghost * 8);  // every rank alike
    }
  }
}

}  // namespace cartplan
