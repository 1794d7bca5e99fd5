// The strict JSON text reader every cartplan file format goes through (plans, graph plans):
// nesting depth limited before nlohmann builds anything, duplicate keys reported with their
// JSON path instead of silently keeping the last, syntax errors with their byte position.
//
//   Result<nlohmann::json> j = ir::parse_strict_json(text, /*max_depth=*/64);
//   if (!j) return fail(j.error());   // "$.phases[0]: duplicate field 'dim'"
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ir/result.h"

namespace cartplan::ir {

Result<nlohmann::json> parse_strict_json(std::string_view text, int max_depth);

// A value quoted into an error message: as written (numbers like 1e+30), never throwing on
// invalid UTF-8, shortened to 64 characters so a huge value cannot flood a log.
std::string show_json_value(const nlohmann::json& j);

// User-supplied text quoted into an error message: escaped, shortened, in single quotes.
std::string quote_json_text(const std::string& s);

}  // namespace cartplan::ir
