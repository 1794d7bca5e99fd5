// The model's price of a halo plan, from the cost model's transport-neutral terms only
// (engine/cost_model.h): alpha_us per message to another rank, beta_us_per_byte per byte on the
// wire, rendezvous_us per message above eager_limit_bytes, phase_us per phase with such
// messages, copy_us_per_byte per byte a rank moves to itself (a periodic dimension of size 1).
// Halo programs copy nothing else: every region goes by subarray datatype, received where it
// belongs. Receives are not priced apart (every rank sends as much as it receives).
//
// A plan is priced per rank on the grid and the busiest rank counts: every rank's program
// depends only on whether it is first, last or inside each non-periodic dimension, so a few
// representatives cover them all. Without a grid, a rank with every neighbour a distinct
// other process (a large torus).
//
//   HaloCost c = price_halo(binder, CostModel{}, grid);   // grid: std::optional<Grid>
//   std::printf("%.2f us, %lld bytes sent\n", c.us, (long long)c.sent_bytes);
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/cost_model.h"
#include "engine/grid.h"
#include "engine/halo/bind.h"
#include "engine/halo/program.h"

namespace cartplan::engine::halo {

struct HaloCost {
  double us = 0;  // the sum of the terms below
  double message_us = 0, wire_us = 0, rendezvous_us = 0, phase_us = 0, copy_us = 0;
  int rank = 0;  // the rank priced (the busiest representative)
  HaloCounts counts;
  std::int64_t temp_bytes = 0;  // scratch memory of the plan's temps
};

HaloCost price_program(const HaloProgram& program, const CostModel& model);

// The busiest rank's cost (the lowest rank on ties).
Result<HaloCost> price_halo(const HaloBinder& binder, const CostModel& model, const std::optional<Grid>& grid);

// "messages 4 x 1.000 = 4.000 | wire 1088 B x 0.0005 = 0.544 | ..."
std::string explain(const HaloCost& cost, const CostModel& model);

}  // namespace cartplan::engine::halo
