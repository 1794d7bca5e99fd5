// Property tests over random neighbourhoods (seed 000 Props. 3.2/3.3 and the mesh rules):
// every algorithm (direct, combining, log-round for alltoall, hybrid with a random direct set and
// the greedy one, the optimizer's pick) verifies, round-trips through JSON, and the simulator
// delivers every block with no write into a halo whose source is outside the mesh.
//
// CARTPLAN_PROPERTY_SEED=<n> and CARTPLAN_PROPERTY_CASES=<n> change the run (defaults 1, 1000).
#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>

#include "backends/sim/simulator.h"
#include "engine/hybrid.h"
#include "engine/loground.h"
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
  std::string text;  // for failure messages
};

Case random_case(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int d = pick(1, 5);
  const int distinct = pick(1, 10);
  std::vector<ir::Offset> offsets;
  for (int i = 0; i < distinct; ++i) {
    ir::Offset o(d);
    // Sparse offsets are common in stencils; dense ones stress the allgather tree.
    for (int& x : o) x = pick(0, 2) == 0 ? 0 : pick(-3, 3);
    offsets.push_back(o);
  }
  if (pick(0, 2) == 0) offsets.push_back(ir::Offset(d, 0));                 // the zero offset
  for (int dup = pick(0, 2); dup > 0; --dup) offsets.push_back(offsets[pick(0, distinct - 1)]);
  std::shuffle(offsets.begin(), offsets.end(), rng);

  std::vector<int> dims(d);
  std::vector<bool> periods(d);
  const int kind = pick(0, 2);  // all periodic, none, mixed
  for (int k = 0; k < d; ++k) {
    dims[k] = d <= 2 ? pick(1, 5) : pick(1, 3);
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


TEST_CASE("random neighbourhoods x ops x algorithms x tori/meshes: verify, JSON, simulate") {
  std::mt19937 rng(static_cast<unsigned>(env_or("CARTPLAN_PROPERTY_SEED", 1)));
  const long cases = env_or("CARTPLAN_PROPERTY_CASES", 1000);
  long simulated = 0, meshes = 0, with_dups = 0, with_zero = 0, hybrids = 0;
  std::bernoulli_distribution pick_bit(0.5);
  for (long c = 0; c < cases; ++c) {
    const Case k = random_case(rng);
    CAPTURE(c);
    CAPTURE(k.text);
    int sum_c = 0, sum_z = 0;
    for (int dim = 0; dim < k.nbh.ndims(); ++dim) sum_c += k.nbh.distinct_nonzero(dim);
    for (const ir::Offset& o : k.nbh.offsets()) sum_z += Neighborhood::nonzeros(o);
    std::set<ir::Offset> distinct(k.nbh.offsets().begin(), k.nbh.offsets().end());
    with_dups += static_cast<int>(distinct.size()) < k.nbh.size();
    with_zero += k.nbh.nonzero_count() < k.nbh.size();
    bool mesh = false;
    for (bool p : k.grid.periods()) mesh = mesh || !p;
    meshes += mesh;

    for (ir::Op op : {ir::Op::kAlltoall, ir::Op::kAllgather}) {
      const ir::Plan direct = engine::plan_direct(op, k.nbh);
      const ir::Plan combining = engine::plan_combining(op, k.nbh, k.order);
      // Props. 3.2 and 3.3.
      CHECK(combining.stats().rounds == sum_c);
      if (op == ir::Op::kAlltoall) CHECK(combining.stats().volume == sum_z);
      else CHECK(combining.stats().volume == testing::tree_edges(k.nbh, k.order));

      engine::PlanOptions options;
      options.block_bytes = std::uniform_int_distribution<int>(0, 64)(rng);
      // Alltoall with per-block sizes half of the time (faces and corners differ in v/w halos).
      if (op == ir::Op::kAlltoall && c % 2 == 1)
        for (int i = 0; i < k.nbh.size(); ++i)
          options.block_sizes.push_back(std::uniform_int_distribution<int>(0, 20000)(rng));
      const Result<ir::Plan> chosen = engine::make_plan(op, k.nbh, options);
      REQUIRE(chosen.ok());

      std::vector<const ir::Plan*> plans = {&direct, &combining, &*chosen};
      // Hybrids: a random direct set (at least one offset direct, at least one combined) and the
      // greedy one, with rounds = direct offsets + C of the combined rest.
      std::optional<ir::Plan> random_hybrid, greedy_hybrid;
      std::vector<ir::Offset> distinct_nonzero;
      for (const ir::Offset& o : distinct)
        if (!Neighborhood::is_zero(o)) distinct_nonzero.push_back(o);
      if (distinct_nonzero.size() >= 2) {
        std::vector<ir::Offset> chosen_direct, rest;
        for (const ir::Offset& o : distinct_nonzero) (pick_bit(rng) ? chosen_direct : rest).push_back(o);
        if (chosen_direct.empty()) chosen_direct.push_back(rest.back()), rest.pop_back();
        if (rest.empty()) rest.push_back(chosen_direct.back()), chosen_direct.pop_back();
        random_hybrid = engine::plan_hybrid(op, k.nbh, k.order, chosen_direct);
        const Neighborhood rest_nbh = *Neighborhood::create(k.nbh.ndims(), rest);
        int rest_c = 0;
        for (int dim = 0; dim < k.nbh.ndims(); ++dim) rest_c += rest_nbh.distinct_nonzero(dim);
        CHECK(random_hybrid->stats().rounds == static_cast<int>(chosen_direct.size()) + rest_c);
        plans.push_back(&*random_hybrid);
        const std::optional<engine::HybridChoice> g = engine::search_hybrid(
            op, k.nbh, k.order, options.block_sizes.empty() ? std::vector<std::int64_t>{options.block_bytes} : options.block_sizes,
            options.model, k.grid);
        REQUIRE(g.has_value());
        CHECK(!g->direct.empty());
        CHECK(g->direct.size() < distinct_nonzero.size());
        greedy_hybrid = g->plan;
        plans.push_back(&*greedy_hybrid);
        ++hybrids;
      }
      // Log-round routing in every dimension (even where it does not pay): Bruck hops of blocks
      // (alltoall) or positions (allgather) on tori and meshes, with the round count of the formula.
      std::optional<ir::Plan> log_round;
      if (engine::supports_log_rounds(op)) {
        log_round = engine::plan_log_round(op, k.nbh, k.order, std::vector<bool>(k.nbh.ndims(), true));
        int rounds = 0;
        for (int dim = 0; dim < k.nbh.ndims(); ++dim) rounds += engine::log_rounds(k.nbh, dim);
        CHECK(log_round->stats().rounds == rounds);
        // Allgather reaches every position of combining's tree, plus partial sums that are no
        // value's position (e.g. 1 on the way to 5).
        if (op == ir::Op::kAllgather) CHECK(log_round->stats().volume >= combining.stats().volume);
        plans.push_back(&*log_round);
      }
      for (const ir::Plan* plan : plans) {
        CAPTURE(ir::to_string(plan->op()));
        CAPTURE(ir::to_string(plan->algorithm()));
        const std::vector<std::string> errors = ir::verify(*plan);
        CHECK_MESSAGE(errors.empty(), (errors.empty() ? "" : errors.front()));

        const std::string json = ir::to_json_string(*plan);
        const Result<ir::Plan> back = ir::plan_from_json_string(json);
        REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : back.error()));
        CHECK(*back == *plan);
        CHECK(ir::to_json_string(*back) == json);

        sim::SimOptions so;
        // Per-block sizes for alltoall (v-style), one size for allgather.
        if (op == ir::Op::kAlltoall && c % 2 == 0) {
          so.block_bytes.clear();
          for (int i = 0; i < k.nbh.size(); ++i) so.block_bytes.push_back(std::uniform_int_distribution<int>(0, 9)(rng));
        } else {
          so.block_bytes = {std::uniform_int_distribution<int>(1, 9)(rng)};
        }
        const Result<sim::SimReport> r = sim::simulate(*plan, k.grid, so);
        REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error()));
        CHECK_MESSAGE(r->ok, (r->errors.empty() ? "" : r->errors.front()));
        ++simulated;
      }
    }
  }
  // The generator really covers what the properties are about.
  CHECK(simulated == cases * 8 + 2 * hybrids);  // per op: direct, combining, auto, log-round
  CHECK(hybrids > cases);  // both ops, most cases have two distinct non-zero offsets
  CHECK(meshes > cases / 2);
  CHECK(with_dups > cases / 4);
  CHECK(with_zero > cases / 5);
  MESSAGE("simulated " << simulated << " plans; " << meshes << " meshes, " << with_dups << " with duplicates, "
                       << with_zero << " with the zero offset, " << hybrids << " x 2 hybrids");
}

}  // namespace
}  // namespace cartplan
