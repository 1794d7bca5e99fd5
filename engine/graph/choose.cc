// The graph optimizer: candidates, prices and the choice against linear.
#include "engine/graph/choose.h"

#include <algorithm>
#include <utility>

#include "engine/graph/grid.h"
#include "engine/graph/grid_schedule.h"
#include "engine/graph/grid_setup.h"
#include "engine/graph/schedule.h"
#include "engine/graph/sequential_pairing.h"

namespace cartplan::engine::graph {

namespace {

// The d tried: the options' list, else 2, 3, 4 and the most-D grid kMaxGridD (both operations,
// forced grid and auto; the MPI backend's auto rows, price_table.h).
std::vector<int> grid_ds(const GraphPlanOptions& options) {
  if (!options.grid_dimensions.empty()) return options.grid_dimensions;
  return {2, 3, 4, kMaxGridD};
}

// The largest in- or out-degree of any rank (MPI's counts, parallel and self edges included).
int max_degree(const ir::graph::Topology& topology) {
  std::size_t most = 0;
  for (const ir::graph::RankEdges& r : topology.ranks) most = std::max({most, r.in.size(), r.out.size()});
  return static_cast<int>(most);
}

// The virtual grids to try: distinct, and of the asked number of dimensions unless grid is
// forced and none is (then the largest grid, possibly 1-D or, for p = 1, none). Auto's default
// list keeps the most-D grid only where the MPI backend's auto does (auto_prices_most_grid).
std::vector<std::vector<int>> grids_to_try(const ir::graph::Topology& topology, const GraphPlanOptions& options) {
  const int p = topology.size();
  const bool gated = options.algo == GraphAlgoChoice::kAuto && options.grid_dimensions.empty();
  std::vector<std::vector<int>> out, all;
  for (int d : grid_ds(options)) {
    std::vector<int> dims = grid_dims(p, d);
    if (std::find(all.begin(), all.end(), dims) == all.end()) all.push_back(dims);
    // kMaxGridD asks for the most-D grid: kept where it has more than 4 dimensions (the backend's row)
    const int nd = static_cast<int>(dims.size());
    const bool most = d == kMaxGridD && nd > 4 && (!gated || auto_prices_most_grid(nd, 0, max_degree(topology)));
    const bool asked = nd == d || most;
    if (asked && std::find(out.begin(), out.end(), dims) == out.end()) out.push_back(dims);
  }
  if (out.empty() && options.algo == GraphAlgoChoice::kGrid && !all.empty())
    out.push_back(*std::max_element(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.size() < b.size(); }));
  return out;
}

Result<std::vector<GraphCandidate>> grid_candidates(ir::graph::GraphOp op, const ir::graph::Topology& topology,
                                                    const BlockSizes& sizes, const GraphPlanOptions& options) {
  std::vector<GraphCandidate> out;
  for (const std::vector<int>& dims : grids_to_try(topology, options)) {
    std::optional<SetupStats> stats;
    std::vector<GridPattern> patterns;
    if (options.sequential_construction) {
      patterns = sequential_grid_patterns(topology, dims);
    } else {
      Result<GridSetupRun> run = run_grid_setup(topology, dims);
      if (!run) return fail(run.error());
      patterns = std::move(run->patterns);
      stats = run->stats;
    }
    ir::graph::GraphPlan plan = grid_plan(op, topology, dims, patterns);
    GraphCost cost = price_plan(plan, sizes, options.model);
    out.push_back(GraphCandidate{std::move(plan), cost, stats});
  }
  return out;
}

}  // namespace

Result<std::vector<GraphCandidate>> graph_candidates(ir::graph::GraphOp op, const ir::graph::Topology& topology,
                                                     const BlockSizes& sizes, const GraphPlanOptions& options) {
  if (auto e = ir::graph::topology_error(topology)) return fail(*e);
  if (sizes.op() != op) return fail("block sizes are for another collective");
  if (options.pairing.theta < 1) return fail("theta must be at least 1, got " + std::to_string(options.pairing.theta));
  std::vector<GraphCandidate> out;
  const GraphAlgoChoice a = options.algo;
  if (a == GraphAlgoChoice::kAuto || a == GraphAlgoChoice::kLinear) {
    ir::graph::GraphPlan plan = linear_plan(op, topology);
    GraphCost cost = price_plan(plan, sizes, options.model);
    out.push_back(GraphCandidate{std::move(plan), cost, std::nullopt});
  }
  for (bool cumulative : {false, true}) {
    const GraphAlgoChoice mine = cumulative ? GraphAlgoChoice::kCumulative : GraphAlgoChoice::kPairing;
    if (a != GraphAlgoChoice::kAuto && a != mine) continue;
    PairingOptions po = options.pairing;
    po.cumulative = cumulative;
    std::optional<SetupStats> stats;
    std::vector<RankPattern> patterns;
    if (options.sequential_construction) {
      patterns = sequential_patterns(topology, po);
    } else {
      Result<SetupRun> run = run_setup(topology, po);
      if (!run) return fail(run.error());
      patterns = std::move(run->patterns);
      stats = run->stats;
    }
    ir::graph::GraphPlan plan = plan_from_patterns(op, topology, patterns, po);
    GraphCost cost = price_plan(plan, sizes, options.model);
    out.push_back(GraphCandidate{std::move(plan), cost, stats});
  }
  if (a == GraphAlgoChoice::kAuto || a == GraphAlgoChoice::kGrid) {
    Result<std::vector<GraphCandidate>> grids = grid_candidates(op, topology, sizes, options);
    if (!grids) return fail(grids.error());
    for (GraphCandidate& c : *grids) out.push_back(std::move(c));
  }
  return out;
}

std::size_t pick_graph_candidate(const std::vector<GraphCandidate>& cands) {
  std::size_t linear = cands.size(), best = cands.size();
  for (std::size_t i = 0; i < cands.size(); ++i) {
    if (cands[i].plan.algorithm() == ir::graph::GraphAlgorithm::kLinear) {
      linear = i;
    } else if (best == cands.size() || cands[i].cost.max_rank_us < cands[best].cost.max_rank_us) {
      best = i;
    }
  }
  if (linear == cands.size()) return best == cands.size() ? 0 : best;
  if (best == cands.size()) return linear;
  return cands[best].cost.max_rank_us <= (1.0 - kGraphGain) * cands[linear].cost.max_rank_us ? best : linear;
}

Result<ir::graph::GraphPlan> make_graph_plan(ir::graph::GraphOp op, const ir::graph::Topology& topology, const BlockSizes& sizes,
                                             const GraphPlanOptions& options) {
  Result<std::vector<GraphCandidate>> cands = graph_candidates(op, topology, sizes, options);
  if (!cands) return fail(cands.error());
  return std::move((*cands)[pick_graph_candidate(*cands)].plan);
}

}  // namespace cartplan::engine::graph
