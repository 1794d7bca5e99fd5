// The lane layout of a communicator's tag space and the persistent-lane bitmap.
#include "backends/mpi/lanes.h"

#include <cassert>

namespace cartplan::mpi {

Lanes::Lanes(std::int64_t largest_tag) {
  // Open MPI's MPI_TAG_UB is 2^31 - 1: 1024 persistent requests alive at once and 4096
  // non-blocking lanes leave room for plans of 400,000 rounds. The standard's minimum (32767)
  // still gives 64 + 64 lanes and plans of up to 254 rounds.
  if (largest_tag >= (std::int64_t{1} << 24)) {
    persistent_ = 1024;
    nonblocking_ = 4096;
  } else {
    persistent_ = 64;
    nonblocking_ = 64;
  }
  // One tag above the lanes' range stays free for a local copy's message to self (exchange.cc).
  max_rounds_ = largest_tag / count();
  held_.assign(static_cast<std::size_t>(persistent_ + 63) / 64, 0);
}

int Lanes::first_free(const std::vector<std::uint64_t>& all_held) const {
  for (int k = 0; k < persistent_; ++k)
    if (!(all_held[static_cast<std::size_t>(k) / 64] >> (k % 64) & 1)) return 1 + k;
  return -1;
}

void Lanes::hold(int lane) {
  const int k = lane - 1;
  assert(k >= 0 && k < persistent_);
  held_[static_cast<std::size_t>(k) / 64] |= std::uint64_t{1} << (k % 64);
}

void Lanes::release(int lane) {
  const int k = lane - 1;
  assert(k >= 0 && k < persistent_);
  held_[static_cast<std::size_t>(k) / 64] &= ~(std::uint64_t{1} << (k % 64));
}

int Lanes::next_nonblocking() {
  return 1 + persistent_ + static_cast<int>(nonblocking_seq_++ % static_cast<std::uint64_t>(nonblocking_));
}

}  // namespace cartplan::mpi
