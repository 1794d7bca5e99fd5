// Dimension order search: builds a plan in every order of the dimensions (d <= 5, at most 120
// orders), predicts each with the cost model and keeps the cheapest. Orders are visited in
// lexicographic order and a later one replaces the best only when it is cheaper by more than a
// rounding tolerance, so ties go to the lexicographically first order (deterministic on every
// rank). Alltoall has the same rounds and entries in every order (only the lowering's placement
// differs), so the optimizer searches orders for allgather trees and reduction merge trees only.
//
//   auto build = [&](const std::vector<int>& o) { return plan_combining(op, nbh, o); };
//   std::optional<OrderChoice> best = cheapest_order(nbh.ndims(), build, sizes, model, grid);
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "engine/cost_model.h"
#include "engine/grid.h"
#include "engine/predict.h"
#include "ir/plan.h"

namespace cartplan::engine {

// The most dimensions whose orders are all evaluated (5! = 120 plans).
inline constexpr int kMaxOrderSearchDims = 5;

struct OrderChoice {
  std::vector<int> order;
  ir::Plan plan;
  CostBreakdown cost;
};

// True iff `a` is cheaper than `b` by more than a rounding tolerance (relative 1e-9).
bool clearly_cheaper(double a, double b);

// The cheapest plan `build` makes over all orders of 0..ndims-1; nullopt when ndims is not in
// [1, kMaxOrderSearchDims]. block_bytes and options as for predict().
std::optional<OrderChoice> cheapest_order(int ndims, const std::function<ir::Plan(const std::vector<int>&)>& build,
                                          const std::vector<std::int64_t>& block_bytes, const CostModel& model,
                                          const std::optional<Grid>& grid, const PredictOptions& options = {});

}  // namespace cartplan::engine
