// Helpers shared by the cartplan benchmarks: robust summary statistics, a clock and flag parsing.
#pragma once

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cartplan::bench {

using Clock = std::chrono::steady_clock;

inline double micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// Order statistics rather than mean/stddev: timings on a shared 2-core machine have a long right
// tail (preemption, page faults), which moves the mean but not the median or the low quartile.
struct Summary {
  int n = 0;
  double min = 0, q1 = 0, median = 0, q3 = 0, max = 0;
  double low_quartile_mean = 0;  // mean of the ceil(n/4) smallest samples: the "undisturbed" cost
  double tukey_mean = 0;         // mean without Tukey outliers (outside [q1 - 1.5 IQR, q3 + 1.5 IQR]), seed 002
  int outliers = 0;              // samples Tukey's rule removed
};

// Linear interpolation between closest ranks (R's type 7, numpy's default), on sorted input.
inline double quantile_sorted(const std::vector<double>& s, double q) {
  if (s.empty()) return 0;
  const double h = (static_cast<double>(s.size()) - 1) * q;
  const std::size_t lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (h - static_cast<double>(lo)) * (s[hi] - s[lo]);
}

inline Summary summarize(std::vector<double> xs) {
  Summary r;
  r.n = static_cast<int>(xs.size());
  if (xs.empty()) return r;
  std::sort(xs.begin(), xs.end());
  r.min = xs.front();
  r.max = xs.back();
  r.q1 = quantile_sorted(xs, 0.25);
  r.median = quantile_sorted(xs, 0.5);
  r.q3 = quantile_sorted(xs, 0.75);
  const std::size_t k = std::max<std::size_t>(1, (xs.size() + 3) / 4);
  double sum = 0;
  for (std::size_t i = 0; i < k; ++i) sum += xs[i];
  r.low_quartile_mean = sum / static_cast<double>(k);
  const double iqr = r.q3 - r.q1, lo = r.q1 - 1.5 * iqr, hi = r.q3 + 1.5 * iqr;
  double kept = 0;
  int n_kept = 0;
  for (double x : xs) {
    if (x < lo || x > hi) continue;
    kept += x;
    ++n_kept;
  }
  r.outliers = r.n - n_kept;
  r.tukey_mean = n_kept ? kept / n_kept : r.median;
  return r;
}

// Whole-string integer parse within [lo, hi]; nullopt on anything else (so "3x" is rejected).
inline std::optional<long long> parse_int(std::string_view s, long long lo, long long hi) {
  long long v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < lo || v > hi) return std::nullopt;
  return v;
}

// "16,16,16" -> {16,16,16}; nullopt if any element is not an integer in [lo, hi].
inline std::optional<std::vector<int>> parse_int_list(std::string_view s, int lo, int hi) {
  std::vector<int> out;
  while (true) {
    const std::size_t comma = s.find(',');
    const std::optional<long long> v = parse_int(s.substr(0, comma), lo, hi);
    if (!v) return std::nullopt;
    out.push_back(static_cast<int>(*v));
    if (comma == std::string_view::npos) return out;
    s.remove_prefix(comma + 1);
  }
}

}  // namespace cartplan::bench
