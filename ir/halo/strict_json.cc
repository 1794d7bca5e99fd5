// The halo plan reader's path-naming checks over ir/json_strict's strict parse.
#include "ir/halo/strict_json.h"

#include <algorithm>

#include "ir/json_strict.h"

namespace cartplan::ir::halo {

using nlohmann::json;

std::string show(const json& j) { return show_json_value(j); }

Result<json> parse_strict_json(std::string_view text) { return ir::parse_strict_json(text, kMaxJsonDepth); }

bool StrictReader::fail_at(const std::string& path, const std::string& what) {
  if (!error) error = path + ": " + what;
  return false;
}

bool StrictReader::object(const json& j, const std::string& path, const std::set<std::string>& allowed, const std::set<std::string>& required) {
  if (!j.is_object()) return fail_at(path, "expected an object, got " + show(j));
  for (const auto& [k, v] : j.items()) {
    if (!allowed.count(k)) return fail_at(path, "unknown field '" + k + "'");
  }
  for (const std::string& k : required) {
    if (!j.contains(k)) return fail_at(path, "missing field '" + k + "'");
  }
  return true;
}

bool StrictReader::array(const json& j, const std::string& path) {
  if (!j.is_array()) return fail_at(path, "expected an array, got " + show(j));
  return true;
}

bool StrictReader::integer(const json& j, const std::string& path, long long lo, long long hi, long long& out) {
  if (!j.is_number_integer()) return fail_at(path, "expected an integer, got " + show(j));
  const long long v = j.is_number_unsigned() ? static_cast<long long>(std::min<unsigned long long>(j.get<unsigned long long>(), 1ULL << 62))
                                             : j.get<long long>();
  if (v < lo || v > hi) return fail_at(path, std::to_string(v) + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  out = v;
  return true;
}

bool StrictReader::integer(const json& j, const std::string& path, int lo, int hi, int& out) {
  long long v = 0;
  if (!integer(j, path, static_cast<long long>(lo), static_cast<long long>(hi), v)) return false;
  out = static_cast<int>(v);
  return true;
}

bool StrictReader::int_list(const json& j, const std::string& path, int lo, int hi, int size, std::vector<int>& out) {
  if (!array(j, path)) return false;
  if (size >= 0 && j.size() != static_cast<std::size_t>(size))
    return fail_at(path, "expected " + std::to_string(size) + " integers, got " + std::to_string(j.size()));
  out.resize(j.size());
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (!integer(j[i], path + "[" + std::to_string(i) + "]", lo, hi, out[i])) return false;
  }
  return true;
}

}  // namespace cartplan::ir::halo
