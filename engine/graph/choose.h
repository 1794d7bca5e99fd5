// The graph optimizer: builds the candidate schedules the request allows (linear; seed 003's
// pairing; cumulative pairing; virtual-grid routing in 2, 3 and 4 dimensions, grid.h), prices each (price.h) and keeps linear unless a combining
// schedule is predicted at least kGraphGain cheaper. The combining candidates come from the
// distributed construction (setup_run.h), the same per-rank logic the MPI backend will run.
//
// In MPI the choice needs one agreement at creation: every rank prices its own schedule of each
// candidate and a max-reduction of those few numbers gives every rank the same max_rank_us, so
// every rank picks the same candidate. Nothing of this runs per call.
//
//   GraphPlanOptions o;                                   // auto, theta 4, built-in model
//   Result<std::vector<GraphCandidate>> c = graph_candidates(GraphOp::kAllgather, t, sizes, o);
//   const GraphCandidate& best = (*c)[pick_graph_candidate(*c)];
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/cost_model.h"
#include "engine/graph/pattern.h"
#include "engine/graph/price.h"
#include "engine/graph/setup_run.h"
#include "engine/graph/sizes.h"
#include "ir/graph/plan.h"
#include "ir/result.h"

namespace cartplan::engine::graph {

enum class GraphAlgoChoice { kAuto, kLinear, kPairing, kCumulative, kGrid };

struct GraphPlanOptions {
  GraphAlgoChoice algo = GraphAlgoChoice::kAuto;
  PairingOptions pairing;  // theta and the round caps; `cumulative` is set per candidate
  CostModel model;
  // Build the patterns with sequential_pairing.h instead of running every rank's messages
  // (same patterns; for large graphs planned offline). The candidates then have no set-up stats.
  bool sequential_construction = false;
  // grid: the virtual grids tried, by most dimensions (grid_dims(p, d)); a d whose grid has
  // fewer dimensions than d (p prime, p < 4 for d = 2, ...) is skipped, except kMaxGridD (30),
  // the most-D grid, kept where it has more than 4, and except that forced grid falls back to the
  // largest grid there is. Empty: 2, 3, 4 and kMaxGridD, for both operations, as the MPI backend's
  // auto (the most-D grid joined it once simulated, bench/results/smpi/graph_hcube.md); under
  // auto the most-D grid only where some rank's degree exceeds its dimensions, as the backend's
  // auto decides (auto_prices_most_grid, grid.h).
  std::vector<int> grid_dimensions;
};

struct GraphCandidate {
  ir::graph::GraphPlan plan;
  GraphCost cost;
  std::optional<SetupStats> setup;  // combining candidates built by run_setup: what it exchanged
};

// A combining schedule must be predicted this much cheaper than linear (max_rank_us) to be
// picked: the per-rank model is coarse (no contention, no overlap between phases), and a
// combining schedule adds forwarding, packing and set-up that the model prices least well.
inline constexpr double kGraphGain = 0.10;

// The candidates for options.algo (auto: all of them), linear first.
Result<std::vector<GraphCandidate>> graph_candidates(ir::graph::GraphOp op, const ir::graph::Topology& topology,
                                                     const BlockSizes& sizes, const GraphPlanOptions& options);

// Index of the candidate to run: the cheapest combining one if it clears kGraphGain against
// linear, else linear (index 0 when present).
std::size_t pick_graph_candidate(const std::vector<GraphCandidate>& candidates);

// A whole-graph plan for options.algo (auto: pick_graph_candidate).
Result<ir::graph::GraphPlan> make_graph_plan(ir::graph::GraphOp op, const ir::graph::Topology& topology,
                                             const BlockSizes& sizes, const GraphPlanOptions& options);

}  // namespace cartplan::engine::graph
