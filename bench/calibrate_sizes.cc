// Calibrate's default block sizes under SMPI (calibrate_sizes.h).
#include "bench/calibrate_sizes.h"

#include <algorithm>
#include <cassert>
#include <climits>

namespace cartplan::bench {

std::vector<int> smpi_block_sizes(std::int64_t eager_limit_bytes, bool quick) {
  // 4 x the limit must fit an int: a limit above 2 GiB / 4 is clamped there.
  const std::int64_t bytes = std::clamp<std::int64_t>(eager_limit_bytes, kSmpiSizesFloorBytes, INT_MAX / 4);
  const int eager_ints = static_cast<int>(bytes / 4);
  std::vector<int> sizes = quick ? std::vector<int>{1, eager_ints / 2, 4 * eager_ints}
                                 : std::vector<int>{1, eager_ints / 8, eager_ints / 2, eager_ints + 1, 4 * eager_ints};
  assert(std::adjacent_find(sizes.begin(), sizes.end(), [](int a, int b) { return a >= b; }) == sizes.end());
  return sizes;
}

}  // namespace cartplan::bench
