// lower(): the rules that turn one rank's bound plan into a Program (engine/program.h): which
// messages are packed, which go by datatype, which rounds become local copies, where temp slots
// sit in the staging arena, and which forwarded blocks need no copy at all.
//
// Alltoall and allgather:
//  - A round to this rank itself (a shift that wraps around a small torus dimension) is a
//    local step. When it only moves a block into a temp slot, the slot becomes the block's
//    current location instead (no copy): the source is never written again while the slot is
//    read, since staging regions are written once per run and send blocks never.
//  - A message of one location uses it directly; several contiguous locations are packed into a
//    staging region at the phase's start (sends) or unpacked from one after it (receives);
//    otherwise one struct datatype covers them. Temp slots received by a message live in its
//    staging region, so forwarding them later reads them where they arrived.
//  - A send whose entries already lie in order, back to back, in one staging region (blocks
//    forwarded together as they arrived) is sent from there without packing.
//  - With LowerOptions::struct_min_bytes, messages of large contiguous parts go by struct
//    datatype instead: sends gather from where the blocks are, receives put final blocks
//    straight into the caller's memory and temp slots into staging (pack only at the first hop
//    is then none at all: MPI does the one copy).
//  - A block received into a temp slot that only rounds to this rank itself and final copies
//    move on, into a recv block nothing else writes or reads, is received into that block
//    (final_home.h; in messages up to LowerOptions::home_max_message_bytes): the steps after
//    it find it in place. On a grid such as 2x1x..x1 that is every block that crosses
//    dimension 0 before dimensions of size 1.
//  - With LowerOptions::trailer_min_bytes, messages to another rank of at least that size end
//    with a one-byte trailer of their own in staging, so that neither side is one run of memory.
//  - Copies into the caller's recv blocks that nothing reads later (every alltoall delivery;
//    allgather's blocks that its trees do not forward) run at the end, sorted by block: the
//    executor then moves neighbouring blocks with one memcpy, and no phase waits for them.
// Reductions and rooted ops: temp slots and recv blocks that are not the caller's are scratch
// blocks (sized like the block they stand for, laid out like Layout::unit); a received entry that combines is received into a fresh scratch block and reduced
// into its location after the phase, in plan order (rounds, then entries), before the phase's
// copies. That is the order bind() and the simulator assume.
//
//   Layout layout;  layout.send = {{8, true}, ...};  layout.recv = {...};
//   Result<Program> p = lower(plan, bound, layout);   // bound = Binder::bind(...) of this rank
//   ProgramCounts c = count(*p);                       // messages, copied bytes
#pragma once

#include <cstdint>
#include <vector>

#include "engine/bind.h"
#include "engine/program.h"
#include "ir/plan.h"
#include "ir/result.h"

namespace cartplan::engine {

// One block of the caller's memory: its bytes (0 when absent or not significant on this rank)
// and whether they are adjacent in memory at the block's address.
struct BlockLayout {
  std::int64_t bytes = 0;
  bool contiguous = true;
};

struct Layout {
  std::vector<BlockLayout> send;  // plan.num_send_blocks() entries
  std::vector<BlockLayout> recv;  // plan.num_recv_blocks() entries
  // Bytes of a block of each shape (one for all, or one per block): the size of the temp slots
  // shaped like it. Empty: the sizes the plan was bound with. A rank that neither sends nor
  // receives a v/w block may not know its size (-1); it never forwards such a block.
  std::vector<std::int64_t> shape_bytes;
  // Reductions and rooted ops only: the layout of one block of the call (scratch blocks copy
  // it), and per recv block whether it is the caller's memory (else scratch, where written).
  BlockLayout unit;
  std::vector<bool> recv_user;
};

// Choices lower() leaves to its caller: thresholds that depend on the machine's MPI. The defaults
// are transport-neutral (no trailers, blocks at home in every message); a transport profile sets
// them from the cost model (backends/mpi/openmpi_profile.h), Info keys override them
// (docs/cost-model.md).
struct LowerOptions {
  // A message of several contiguous parts is packed into (or unpacked from) staging with memcpy
  // unless its parts have at least this many bytes on average (a datatype costs per segment, a
  // memcpy per byte: a halo message of one large face and a few small corners goes by struct);
  // then one struct datatype covers the parts
  // where they are (MPI gathers and scatters them itself: no copy by cartplan). Negative: always
  // pack. The default sits between the block sizes where struct datatypes lose to packing and
  // those where they win.
  static constexpr std::int64_t kDefaultStructMinBytes = 256;
  std::int64_t struct_min_bytes = kDefaultStructMinBytes;
  // Blocks received into temp slots that only local steps move on go straight into their recv
  // block (final_home.h) in messages of at most this many bytes; -1: in every message. Above
  // the eager limit that can make a message one run of the caller's memory, which an MPI
  // library may move by another path than a message of several parts.
  std::int64_t home_max_message_bytes = -1;
  // Messages to another rank of at least this many bytes carry one more byte, a trailer sent
  // from and received into a staging byte of its own (-1: none). Neither side of such a
  // message is one run of memory, which steers an MPI library that moves one-run messages
  // by a single copy onto its pipeline instead (the cost model's rendezvous and pipeline terms
  // price the two). The trailer changes what travels: sender and receiver must use
  // the same value, and they agree on the message's size, so both add it or neither does.
  std::int64_t trailer_min_bytes = -1;
};

// `bound` must come from binding `plan` (Binder::bind) for this rank. Errors name a layout that
// does not fit the plan (block counts, negative sizes).
Result<Program> lower(const ir::Plan& plan, const BoundPlan& bound, const Layout& layout, const LowerOptions& options = {});

// The caller's blocks of a bound plan as plain contiguous memory of the bound sizes (what a
// simulator or the CLI uses when no real buffers exist).
Layout contiguous_layout(const ir::Plan& plan, const BoundPlan& bound);

}  // namespace cartplan::engine
