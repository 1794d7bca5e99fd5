// The messages of the distributed pattern construction (setup_rank.h). In MPI each is one
// point-to-point message whose tag encodes (kind, iteration, sub-round) and whose payload is
// `payload` as MPI_INT (or `value` for the one-integer kinds); a receiver knows from its own
// state which peers it expects each kind from, so it never waits for an unknown sender.
//
//   SetupMessage m{.from = 3, .to = 7, .kind = SetupKind::kChoice, .iteration = 0, .sub = 2, .value = 5};
#pragma once

#include <cstdint>
#include <vector>

namespace cartplan::engine::graph {

// Who talks to whom (docs/graphs.md, "Distributed construction"):
//  kInList    out-neighbour -> its active in-neighbours: its active in-neighbour list (the rows
//             of the common-neighbourhood matrix M, seed 003 Sect. IV-B1 and IV-B3)
//  kChoice    rank -> its active friends: the friend it chose in this matching sub-round (Alg. 2 l. 23)
//  kState     rank -> its active friends: paired, terminal or searching (Alg. 2 l. 27)
//  kHandover  rank -> its partner: the items of the common neighbours it offloads
//  kNote      rank -> its active out-neighbours: onloaded (with the partner), offloaded, no
//             change, or done (Alg. 1 l. 20 and 26)
enum class SetupKind : std::uint8_t { kInList, kChoice, kState, kHandover, kNote };

struct SetupMessage {
  int from = 0, to = 0;
  SetupKind kind = SetupKind::kInList;
  int iteration = 0;  // Alg. 1 iteration; kInList before the first: -1
  int sub = 0;        // Alg. 2 sub-round (kChoice, kState)
  int value = 0;      // kChoice: the chosen rank or -1; kState: 0 searching, 1 paired, 2 terminal
  int value2 = 0;     // kNote: code in `value` (0 none, 1 onloaded, 2 offloaded, 3 done), partner here
  std::vector<int> payload;  // kInList, kHandover
  // Bytes on the wire: 4 per integer of the payload (the kind, iteration and sub-round travel
  // in the tag).
  std::int64_t bytes() const;
};

}  // namespace cartplan::engine::graph
