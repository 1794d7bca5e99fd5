// The alpha/beta optimizer: predicts both plans' costs and picks the cheaper one.
#include "engine/optimizer.h"

#include <cmath>

#include "engine/planner.h"

namespace cartplan::engine {
namespace {

// True iff `shift` leads every rank of `grid` back to itself.
bool wraps_to_self(const ir::Offset& shift, const Grid& grid) {
  for (int k = 0; k < grid.ndims(); ++k) {
    if (shift[k] == 0) continue;
    if (!grid.periods()[k] || shift[k] % grid.dims()[k] != 0) return false;
  }
  return true;
}

}  // namespace

// Linear model over a whole plan: every round is one message of alpha, every block transfer
// costs beta*m. For neighbourhoods without duplicates and without a grid this is t(alpha + beta m)
// for direct and C alpha + beta V m for combining, the two sides of seed 000's cut-off.
double predict_us(const ir::Plan& plan, std::int64_t block_bytes, const CostModel& model, const std::optional<Grid>& grid) {
  double rounds = 0, entries = 0;
  for (const ir::Phase& phase : plan.phases())
    for (const ir::Round& r : phase.rounds) {
      if (grid && grid->ndims() == plan.ndims() && wraps_to_self(r.shift, *grid)) continue;
      rounds += 1;
      entries += static_cast<double>(r.send.size());
    }
  return rounds * model.alpha_us + model.beta_us_per_byte * entries * static_cast<double>(block_bytes);
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

Result<ir::Plan> make_plan(ir::Op op, const Neighborhood& nbh, const PlanOptions& options) {
  if (options.block_bytes < 0) return fail("block size " + std::to_string(options.block_bytes) + " is negative");
  if (!std::isfinite(options.model.alpha_us) || options.model.alpha_us < 0)
    return fail("alpha must be a finite, non-negative number of microseconds");
  if (!std::isfinite(options.model.beta_us_per_byte) || options.model.beta_us_per_byte < 0)
    return fail("beta must be a finite, non-negative number of microseconds per byte");
  std::vector<int> order = auto_dim_order(op, nbh);
  if (options.dim_order) {
    Result<std::vector<int>> checked = check_dim_order(*options.dim_order, nbh.ndims());
    if (!checked) return fail(checked.error());
    order = *checked;
  }

  const ir::Plan combining = plan_combining(op, nbh, order);
  const CombiningMetrics m{combining.stats().t, combining.stats().rounds, combining.stats().volume};
  const ir::Plan direct = plan_direct(op, nbh);
  if (options.grid && options.grid->ndims() != nbh.ndims())
    return fail("the grid has " + std::to_string(options.grid->ndims()) + " dimensions, the neighbourhood " +
                std::to_string(nbh.ndims()));
  const double direct_us = predict_us(direct, options.block_bytes, options.model, options.grid);
  const double combining_us = predict_us(combining, options.block_bytes, options.model, options.grid);

  bool use_combining = options.algo == AlgoChoice::kCombining;
  if (options.algo == AlgoChoice::kAuto) use_combining = combining_us < direct_us;
  ir::PlanParts parts = use_combining ? combining.parts() : direct.parts();
  // A direct plan ignores the order, but records it: its stats describe the combining
  // alternative in that order.
  parts.dim_order = order;
  parts.stats.cutoff_ratio = cutoff_ratio(m);
  parts.stats.cost = ir::CostInfo{options.model.alpha_us, options.model.beta_us_per_byte, options.block_bytes,
                                  m.C, m.V, direct_us, combining_us};
  return ir::Plan(std::move(parts));
}

}  // namespace cartplan::engine
