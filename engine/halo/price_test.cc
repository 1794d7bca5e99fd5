// Tests of halo pricing: the terms add up from the program's counts; the busiest rank counts.
#include "engine/halo/price.h"

#include <doctest/doctest.h>

#include "engine/halo/planners.h"

namespace cartplan::engine::halo {

namespace ih = ir::halo;

namespace {

HaloDescription moore2(int n, int g) {
  Result<HaloDescription> h = describe_halo(ih::ArrayShape{2, {n, n}, {g, g}, {g, g}, 8, ih::Order::kC}, "moore:d=2,r=1", std::nullopt);
  REQUIRE(h);
  return *h;
}

}  // namespace

TEST_CASE("dimwise 64x64, ghost 2: four messages in two phases, the ghost volume on the wire") {
  Result<HaloBinder> b = HaloBinder::create(plan_halo_dimwise(moore2(64, 2), {0, 1}));
  REQUIRE(b);
  const CostModel m;
  Result<HaloCost> c = price_halo(*b, m, std::nullopt);
  REQUIRE(c);
  const std::int64_t bytes = (68 * 68 - 64 * 64) * 8;
  CHECK(c->counts.sent_bytes == bytes);
  CHECK(c->counts.sends == 4);
  CHECK(c->counts.phases == 2);
  // Every face is above the eager limit (64 x 2 x 8 = 1024 B: no; 68 x 2 x 8 = 1088 B: no).
  CHECK(c->terms.us(&CostModel::rendezvous_us) == 0);
  CHECK(c->us == doctest::Approx(4 * m.alpha_us + m.beta_us_per_byte * bytes + 2 * m.phase_us));
}

TEST_CASE("rendezvous above the eager limit; the direct plan sends more messages") {
  Result<HaloBinder> dim = HaloBinder::create(plan_halo_dimwise(moore2(256, 3), {0, 1}));
  Result<HaloBinder> direct = HaloBinder::create(plan_halo_direct(moore2(256, 3)));
  REQUIRE(dim);
  REQUIRE(direct);
  const CostModel m;
  Result<HaloCost> a = price_halo(*dim, m, std::nullopt), b = price_halo(*direct, m, std::nullopt);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->terms.us(&CostModel::rendezvous_us) == 4 * m.rendezvous_us);  // faces of 256 x 3 x 8 bytes
  CHECK(b->terms.us(&CostModel::rendezvous_us) == 4 * m.rendezvous_us);
  CHECK(b->counts.sends == 8);
  CHECK(a->counts.sent_bytes == b->counts.sent_bytes);
  CHECK(a->us < b->us);
  CHECK(explain(*a, m).find("messages 4 x 1.000 = 4.000") == 0);
}

TEST_CASE("on a mesh the busiest rank is an inner one; a 1-wide torus copies") {
  Result<HaloBinder> b = HaloBinder::create(plan_halo_dimwise(moore2(8, 1), {0, 1}));
  REQUIRE(b);
  Result<Grid> mesh = Grid::create({3, 3}, {false, false});
  REQUIRE(mesh);
  Result<HaloCost> c = price_halo(*b, CostModel{}, *mesh);
  REQUIRE(c);
  CHECK(c->rank == 4);
  CHECK(c->counts.sends == 4);
  Result<Grid> thin = Grid::create({1, 1}, {true, true});
  REQUIRE(thin);
  c = price_halo(*b, CostModel{}, *thin);
  REQUIRE(c);
  CHECK(c->counts.sends == 0);
  CHECK(c->counts.self_bytes == (10 * 10 - 64) * 8);
  CHECK(c->us == doctest::Approx(CostModel{}.copy_us_per_byte * (10 * 10 - 64) * 8));
}

TEST_CASE("the price is the term table's: engine::price of the program's features, every term") {
  Result<HaloBinder> b = HaloBinder::create(plan_halo_dimwise(moore2(256, 3), {0, 1}));
  REQUIRE(b);
  CostModel m;
  m.copy_us_per_byte = 0.5;  // no self copies on this grid: prices nothing
  Result<Grid> torus = Grid::create({4, 4}, {true, true});
  REQUIRE(torus);
  Result<HaloCost> c = price_halo(*b, m, *torus);
  REQUIRE(c);
  Result<HaloProgram> p = lower_halo(*b, *torus, {0, 0});
  REQUIRE(p);
  const Features f = halo_features(*p, m.eager_limit_bytes);
  CHECK(f.messages == 4);
  CHECK(f.phases == 2);
  CHECK(f.wire_bytes == static_cast<double>(c->counts.sent_bytes));
  CHECK(f.rendezvous == 4);
  CHECK(f.copy_bytes == 0);
  CHECK(c->us == doctest::Approx(price(f, m).total_us()));
  for (std::size_t i = 0; i < kCostTerms.size(); ++i) CHECK(c->terms.term_us[i] == price(f, m).term_us[i]);
}

