// The one strict number parser of cartplan: CLI options, stencil specs, halo's options and the
// MPI Info keys all read numbers through it, so "12x", " 8", "0x10" and "1e999" fail the same
// way everywhere.
//
// Integers: an optional '+' or '-', then decimal digits only. No spaces, no hex, no leading zeros
// ("010" is rejected rather than guessed as eight or ten; "0" alone is fine). Doubles: what
// std::from_chars reads in general format (no spaces, no '+', no hex), finite and >= 0.
//
//   Result<std::int64_t> n = parse_integer("4096", 0, INT64_MAX);      // 4096
//   Result<int> r = parse_int("12x");            // error "'12x' is not an integer"
//   Result<std::vector<int>> d = parse_int_list("4,4", 1, 1 << 30);    // {4, 4}
//   Result<double> a = parse_nonnegative_double("-0.5");  // error "'-0.5' is negative"
//
// Errors quote the text and say what is wrong ("is not an integer", "is negative", "is out of
// range [LO, HI]", "is not a number", "is not finite"); callers put the option or key in front.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "ir/result.h"

namespace cartplan {

// A decimal integer within [lo, hi]. Below zero with lo >= 0 says "is negative".
Result<std::int64_t> parse_integer(std::string_view text, std::int64_t lo, std::int64_t hi);

// parse_integer narrowed to int.
Result<int> parse_int(std::string_view text, int lo = INT_MIN, int hi = INT_MAX);

// Comma-separated integers ("4,4,2"), each within [lo, hi]; at least one, at most max_entries.
// An item's error names the item ("'x' is not an integer"); "" is an empty list.
Result<std::vector<int>> parse_int_list(std::string_view text, int lo, int hi, std::size_t max_entries = 64);

// A finite, non-negative decimal number (costs, times).
Result<double> parse_nonnegative_double(std::string_view text);

}  // namespace cartplan
