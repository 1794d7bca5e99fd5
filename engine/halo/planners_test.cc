// Tests of the halo planners: every plan verifies at element level; counts of messages,
// phases and wire cells (each ghost cell once for direct, dimwise and hybrid).
#include "engine/halo/planners.h"

#include <doctest/doctest.h>

#include "engine/planner.h"
#include "ir/halo/json.h"
#include "ir/halo/verify.h"

namespace cartplan::engine::halo {

namespace ih = ir::halo;

namespace {

HaloDescription desc(std::vector<int> n, std::vector<int> glo, std::vector<int> ghi, const std::string& spec) {
  const int d = static_cast<int>(n.size());
  Result<HaloDescription> h = describe_halo(ih::ArrayShape{d, std::move(n), std::move(glo), std::move(ghi), 8, ih::Order::kC}, spec, std::nullopt);
  REQUIRE(h);
  return *h;
}

void check_verifies(const ih::HaloPlan& p) {
  const std::vector<std::string> errors = ih::verify(p);
  INFO(ih::to_json_string(p));
  CHECK(errors.empty());
  if (!errors.empty()) MESSAGE(errors.front());
}

}  // namespace

TEST_CASE("Moore and box stencils: dimwise sends every ghost cell once in 2d messages") {
  for (const auto& h : {desc({6, 5}, {2, 1}, {1, 3}, "moore:d=2,r=1"), desc({4, 5, 6}, {1, 2, 3}, {3, 2, 1}, "box:d=3,n=3,f=-1"),
                        desc({3, 3, 3, 3}, {1, 1, 1, 1}, {1, 1, 1, 1}, "moore:d=4,r=1")}) {
    const int d = h.array.ndims;
    REQUIRE(prefix_closed(h, natural_dim_order(d)));
    const ih::HaloPlan p = plan_halo_dimwise(h, natural_dim_order(d));
    check_verifies(p);
    CHECK(p.algorithm() == ih::HaloAlgorithm::kDimwise);
    CHECK(p.stats().messages == 2 * d);
    CHECK(p.stats().phases == d);
    CHECK(p.stats().wire_cells == p.stats().ghost_cells);
    CHECK(p.temps().empty());
    const ih::HaloPlan direct = plan_halo_direct(h);
    check_verifies(direct);
    CHECK(direct.stats().wire_cells == direct.stats().ghost_cells);
    CHECK(direct.stats().messages == static_cast<int>(h.neighborhood.size()));
    const ih::HaloPlan comb = plan_halo_combining(h, combining_dim_order(h));
    check_verifies(comb);
    CHECK(comb.stats().wire_cells > comb.stats().ghost_cells);  // corners travel several hops
  }
}

TEST_CASE("von Neumann: dimwise without extension, in any order") {
  const HaloDescription h = desc({5, 6, 7}, {2, 2, 2}, {2, 2, 2}, "vonneumann:d=3,r=1");
  for (const std::vector<int>& order : {std::vector<int>{0, 1, 2}, std::vector<int>{2, 0, 1}}) {
    const ih::HaloPlan p = plan_halo_dimwise(h, order);
    check_verifies(p);
    CHECK(p.stats().wire_cells == p.stats().ghost_cells);
    for (const ih::Phase& ph : p.phases())
      for (const ih::Message& m : ph.messages) CHECK(m.parts.size() == 1);
  }
}

TEST_CASE("faces and corners without edges (3-D): split stages edges in temps, hybrid sends corners directly") {
  std::string spec = "offsets:";
  for (int a = -1; a <= 1; ++a)
    for (int b = -1; b <= 1; ++b)
      for (int c = -1; c <= 1; ++c) {
        const int nz = (a != 0) + (b != 0) + (c != 0);
        if (nz == 1 || nz == 3) spec += std::to_string(a) + "," + std::to_string(b) + "," + std::to_string(c) + ";";
      }
  spec.pop_back();
  const HaloDescription h = desc({6, 6, 6}, {2, 1, 2}, {1, 2, 2}, spec);
  CHECK_FALSE(prefix_closed(h, {0, 1, 2}));
  const ih::HaloPlan split = plan_halo_split(h, {0, 1, 2});
  check_verifies(split);
  CHECK_FALSE(split.temps().empty());
  CHECK(split.stats().messages == 6);
  CHECK(split.stats().wire_cells > split.stats().ghost_cells);
  const ih::HaloPlan hybrid = plan_halo_hybrid(h, {0, 1, 2});
  check_verifies(hybrid);
  CHECK(hybrid.temps().empty());
  CHECK(hybrid.stats().messages == 6 + 8);
  CHECK(hybrid.stats().wire_cells == hybrid.stats().ghost_cells);
  check_verifies(plan_halo_combining(h, {0, 1, 2}));
}

TEST_CASE("one corner only, and asymmetric stencils") {
  for (const char* spec : {"offsets:1,1", "offsets:1,0;1,1", "offsets:-1,1;0,1", "offsets:1,0;0,1;1,1;-1,-1"}) {
    INFO(spec);
    const HaloDescription h = desc({4, 3}, {1, 2}, {2, 1}, spec);
    for (const std::vector<int>& order : {std::vector<int>{0, 1}, std::vector<int>{1, 0}}) {
      check_verifies(plan_halo_split(h, order));
      check_verifies(plan_halo_hybrid(h, order));
      check_verifies(plan_halo_combining(h, order));
      if (prefix_closed(h, order)) check_verifies(plan_halo_dimwise(h, order));
    }
    check_verifies(plan_halo_direct(h));
  }
}

TEST_CASE("deep halos: ghost width 3 on interiors of 3 (the whole interior is a slab)") {
  const HaloDescription h = desc({3, 3}, {3, 3}, {3, 3}, "moore:d=2,r=1");
  const ih::HaloPlan p = plan_halo_dimwise(h, {1, 0});
  check_verifies(p);
  CHECK(p.stats().wire_cells == 9 * 9 - 9);
}

TEST_CASE("no ghost cells: empty plans") {
  const HaloDescription h = desc({3, 3}, {0, 0}, {0, 0}, "moore:d=2,r=1");
  for (const ih::HaloPlan& p : {plan_halo_direct(h), plan_halo_dimwise(h, {0, 1}), plan_halo_combining(h, {0, 1}), plan_halo_hybrid(h, {0, 1})}) {
    check_verifies(p);
    CHECK(p.phases().empty());
  }
}

}  // namespace cartplan::engine::halo
