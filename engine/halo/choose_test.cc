// Tests of the halo choice: candidates per stencil kind, the cheapest picked, errors.
#include "engine/halo/choose.h"

#include <doctest/doctest.h>

#include "ir/halo/verify.h"

namespace cartplan::engine::halo {

namespace ih = ir::halo;

namespace {

HaloDescription desc(int d, int n, int g, const std::string& spec) {
  Result<HaloDescription> h = describe_halo(ih::ArrayShape{d, std::vector<int>(d, n), std::vector<int>(d, g), std::vector<int>(d, g), 8, ih::Order::kC},
                                            spec, std::nullopt);
  REQUIRE(h);
  return *h;
}

std::vector<std::string> names(const std::vector<HaloCandidate>& c) {
  std::vector<std::string> n;
  for (const HaloCandidate& x : c) n.push_back(ih::to_string(x.plan.algorithm()));
  return n;
}

}  // namespace

TEST_CASE("Moore: direct, combining and dimwise are offered; dimwise wins") {
  Result<std::vector<HaloCandidate>> c = halo_candidates(desc(3, 16, 1, "moore:d=3,r=1"), HaloPlanOptions{});
  REQUIRE(c);
  CHECK(names(*c) == std::vector<std::string>{"direct", "combining", "dimwise"});
  CHECK(ih::to_string((*c)[pick_halo_candidate(*c)].plan.algorithm()) == std::string("dimwise"));
  for (const HaloCandidate& x : *c) CHECK(ih::verify(x.plan).empty());
}

TEST_CASE("a stencil that is not prefix-closed: split and hybrid instead of dimwise") {
  const HaloDescription h = desc(2, 8, 1, "offsets:1,1;-1,-1;1,0;-1,0");  // corners only through rows
  Result<std::vector<HaloCandidate>> c = halo_candidates(h, HaloPlanOptions{});
  REQUIRE(c);
  // (1,1)'s prefix in order (1,0) is (0,1)... but in order (0,1) it is (1,0): closed there.
  CHECK(names(*c) == std::vector<std::string>{"direct", "combining", "dimwise"});
  CHECK((*c)[2].plan.dim_order() == std::vector<int>{0, 1});
  const HaloDescription open = desc(2, 8, 1, "offsets:1,1;-1,-1");
  c = halo_candidates(open, HaloPlanOptions{});
  REQUIRE(c);
  CHECK(names(*c) == std::vector<std::string>{"direct", "combining", "split", "hybrid"});
  HaloPlanOptions o;
  o.algo = HaloAlgoChoice::kDimwise;
  CHECK(halo_candidates(open, o).error().find("dimwise needs a stencil") == 0);
}

TEST_CASE("options: one algorithm, a fixed order, a bad order") {
  HaloPlanOptions o;
  o.algo = HaloAlgoChoice::kSplit;
  o.dim_order = std::vector<int>{1, 0};
  Result<ih::HaloPlan> p = make_halo_plan(desc(2, 8, 2, "moore:d=2,r=1"), o);
  REQUIRE(p);
  CHECK(p->algorithm() == ih::HaloAlgorithm::kSplit);
  CHECK(p->dim_order() == std::vector<int>{1, 0});
  CHECK(p->temps().empty());
  o.dim_order = std::vector<int>{0, 0};
  CHECK(make_halo_plan(desc(2, 8, 2, "moore:d=2,r=1"), o).error().find("dim_order: ") == 0);
}

}  // namespace cartplan::engine::halo
