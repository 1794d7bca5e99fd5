// bind() for halo plans: one rank's view of a halo plan on a concrete grid (docs/halo.md). A
// part travels iff the process its cells come from exists and so does one of the processes
// where they end in a required ghost cell (both from the plan's trace, ir/halo/trace.h); on a
// torus every part travels. Sender and receiver see the same processes, so both keep the same
// parts. Because a plan routes a cell only through processes between its origin and its
// holders (each coordinate is the origin's or the holder's), this keeps every required cell
// and writes no other: ghost cells with no source in the mesh stay untouched.
//
//   Result<HaloBinder> b = HaloBinder::create(plan);       // verifies the plan once
//   Result<BoundHalo> mine = b->bind(grid, grid.coords(rank));
#pragma once

#include <utility>
#include <vector>

#include "engine/grid.h"
#include "ir/halo/plan.h"
#include "ir/halo/trace.h"
#include "ir/result.h"

namespace cartplan::engine::halo {

struct BoundMessage {
  int phase = 0, message = 0;  // in the plan
  int tag = 0;
  int send_peer = kNoRank;     // rank at self + shift, or kNoRank when no part is sent
  int recv_peer = kNoRank;     // rank at self - shift, or kNoRank when no part arrives
  std::vector<int> send_parts; // indices into the message's parts that this rank sends
  std::vector<int> recv_parts; // ... that this rank receives
};

struct BoundHalo {
  int rank = 0;
  std::vector<BoundMessage> messages;  // every message of the plan, in plan order
};

class HaloBinder {
 public:
  // Error (the first verify message) if the plan does not verify.
  static Result<HaloBinder> create(ir::halo::HaloPlan plan);

  // Errors for coordinates that do not fit the grid or a grid of another dimension.
  Result<BoundHalo> bind(const Grid& grid, const Coords& coords) const;

  const ir::halo::HaloPlan& plan() const { return plan_; }
  const ir::halo::PartTrace& part(int phase, int message, int part) const { return parts_[phase][message][part]; }

 private:
  HaloBinder(ir::halo::HaloPlan plan, std::vector<std::vector<std::vector<ir::halo::PartTrace>>> parts)
      : plan_(std::move(plan)), parts_(std::move(parts)) {}
  ir::halo::HaloPlan plan_;
  std::vector<std::vector<std::vector<ir::halo::PartTrace>>> parts_;
};

}  // namespace cartplan::engine::halo
