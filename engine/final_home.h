// final_homes(): which blocks received into temp slots can be received straight into the recv
// block they end in.
//
// A block received from another process into a temp slot and then only moved on by local
// moves (rounds that wrap to the process itself, final copies) ends in one recv block. If
// nothing else writes that block and nothing reads it, the block can be received there at
// once: the local moves after it become no-ops. On a grid such as 2x1x..x1 this is every
// block that crosses dimension 0 before rounds of the dimensions of size 1. Planners reuse
// temp slots, so what is followed is each value written, not the slot.
//
//   std::vector<Move> moves = ...;   // every performed entry of one run, with its step
//   std::vector<int> home = final_homes(moves, plan.temp_slots().size(), plan.num_recv_blocks());
//   if (home[i] >= 0) { /* receive what moves[i] brings into recv block home[i] */ }
#pragma once

#include <optional>
#include <vector>

#include "ir/plan.h"

namespace cartplan::engine {

// One performed entry. A local move has both ends; an entry of a message to another process
// has only `from` (sent) or only `to` (received). A move reads what moves of earlier steps
// wrote; no location is both read and written in one step (a phase's rounds read the state
// before the phase).
struct Move {
  int step = 0;
  std::optional<ir::BufRef> from;
  std::optional<ir::BufRef> to;
};

// Per move, the recv block that the value it writes into a temp slot alone fills, or -1. A
// value has a home when it is read once, by a local move into a temp slot whose value has a
// home or into a recv block that is written once and never read. Combining entries
// (BufRef::reduce) have none.
std::vector<int> final_homes(const std::vector<Move>& moves, int num_temp, int num_recv);

}  // namespace cartplan::engine
