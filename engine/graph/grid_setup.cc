// The grid patterns' distributed construction: one rank's rounds, and all ranks in one process.
#include "engine/graph/grid_setup.h"

#include <algorithm>
#include <string>
#include <utility>

namespace cartplan::engine::graph {

GridRankBuilder::GridRankBuilder(int rank, std::vector<int> dims, const ir::graph::RankEdges& edges)
    : rank_(rank), dims_(std::move(dims)), held_(own_flows(rank, edges)) {
  pattern_.rank = rank;
}

std::vector<GridSetupMessage> GridRankBuilder::start() { return done() ? std::vector<GridSetupMessage>{} : announce(); }

// Splits the held flows of this round's dimension by the line peer they go to; keeps the rest.
std::vector<GridSetupMessage> GridRankBuilder::announce() {
  const int k = round_;
  std::vector<GridSetupMessage> out;
  std::vector<GridFlow> keep;
  std::vector<int> coords = grid_coords(rank_, dims_);
  const int mine = coords[k];
  for (int v = 0; v < dims_[k]; ++v) {
    if (v == mine) continue;
    coords[k] = v;
    out.push_back(GridSetupMessage{rank_, grid_rank(coords, dims_), k, {}});
  }
  for (const GridFlow& f : held_) {
    const int v = grid_coords(f.target, dims_)[k];
    if (v == mine) keep.push_back(f);
    else out[v < mine ? v : v - 1].flows.push_back(f);
  }
  held_ = std::move(keep);
  for (GridSetupMessage& m : out) {
    std::sort(m.flows.begin(), m.flows.end());
    if (!m.flows.empty()) pattern_.sends.push_back(GridMessage{k, m.to, m.flows});
  }
  return out;
}

Result<std::vector<GridSetupMessage>> GridRankBuilder::step(std::vector<GridSetupMessage> messages) {
  if (done()) return fail("rank " + std::to_string(rank_) + " got set-up messages after it finished");
  const int k = round_;
  const std::string at = "rank " + std::to_string(rank_) + ", round " + std::to_string(k) + ": ";
  if (static_cast<int>(messages.size()) != dims_[k] - 1)
    return fail(at + std::to_string(messages.size()) + " messages, expected " + std::to_string(dims_[k] - 1));
  std::sort(messages.begin(), messages.end(), [](const auto& a, const auto& b) { return a.from < b.from; });
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const GridSetupMessage& m = messages[i];
    if (m.round != k || m.to != rank_ || m.from == rank_ || grid_hop(rank_, m.from, k, dims_) != m.from ||
        (i > 0 && messages[i - 1].from == m.from))
      return fail(at + "unexpected message from rank " + std::to_string(m.from));
    if (!m.flows.empty()) pattern_.recvs.push_back(GridMessage{k, m.from, m.flows});
    for (const GridFlow& f : m.flows)
      if (f.target != rank_) held_.push_back(f);
  }
  ++round_;
  if (done()) return std::vector<GridSetupMessage>{};
  return announce();
}

Result<GridSetupRun> run_grid_setup(const ir::graph::Topology& topology, const std::vector<int>& dims) {
  if (auto e = ir::graph::topology_error(topology)) return fail(*e);
  const int p = topology.size();
  std::vector<GridRankBuilder> ranks;
  ranks.reserve(p);
  for (int r = 0; r < p; ++r) ranks.emplace_back(r, dims, topology.ranks[r]);
  GridSetupRun run;
  SetupTally tally(p);
  std::vector<std::vector<GridSetupMessage>> inbox(p);
  auto post = [&](std::vector<GridSetupMessage>&& out) {
    for (GridSetupMessage& m : out) {
      tally.count(m, &run.stats);
      inbox[m.to].push_back(std::move(m));
    }
  };
  for (int r = 0; r < p; ++r) post(ranks[r].start());
  for (int round = 0; round < static_cast<int>(dims.size()); ++round) {
    ++run.stats.rounds;
    std::vector<std::vector<GridSetupMessage>> delivered(p);
    std::swap(delivered, inbox);
    for (int r = 0; r < p; ++r) {
      Result<std::vector<GridSetupMessage>> next = ranks[r].step(std::move(delivered[r]));
      if (!next) return fail("internal error in the grid construction: " + next.error());
      post(std::move(*next));
    }
  }
  run.patterns.reserve(p);
  for (int r = 0; r < p; ++r) run.patterns.push_back(ranks[r].pattern());
  tally.finish(&run.stats);
  return run;
}

}  // namespace cartplan::engine::graph
