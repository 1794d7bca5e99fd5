// The distributed construction of the grid patterns (grid.h): one rank's part as logic over
// messages, and a driver that runs every rank in one process and counts what they exchanged.
//
// Round k (k = 0 .. d-1): every rank tells each other rank of its grid line in dimension k (the
// ranks that differ from it in coordinate k only) which flows it will forward to it in phase k:
// its own flows and those it received in earlier rounds whose target's coordinate k is that
// rank's. Every line peer gets a message, empty ones included, so a rank knows whom it waits
// for: dims[k] - 1 messages per rank and round, d rounds, and no rank ever learns more than the
// flows that pass through it. Received flows whose target is the rank itself have arrived.
//
//   GridRankBuilder b(rank, dims, my_edges);
//   std::vector<GridSetupMessage> out = b.start();     // round 0's messages
//   while (!b.done()) out = b.step(messages_for_me);    // all dims[k]-1 of the round
//   GridPattern p = b.pattern();
#pragma once

#include <cstdint>
#include <vector>

#include "engine/graph/grid.h"
#include "engine/graph/setup_run.h"
#include "ir/graph/topology.h"
#include "ir/result.h"

namespace cartplan::engine::graph {

// In MPI: one point-to-point message per (from, to, round) with tag = round and the flows as
// 3 MPI_INTs each (origin, target, edges).
struct GridSetupMessage {
  int from = 0, to = 0;
  int round = 0;  // = the phase whose sends it announces
  std::vector<GridFlow> flows;
  std::int64_t bytes() const { return 12 * static_cast<std::int64_t>(flows.size()); }
};

class GridRankBuilder {
 public:
  GridRankBuilder(int rank, std::vector<int> dims, const ir::graph::RankEdges& edges);
  // The messages of round 0 (none if the grid has no dimension).
  std::vector<GridSetupMessage> start();
  // Consumes the dims[round] - 1 messages of the current round (any order) and returns the next
  // round's. An error if one is missing, repeated or not from a line peer.
  Result<std::vector<GridSetupMessage>> step(std::vector<GridSetupMessage> messages);
  bool done() const { return round_ >= static_cast<int>(dims_.size()); }
  const GridPattern& pattern() const { return pattern_; }

 private:
  std::vector<GridSetupMessage> announce();
  int rank_;
  std::vector<int> dims_;
  int round_ = 0;
  std::vector<GridFlow> held_;  // flows this rank still forwards
  GridPattern pattern_;
};

struct GridSetupRun {
  std::vector<GridPattern> patterns;  // one per rank
  SetupStats stats;                   // rounds, messages (empty ones included), payload bytes
};

// Runs every rank's builder; dims must multiply to the topology's ranks.
Result<GridSetupRun> run_grid_setup(const ir::graph::Topology& topology, const std::vector<int>& dims);

}  // namespace cartplan::engine::graph
