// Predicting one exchange of a plan with the cost model (cost_model.h), term by term, for one
// process that has all its neighbours (the interior of a mesh, every process of a torus).
// Block sizes are the real per-block sizes (faces and corners of a halo differ), not a mean.
//
//   CostBreakdown c = predict(plan, {400}, CostModel{}, grid);   // one size for every block
//   CostBreakdown v = predict(plan, sizes, model, std::nullopt); // sizes[i] for block i
//   std::cout << c.total_us() << " = " << c.message_us << " + " << c.phase_us << " + ...";
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/cost_model.h"
#include "engine/grid.h"
#include "engine/lower.h"
#include "ir/plan.h"

namespace cartplan::engine {

// The plan's counts (model-free: what bench/calibrate fits against) and their prices.
struct CostBreakdown {
  double messages = 0;     // rounds to another process (on meshes: the mean over ranks)
  int phases = 0;          // phases with at least one message
  double wire_bytes = 0;   // bytes sent in messages
  double copy_bytes = 0;   // bytes moved locally: pack + unpack, self rounds, local copies
  double rendezvous = 0;   // contiguous messages above the eager limit
  double single_copy_bytes = 0;  // bytes of those contiguous messages
  double pipelined = 0;    // struct datatype messages above the eager limit
  double pipelined_bytes = 0;  // bytes of those messages
  double segments = 0;     // struct datatype segments: entries at the sender, final entries (+1 for temps) at the receiver
  double scatter_bytes = 0;  // bytes a struct receive puts straight into the caller's blocks
  double fragments = 0;    // messages that miss the fast box (above the inline limit, or the ring full)
  double message_us = 0;   // messages * alpha
  double phase_us = 0;     // phases * phase
  double wire_us = 0;      // wire_bytes * beta
  double copy_us = 0;      // copy_bytes * copy
  double rendezvous_us = 0;  // rendezvous * rendezvous
  double single_copy_us = 0;  // single_copy_bytes * single_copy
  double pipeline_us = 0;    // pipelined * pipeline + pipelined_bytes * pipeline per byte
  double segment_us = 0;     // segments * segment
  double scatter_us = 0;     // scatter_bytes * scatter
  double fragment_us = 0;    // fragments * fragment
  double total_us() const {
    return message_us + phase_us + wire_us + copy_us + rendezvous_us + single_copy_us + pipeline_us + segment_us +
           scatter_us + fragment_us;
  }
};

// block_bytes: one size for every block, or one per block (size t). With `grid`, a round whose
// shift leads every process back to itself (a multiple of a periodic dimension) is a local
// copy, not a message. Copy rules of the lowering (engine/lower.h, default options): a message of
// one entry is sent from and received into place; a message of several entries of at least
// struct_min_bytes on average (default LowerOptions::kDefaultStructMinBytes) goes by struct
// datatype (no copy);
// otherwise the sender packs every entry and the receiver unpacks the final ones (forwarded
// entries stay where they arrived). A round to the process itself copies its final entries
// (forwarded ones are aliased). An entry received from another process that only such rounds
// and final copies move on is received straight into its recv block (final_home.h) in messages
// up to home_max_message_bytes(model): it counts as a final entry, and the steps after it
// copy nothing.
// The share of processes with a peer at +shift (1 on a torus; (n-|s|)/n per mesh dimension).
double peer_share(const ir::Offset& shift, const Grid& grid);

// `struct_min_bytes`: the lowering's LowerOptions::struct_min_bytes the copies are counted for.
// `contiguous`: whether each block (one flag for all, or one per plan block; empty: all) is laid out
// contiguously in the caller's memory on every rank. Above the eager limit a message of one
// entry whose block is contiguous, or a packed message, takes Open MPI's single-copy path
// (rendezvous_us, and single_copy_us_per_byte per byte); one of a strided block (a halo's subarray) is pipelined like a struct
// datatype message (pipeline_us). With `grid`, a struct datatype message above the limit whose
// parts are one run of memory on both sides (as the lowering lays out one process's program,
// with the caller's blocks back to back in index order) is contiguous to Open MPI: single copy.
// Finding that lowers the plan once (alltoall and allgather only).
// Fragments: a message to another process of at most model.inline_limit_bytes goes through the
// receiving peer's fast box while this phase's earlier messages to that peer (in round order,
// kFastBoxHeaderBytes each on top) leave room in its model.fast_box_bytes; any other message
// counts as a fragment (cost_model.h, fragment_us). With `grid`, rounds that reach the same
// rank share one fast box. Alltoall and allgather
// messages of at least `trailer_min_bytes` (nullopt: trailer_min_bytes(model), as the MPI
// backend lowers without Info) carry the lowering's one-byte trailer: one
// byte more on the wire, a segment more on each side (two for a message that was not a struct
// datatype), and pipelined above the eager limit, never single copy.
CostBreakdown predict(const ir::Plan& plan, const std::vector<std::int64_t>& block_bytes, const CostModel& model,
                      const std::optional<Grid>& grid,
                      std::int64_t struct_min_bytes = LowerOptions::kDefaultStructMinBytes,
                      const std::vector<bool>& contiguous = {},
                      std::optional<std::int64_t> trailer_min_bytes = std::nullopt);

// True iff `shift` leads every process of `grid` back to itself.
bool wraps_to_self(const ir::Offset& shift, const Grid& grid);

// "messages 6 x 1.000 = 6.000 | phases 3 x 0.500 = 1.500 | ..." (the --explain line).
std::string explain(const CostBreakdown& c, const CostModel& model);

}  // namespace cartplan::engine
