// Predicting one exchange of a plan with the cost model (cost_model.h): the plan is bound for a
// process that has all its neighbours (bind_representative), lowered as the MPI backend lowers
// it (lower.h), its features counted on that program (features.h) and priced term by term.
// Predictions depend on rank-independent inputs only, so they are the same on every rank.
//
//   CostBreakdown c = predict(plan, {400}, CostModel{}, grid);   // one size for every block
//   CostBreakdown v = predict(plan, sizes, model, std::nullopt); // sizes[i] for block i
//   std::cout << c.total_us() << " = " << c.us(&CostModel::alpha_us) << " + ...";
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "engine/cost_model.h"
#include "engine/features.h"
#include "engine/grid.h"
#include "engine/lower.h"
#include "engine/placement.h"
#include "ir/plan.h"

namespace cartplan::engine {

// The plan's counts (model-free: what bench/calibrate fits against) and their prices, term by
// term in kCostTerms' order.
struct CostBreakdown {
  Features counts;
  std::array<double, kCostTerms.size()> term_us{};  // counts.*feature * model.*price
  // Minus the part of the phases' messages that runs concurrently (model.phase_overlap x the sum
  // over phases of the cheaper side's price, counts.sides); 0 without it.
  double overlap_us = 0;
  // False when the block sizes cannot be lowered (negative, or their sums could overflow 64
  // bits): the counts are then zero and the total infinite, so no such plan is ever preferred.
  bool priced = true;
  double total_us() const {
    double us = overlap_us;
    for (double t : term_us) us += t;
    return priced ? us : std::numeric_limits<double>::infinity();
  }
  // The price of the term whose price is `price`, e.g. us(&CostModel::rendezvous_us).
  double us(double CostModel::*price) const;
};

// The lowering's choices a prediction needs beyond the model.
struct PredictOptions {
  // The options of the lowering the counts are for. The engine's defaults are transport-neutral
  // (no trailers, homes in every message); the MPI backend lowers with its profile's thresholds
  // (backends/mpi/openmpi_profile.h: openmpi::lower_options(model)), which callers pass here
  // to predict what it runs.
  LowerOptions lowering;
  // Whether each block (one flag for all, or one per plan block; empty: all) is contiguous in the
  // caller's memory on every rank: the layout the program is lowered with.
  std::vector<bool> contiguous;
  // Which ranks share a node on the grid (placement.h: block or cyclic), for the placement
  // counts; unknown (the default): every process on one node (they count 0, as without a grid).
  Placement placement{};
};

// block_bytes: one size for every block, or one per block (size t). With `grid` (of the plan's
// dimension), rounds whose shift wraps to the process itself are local copies, and on meshes
// each round counts for the share of processes that have its peer (features.h); without one, a
// torus large enough that no shift wraps. The program is lowered with options.lowering.
CostBreakdown predict(const ir::Plan& plan, const std::vector<std::int64_t>& block_bytes, const CostModel& model,
                      const std::optional<Grid>& grid, const PredictOptions& options = {});

// The counts priced with `model`: the sum over kCostTerms of count x price, less, per phase
// with placement sides, model.phase_overlap x the cheaper of its on-node and off-node sends'
// prices (with phase_overlap 1 a phase's messages cost the dearer side's, not the sum).
CostBreakdown price(const Features& counts, const CostModel& model);

// "messages 6 x 1.000 = 6.000 | phases 3 x 0.500 = 1.500 | wire 2400 B x 0.000500 = 1.200 | ...
// | total 9.1 us" (the --explain line: every term of kCostTerms).
std::string explain(const CostBreakdown& c, const CostModel& model);

}  // namespace cartplan::engine
