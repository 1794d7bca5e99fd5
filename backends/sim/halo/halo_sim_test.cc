// Tests of the halo simulator: correct plans pass on tori and meshes, C and Fortran order;
// injected faults are caught and named.
#include "backends/sim/halo/halo_sim.h"

#include <doctest/doctest.h>

#include "engine/halo/planners.h"

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

}  // namespace cartplan::sim::halo
