// Tests of uneven decompositions: block extents, plan_block (engine/halo/block_plan.h), and that
// every rank's own plan in the shared choice matches its neighbours' message for message, part
// for part, for every algorithm.
#include "engine/halo/uneven.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>

#include "engine/halo/block_plan.h"
#include "engine/halo/choose.h"
#include "ir/halo/verify.h"

namespace cartplan::engine::halo {

namespace ih = ir::halo;

TEST_CASE("block_extents: the first global % parts blocks one cell more") {
  CHECK(*block_extents(100, 3) == std::vector<int>{34, 33, 33});
  CHECK(*block_extents(8, 4) == std::vector<int>{2, 2, 2, 2});
  CHECK(*block_extents(7, 7) == std::vector<int>(7, 1));
  CHECK(block_extents(3, 4).error() == "3 cells cut into 4 blocks leave a block empty (every interior extent is at least 1)");
  CHECK(block_extents(5, 0).error() == "cannot cut 5 cells into 0 blocks");
  CHECK(!block_extents(std::int64_t{1} << 40, 2));
  CHECK(interior_at({{3, 2}, {5, 4, 4}}, {1, 0}) == std::vector<int>{2, 5});
}

namespace {

struct Case {
  std::vector<int> dims;
  std::vector<bool> periods;
  std::vector<std::vector<int>> extents;  // per dimension, per coordinate
  int ghost = 1;
  std::string spec;
  std::optional<std::vector<int>> dim_order;  // nullopt: the choice's
};

std::vector<int> largest(const Case& c) { return largest_blocks(c.extents); }

HaloDescription own(const Case& c, const std::vector<int>& coords) {
  const int d = static_cast<int>(c.dims.size());
  Result<HaloDescription> h = describe_halo(
      ih::ArrayShape{d, interior_at(c.extents, coords), std::vector<int>(d, c.ghost), std::vector<int>(d, c.ghost), 8, ih::Order::kC}, c.spec, std::nullopt);
  REQUIRE_MESSAGE(h, h.error());
  return *h;
}

// Every coordinate vector of the grid, in row-major order.
std::vector<std::vector<int>> all_coords(const std::vector<int>& dims) {
  std::vector<std::vector<int>> out{std::vector<int>(dims.size(), 0)};
  for (std::size_t k = dims.size(); k-- > 0;) {
    std::vector<std::vector<int>> next;
    for (const std::vector<int>& c : out)
      for (int x = 0; x < dims[k]; ++x) {
        std::vector<int> y = c;
        y[k] = x;
        next.push_back(y);
      }
    out = std::move(next);
  }
  return out;
}

// The neighbour at coords + shift, or nullopt outside a mesh.
std::optional<std::vector<int>> neighbour(const Case& c, std::vector<int> x, const ir::Offset& shift) {
  for (std::size_t k = 0; k < x.size(); ++k) {
    x[k] += shift[k];
    if (x[k] < 0 || x[k] >= c.dims[k]) {
      if (!c.periods[k]) return std::nullopt;
      x[k] = (x[k] + c.dims[k]) % c.dims[k];
    }
  }
  return x;
}

// Plans every rank with `algo` in the shared choice and checks that each message's parts have the
// extents its receiver's plan expects, and that every rank's plan has one signature.
void check_matching(const Case& c, HaloAlgoChoice algo) {
  HaloPlanOptions o;
  o.algo = algo;
  o.dim_order = c.dim_order;
  o.choice_interior = largest(c);
  std::map<std::vector<int>, ih::HaloPlan> plans;
  for (const std::vector<int>& x : all_coords(c.dims)) {
    Result<ih::HaloPlan> p = make_halo_plan(own(c, x), o);
    REQUIRE_MESSAGE(p, p.error());
    CHECK(ih::verify(*p).empty());
    CHECK(p->array().interior == interior_at(c.extents, x));
    plans.emplace(x, std::move(*p));
  }
  const std::string signature = plan_signature(plans.begin()->second);
  for (const auto& [x, plan] : plans) {
    CHECK(plan_signature(plan) == signature);
    for (std::size_t f = 0; f < plan.phases().size(); ++f) {
      for (std::size_t m = 0; m < plan.phases()[f].messages.size(); ++m) {
        const ih::Message& sent = plan.phases()[f].messages[m];
        std::optional<std::vector<int>> to = neighbour(c, x, sent.shift);
        if (!to) continue;
        const ih::Message& got = plans.at(*to).phases()[f].messages[m];
        REQUIRE(got.parts.size() == sent.parts.size());
        for (std::size_t q = 0; q < sent.parts.size(); ++q)
          CHECK_MESSAGE(got.parts[q].extent == sent.parts[q].extent, "phase ", f, " message ", m, " part ", q, " from ", ir::to_string(x));
      }
    }
  }
}

const HaloAlgoChoice kAlgos[] = {HaloAlgoChoice::kDirect, HaloAlgoChoice::kCombining, HaloAlgoChoice::kDimwise, HaloAlgoChoice::kSplit,
                                 HaloAlgoChoice::kHybrid};

}  // namespace

TEST_CASE("plan_block: the rank's own interior, planned in the choice priced on the largest blocks") {
  const Case c{{3, 2}, {true, false}, {{4, 3, 3}, {5, 4}}, 1, "moore:d=2,r=1", std::nullopt};
  CHECK(largest_blocks(c.extents) == std::vector<int>{4, 5});
  CHECK(largest_blocks({{2, 7, 7}, {1}, {3, 3}}) == std::vector<int>{7, 1, 3});
  Result<Grid> g = Grid::create(c.dims, c.periods);
  REQUIRE(g);
  HaloDescription like = own(c, {0, 0});
  like.array.interior = {1, 1};  // ignored: every rank's interior comes from the extents
  for (HaloAlgoChoice algo : {HaloAlgoChoice::kAuto, HaloAlgoChoice::kDirect, HaloAlgoChoice::kSplit}) {
    for (const std::optional<Grid>& grid : {std::optional<Grid>{}, std::optional<Grid>(*g)}) {
      like.grid = grid;
      HaloPlanOptions o;
      o.algo = algo;
      o.choice_interior = std::vector<int>{9};  // replaced by the largest blocks (make_halo_plan refuses this one)
      HaloPlanOptions shared = o;
      shared.choice_interior = std::vector<int>{4, 5};
      for (const std::vector<int>& x : all_coords(c.dims)) {
        CAPTURE(ir::to_string(x));
        Result<ih::HaloPlan> p = plan_block(like, c.extents, x, o);
        REQUIRE_MESSAGE(p, p.error());
        CHECK(p->array().interior == interior_at(c.extents, x));
        HaloDescription mine = own(c, x);
        mine.grid = grid;
        Result<ih::HaloPlan> want = make_halo_plan(mine, shared);
        REQUIRE(want);
        CHECK(*p == *want);
      }
    }
  }
  like.grid = *g;
  CHECK(plan_block(like, {{4, 3, 3}}, {0, 0}, {}).error() == "extents for 1 dimensions; the array has 2");
  CHECK(plan_block(like, c.extents, {0}, {}).error() == "coordinates (0) for 1 dimensions; the array has 2");
  CHECK(plan_block(like, {{4, 3, 3}, {}}, {0, 0}, {}).error() == "extents[1] has no blocks");
  CHECK(plan_block(like, {{4, 3}, {5, 4}}, {0, 0}, {}).error() == "extents[0] has 2 blocks; the grid has 3 processes in dimension 0");
  CHECK(plan_block(like, c.extents, {1, 2}, {}).error() == "coordinate 2 of dimension 1 is outside its 2 blocks");
  CHECK(plan_block(like, c.extents, {0, -1}, {}).error() == "coordinate -1 of dimension 1 is outside its 2 blocks");
  like.array.ghost_hi = {2, 1};  // wider than the 1-cell third block of dimension 0
  CHECK(plan_block(like, {{4, 3, 1}, {5, 4}}, {2, 0}, {}).error().rfind("ghost_hi[0] = 2 is wider", 0) == 0);
  CHECK(plan_block(like, {{4, 3, 1}, {5, 4}}, {1, 0}, {}));
}

TEST_CASE("every rank's own plan matches its neighbours' part for part (block decompositions, every algorithm)") {
  const Case cases[] = {
      {{3, 2}, {true, true}, {{4, 3, 3}, {5, 4}}, 1, "moore:d=2,r=1", std::nullopt},
      {{3, 2}, {false, true}, {{4, 3, 3}, {5, 4}}, 2, "moore:d=2,r=1", std::nullopt},
      {{2, 3, 2}, {true, false, true}, {{3, 2}, {4, 4, 3}, {2, 3}}, 1, "moore:d=3,r=1", std::nullopt},
      {{3, 3}, {true, true}, {{4, 3, 3}, {3, 3, 2}}, 1, "offsets:1,1;-1,-1;1,0;-1,0", std::nullopt},
      {{4}, {true}, {{3, 3, 2, 2}}, 2, "moore:d=1,r=1", std::nullopt},
  };
  for (const Case& c : cases) {
    for (HaloAlgoChoice algo : kAlgos) {
      if (algo == HaloAlgoChoice::kDimwise && c.spec.rfind("offsets", 0) == 0) continue;  // not prefix-closed
      CAPTURE(c.spec);
      CAPTURE(static_cast<int>(algo));
      check_matching(c, algo);
    }
  }
}

// Split cuts a temp's cells into boxes at 0, ghost_hi, n - ghost_lo and n of the later dimensions:
// over 3 and 2 cells (ghost 1) or 4 and 3 (ghost 2) the cut differs, so ranks at different
// coordinates send some messages in more or fewer parts; neighbours still match.
TEST_CASE("split: the parts of a message differ between coordinates, never between neighbours") {
  const Case b3{{2, 2, 2}, {true, true, true}, {{3, 3}, {3, 2}, {2, 2}}, 1, "offsets:1,1,0;1,-1,0;1,0,1", std::vector<int>{0, 1, 2}};
  const Case a2{{2, 2}, {true, false}, {{4, 4}, {4, 3}}, 2, "offsets:1,1;1,-1", std::vector<int>{0, 1}};
  for (const Case& c : {b3, a2}) {
    CAPTURE(c.spec);
    check_matching(c, HaloAlgoChoice::kSplit);
    HaloPlanOptions o;
    o.algo = HaloAlgoChoice::kSplit;
    o.dim_order = c.dim_order;
    o.choice_interior = largest(c);
    std::vector<int> low(c.dims.size(), 0), high = low;
    high[1] = 1;
    Result<ih::HaloPlan> p = make_halo_plan(own(c, low), o), q = make_halo_plan(own(c, high), o);
    REQUIRE(p);
    REQUIRE(q);
    std::size_t parts_p = 0, parts_q = 0;
    for (const ih::Phase& f : p->phases())
      for (const ih::Message& m : f.messages) parts_p += m.parts.size();
    for (const ih::Phase& f : q->phases())
      for (const ih::Message& m : f.messages) parts_q += m.parts.size();
    CHECK(parts_p != parts_q);  // the case this test is about: the signature must not count parts
  }
}

TEST_CASE("random block decompositions: auto's own plans match on every rank") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    Case c;
    const int d = 1 + static_cast<int>(rng() % 3);
    c.ghost = 1 + static_cast<int>(rng() % 2);
    c.spec = rng() % 2 ? "moore:d=" + std::to_string(d) + ",r=1" : "vonneumann:d=" + std::to_string(d) + ",r=1";
    for (int k = 0; k < d; ++k) {
      c.dims.push_back(1 + static_cast<int>(rng() % 3));
      c.periods.push_back(rng() % 2 == 0);
      Result<std::vector<int>> e = block_extents(c.dims.back() * 2 + static_cast<int>(rng() % 5), c.dims.back());
      REQUIRE(e);
      c.extents.push_back(*e);
    }
    CAPTURE(trial);
    check_matching(c, HaloAlgoChoice::kAuto);
  }
}

