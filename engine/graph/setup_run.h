// Runs the distributed pattern construction of every rank in one process: a round delivers the
// messages sent in the previous round and lets every rank advance (setup_rank.h). Counts the
// set-up rounds, messages and bytes, as an MPI run at communicator creation would exchange.
//
//   Result<SetupRun> run = run_setup(topology, PairingOptions{});
//   run->stats.rounds;   run->patterns[r];   // rank r's pattern
#pragma once

#include <cstdint>
#include <vector>

#include "engine/graph/pattern.h"
#include "ir/graph/topology.h"
#include "ir/result.h"

namespace cartplan::engine::graph {

struct SetupStats {
  int rounds = 0;                 // rounds until no rank has anything left to do
  std::int64_t messages = 0;      // over all ranks and rounds
  std::int64_t bytes = 0;         // payload bytes (SetupMessage::bytes)
  std::int64_t max_rank_messages = 0;  // sent by one rank
  std::int64_t max_rank_bytes = 0;
  int max_iterations = 0;         // of Alg. 1 on any rank
  friend bool operator==(const SetupStats&, const SetupStats&) = default;
};

// Counts a construction's messages (any type with `from` and bytes()) into SetupStats: in all as
// they are sent, and the most one rank sent when finished.
class SetupTally {
 public:
  explicit SetupTally(int ranks) : messages_(ranks, 0), bytes_(ranks, 0) {}
  template <class Message>
  void count(const Message& m, SetupStats* stats) {
    ++messages_[m.from];
    bytes_[m.from] += m.bytes();
    ++stats->messages;
    stats->bytes += m.bytes();
  }
  void finish(SetupStats* stats) const;

 private:
  std::vector<std::int64_t> messages_, bytes_;
};

struct SetupRun {
  std::vector<RankPattern> patterns;  // one per rank
  SetupStats stats;
};

// An error if the topology is inconsistent, or (an internal failure, reported rather than
// hanging) if the ranks do not finish within a bound on rounds.
Result<SetupRun> run_setup(const ir::graph::Topology& topology, const PairingOptions& options);

}  // namespace cartplan::engine::graph
