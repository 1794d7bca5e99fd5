// Dimension order search: every permutation in lexicographic order, the first cheapest kept.
#include "engine/order_search.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace cartplan::engine {

bool clearly_cheaper(double a, double b) { return a < b - 1e-9 * std::max(1.0, std::fabs(b)); }

std::optional<OrderChoice> cheapest_order(int ndims, const std::function<ir::Plan(const std::vector<int>&)>& build,
                                          const std::vector<std::int64_t>& block_bytes, const CostModel& model,
                                          const std::optional<Grid>& grid, const PredictOptions& options) {
  if (ndims < 1 || ndims > kMaxOrderSearchDims) return std::nullopt;
  std::vector<int> order(ndims);
  std::iota(order.begin(), order.end(), 0);
  std::optional<OrderChoice> best;
  do {
    ir::Plan plan = build(order);
    const CostBreakdown cost = predict(plan, block_bytes, model, grid, options);
    if (!best || clearly_cheaper(cost.total_us(), best->cost.total_us()))
      best = OrderChoice{order, std::move(plan), cost};
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

}  // namespace cartplan::engine
