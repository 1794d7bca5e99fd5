// The model's price of a graph schedule. Only the cost model's transport-neutral terms are
// used (engine/cost_model.h): alpha_us per message, phase_us per phase with messages,
// beta_us_per_byte per wire byte, copy_us_per_byte per copied byte, and the eager/rendezvous
// step (rendezvous_us above eager_limit_bytes). A message costs its two ends half each: a rank
// that sends s and receives r messages in a phase pays (s + r) / 2 * alpha, so a symmetric
// exchange of one message each way costs alpha, as a Cartesian round does. Messages of several
// blocks are packed and unpacked (copy_us_per_byte on both ends); copies cost their bytes.
//
// Two graph-wide figures: max_rank_us, the largest per-rank sum (what every rank can compute
// from its own schedule and agree on with one max-reduction at creation; the optimizer uses it),
// and critical_path_us, where a rank starts a phase only when its own previous phase and the
// previous phase of every rank it receives from in this phase have finished.
//
//   GraphCost c = price_plan(plan, sizes, CostModel{});
//   std::printf("%.2f us (critical path %.2f us)\n", c.max_rank_us, c.critical_path_us);
#pragma once

#include <cstdint>
#include <vector>

#include "engine/cost_model.h"
#include "engine/graph/sizes.h"
#include "ir/graph/plan.h"

namespace cartplan::engine::graph {

struct RankCost {
  double us = 0;
  int phases = 0;  // phases with messages
  std::int64_t sends = 0, recvs = 0;
  std::int64_t sent_bytes = 0, received_bytes = 0, copied_bytes = 0;
};

struct GraphCost {
  double max_rank_us = 0;
  int max_rank = 0;  // the rank with the largest sum (lowest on ties)
  double mean_rank_us = 0;
  double critical_path_us = 0;
  std::int64_t messages = 0;           // sends over all ranks
  std::int64_t bytes = 0;              // bytes of those
  std::int64_t max_rank_messages = 0;  // sends + receives of the busiest rank
  int phases = 0;                      // the most phases with messages of any rank
};

// One phase of one rank (0 if it has nothing to do in it).
double phase_us(const ir::graph::GraphPhase& phase, const BlockSizes& sizes, const CostModel& model);
// One rank's schedule, by itself (the per-rank sum of price_rank, without the plan).
double schedule_us(const ir::graph::RankSchedule& schedule, const BlockSizes& sizes, const CostModel& model);
RankCost price_rank(const ir::graph::GraphPlan& plan, int rank, const BlockSizes& sizes, const CostModel& model);
GraphCost price_plan(const ir::graph::GraphPlan& plan, const BlockSizes& sizes, const CostModel& model);

}  // namespace cartplan::engine::graph
