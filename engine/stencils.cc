// Stencil generators: count first (refusing oversized results), then enumerate in lexicographic order.
#include "engine/stencils.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace cartplan::engine::stencils {

namespace {

// Offset counts can exceed 64 bits ((2r+1)^d with d = 16), so counting saturates at kSaturated;
// every value below it is exact. 128-bit intermediates make each step overflow-free.
using u128 = unsigned __int128;
constexpr std::uint64_t kSaturated = UINT64_MAX;

std::uint64_t sat(u128 v) { return v >= kSaturated ? kSaturated : static_cast<std::uint64_t>(v); }
std::uint64_t sat_mul(std::uint64_t a, std::uint64_t b) { return sat(static_cast<u128>(a) * b); }
std::uint64_t sat_add(std::uint64_t a, std::uint64_t b) { return sat(static_cast<u128>(a) + b); }

std::uint64_t sat_pow(std::uint64_t base, int exp) {
  std::uint64_t r = 1;
  for (int i = 0; i < exp; ++i) r = sat_mul(r, base);
  return r;
}

// Points of Z^d with Chebyshev norm <= r; r = -1 gives the empty set.
std::uint64_t chebyshev_ball(int d, std::int64_t r) {
  return r < 0 ? 0 : sat_pow(static_cast<std::uint64_t>(2 * r + 1), d);
}

// Points of Z^d with L1 norm <= r: sum over k non-zero coordinates of 2^k C(d,k) C(r,k).
std::uint64_t manhattan_ball(int d, std::int64_t r) {
  if (r < 0) return 0;
  std::uint64_t total = 0;
  u128 c_dk = 1;  // C(d, k), at most C(16, 8)
  u128 c_rk = 1;  // C(r, k), exact while below kSaturated (then total is saturated anyway)
  for (int k = 0; k <= d && k <= r; ++k) {
    if (k > 0) {
      c_dk = c_dk * (d - k + 1) / k;
      c_rk = c_rk * static_cast<u128>(r - k + 1) / k;  // exact: the product of k consecutive
    }                                                  // integers is divisible by k!
    if (c_rk >= kSaturated) return kSaturated;
    total = sat_add(total, sat((static_cast<u128>(1) << k) * c_dk * c_rk));
  }
  return total;
}

// Shell = ball(depth) minus ball(shadow - 1). A saturated ball only happens for d >= 3 with a
// radius so large that every shell is far above kMaxOffsets, so saturating the shell is safe.
std::uint64_t shell(std::uint64_t outer, std::uint64_t inner) {
  return outer == kSaturated ? kSaturated : outer - inner;
}

std::string count_text(std::uint64_t n) {
  return n == kSaturated ? "at least " + std::to_string(n) : std::to_string(n);
}

// The check_* helpers return an error message, empty when the input is fine.
std::string check_dims(const std::string& name, int d) {
  if (d < 1 || d > Neighborhood::kMaxDims)
    return name + ": d must be between 1 and " + std::to_string(Neighborhood::kMaxDims);
  return "";
}

// Refuses before enumerating anything, so huge requests cost nothing.
std::string check_size(const std::string& name, std::uint64_t count, std::int64_t max_coord) {
  if (count > static_cast<std::uint64_t>(Neighborhood::kMaxOffsets))
    return name + " would have " + count_text(count) + " offsets, more than the limit " +
           std::to_string(Neighborhood::kMaxOffsets);
  if (count == 0) return name + " has no offsets";
  if (max_coord > Neighborhood::kMaxCoordinate)
    return name + " has coordinates up to " + std::to_string(max_coord) + ", more than the limit " +
           std::to_string(Neighborhood::kMaxCoordinate);
  return "";
}

// Enumerates shadow <= Chebyshev norm <= depth. In the last dimension only values that reach the
// shadow are visited, and every prefix has a completion (|x| = depth), so work is O(d * count).
void enum_chebyshev(int d, std::int64_t depth, std::int64_t shadow, Offset& cur, int k,
                    std::int64_t max_so_far, std::vector<Offset>& out) {
  auto visit = [&](std::int64_t x) {
    cur[k] = static_cast<int>(x);
    if (k + 1 == d)
      out.push_back(cur);
    else
      enum_chebyshev(d, depth, shadow, cur, k + 1, std::max(max_so_far, x < 0 ? -x : x), out);
  };
  if (k + 1 == d && max_so_far < shadow) {
    for (std::int64_t x = -depth; x <= -shadow; ++x) visit(x);
    for (std::int64_t x = shadow; x <= depth; ++x) visit(x);
  } else {
    for (std::int64_t x = -depth; x <= depth; ++x) visit(x);
  }
}

// Enumerates shadow <= L1 norm <= depth; same pruning argument as enum_chebyshev.
void enum_manhattan(int d, std::int64_t depth, std::int64_t shadow, Offset& cur, int k,
                    std::int64_t used, std::vector<Offset>& out) {
  const std::int64_t rem = depth - used;
  auto visit = [&](std::int64_t x) {
    cur[k] = static_cast<int>(x);
    if (k + 1 == d)
      out.push_back(cur);
    else
      enum_manhattan(d, depth, shadow, cur, k + 1, used + (x < 0 ? -x : x), out);
  };
  const std::int64_t need = shadow - used;
  if (k + 1 == d && need > 0) {
    for (std::int64_t x = -rem; x <= -need; ++x) visit(x);
    for (std::int64_t x = need; x <= rem; ++x) visit(x);
  } else {
    for (std::int64_t x = -rem; x <= rem; ++x) visit(x);
  }
}

enum class Metric { kChebyshev, kManhattan };

Result<Neighborhood> metric_stencil(const std::string& name, Metric metric, int d, int depth,
                                    int shadow, const char* depth_name) {
  if (auto e = check_dims(name, d); !e.empty()) return fail(e);
  if (depth < 0) return fail(name + ": " + depth_name + " must be non-negative");
  if (shadow < 0) return fail(name + ": shadow must be non-negative");
  if (shadow > depth) return fail(name + ": shadow must not exceed depth");
  const std::uint64_t count =
      metric == Metric::kChebyshev
          ? shell(chebyshev_ball(d, depth), chebyshev_ball(d, std::int64_t{shadow} - 1))
          : shell(manhattan_ball(d, depth), manhattan_ball(d, std::int64_t{shadow} - 1));
  if (auto e = check_size(name, count, depth); !e.empty()) return fail(e);

  std::vector<Offset> out;
  out.reserve(count);
  Offset cur(d, 0);
  if (metric == Metric::kChebyshev)
    enum_chebyshev(d, depth, shadow, cur, 0, 0, out);
  else
    enum_manhattan(d, depth, shadow, cur, 0, 0, out);
  // Defensive: the count formula and the enumeration must agree, and an empty result is refused.
  if (out.empty()) return fail(name + " has no offsets");
  return Neighborhood::create(d, std::move(out));
}

std::string key(const char* kind, std::initializer_list<std::pair<const char*, int>> params) {
  std::string s = kind;
  char sep = ':';
  for (const auto& [k, v] : params) {
    s += sep;
    s += k;
    s += '=';
    s += std::to_string(v);
    sep = ',';
  }
  return s;
}

}  // namespace