TEST_CASE("the shared choice: every rank picks the algorithm and order priced on choice_interior") {
  Result<HaloDescription> small = describe_halo(ih::ArrayShape{2, {3, 40}, {1, 1}, {1, 1}, 8, ih::Order::kC}, "moore:d=2,r=1", std::nullopt);
  REQUIRE(small);
  HaloPlanOptions o;
  o.choice_interior = std::vector<int>{4, 40};
  Result<std::vector<HaloCandidate>> mine = halo_candidates(*small, o);
  HaloDescription shared = *small;
  shared.array.interior = {4, 40};
  Result<std::vector<HaloCandidate>> theirs = halo_candidates(shared, HaloPlanOptions{});
  REQUIRE(mine);
  REQUIRE(theirs);
  REQUIRE(mine->size() == theirs->size());
  for (std::size_t i = 0; i < mine->size(); ++i) {
    CHECK((*mine)[i].cost.us == (*theirs)[i].cost.us);
    CHECK(plan_signature((*mine)[i].plan) == plan_signature((*theirs)[i].plan));
    CHECK((*mine)[i].plan.array().interior == std::vector<int>{3, 40});
  }
  o.choice_interior = std::vector<int>{4};
  CHECK(halo_candidates(*small, o).error() == "choice_interior has 1 extents; the array has 2 dimensions");
  o.choice_interior = std::vector<int>{4, 0};
  CHECK(halo_candidates(*small, o).error().rfind("choice_interior: ", 0) == 0);
}

TEST_CASE("plan_signature: the same for interiors alone differing, not for another algorithm or order") {
  auto plan = [](std::vector<int> n, HaloAlgoChoice algo, std::vector<int> order) {
    Result<HaloDescription> h = describe_halo(ih::ArrayShape{2, std::move(n), {1, 1}, {1, 1}, 8, ih::Order::kC}, "moore:d=2,r=1", std::nullopt);
    REQUIRE(h);
    HaloPlanOptions o;
    o.algo = algo;
    o.dim_order = std::move(order);
    Result<ih::HaloPlan> p = make_halo_plan(*h, o);
    REQUIRE(p);
    return plan_signature(*p);
  };
  CHECK(plan({5, 6}, HaloAlgoChoice::kDimwise, {0, 1}) == plan({4, 7}, HaloAlgoChoice::kDimwise, {0, 1}));
  CHECK(plan({5, 6}, HaloAlgoChoice::kDimwise, {0, 1}) != plan({5, 6}, HaloAlgoChoice::kDimwise, {1, 0}));
  CHECK(plan({5, 6}, HaloAlgoChoice::kDimwise, {0, 1}) != plan({5, 6}, HaloAlgoChoice::kDirect, {0, 1}));
}

}  // namespace cartplan::engine::halo
