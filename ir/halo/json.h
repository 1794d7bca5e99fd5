// JSON form of a halo plan (schema "cartplan.halo_plan/1", docs/halo.md): deterministic,
// canonical text (print -> parse -> print is byte-identical) and a strict, non-throwing reader
// that rejects unknown fields, unknown enum values, wrong types and counts, and out-of-range
// numbers and slots, with a message naming the JSON path
// ("$.phases[0].messages[1].parts[0].to.buf: unknown value \"ghost\" (expected array, temp)").
//
//   std::string text = ir::halo::to_json_string(plan);
//   Result<HaloPlan> back = ir::halo::halo_plan_from_json_string(text);  // *back == plan
#pragma once

#include <string>
#include <string_view>

#include "ir/halo/plan.h"
#include "ir/result.h"

namespace cartplan::ir::halo {

inline constexpr const char* kHaloPlanSchema = "cartplan.halo_plan/1";

// Two-space indentation, containers that fit in 120 characters on one line (a part), trailing
// newline.
std::string to_json_string(const HaloPlan& plan);

// The plan is not verified (verify.h does that); its slots are in range and every coordinate
// list has the array's number of dimensions.
Result<HaloPlan> halo_plan_from_json_string(std::string_view text);

}  // namespace cartplan::ir::halo
