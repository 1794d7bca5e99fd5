// The in-process driver of the distributed pattern construction: all ranks, round by round.
#include "engine/graph/setup_run.h"

#include <algorithm>
#include <utility>

#include "engine/graph/setup_rank.h"

namespace cartplan::engine::graph {

Result<SetupRun> run_setup(const ir::graph::Topology& topology, const PairingOptions& options) {
  if (auto e = ir::graph::topology_error(topology)) return fail(*e);
  const int p = topology.size();
  std::vector<RankBuilder> ranks;
  ranks.reserve(p);
  for (int r = 0; r < p; ++r) ranks.emplace_back(r, topology.ranks[r].out, topology.ranks[r].in, options);
  SetupRun run;
  SetupTally tally(p);
  std::vector<std::vector<SetupMessage>> inbox(p);
  auto post = [&](std::vector<SetupMessage>&& out) {
    for (SetupMessage& m : out) {
      tally.count(m, &run.stats);
      inbox[m.to].push_back(std::move(m));
    }
  };
  for (int r = 0; r < p; ++r) post(ranks[r].start());
  // Every round either moves a rank forward or the construction is stuck; the bound is far above
  // what options allow (each iteration takes at most 2 * max_match_rounds + 3 rounds).
  const long long bound = 4LL * (options.max_iterations + 2) * (2LL * options.max_match_rounds + 4);
  while (true) {
    bool all_done = true, pending = false;
    for (int r = 0; r < p; ++r) {
      all_done = all_done && ranks[r].done();
      pending = pending || !inbox[r].empty();
    }
    if (all_done && !pending) break;
    // A rank advances only on messages, so with none in flight an unfinished rank would wait forever.
    if (!pending) return fail("internal error: the pattern construction is stuck after " + std::to_string(run.stats.rounds) + " rounds");
    if (++run.stats.rounds > bound) return fail("internal error: the pattern construction did not finish in " + std::to_string(bound) + " rounds");
    std::vector<std::vector<SetupMessage>> delivered(p);
    std::swap(delivered, inbox);
    for (int r = 0; r < p; ++r) {
      // A finished rank never gets another message: the MPI driver (backends/mpi/graph_setup.cc)
      // stops receiving once done() and relies on this.
      if (!delivered[r].empty() && ranks[r].done())
        return fail("internal error: rank " + std::to_string(r) + " got a set-up message after it finished");
      if (!ranks[r].done()) post(ranks[r].step(std::move(delivered[r])));
    }
  }
  run.patterns.reserve(p);
  for (int r = 0; r < p; ++r) {
    run.patterns.push_back(ranks[r].pattern());
    run.stats.max_iterations = std::max(run.stats.max_iterations, run.patterns.back().iterations);
  }
  tally.finish(&run.stats);
  return run;
}

void SetupTally::finish(SetupStats* stats) const {
  stats->max_rank_messages = messages_.empty() ? 0 : *std::max_element(messages_.begin(), messages_.end());
  stats->max_rank_bytes = bytes_.empty() ? 0 : *std::max_element(bytes_.begin(), bytes_.end());
}

}  // namespace cartplan::engine::graph
