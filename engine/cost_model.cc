// Validation of a cost model's prices against kCostTerms' bounds.
#include "engine/cost_model.h"

#include <cmath>

namespace cartplan::engine {

std::string price_error(const CostTerm& t, const CostModel& m) {
  const double price = m.*t.price;
  const double floor = t.at_least_minus ? -(m.*t.at_least_minus) : 0.0;
  if (std::isfinite(price) && price >= floor) return "";
  return std::string("must be a finite number >= ") +
         (t.at_least_minus ? std::string("-") + kCostTerms[term_index(t.at_least_minus)].name : "0");
}

std::string cost_model_error(const CostModel& m) {
  for (const CostTerm& t : kCostTerms)
    if (std::string e = price_error(t, m); !e.empty()) return std::string(t.name) + " " + e;
  if (m.eager_limit_bytes < 0 || m.eager_limit_bytes > CostModel::kMaxEagerLimitBytes)
    return "eager_limit_bytes must be an integer from 0 to 2^40";
  if (!(m.phase_overlap >= 0 && m.phase_overlap <= 1)) return "phase_overlap must be a number from 0 to 1";
  return "";
}

}  // namespace cartplan::engine
