// Strict decimal integers, integer lists and non-negative doubles (parse_number.h).
#include "ir/parse_number.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>
#include <system_error>

namespace cartplan {
namespace {

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

bool all_digits(std::string_view s) { return s.find_first_not_of("0123456789") == std::string_view::npos; }

}  // namespace

Result<std::int64_t> parse_integer(std::string_view text, std::int64_t lo, std::int64_t hi) {
  const bool has_sign = !text.empty() && (text[0] == '+' || text[0] == '-');
  const bool negative = has_sign && text[0] == '-';
  const std::string_view digits = text.substr(has_sign ? 1 : 0);
  if (digits.empty() || !all_digits(digits) || (digits.size() > 1 && digits[0] == '0'))
    return fail(quoted(text) + " is not an integer");
  const std::string range = " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  // Read the magnitude unsigned so that INT64_MIN's magnitude fits; from_chars reports overflow.
  std::uint64_t magnitude = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude);
  if (negative && digits != "0" && lo >= 0) return fail(quoted(text) + " is negative");
  if (ec != std::errc() || end != digits.data() + digits.size()) return fail(quoted(text) + range);
  constexpr std::uint64_t kMaxPositive = static_cast<std::uint64_t>(INT64_MAX);
  if (magnitude > (negative ? kMaxPositive + 1 : kMaxPositive)) return fail(quoted(text) + range);
  const std::int64_t v = negative ? static_cast<std::int64_t>(0 - magnitude) : static_cast<std::int64_t>(magnitude);
  if (v < lo || v > hi) return fail(quoted(text) + range);
  return v;
}

Result<int> parse_int(std::string_view text, int lo, int hi) {
  Result<std::int64_t> v = parse_integer(text, lo, hi);
  if (!v) return ErrorMessage{v.error()};
  return static_cast<int>(*v);
}

Result<std::vector<int>> parse_int_list(std::string_view text, int lo, int hi, std::size_t max_entries) {
  if (text.empty()) return fail("empty list");
  std::vector<int> out;
  std::size_t start = 0;
  while (true) {
    if (out.size() >= max_entries) return fail("too many entries in " + quoted(text));
    const std::size_t comma = text.find(',', start);
    const std::string_view item = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    Result<int> v = parse_int(item, lo, hi);
    if (!v) return ErrorMessage{v.error()};
    out.push_back(*v);
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

Result<double> parse_nonnegative_double(std::string_view text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec == std::errc::invalid_argument || end != text.data() + text.size())
    return fail(quoted(text) + " is not a number");
  if (ec == std::errc::result_out_of_range) {
    // Too large is not finite; too small (1e-400) underflows to a denormal or zero, which is fine.
    v = std::strtod(std::string(text).c_str(), nullptr);
    if (std::isinf(v)) return fail(quoted(text) + " is not finite");
  }
  if (!std::isfinite(v)) return fail(quoted(text) + " is not finite");
  if (std::signbit(v) && v != 0) return fail(quoted(text) + " is negative");
  return v == 0 ? 0.0 : v;  // "-0" reads as 0
}

}  // namespace cartplan
