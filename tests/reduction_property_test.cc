// Property tests of the reductions and rooted ops over random neighbourhoods (duplicates, the
// zero offset, d = 1..3, periodic, non-periodic and mixed grids): every algorithm verifies,
// round-trips through JSON (schema 2), and the simulator computes exactly the required sums
// (rank-dependent integers, so double counting or a missing or foreign contribution fails),
// including with every possible root for the rooted ops.
//
// CARTPLAN_PROPERTY_SEED=<n> and CARTPLAN_PROPERTY_CASES=<n> change the run (defaults 1, 300).
#include <doctest/doctest.h>

#include <cstdlib>
#include <random>
#include <set>
#include <string>

#include "backends/sim/simulator.h"
#include "engine/optimizer.h"
#include "engine/planner.h"
#include "ir/json.h"
#include "ir/verify.h"
#include "tests/fixtures.h"

namespace cartplan {
namespace {

using engine::Neighborhood;

long env_or(const char* name, long fallback) {
  const char* v = std::getenv(name);
  return v ? std::strtol(v, nullptr, 10) : fallback;
}

struct Case {
  Neighborhood nbh;
  engine::Grid grid;
  std::vector<int> order;
  std::string text;
};

Case random_case(std::mt19937& rng, bool product) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int d = pick(1, 3);
  std::vector<ir::Offset> offsets;
  if (product) {  // S_0 x ... x S_{d-1}
    std::vector<std::vector<int>> sets(d);
    for (auto& s : sets) {
      std::set<int> v;
      for (int n = pick(1, 3); n > 0; --n) v.insert(pick(-2, 2));
      s.assign(v.begin(), v.end());
    }
    offsets.push_back({});
    for (int k = 0; k < d; ++k) {
      std::vector<ir::Offset> next;
      for (const ir::Offset& o : offsets)
        for (int c : sets[k]) {
          ir::Offset n = o;
          n.push_back(c);
          next.push_back(n);
        }
      offsets = next;
    }
  } else {
    const int distinct = pick(1, 8);
    for (int i = 0; i < distinct; ++i) {
      ir::Offset o(d);
      for (int& x : o) x = pick(0, 2) == 0 ? 0 : pick(-3, 3);
      offsets.push_back(o);
    }
    if (pick(0, 2) == 0) offsets.push_back(ir::Offset(d, 0));
    for (int dup = pick(0, 2); dup > 0; --dup) offsets.push_back(offsets[pick(0, distinct - 1)]);
  }
  std::shuffle(offsets.begin(), offsets.end(), rng);

  std::vector<int> dims(d);
  std::vector<bool> periods(d);
  const int kind = pick(0, 2);  // all periodic, none, mixed
  for (int k = 0; k < d; ++k) {
    dims[k] = d == 1 ? pick(1, 7) : d == 2 ? pick(1, 5) : pick(1, 3);
    periods[k] = kind == 0 ? true : kind == 1 ? false : pick(0, 1) == 1;
  }
  std::vector<int> order = engine::natural_dim_order(d);
  std::shuffle(order.begin(), order.end(), rng);

  std::string text = "offsets:";
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    for (int k = 0; k < d; ++k) text += (k ? "," : "") + std::to_string(offsets[i][k]);
    text += i + 1 < offsets.size() ? ";" : "";
  }
  text += " dims";
  for (int k = 0; k < d; ++k) text += " " + std::to_string(dims[k]) + (periods[k] ? "p" : "m");
  text += " order";
  for (int k : order) text += " " + std::to_string(k);
  return Case{*Neighborhood::create(d, offsets), *engine::Grid::create(dims, periods), order, text};
}

constexpr ir::Op kOps[] = {ir::Op::kAllreduce, ir::Op::kReduceScatter, ir::Op::kBcast,
                           ir::Op::kGather,    ir::Op::kScatter,       ir::Op::kReduce};

