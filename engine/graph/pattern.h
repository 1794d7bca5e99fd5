// The message-combining pattern of seed 003 (Mirsadeghi et al., Sect. IV) for one rank: what
// the distributed construction (setup_rank.h) computes once per graph, independent of the
// collective, its buffers and block sizes. schedule.h turns it into a rank's schedule for
// allgather or alltoall (the paper's Alg. 3).
//
// Items are (origin, edges): the data of `origin` for a target, carried over `edges` parallel
// edges origin -> target (allgather sends that block once, alltoall sends `edges` blocks).
//
//   RankPattern p = builder.pattern();
//   for (const Stage& s : p.stages) exchange_with(s.partner, s.handed_out, s.handed_in);
//   for (const PatternSend& m : p.sends) send(m.target, m.phase, m.items);
#pragma once

#include <utility>
#include <vector>

namespace cartplan::engine::graph {

using Item = std::pair<int, int>;  // (origin, parallel edges origin -> target)

// What a rank carries to one target: its own item and what partners handed over.
struct Bundle {
  int target = 0;
  std::vector<Item> items;  // sorted by origin
  friend bool operator==(const Bundle&, const Bundle&) = default;
};

// One combining stage: the rank and `partner` exchange the items of their common neighbours
// in phase `phase`; afterwards the rank carries the partner's items for the targets of
// handed_in and the partner carries the rank's for the targets of handed_out.
struct Stage {
  int iteration = 0;
  int partner = 0;
  int phase = 0;
  std::vector<Bundle> handed_out;  // targets: the common neighbours offloaded to the partner
  std::vector<Bundle> handed_in;   // targets: the common neighbours onloaded from the partner
  friend bool operator==(const Stage&, const Stage&) = default;
};

struct PatternSend {
  int target = 0;
  int phase = 0;
  std::vector<Item> items;
  friend bool operator==(const PatternSend&, const PatternSend&) = default;
};

struct PatternRecv {
  int source = 0;
  int phase = 0;
  std::vector<Item> items;  // origins whose data arrives in this message
  friend bool operator==(const PatternRecv&, const PatternRecv&) = default;
};

struct RankPattern {
  int rank = 0;
  int iterations = 0;  // iterations of Alg. 1 this rank ran before it left the loop
  std::vector<Stage> stages;
  std::vector<PatternSend> sends;  // sorted by (phase, target)
  std::vector<PatternRecv> recvs;  // sorted by (phase, source)
  friend bool operator==(const RankPattern&, const RankPattern&) = default;
};

// pairing: seed 003 as published -- a neighbour is combined in at most one stage, each stage is
// two phases (exchange with the partner, then the combined messages), the rest goes directly
// in a last phase. cumulative: a neighbour onloaded in a stage stays active, so later stages
// combine it again (seed 003's future work, "cumulative combining"); all exchanges come first,
// one phase per iteration, and every target gets one message in the last phase.
struct PairingOptions {
  bool cumulative = false;
  int theta = 4;              // friends: at least theta common active out-neighbours (seed 003 uses 4)
  int max_iterations = 32;    // of Alg. 1; a rank still having friends then stops combining
  int max_match_rounds = 32;  // of Alg. 2 per iteration; an unpaired rank then is terminal
  friend bool operator==(const PairingOptions&, const PairingOptions&) = default;
};

// The phases of iteration t's exchange and combined sends, and of the direct sends of a rank
// that left the loop after `iterations` iterations.
int exchange_phase(const PairingOptions& o, int t);
int combined_phase(const PairingOptions& o, int t);  // pairing only
int final_phase(const PairingOptions& o, int iterations);

// Union of two item lists sorted by origin (origins are distinct between them).
std::vector<Item> merge_items(const std::vector<Item>& a, const std::vector<Item>& b);

}  // namespace cartplan::engine::graph
