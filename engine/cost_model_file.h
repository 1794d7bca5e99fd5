// Reading and writing a calibrated cost model (what bench/calibrate measures). Version 2:
//   {"schema": "cartplan.cost_model/2", "alpha_us": 0.8, "beta_us_per_byte": 0.00031,
//    "phase_us": 1.2, "copy_us_per_byte": 0.0001, "eager_limit_bytes": 4096,
//    "rendezvous_us": 3.0, ...}
// Version 1 files ({"schema": "cartplan.cost_model/1", "alpha_us", "beta_us_per_byte"}) still
// load, as the linear model they describe (the v2 terms zero). The members are the terms of
// kCostTerms (cost_model.h), eager_limit_bytes and the optional phase_overlap (v2, 0 to 1) and
// descriptive ones (machine, np, method,
// fit quality, and the members of dropped terms such as fragment_us), which are ignored; any
// other member is an error naming it.
//
//   Result<CostModel> m = load_cost_model("bench/results/cpp-2core/cost_model.json");
//   std::string text = cost_model_to_json(*m, R"({"np": 2})");
//   // CLI: cartplan plan --cost-model FILE; MPI: found by cost_model_locate.h
#pragma once

#include <string>

#include "engine/cost_model.h"
#include "ir/result.h"

namespace cartplan::engine {

inline constexpr const char* kCostModelSchema = "cartplan.cost_model/2";
inline constexpr const char* kCostModelSchemaV1 = "cartplan.cost_model/1";

Result<CostModel> load_cost_model(const std::string& path);
Result<CostModel> parse_cost_model(const std::string& json_text);
// A version-2 file; `extra_members` is a JSON object of descriptive members to add (or "").
// The placement terms and phase_overlap are written only where non-zero: a model without them reads in builds
// from before those terms; one with them is rejected there (unknown member), by design.
std::string cost_model_to_json(const CostModel& model, const std::string& extra_members = "");

}  // namespace cartplan::engine
