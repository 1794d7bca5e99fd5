// The canonical JSON text printer shared by graph plans and graph reports: two-space
// indentation, containers that fit in `width` characters on one line, keys in insertion order.
//
//   nlohmann::ordered_json j = {{"a", 1}};
//   std::string text = ir::graph::canonical_text(j);   // "{\"a\": 1}\n"
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace cartplan::ir::graph {

std::string canonical_text(const nlohmann::ordered_json& j, std::size_t width = 100);

}  // namespace cartplan::ir::graph
