// Lanes: how requests of one neighbourhood communicator get tags that never match each other's
// messages while they are in flight together, with no communication on the hot path.
//
// Every message cartplan sends carries tag = round * lane_count + lane: the round of the plan
// (tags are per round, so matching never depends on posting order, even when two shifts reach
// the same rank on a small torus) and the lane of the request. Lanes are split in three kinds:
//   - lane 0: blocking calls. One at a time per communicator, each complete before the next
//     starts on that rank; MPI's non-overtaking rule then matches every receive of call n with
//     the sender's message of call n, even if the sender is already in call n+1.
//   - persistent lanes: chosen at Cart_*_init, which is collective. The lane is the lowest one
//     that no rank still holds (the holdings are OR-reduced in init's agreement), so a lane is
//     reused only after every rank freed, hence completed, its previous request: all messages
//     of that request were matched before the new one sends anything.
//   - non-blocking lanes: Cart_i* is local, so the lane is a function of the call's sequence
//     number on the communicator (the same on every rank, since collectives are called in the
//     same order): lane = first + seq % count. Before a lane is reused, this rank completes the
//     previous request on it (see Exchange), so on every rank all receives of the old request
//     are posted before any of the new one, and every sender sent the old messages first: by
//     non-overtaking, each old receive matches the old message even if a fast peer already
//     sends on the reused lane.
//
//   Lanes lanes(largest_tag);
//   int tag = lanes.tag(lane, round);        // round < lanes.max_rounds()
#pragma once

#include <cstdint>
#include <vector>

namespace cartplan::mpi {

class Lanes {
 public:
  // largest_tag: the largest tag the lanes may use, the spare tag above them included
  // (a Cartesian communicator passes MPI_TAG_UB, GraphShared MPI_TAG_UB - 1, keeping MPI_TAG_UB
  // for the graph set-up; MPI_TAG_UB is at least 32767 by the standard).
  explicit Lanes(std::int64_t largest_tag);

  int count() const { return persistent_ + nonblocking_ + 1; }
  static constexpr int blocking_lane() { return 0; }
  int persistent_lanes() const { return persistent_; }
  int nonblocking_lanes() const { return nonblocking_; }
  // The largest round count a plan may have for its tags (and the spare) to fit in largest_tag.
  std::int64_t max_rounds() const { return max_rounds_; }
  int tag(int lane, int round) const { return round * count() + lane; }

  // Persistent lanes this rank holds, as a bitmap of 64-bit words (OR-reduced at init).
  const std::vector<std::uint64_t>& held() const { return held_; }
  // The lowest lane free in `all_held` (the OR over every rank), or -1 when all are taken.
  int first_free(const std::vector<std::uint64_t>& all_held) const;
  void hold(int lane);
  void release(int lane);

  // The lane of the next non-blocking call (advances the sequence).
  int next_nonblocking();

 private:
  int persistent_ = 0, nonblocking_ = 0;
  std::int64_t max_rounds_ = 0;
  std::vector<std::uint64_t> held_;
  std::uint64_t nonblocking_seq_ = 0;
};

}  // namespace cartplan::mpi
