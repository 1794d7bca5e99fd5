// The strict JSON reading helpers of halo plans: the strict parse of ir/json_strict.h (syntax
// errors with their byte, nesting deeper than kMaxJsonDepth, duplicate fields) and a reader that
// stops at the first error and names its JSON path ("$.phases[0].messages[1].tag: ...").
//
//   Result<nlohmann::json> j = parse_strict_json(text);
//   StrictReader r;
//   int tag = 0;
//   if (!r.integer((*j)["tag"], "$.tag", 0, 1000, tag)) std::cerr << *r.error;
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/result.h"

namespace cartplan::ir::halo {

inline constexpr int kMaxJsonDepth = 32;

Result<nlohmann::json> parse_strict_json(std::string_view text);

// A value as short text for messages (at most 64 characters).
std::string show(const nlohmann::json& j);

class StrictReader {
 public:
  std::optional<std::string> error;  // the first error

  bool fail_at(const std::string& path, const std::string& what);
  // An object with only `allowed` fields and every `required` one.
  bool object(const nlohmann::json& j, const std::string& path, const std::set<std::string>& allowed, const std::set<std::string>& required);
  bool array(const nlohmann::json& j, const std::string& path);
  bool integer(const nlohmann::json& j, const std::string& path, long long lo, long long hi, long long& out);
  bool integer(const nlohmann::json& j, const std::string& path, int lo, int hi, int& out);
  // An array of integers in [lo, hi]; with `size` >= 0, of exactly that many.
  bool int_list(const nlohmann::json& j, const std::string& path, int lo, int hi, int size, std::vector<int>& out);

  template <class E, std::size_t N>
  bool enum_value(const nlohmann::json& j, const std::string& path, const std::pair<const char*, E> (&names)[N], E& out) {
    if (!j.is_string()) return fail_at(path, "expected a string, got " + show(j));
    std::string all;
    for (const auto& [name, value] : names) {
      if (j.get<std::string>() == name) {
        out = value;
        return true;
      }
      all += all.empty() ? name : std::string(", ") + name;
    }
    return fail_at(path, "unknown value " + show(j) + " (expected " + all + ")");
  }
};

}  // namespace cartplan::ir::halo
