// Canonical JSON text: one-line containers where they fit, else one element per line.
#include "ir/graph/json_print.h"

namespace cartplan::ir::graph {
namespace {

using nlohmann::ordered_json;

std::string scalar_text(const ordered_json& j) { return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace); }

std::string key_text(const std::string& k) { return ordered_json(k).dump(-1, ' ', false, ordered_json::error_handler_t::replace); }

std::string inline_text(const ordered_json& j) {
  if (!j.is_structured()) return scalar_text(j);
  std::string s(1, j.is_array() ? '[' : '{');
  bool first = true;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!first) s += ", ";
    first = false;
    if (j.is_object()) s += key_text(it.key()) + ": ";
    s += inline_text(*it);
  }
  s += j.is_array() ? ']' : '}';
  return s;
}

void print(const ordered_json& j, std::size_t indent, std::size_t width, std::string& out) {
  const std::string one_line = inline_text(j);
  if (!j.is_structured() || j.empty() || indent + one_line.size() <= width) {
    out += one_line;
    return;
  }
  out += j.is_array() ? "[\n" : "{\n";
  bool first = true;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!first) out += ",\n";
    first = false;
    out.append(indent + 2, ' ');
    if (j.is_object()) {
      const std::string k = key_text(it.key()) + ": ";
      out += k;
    }
    print(*it, indent + 2, width, out);
  }
  out += '\n';
  out.append(indent, ' ');
  out += j.is_array() ? ']' : '}';
}

}  // namespace

std::string canonical_text(const ordered_json& j, std::size_t width) {
  std::string out;
  print(j, 0, width, out);
  out += '\n';
  return out;
}

}  // namespace cartplan::ir::graph
