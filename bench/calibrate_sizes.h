// Calibrate's default block sizes under SMPI: around the simulated eager limit, never empty or repeated.
#pragma once

#include <cstdint>
#include <vector>

namespace cartplan::bench {

// The least eager limit the SMPI sizes are placed around, in bytes. A platform may set no eager
// protocol at all (SimGrid's default smpi/async-small-thresh is 0, a platform file without a
// <config> block has it): sizes taken around such a limit would be 0 to 8 ints, every row a few
// bytes, and the fit's per-byte prices would come from nothing. Below this floor the sizes are
// placed around the floor instead (1 to 4096 ints), so the rows still span small and large blocks.
inline constexpr std::int64_t kSmpiSizesFloorBytes = 4096;

// Block sizes in ints: 1, one size an eighth and one half of the limit (all blocks eager, single
// and packed), one just above it and one 4 times it (rendezvous), for the limit max(eager, floor);
// `quick`: 1, half the limit and 4 times it. Positive, strictly increasing.
std::vector<int> smpi_block_sizes(std::int64_t eager_limit_bytes, bool quick);

}  // namespace cartplan::bench
