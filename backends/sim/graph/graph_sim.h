// The graph simulator: runs a graph plan for every rank in one process with real bytes. Send
// blocks hold bytes that depend on the block's identity (origin, target, nth) and position;
// recv blocks start as a sentinel; messages are packed from their parts, matched k-th to k-th
// per (phase, sender, receiver) like MPI's non-overtaking rule within a tag, checked for size,
// and unpacked. Afterwards every recv block must hold the bytes of the block MPI delivers there.
// Reports per-rank message and byte counts and the model's time (engine/graph/price.h).
//
//   Result<GraphSimReport> r = simulate_graph(plan, BlockSizes::uniform(op, t, 8), {});
//   if (r && !r->ok) for (auto& e : r->errors) std::cerr << e << "\n";
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/cost_model.h"
#include "engine/graph/price.h"
#include "engine/graph/sizes.h"
#include "ir/graph/plan.h"
#include "ir/result.h"

namespace cartplan::sim::graph {

struct GraphSimOptions {
  engine::CostModel model;
  int max_errors = 50;
  // Faults injected on purpose so that tests show the checker catches them.
  enum class Fault { kNone, kCorruptByte, kDropMessage };
  Fault fault = Fault::kNone;
};

struct GraphSimReport {
  bool ok = false;
  std::vector<std::string> errors;
  std::int64_t error_count = 0;
  std::int64_t messages = 0;             // point-to-point messages over all ranks
  std::int64_t bytes = 0;                // their bytes
  std::int64_t max_rank_messages = 0;    // sends + receives of the busiest rank
  std::int64_t max_rank_bytes = 0;       // bytes sent + received by the busiest rank
  std::int64_t copied_bytes = 0;         // local copies over all ranks
  engine::graph::GraphCost cost;         // the model's prediction (price_plan)
  int ranks = 0;
  int phases = 0;
};

// An error (not a report) if the plan is structurally invalid (ir::graph::verify_structure),
// its block sizes are for another op, or the buffers would exceed 8 GiB.
Result<GraphSimReport> simulate_graph(const ir::graph::GraphPlan& plan, const engine::graph::BlockSizes& sizes,
                                      const GraphSimOptions& options);

}  // namespace cartplan::sim::graph
