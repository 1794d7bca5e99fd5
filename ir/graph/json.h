// JSON form of a graph plan (schema "cartplan.graph_plan/1", docs/graphs.md): deterministic,
// canonical text (print -> parse -> print is byte-identical) and a strict, non-throwing parser
// that rejects unknown fields, unknown enum values, wrong types, out-of-range ranks and indices
// and inconsistent edge lists with a message naming the JSON path
// ("$.schedules[3].phases[0].send[1].parts[0].at: ...").
//
//   std::string text = ir::graph::to_json_string(plan);
//   Result<GraphPlan> back = ir::graph::graph_plan_from_json_string(text);  // *back == plan
#pragma once

#include <string>
#include <string_view>

#include "ir/graph/plan.h"
#include "ir/result.h"

namespace cartplan::ir::graph {

inline constexpr const char* kGraphPlanSchema = "cartplan.graph_plan/1";

// Two-space indentation; a container whose one-line form fits in 100 characters is printed on
// one line (a message, a part, a rank's edge lists); trailing newline.
std::string to_json_string(const GraphPlan& plan);

// Also reports JSON syntax errors (with byte position), duplicate fields and nesting deeper
// than 32 levels. The plan is not verified (verify.h does that); its indices are in range.
Result<GraphPlan> graph_plan_from_json_string(std::string_view text);

}  // namespace cartplan::ir::graph
