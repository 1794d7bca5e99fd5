// Tests for calibrate's SMPI block sizes: around the eager limit, and a spread of real sizes without one.
#include "bench/calibrate_sizes.h"

#include <doctest/doctest.h>

#include <algorithm>

namespace cartplan::bench {
namespace {

bool increasing_and_positive(const std::vector<int>& s) {
  return !s.empty() && s.front() >= 1 && std::adjacent_find(s.begin(), s.end(), [](int a, int b) { return a >= b; }) == s.end();
}

TEST_CASE("sizes bracket a platform's eager limit") {
  // 8192 bytes = 2048 ints (the torus and dragonfly platforms): 256 and 1024 eager, 2049 and 8192 not.
  CHECK(smpi_block_sizes(8192, false) == std::vector<int>{1, 256, 1024, 2049, 8192});
  CHECK(smpi_block_sizes(64000, false) == std::vector<int>{1, 2000, 8000, 16001, 64000});
  CHECK(smpi_block_sizes(8192, true) == std::vector<int>{1, 1024, 8192});
}

TEST_CASE("no eager protocol (SimGrid's default limit 0) still spans small and large blocks") {
  for (const std::int64_t limit : {std::int64_t{0}, std::int64_t{1}, std::int64_t{7}, std::int64_t{64}, std::int64_t{4095}}) {
    for (const bool quick : {false, true}) {
      CAPTURE(limit);
      CAPTURE(quick);
      const std::vector<int> s = smpi_block_sizes(limit, quick);
      CHECK(increasing_and_positive(s));
      CHECK(s.back() * 4 >= 4 * kSmpiSizesFloorBytes);  // the largest block is 16 KiB or more
    }
  }
  CHECK(smpi_block_sizes(0, false) == smpi_block_sizes(kSmpiSizesFloorBytes, false));
}

TEST_CASE("a huge limit does not overflow an int") {
  const std::vector<int> s = smpi_block_sizes(std::int64_t{1} << 40, false);
  CHECK(increasing_and_positive(s));
  CHECK(smpi_block_sizes(-5, true) == smpi_block_sizes(0, true));
}

}  // namespace
}  // namespace cartplan::bench