Result<Neighborhood> moore(int d, int r) {
  return metric_stencil(key("moore", {{"d", d}, {"r", r}}), Metric::kChebyshev, d, r, 0, "r");
}

Result<Neighborhood> vonneumann(int d, int r) {
  return metric_stencil(key("vonneumann", {{"d", d}, {"r", r}}), Metric::kManhattan, d, r, 0, "r");
}

Result<Neighborhood> chebyshev(int d, int depth, int shadow) {
  return metric_stencil(key("chebyshev", {{"d", d}, {"depth", depth}, {"shadow", shadow}}),
                        Metric::kChebyshev, d, depth, shadow, "depth");
}

Result<Neighborhood> manhattan(int d, int depth, int shadow) {
  return metric_stencil(key("manhattan", {{"d", d}, {"depth", depth}, {"shadow", shadow}}),
                        Metric::kManhattan, d, depth, shadow, "depth");
}

Result<Neighborhood> box(int d, int n, int f) {
  const std::string name = key("box", {{"d", d}, {"n", n}, {"f", f}});
  if (auto e = check_dims(name, d); !e.empty()) return fail(e);
  if (n < 1) return fail(name + ": n must be at least 1");
  const std::int64_t lo = f;
  const std::int64_t hi = std::int64_t{f} + n - 1;  // 64-bit: f + n - 1 may exceed INT_MAX
  const std::int64_t max_coord = std::max(lo < 0 ? -lo : lo, hi < 0 ? -hi : hi);
  const std::uint64_t count = sat_pow(static_cast<std::uint64_t>(n), d);
  if (auto e = check_size(name, count, max_coord); !e.empty()) return fail(e);

  std::vector<Offset> out;
  out.reserve(count);
  Offset cur(d, f);
  // Odometer with the last coordinate fastest, which is lexicographic order.
  while (true) {
    out.push_back(cur);
    int k = d - 1;
    while (k >= 0 && cur[k] == hi) cur[k--] = f;
    if (k < 0) break;
    ++cur[k];
  }
  return Neighborhood::create(d, std::move(out));
}

}  // namespace cartplan::engine::stencils
