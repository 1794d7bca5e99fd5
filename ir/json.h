// JSON form of a plan: deterministic output, and a strict parser that rejects unknown fields,
// unknown enum values, wrong types and out-of-range indices with a message naming the JSON
// path (e.g. "$.phases[0].rounds[1].send[2].block: ...").
//
// Three schema versions. "cartplan.plan/1": alltoall and allgather. "cartplan.plan/2" adds the
// reduction and rooted ops, `"reduce": true` on written entries (recv entries, copy targets),
// and a "copies" list in every phase (local steps after the phase's receives).
// "cartplan.plan/3" adds the "algorithm" values "log-round" and "hybrid" (ir::PlanKind), which
// versions 1 and 2 label "combining". The printer writes the lowest version that can express
// the plan (ir::min_schema_version), so direct and combining plans print exactly as before; the
// parser reads all three (a version-2 file of a version-1 plan prints as 1; a log-round or
// hybrid plan in a version-1 or -2 file is read as the combining plan it says it is).
//
//   std::string text = ir::to_json_string(plan);          // print
//   Result<ir::Plan> back = ir::plan_from_json_string(text); // parse; print(*back) == text
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ir/plan.h"
#include "ir/result.h"

namespace cartplan::ir {

inline constexpr const char* kPlanSchema = "cartplan.plan/1";
inline constexpr const char* kPlanSchemaV2 = "cartplan.plan/2";
inline constexpr const char* kPlanSchemaV3 = "cartplan.plan/3";

nlohmann::ordered_json to_json(const Plan& plan);
// Canonical text: two-space indentation, short arrays (offsets, shifts, entries) on one line,
// trailing newline. print -> parse -> print is byte-identical.
std::string to_json_string(const Plan& plan);

Result<Plan> plan_from_json(const nlohmann::json& j);
// Also reports JSON syntax errors (with byte position) and limits nesting depth.
Result<Plan> plan_from_json_string(std::string_view text);

}  // namespace cartplan::ir
