// Reading and writing a calibrated alpha/beta cost model (what bench/calibrate measures):
//   {"schema": "cartplan.cost_model/1", "alpha_us": 0.8, "beta_us_per_byte": 0.00031, ...}
// Extra fields (machine, method, fit quality) are allowed and ignored.
//
//   Result<CostModel> m = load_cost_model("bench/results/cpp-2core/cost_model.json");
//   // CLI: cartplan plan --cost-model FILE;  MPI: Info key cartplan_cost_model = FILE
#pragma once

#include <string>

#include "engine/cost_model.h"
#include "ir/result.h"

namespace cartplan::engine {

inline constexpr const char* kCostModelSchema = "cartplan.cost_model/1";

Result<CostModel> load_cost_model(const std::string& path);
Result<CostModel> parse_cost_model(const std::string& json_text);

}  // namespace cartplan::engine
