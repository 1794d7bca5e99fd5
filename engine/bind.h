// bind(): one rank's view of a plan on a concrete grid: peer ranks per round, the mesh masks
// of the design, and byte counts. An entry travels iff at least one of its contributions has
// its origin in the mesh and at least one of its final holders is in the mesh (for rooted
// ops: an origin that is the root for bcast/scatter, a final holder that is the root for
// gather/reduce); sender and receiver compute the same mask, so message layouts match. A
// round whose entries are all masked has no peers (kNoRank) and is skipped. Local copies obey
// the same rule.
//
// Reductions on meshes: a masked entry carries the empty multiset, so a location may still hold
// nothing when a reduce entry arrives. bind() follows, per rank, which locations hold data and
// resolves every performed write to "store" (the location holds nothing yet, or the entry
// overwrites) or "combine" (apply the op). Contributions from outside the mesh never exist,
// and none from inside is lost (every entry on its way to an in-mesh holder travels).
//
//   Result<Binder> b = Binder::create(plan);             // symbolic trace, once per plan
//   Result<BoundPlan> mine = b->bind(grid, grid.coords(rank), {8});
//   Result<BoundPlan> at = b->bind(grid, grid.coords(rank), {8}, grid.coords(root));  // rooted ops
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
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
  std::vector<bool> recv_combine;  // per recv_entries: combine with the op (else store)
  std::int64_t send_bytes = 0;
  std::int64_t recv_bytes = 0;
};

struct BoundPlan {
  int rank = 0;
  std::vector<BoundRound> rounds;        // every round of the plan, in plan order
  std::vector<int> phase_begin;          // index into rounds of each phase's first round (+ end)
  std::vector<int> copies;               // indices of the plan's copies that this rank performs
  std::vector<bool> copy_combine;        // per copies: combine with the op (else store)
  // Per phase: (index into the phase's copies, combine) of the local steps this rank performs
  // after the phase's receives.
  std::vector<std::vector<std::pair<int, bool>>> phase_copies;
  // Per recv block: part of this rank's result (the user's memory). False for rooted ops where
  // the block is not significant on this rank (gather/reduce away from the root; bcast/scatter
  // blocks whose source is not the root).
  std::vector<bool> recv_result;
  // Per recv block: written by this rank although not a result (forwarded data of rooted
  // ops): an executor must give it scratch memory instead of the user's buffer.
  std::vector<bool> recv_scratch;
  std::vector<std::int64_t> block_bytes;      // per block (size t)
  std::vector<std::int64_t> temp_slot_bytes;  // per temp slot
  std::int64_t bytes(const ir::BufRef& ref) const;
};

// The rank bind_representative() gives its process; its peers are numbered from 1.
inline constexpr int kRepresentativeRank = 0;

// The binding of a process that has all its neighbours (every process of a torus, the
// interior of a mesh), for pricing: every entry travels, and a round is a round to the process
// itself exactly where its shift wraps to itself on `grid` (never without one); each other
// round has a peer of its own, numbered from kRepresentativeRank + 1, so that no two rounds
// share a peer. Rooted ops bind as their symmetric op would (every recv block a result). The
// same on every rank, and it needs no trace of the plan. `grid` nullopt: a torus large enough
// that no shift wraps. Errors: a grid of another dimension, bad block sizes (as bind()).
//
//   Result<BoundPlan> rep = bind_representative(plan, grid, {400});
//   Result<Program> p = lower(plan, *rep, contiguous_layout(plan, *rep));   // what it runs
Result<BoundPlan> bind_representative(const ir::Plan& plan, const std::optional<Grid>& grid,
                                      const std::vector<std::int64_t>& block_bytes);

class Binder {
 public:
  // Error if the plan does not verify (bind relies on its trace).
  static Result<Binder> create(const ir::Plan& plan);

  // block_bytes: one size for all blocks, or one per block (alltoall and scatter only). `root`:
  // the root's coordinates, required for rooted ops and refused otherwise. Errors name the bad
  // argument (wrong coordinate count, negative size, a bad root, a route through a rank
  // outside the mesh).
  Result<BoundPlan> bind(const Grid& grid, const Coords& coords, const std::vector<std::int64_t>& block_bytes,
                         const std::optional<Coords>& root = std::nullopt) const;

  const ir::Plan& plan() const { return plan_; }

 private:
  Binder(ir::Plan plan, ir::Trace trace) : plan_(std::move(plan)), trace_(std::move(trace)) {}
  ir::Plan plan_;
  ir::Trace trace_;
};

}  // namespace cartplan::engine