TEST_CASE("placement: the phase that leaves a node loads its link with the node's ranks' faces") {
  // 2-D dimwise 256x256, ghost 3, on 16x16 with 16 ranks per node (a node is one row): the
  // phase of dimension 0 leaves the node with 6144-byte faces, the phase of dimension 1 stays.
  Result<HaloBinder> b = HaloBinder::create(plan_halo_dimwise(moore2(256, 3), {0, 1}));
  REQUIRE(b);
  Result<Grid> torus = Grid::create({16, 16}, {true, true});
  REQUIRE(torus);
  Result<HaloProgram> p = lower_halo(*b, *torus, {5, 7});
  REQUIRE(p);
  const Features f = halo_features(*p, CostModel{}.eager_limit_bytes, &*torus, 16);
  CHECK(f.off_node_messages == 2);
  CHECK(f.off_node_bytes == 2 * 6144);
  CHECK(f.node_link_bytes == 16 * 2 * 6144);
  const Features none = halo_features(*p, CostModel{}.eager_limit_bytes);
  CHECK(none.node_link_bytes == 0);
  CHECK(none.messages == f.messages);
  // Priced only where the model has a price: the built-in model's total is unchanged.
  Result<HaloCost> with = price_halo(*b, CostModel{}, *torus, 16), without = price_halo(*b, CostModel{}, *torus);
  REQUIRE(with);
  REQUIRE(without);
  CHECK(with->us == without->us);
  CostModel linked;
  linked.node_link_us_per_byte = 0.001;
  Result<HaloCost> priced = price_halo(*b, linked, *torus, 16);
  REQUIRE(priced);
  CHECK(priced->us == doctest::Approx(without->us + 0.001 * 16 * 2 * 6144));
}

TEST_CASE("phase overlap: a phase costs the dearer of its on-node and off-node sends") {
  // 2-D 256x256, ghost 3 (6144-byte faces, 72-byte corners) on 8x8 with 16 ranks per node (a node
  // is two rows): a rank's peer in dimension 0 is off-node for half the ranks, in dimension 1 never.
  Result<HaloBinder> dim = HaloBinder::create(plan_halo_dimwise(moore2(256, 3), {0, 1}));
  Result<HaloBinder> direct = HaloBinder::create(plan_halo_direct(moore2(256, 3)));
  REQUIRE(dim);
  REQUIRE(direct);
  Result<Grid> torus = Grid::create({8, 8}, {true, true});
  REQUIRE(torus);
  CostModel m = CostModel::linear(0.5, 0.0002);
  m.phase_us = 0.3;
  m.off_node_beta_us_per_byte = 0.003;
  const auto side = [&](double messages, double bytes, double off_bytes) {
    return messages * m.alpha_us + bytes * m.beta_us_per_byte + off_bytes * m.off_node_beta_us_per_byte;
  };
  // direct, one phase: on-node 5 messages (2 faces + half of 2 faces and 4 corners), 18576 B;
  // off-node 3 messages, 6288 B. dimwise: phase 0 one face each side, phase 1 two 6288-byte faces on-node.
  const double direct_on = side(5, 18576, 0), direct_off = side(3, 6288, 6288);
  const double dim0_on = side(1, 6144, 0), dim0_off = side(1, 6144, 6144), dim1_on = side(2, 12576, 0);
  Result<HaloCost> a = price_halo(*direct, m, *torus, 16), b = price_halo(*dim, m, *torus, 16);
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(a->terms.counts.sides.size() == 1);
  CHECK(a->terms.counts.sides[0].off.messages == 3);
  CHECK(a->terms.counts.sides[0].on.wire_bytes == 18576);
  CHECK(a->terms.counts.sides[0].off.node_link_bytes == 16 * 6144 + 32 * 72);
  CHECK(a->us == doctest::Approx(m.phase_us + direct_on + direct_off));  // the sum: dimwise is cheaper
  CHECK(b->us == doctest::Approx(2 * m.phase_us + dim0_on + dim0_off + dim1_on));
  CHECK(b->us < a->us);
  m.phase_overlap = 1;  // concurrent sides: direct's on-node sends run under its off-node ones
  a = price_halo(*direct, m, *torus, 16);
  b = price_halo(*dim, m, *torus, 16);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->us == doctest::Approx(m.phase_us + direct_off));
  CHECK(b->us == doctest::Approx(2 * m.phase_us + dim0_off + dim1_on));
  CHECK(a->us < b->us);
  CHECK(a->terms.overlap_us == doctest::Approx(-direct_on));
  CHECK(explain(*a, m).find("overlap 1.00 x hidden = ") != std::string::npos);
  // Without a node map nothing is split: every send is on the node, and the sum stands.
  Result<HaloCost> one_node = price_halo(*direct, m, *torus);
  REQUIRE(one_node);
  CHECK(one_node->terms.overlap_us == 0);
  CHECK(one_node->us == doctest::Approx(m.phase_us + side(8, 4 * 6144 + 4 * 72, 0)));
}

}  // namespace cartplan::engine::halo
