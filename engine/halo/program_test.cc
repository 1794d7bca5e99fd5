// Tests of halo programs: one transfer per peer and phase, parts joined into one subarray
// region where they touch, starts 0-based in the buffer.
#include "engine/halo/program.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "engine/halo/planners.h"

namespace cartplan::engine::halo {

namespace ih = ir::halo;

namespace {

HaloDescription moore(int d, ih::Order order = ih::Order::kC) {
  std::vector<int> n(d, 5), g(d, 2);
  Result<HaloDescription> h = describe_halo(ih::ArrayShape{d, n, g, g, 8, order}, "moore:d=" + std::to_string(d) + ",r=1", std::nullopt);
  REQUIRE(h);
  return *h;
}

Grid grid(std::vector<int> dims, std::vector<bool> periods) {
  Result<Grid> g = Grid::create(std::move(dims), std::move(periods));
  REQUIRE(g);
  return *g;
}

// Where a transfer's peer sits from `coords` on a torus of `dims` (each at least 3): -1, 0 or 1 per dimension.
Offset displacement(const Grid& g, const Coords& coords, int peer) {
  const Coords pc = g.coords(peer);
  Offset d(coords.size());
  for (std::size_t k = 0; k < coords.size(); ++k) {
    const int n = g.dims()[k], diff = ((pc[k] - coords[k]) % n + n) % n;
    d[k] = diff == n - 1 ? -1 : diff;
  }
  return d;
}

}  // namespace

TEST_CASE("dimwise on a large torus: 2d transfers of one extended-face region each") {
  Result<HaloBinder> b = HaloBinder::create(plan_halo_dimwise(moore(3), {0, 1, 2}));
  REQUIRE(b);
  Result<HaloProgram> p = lower_halo(*b, grid({3, 3, 3}, {true, true, true}), {1, 1, 1});
  REQUIRE(p);
  REQUIRE(p->phases.size() == 3);
  for (const HaloPhaseProgram& ph : p->phases) {
    REQUIRE(ph.sends.size() == 2);
    REQUIRE(ph.recvs.size() == 2);
    for (const HaloTransfer& t : ph.sends) CHECK(t.regions.size() == 1);
  }
  // Phase 2 sends to the process at +1 along dimension 2 (shift (0,0,1)) the face of the last
  // two interior planes, extended over both ghost layers in dimensions 0 and 1: starts 0-based.
  const HaloTransfer& t = p->phases[2].sends[0].peer == 13 + 1 ? p->phases[2].sends[0] : p->phases[2].sends[1];
  CHECK(t.regions[0].start == std::vector<int>{0, 0, 5});
  CHECK(t.regions[0].extent == std::vector<int>{9, 9, 2});
  const HaloCounts c = count(*p);
  CHECK(c.sends == 6);
  CHECK(c.sent_bytes == (9 * 9 * 9 - 5 * 5 * 5) * 8);
  CHECK(c.phases == 3);
}

TEST_CASE("a 2-wide periodic dimension: both directions go to one peer in one transfer") {
  Result<HaloBinder> b = HaloBinder::create(plan_halo_dimwise(moore(2), {0, 1}));
  REQUIRE(b);
  Result<HaloProgram> p = lower_halo(*b, grid({2, 3}, {true, true}), {0, 0});
  REQUIRE(p);
  CHECK(p->phases[0].sends.size() == 1);
  CHECK(p->phases[0].sends[0].regions.size() == 2);
  CHECK(p->phases[0].recvs.size() == 1);
  CHECK(p->phases[1].sends.size() == 2);
  // A 1-wide periodic dimension: the rank sends to itself.
  p = lower_halo(*b, grid({1, 3}, {true, true}), {0, 1});
  REQUIRE(p);
  CHECK(p->phases[0].sends[0].peer == p->rank);
  CHECK(count(*p).self_transfers == 1);
  CHECK(count(*p).sends == 2);
}

TEST_CASE("mesh: a rank at the edge sends less and still one region per transfer") {
  Result<HaloBinder> b = HaloBinder::create(plan_halo_dimwise(moore(2), {0, 1}));
  REQUIRE(b);
  Result<HaloProgram> p = lower_halo(*b, grid({3, 3}, {false, false}), {0, 1});
  REQUIRE(p);
  CHECK(p->phases[0].sends.size() == 1);  // only down
  for (const HaloTransfer& t : p->phases[1].sends) {
    REQUIRE(t.regions.size() == 1);
    CHECK(t.regions[0].start[0] == 2);  // no low ghost rows: they have no source
    CHECK(t.regions[0].extent[0] == 7);
  }
}

TEST_CASE("sends go in the order of their shifts on every rank, also where the torus wraps") {
  // Peer-rank order would put rank 0's send to its -1 neighbour (the last rank of its row) after
  // the one to +1: the rank would send in another order than its neighbours (issues 30 and 33).
  for (int d : {2, 3}) {
    const Grid g = grid(std::vector<int>(d, d == 2 ? 4 : 3), std::vector<bool>(d, true));
    std::vector<int> dims(d);
    for (int k = 0; k < d; ++k) dims[k] = k;
    for (const ih::HaloPlan& plan : {plan_halo_direct(moore(d)), plan_halo_dimwise(moore(d), dims), plan_halo_combining(moore(d), dims)}) {
      CAPTURE(d);
      const std::string algo = ih::to_string(plan.algorithm());
      CAPTURE(algo);
      Result<HaloBinder> b = HaloBinder::create(plan);
      REQUIRE(b);
      std::vector<std::vector<Offset>> first;  // rank 0's displacements per phase
      for (int r = 0; r < g.size(); ++r) {
        Result<HaloProgram> p = lower_halo(*b, g, g.coords(r));
        REQUIRE(p);
        std::vector<std::vector<Offset>> mine;
        for (const HaloPhaseProgram& ph : p->phases) {
          std::vector<Offset>& list = mine.emplace_back();
          for (const HaloTransfer& t : ph.sends) list.push_back(displacement(g, g.coords(r), t.peer));
          CHECK(std::is_sorted(list.begin(), list.end()));
          CHECK(std::adjacent_find(list.begin(), list.end()) == list.end());
        }
        if (r == 0) first = mine;
        CHECK(mine == first);
      }
      if (plan.algorithm() == ih::HaloAlgorithm::kDirect) CHECK(first.back().size() == (d == 2 ? 8u : 26u));
    }
  }
}

}  // namespace cartplan::engine::halo