TEST_CASE("random neighbourhoods x reduction/rooted ops x algorithms x tori/meshes") {
  std::mt19937 rng(static_cast<unsigned>(env_or("CARTPLAN_PROPERTY_SEED", 1)));
  const long cases = env_or("CARTPLAN_PROPERTY_CASES", 300);
  long simulated = 0, meshes = 0, with_dups = 0, with_zero = 0, products = 0, roots = 0;
  for (long c = 0; c < cases; ++c) {
    const Case k = random_case(rng, c % 3 == 0);
    CAPTURE(c);
    CAPTURE(k.text);
    int sum_c = 0, sum_z = 0;
    for (int dim = 0; dim < k.nbh.ndims(); ++dim) sum_c += k.nbh.distinct_nonzero(dim);
    for (const ir::Offset& o : k.nbh.offsets()) sum_z += Neighborhood::nonzeros(o);
    std::set<ir::Offset> distinct(k.nbh.offsets().begin(), k.nbh.offsets().end());
    with_dups += static_cast<int>(distinct.size()) < k.nbh.size();
    with_zero += k.nbh.nonzero_count() < k.nbh.size();
    products += engine::is_product(k.nbh);
    bool mesh = false;
    for (bool p : k.grid.periods()) mesh = mesh || !p;
    meshes += mesh;

    for (ir::Op op : kOps) {
      CAPTURE(ir::to_string(op));
      const ir::Plan direct = engine::plan_direct(op, k.nbh);
      const ir::Plan combining = engine::plan_combining(op, k.nbh, k.order);
      CHECK(combining.stats().rounds == sum_c);
      CHECK(direct.stats().rounds == static_cast<int>(distinct.size()) - (k.nbh.nonzero_count() < k.nbh.size()));
      if (ir::is_reduction(op)) {
        if (op != ir::Op::kReduceScatter && engine::is_product(k.nbh)) CHECK(combining.stats().volume == sum_c);
        else CHECK(combining.stats().volume <= sum_z);
      }
      engine::PlanOptions options;
      options.block_bytes = 8 * std::uniform_int_distribution<int>(0, 8)(rng);
      const Result<ir::Plan> chosen = engine::make_plan(op, k.nbh, options);
      REQUIRE(chosen.ok());

      for (const ir::Plan* plan : {&direct, &combining, &*chosen}) {
        CAPTURE(ir::to_string(plan->algorithm()));
        const std::vector<std::string> errors = ir::verify(*plan);
        CHECK_MESSAGE(errors.empty(), (errors.empty() ? "" : errors.front()));

        const std::string json = ir::to_json_string(*plan);
        const bool v3 = plan->kind() == ir::PlanKind::kLogRound || plan->kind() == ir::PlanKind::kHybrid;
        CHECK(json.find(v3 ? ir::kPlanSchemaV3 : ir::kPlanSchemaV2) != std::string::npos);
        const Result<ir::Plan> back = ir::plan_from_json_string(json);
        REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : back.error()));
        CHECK(*back == *plan);
        CHECK(ir::to_json_string(*back) == json);

        sim::SimOptions so;
        so.block_bytes = {8 * std::uniform_int_distribution<int>(1, 3)(rng)};
        if (op == ir::Op::kScatter && c % 2 == 0) {  // v-style blocks
          so.block_bytes.clear();
          for (int i = 0; i < k.nbh.size(); ++i) so.block_bytes.push_back(std::uniform_int_distribution<int>(0, 9)(rng));
        }
        so.values = c % 4 == 1 ? sim::SimOptions::Values::kDouble : sim::SimOptions::Values::kInt64;
        // Rooted ops: every root on small grids, a random one otherwise.
        std::vector<int> rs = {-1};
        if (ir::is_rooted(op)) {
          rs.clear();
          if (k.grid.size() <= 12) {
            for (int r = 0; r < k.grid.size(); ++r) rs.push_back(r);
          } else {
            rs.push_back(std::uniform_int_distribution<int>(0, k.grid.size() - 1)(rng));
          }
        }
        for (int root : rs) {
          CAPTURE(root);
          so.root = root;
          const Result<sim::SimReport> r = sim::simulate(*plan, k.grid, so);
          REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error()));
          CHECK_MESSAGE(r->ok, (r->errors.empty() ? "" : r->errors.front()));
          ++simulated;
          roots += root >= 0;
        }
      }
    }
  }
  CHECK(meshes > cases / 2);
  CHECK(with_dups > cases / 5);
  CHECK(with_zero > cases / 5);
  CHECK(products >= cases / 3);
  CHECK(roots > cases);
  MESSAGE("simulated " << simulated << " plans (" << roots << " with a root); " << meshes << " meshes, " << with_dups
                       << " with duplicates, " << with_zero << " with the zero offset, " << products << " products");
}

}  // namespace
}  // namespace cartplan
