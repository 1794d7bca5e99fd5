// The model's price of a halo plan through the cost model's term table (engine/cost_model.h,
// kCostTerms): a halo program's counts are engine::Features, priced by engine::price like every
// other plan, so a new term of the table prices halos as soon as halo_features counts it.
// Counted: messages to another rank, phases with such messages, bytes on the wire, bytes a rank
// moves to itself (a periodic dimension of size 1: copy_bytes), and messages above
// eager_limit_bytes as the rendezvous step alone. Halo messages are subarray datatypes received
// where they belong: nothing else is copied, and no per-byte price of the step (single copy,
// pipeline) is counted for them (the transport-neutral terms only). Receives are not priced
// apart (every rank sends as much as it receives).
//
// A plan is priced per rank on the grid and the busiest rank counts: every rank's program
// depends only on whether it is first, last or inside each non-periodic dimension, so a few
// representatives cover them all. Without a grid, a rank with every neighbour a distinct
// other process (a large torus).
//
//   HaloCost c = price_halo(binder, CostModel{}, grid);   // grid: std::optional<Grid>
//   std::printf("%.2f us, %lld bytes sent\n", c.us, (long long)c.counts.sent_bytes);
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/cost_model.h"
#include "engine/grid.h"
#include "engine/placement.h"
#include "engine/halo/bind.h"
#include "engine/halo/program.h"
#include "engine/predict.h"

namespace cartplan::engine::halo {

struct HaloCost {
  double us = 0;       // terms.total_us()
  CostBreakdown terms;  // the table's counts (halo_features) and their prices
  int rank = 0;  // the rank priced (the busiest representative)
  HaloCounts counts;
  std::int64_t temp_bytes = 0;  // scratch memory of the plan's temps
};

// The table's counts of `program` (see above). With `grid` (the one the program was lowered on)
// and a placement that spans nodes, also the placement counts (engine/placement.h): each send's
// shift is its peer's coordinates minus the rank's.
Features halo_features(const HaloProgram& program, std::int64_t eager_limit_bytes, const Grid* grid = nullptr,
                       const Placement& placement = {});

HaloCost price_program(const HaloProgram& program, const CostModel& model, const Grid* grid = nullptr,
                       const Placement& placement = {});

// The busiest rank's cost (the lowest rank on ties). placement: which ranks share a node on
// `grid` (block or cyclic; unknown: one node, as without a grid).
Result<HaloCost> price_halo(const HaloBinder& binder, const CostModel& model, const std::optional<Grid>& grid,
                            const Placement& placement = {});

// engine::explain's line: "messages 4 x 1.000 = 4.000 | phases 2 x 0.500 = 1.000 | ... | total 5.6 us"
std::string explain(const HaloCost& cost, const CostModel& model);

}  // namespace cartplan::engine::halo
