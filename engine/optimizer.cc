// The optimizer: builds the candidate plans, predicts each with the cost model and picks the
// cheapest.
#include "engine/optimizer.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <functional>

#include "engine/hybrid.h"
#include "engine/loground.h"
#include "engine/order_search.h"
#include "engine/planner.h"

namespace cartplan::engine {
namespace {

Result<bool> check_model(const CostModel& m) {
  if (std::string e = cost_model_error(m); !e.empty()) return fail("the cost model's " + e);
  return true;
}

// The sizes predictions use: options.block_sizes, or block_bytes for every block.
std::vector<std::int64_t> sizes_of(const PlanOptions& o) {
  return o.block_sizes.empty() ? std::vector<std::int64_t>{o.block_bytes} : o.block_sizes;
}

// How predictions lower: the options' block layout and lowering.
PredictOptions predict_options(const PlanOptions& o) {
  PredictOptions po;
  po.contiguous = o.block_contiguous;
  po.lowering = o.lowering;
  po.placement = o.placement;
  return po;
}

// A plan's prediction for the options' blocks, grid, model and lowering.
CostBreakdown price(const ir::Plan& plan, const PlanOptions& o) {
  return predict(plan, sizes_of(o), o.model, o.grid, predict_options(o));
}

}  // namespace

double predict_us(const ir::Plan& plan, std::int64_t block_bytes, const CostModel& model, const std::optional<Grid>& grid) {
  return predict(plan, {block_bytes}, model, grid).total_us();
}

CombiningMetrics combining_metrics(ir::Op op, const Neighborhood& nbh, const std::vector<int>& dim_order) {
  // Building the plan is O(t d) and keeps one source of truth for C and V.
  const ir::Stats s = plan_combining(op, nbh, dim_order).stats();
  return {s.t, s.rounds, s.volume};
}

std::optional<double> cutoff_ratio(const CombiningMetrics& m) {
  if (m.V <= m.t) return std::nullopt;
  return static_cast<double>(m.t - m.C) / static_cast<double>(m.V - m.t);
}

std::optional<double> cutoff_bytes(const CombiningMetrics& m, const CostModel& model) {
  const std::optional<double> r = cutoff_ratio(m);
  if (!r || model.beta_us_per_byte <= 0) return std::nullopt;
  return model.alpha_us / model.beta_us_per_byte * *r;
}

namespace {

// The options' own errors: block sizes and flags, the model, the grid's dimension.
Result<bool> check_plan_options(const Neighborhood& nbh, const PlanOptions& options) {
  if (options.block_bytes < 0) return fail("block size " + std::to_string(options.block_bytes) + " is negative");
  if (!options.block_sizes.empty()) {
    if (static_cast<int>(options.block_sizes.size()) != nbh.size())
      return fail("block sizes: got " + std::to_string(options.block_sizes.size()) + ", expected " +
                  std::to_string(nbh.size()) + " (one per offset)");
    for (std::size_t i = 0; i < options.block_sizes.size(); ++i)
      if (options.block_sizes[i] < 0)
        return fail("block " + std::to_string(i) + " has negative size " + std::to_string(options.block_sizes[i]));
  }
  if (options.block_contiguous.size() > 1 && static_cast<int>(options.block_contiguous.size()) != nbh.size())
    return fail("block contiguity: got " + std::to_string(options.block_contiguous.size()) + " flags, expected 1 or " +
                std::to_string(nbh.size()) + " (one per offset)");
  if (Result<bool> ok = check_model(options.model); !ok) return ok;
  if (options.grid && options.grid->ndims() != nbh.ndims())
    return fail("the grid has " + std::to_string(options.grid->ndims()) + " dimensions, the neighbourhood " +
                std::to_string(nbh.ndims()));
  return true;
}

}  // namespace

Result<std::vector<Candidate>> plan_candidates(ir::Op op, const Neighborhood& nbh, const PlanOptions& options) {
  if (Result<bool> ok = check_plan_options(nbh, options); !ok) return fail(ok.error());
  std::vector<int> order = auto_dim_order(op, nbh);
  if (options.dim_order) {
    Result<std::vector<int>> checked = check_dim_order(*options.dim_order, nbh.ndims());
    if (!checked) return fail(checked.error());
    order = *checked;
  }
  const std::vector<std::int64_t> sizes = sizes_of(options);
  std::vector<Candidate> out;
  auto add = [&](std::string name, ir::Plan plan, double required_gain) {
    CostBreakdown cost = price(plan, options);
    out.push_back(Candidate{std::move(name), std::move(plan), cost, required_gain});
  };
  // Auto with no requested order also tries every dimension order (d <= 5) and adds the
  // cheapest as "<name>, best order" when it beats `base`, the plan in the auto order
  // (increasing C_k; reversed for reductions). Not for alltoall (and scatter, which runs its
  // plans): there every order has the same rounds and entries, a block's hops are fixed by its
  // offset, and orders differ only in where the lowering places blocks (which hops alias the
  // caller's blocks, which final entries a struct receive scatters). The model does not price
  // that well enough to choose by it: where auto picked a searched alltoall order it ran slower
  // than predicted (docs/measurements.md, "The choice rule").
  const bool search = options.algo == AlgoChoice::kAuto && !options.dim_order && ir::symmetric_op(op) != ir::Op::kAlltoall;
  auto add_best_order = [&](const std::string& name, const Candidate& base,
                            const std::function<ir::Plan(const std::vector<int>&)>& build) {
    if (!search) return;
    std::optional<OrderChoice> best =
        cheapest_order(nbh.ndims(), build, sizes, options.model, options.grid, predict_options(options));
    if (best && best->order != order && clearly_cheaper(best->cost.total_us(), base.cost.total_us()))
      out.push_back(Candidate{name + ", best order", std::move(best->plan), best->cost, kRefinementGain});
  };
  const bool all = options.algo == AlgoChoice::kAuto;
  if (all || options.algo == AlgoChoice::kDirect) add("direct", plan_direct(op, nbh), 0);
  if (all || options.algo == AlgoChoice::kCombining) {
    add("combining", plan_combining(op, nbh, order), 0);
    const Candidate base = out.back();
    add_best_order("combining", base, [&](const std::vector<int>& o) { return plan_combining(op, nbh, o); });
  }
  if (options.algo == AlgoChoice::kLogRound && !supports_log_rounds(op))
    return fail(std::string("log-round plans exist for alltoall, allgather, scatter, bcast and gather only, not ") +
                ir::to_string(op));
  if (supports_log_rounds(op) && (all || options.algo == AlgoChoice::kLogRound)) {
    const std::vector<bool> log = log_round_dims(nbh);
    // Auto considers it only where it differs from combining; asked for, it is always built.
    if (options.algo == AlgoChoice::kLogRound || std::find(log.begin(), log.end(), true) != log.end()) {
      add("log-round", plan_log_round(op, nbh, order, log), kRefinementGain);
      const Candidate base = out.back();
      add_best_order("log-round", base, [&](const std::vector<int>& o) { return plan_log_round(op, nbh, o, log); });
    }
  }
  if (options.algo == AlgoChoice::kHybrid && !supports_hybrid(op))
    return fail(std::string("hybrid plans exist for alltoall, allgather, scatter, bcast and gather only, not ") +
                ir::to_string(op));
  if (supports_hybrid(op) && (all || options.algo == AlgoChoice::kHybrid)) {
    // The greedy direct set for these block sizes, combining the rest in `order`.
    std::optional<HybridChoice> h =
        search_hybrid(op, nbh, order, sizes, options.model, options.grid, predict_options(options));
    if (h) {
      out.push_back(Candidate{"hybrid", std::move(h->plan), h->cost, kHybridGain});
    } else if (options.algo == AlgoChoice::kHybrid) {
      return fail("no hybrid plan: it needs two distinct non-zero offsets, one sent directly and one combined (above " +
                  std::to_string(kMaxHybridUnits) +
                  " offsets, two with different numbers of non-zero coordinates)");
    }
  }
  assert(!out.empty());
  return out;
}

Result<ir::Plan> make_plan(ir::Op op, const Neighborhood& nbh, const PlanOptions& options) {
  Result<std::vector<Candidate>> cands = plan_candidates(op, nbh, options);
  if (!cands) return fail(cands.error());
  return with_choice_stats(op, nbh, options, (*cands)[pick_candidate(*cands)].plan);
}

std::size_t pick_candidate(const std::vector<Candidate>& cands) {
  assert(!cands.empty());
  // The cheapest of direct and combining (the first on ties).
  std::size_t base = cands.size();
  for (std::size_t i = 0; i < cands.size(); ++i)
    if (!cands[i].refinement() && (base == cands.size() || cands[i].cost.total_us() < cands[base].cost.total_us()))
      base = i;
  if (base == cands.size()) {
    // Only refinements were asked for (algo log-round or hybrid): the cheapest of them.
    std::size_t best = 0;
    for (std::size_t i = 1; i < cands.size(); ++i)
      if (cands[i].cost.total_us() < cands[best].cost.total_us()) best = i;
    return best;
  }
  // The cheapest refinement that clears its own bar: one that does not (a hybrid a hair cheaper)
  // does not hide one that does (a log-round clearly cheaper).
  std::size_t best = base;
  for (std::size_t i = 0; i < cands.size(); ++i) {
    const double us = cands[i].cost.total_us();
    if (cands[i].refinement() && us < (1 - cands[i].required_gain) * cands[base].cost.total_us() &&
        us < cands[best].cost.total_us())
      best = i;
  }
  return best;
}

ir::Plan with_choice_stats(ir::Op op, const Neighborhood& nbh, const PlanOptions& options, const ir::Plan& chosen) {
  // The stats describe direct and the combining plan in the chosen plan's order (a direct plan:
  // the requested or auto order).
  std::vector<int> order = options.dim_order ? *options.dim_order : auto_dim_order(op, nbh);
  if (chosen.algorithm() == ir::Algorithm::kCombining) order = chosen.dim_order();
  const ir::Plan combining = plan_combining(op, nbh, order);
  const CombiningMetrics m{combining.stats().t, combining.stats().rounds, combining.stats().volume};
  const double direct_us = price(plan_direct(op, nbh), options).total_us();
  const double combining_us = price(combining, options).total_us();

  ir::PlanParts parts = chosen.parts();
  // A direct plan ignores the order, but records it: its stats describe the combining
  // alternative in that order.
  if (parts.algorithm == ir::Algorithm::kDirect) parts.dim_order = order;
  std::int64_t mean = options.block_bytes;
  if (!options.block_sizes.empty()) {
    std::int64_t total = 0;
    for (std::int64_t s : options.block_sizes) total += s;
    mean = total / static_cast<std::int64_t>(options.block_sizes.size());
  }
  parts.stats.cutoff_ratio = cutoff_ratio(m);
  parts.stats.cost = ir::CostInfo{options.model.alpha_us, options.model.beta_us_per_byte, mean, m.C, m.V,
                                  direct_us, combining_us};
  return ir::Plan(std::move(parts));
}

}  // namespace cartplan::engine
