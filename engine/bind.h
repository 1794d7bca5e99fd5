// bind(): one rank's view of a plan on a concrete grid: peer ranks per round, the mesh masks
// of the design, and byte counts. An entry travels iff its origin exists in the mesh and at
// least one of its final targets does; sender and receiver compute the same mask, so message
// layouts match. A round whose entries are all masked has no peers (kNoRank) and is skipped.
//
//   Result<Binder> b = Binder::create(plan);             // symbolic trace, once per plan
//   Result<BoundPlan> mine = b->bind(grid, grid.coords(rank), {8});
#pragma once

#include <cstdint>
#include <vector>

#include "engine/grid.h"
#include "ir/plan.h"
#include "ir/result.h"
#include "ir/trace.h"

namespace cartplan::engine {

struct BoundRound {
  int phase = 0;
  int round = 0;
  int tag = 0;
  int send_peer = kNoRank;  // rank at self + shift, or kNoRank when nothing is sent
  int recv_peer = kNoRank;  // rank at self - shift, or kNoRank when nothing is received
  std::vector<int> send_entries;  // indices into the round's send list that travel
  std::vector<int> recv_entries;  // indices into the round's recv list that arrive
  std::int64_t send_bytes = 0;
  std::int64_t recv_bytes = 0;
};

struct BoundPlan {
  int rank = 0;
  std::vector<BoundRound> rounds;        // every round of the plan, in plan order
  std::vector<int> phase_begin;          // index into rounds of each phase's first round (+ end)
  std::vector<int> copies;               // indices of the plan's copies that this rank performs
  std::vector<std::int64_t> block_bytes;      // per block (size t)
  std::vector<std::int64_t> temp_slot_bytes;  // per temp slot
  std::int64_t bytes(const ir::BufRef& ref) const;
};

class Binder {
 public:
  // Error if the plan does not verify (bind relies on its trace).
  static Result<Binder> create(const ir::Plan& plan);

  // block_bytes: one size for all blocks, or one per block (alltoall only). Errors name the bad
  // argument (wrong coordinate count, negative size, a route through a rank outside the mesh).
  Result<BoundPlan> bind(const Grid& grid, const Coords& coords, const std::vector<std::int64_t>& block_bytes) const;

  const ir::Plan& plan() const { return plan_; }

 private:
  Binder(ir::Plan plan, ir::Trace trace) : plan_(std::move(plan)), trace_(std::move(trace)) {}
  ir::Plan plan_;
  ir::Trace trace_;
};

}  // namespace cartplan::engine
