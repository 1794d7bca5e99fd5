// Tests for PlanCache without MPI: what makes a new plan and what reuses one, the bound on its
// size, argument errors, and measuring mode's candidate list.
#include "backends/mpi/plan_cache.h"

#include <doctest/doctest.h>

#include <set>
#include <string>

#include "ir/json.h"
#include "tests/fixtures.h"

namespace cartplan::mpi {
namespace {

struct World {
  engine::Neighborhood nbh = testing::moore9();
  engine::Grid grid = *engine::Grid::create({4, 4}, {true, true});
  engine::Coords coords{1, 2};
  PlanCache plans{nbh, grid, coords};
};

std::shared_ptr<const BoundPlanEntry> plan(World& w, const Options& o, std::int64_t bytes, int root = -1,
                                           ir::Op op = ir::Op::kAlltoall) {
  std::shared_ptr<const BoundPlanEntry> e;
  const MpiStatus s = w.plans.plan_for(op, o, bytes, &e, root);
  REQUIRE_MESSAGE(s.ok(), s.message);
  REQUIRE(e);
  return e;
}

TEST_CASE("the same arguments reuse the entry; a size, price or root that differs makes another") {
  World w;
  Options o;
  auto a = plan(w, o, 64);
  CHECK(a->plan.op() == ir::Op::kAlltoall);
  CHECK(a->plan.num_blocks() == w.nbh.size());
  CHECK(plan(w, o, 64) == a);
  CHECK(w.plans.size() == 1);
  CHECK(plan(w, o, 65536) != a);  // auto: the size is part of the key
  Options dearer = o;
  dearer.model.alpha_us *= 2;
  CHECK(plan(w, dearer, 64) != a);  // every price is part of the key
  auto b0 = plan(w, o, 64, 0, ir::Op::kBcast), b5 = plan(w, o, 64, 5, ir::Op::kBcast);
  CHECK(b0 != b5);
  CHECK(plan(w, o, 64, 5, ir::Op::kBcast) == b5);
  CHECK(w.plans.size() == 5);
}

TEST_CASE("a fixed algorithm ignores the size") {
  World w;
  Options o;
  o.algo = engine::AlgoChoice::kDirect;
  auto a = plan(w, o, 8);
  CHECK(plan(w, o, 1 << 20) == a);
  CHECK(w.plans.size() == 1);
}

TEST_CASE("the cache stays bounded") {
  World w;
  Options o;
  for (std::int64_t bytes = 1; bytes <= 3 * static_cast<std::int64_t>(PlanCache::kMaxEntries); ++bytes) {
    plan(w, o, bytes);
    CHECK(w.plans.size() <= PlanCache::kMaxEntries);
  }
}

TEST_CASE("sizes and contiguity flags that do not fit the neighbourhood are our bug, not the user's") {
  World w;
  Options o;
  std::shared_ptr<const BoundPlanEntry> e;
  CHECK(w.plans.plan_for(ir::Op::kAlltoall, o, std::vector<std::int64_t>{8, 8}, &e).code == MPI_ERR_INTERN);
  const std::vector<std::int64_t> nine(9, 8);
  CHECK(w.plans.plan_for(ir::Op::kAlltoall, o, nine, &e, -1, std::vector<bool>(3, true)).code == MPI_ERR_INTERN);
  CHECK(w.plans.plan_for(ir::Op::kAlltoall, o, nine, &e).ok());
}

TEST_CASE("the optimizer predicts the lowering that runs: Info's trailer threshold counts and keys") {
  World w;
  Options o;
  Options trailed = o;
  trailed.trailer_min_bytes = 0;  // Info cartplan_trailer_min_bytes = 0: a trailer on every message
  CHECK(plan(w, trailed, 64) != plan(w, o, 64));  // the lowering is part of the key
  const std::vector<std::int64_t> sizes(9, 8000);
  std::vector<PlanCache::CandidateEntry> plain, with;
  REQUIRE(w.plans.candidate_entries(ir::Op::kAlltoall, o, sizes, {}, &plain).ok());
  REQUIRE(w.plans.candidate_entries(ir::Op::kAlltoall, trailed, sizes, {}, &with).ok());
  // Every message carries one byte more on the wire, so every candidate is predicted dearer.
  int matched = 0;
  for (const auto& c : with)
    for (const auto& p : plain)
      if (p.name == c.name) {
        CAPTURE(c.name);
        CHECK(c.predicted_us > p.predicted_us);
        ++matched;
      }
  CHECK(matched > 0);
}

TEST_CASE("local lowering keys (struct, homes) change neither the plan nor the predictions: ranks may differ in them") {
  World w;
  Options o;
  Options local = o;
  local.struct_min_bytes = -1;         // Info cartplan_struct_min_bytes=-1 on this rank only
  local.home_max_message_bytes = 0;    // Info cartplan_home_max_bytes=0 on this rank only
  for (std::int64_t bytes : {8, 800, 8000}) {
    CAPTURE(bytes);
    CHECK(plan(w, local, bytes) == plan(w, o, bytes));  // the same cache entry: the same plan
  }
  const std::vector<std::int64_t> sizes(9, 8000);
  std::vector<PlanCache::CandidateEntry> here, there;
  REQUIRE(w.plans.candidate_entries(ir::Op::kAlltoall, o, sizes, {}, &here).ok());
  REQUIRE(w.plans.candidate_entries(ir::Op::kAlltoall, local, sizes, {}, &there).ok());
  REQUIRE(here.size() == there.size());  // measuring mode times the same list everywhere
  for (std::size_t i = 0; i < here.size(); ++i) {
    CHECK(here[i].name == there[i].name);
    CHECK(here[i].predicted_us == there[i].predicted_us);
  }
}

TEST_CASE("candidates: the model's pick first, distinct plans, within range and bounded") {
  World w;
  Options o;
  const std::vector<std::int64_t> sizes(9, 4096);
  std::vector<PlanCache::CandidateEntry> cands;
  const MpiStatus s = w.plans.candidate_entries(ir::Op::kAlltoall, o, sizes, {}, &cands);
  REQUIRE_MESSAGE(s.ok(), s.message);
  REQUIRE(!cands.empty());
  CHECK(static_cast<int>(cands.size()) <= PlanCache::kMeasureMaxCandidates);
  double cheapest = cands.front().predicted_us;
  for (const auto& c : cands) cheapest = std::min(cheapest, c.predicted_us);
  std::set<std::string> texts;
  for (const auto& c : cands) {
    CHECK(c.predicted_us <= PlanCache::kMeasureRange * cheapest);
    REQUIRE(c.entry);
    texts.insert(ir::to_json_string(c.entry->plan));
  }
  CHECK(texts.size() == cands.size());
  // The first is what plan_for picks with the same sizes (the model's choice).
  std::shared_ptr<const BoundPlanEntry> picked;
  REQUIRE(w.plans.plan_for(ir::Op::kAlltoall, o, sizes, &picked).ok());
  CHECK(ir::to_json_string(picked->plan) == ir::to_json_string(cands.front().entry->plan));
}

}  // namespace
}  // namespace cartplan::mpi
