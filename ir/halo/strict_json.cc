// Strict JSON parsing (depth, duplicate fields) and a path-naming reader.
#include "ir/halo/strict_json.h"

#include <algorithm>
#include <exception>
#include <functional>

namespace cartplan::ir::halo {
namespace {

using nlohmann::json;

std::optional<std::string> depth_error(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if ((c == '[' || c == '{') && ++depth > kMaxJsonDepth) {
      return "invalid JSON at byte " + std::to_string(i + 1) + ": nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels";
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::nullopt;
}

// nlohmann keeps the last of duplicate keys; a strict reader reports them instead.
struct DuplicateKeys {
  std::vector<std::set<std::string>> open;
  std::optional<std::string> error;
  bool operator()(int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) open.emplace_back();
    if (event == json::parse_event_t::object_end) open.pop_back();
    if (event == json::parse_event_t::key && !open.back().insert(parsed.get<std::string>()).second && !error)
      error = "duplicate field " + show(parsed);
    return true;
  }
};

}  // namespace

std::string show(const json& j) {
  std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 64) s = s.substr(0, 61) + "...";
  return s;
}

Result<json> parse_strict_json(std::string_view text) {
  if (auto e = depth_error(text)) return fail(*e);
  json j;
  DuplicateKeys dup;
  try {
    j = json::parse(text.begin(), text.end(), std::ref(dup));
  } catch (const json::parse_error& e) {
    return fail("invalid JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  } catch (const std::exception& e) {
    return fail(std::string("invalid JSON: ") + e.what());
  }
  if (dup.error) return fail(*dup.error);
  return j;
}

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
