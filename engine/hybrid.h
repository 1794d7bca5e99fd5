// Hybrid plans (seed 000 Sect. 3.4): the blocks of some offsets are sent directly, the others
// combined. The plan is the combining phases of the remaining blocks in dim_order, with one
// direct round per chosen distinct offset (all blocks of that offset in it) added in front of
// the first phase that has rounds: direct rounds wait for nothing, so they add no phase (that
// phase becomes an all-dimensions phase). Tags are renumbered in round order; the local copies
// (zero offset, allgather duplicates) of both parts run at the end. Direct and combining parts
// touch disjoint blocks, so the plan passes the same ir::verify(). Its kind is
// ir::PlanKind::kHybrid (JSON "algorithm": "hybrid"), its algorithm combining: executors run it
// like any combining plan.
//
// search_hybrid() chooses the direct set greedily under the model: starting from nothing, it
// adds the offset (with at most kMaxHybridUnits distinct non-zero offsets) or the class of
// offsets with the same number of non-zero coordinates (faces, edges, corners; otherwise) that
// makes the plan cheapest, and stops when no addition is cheaper. The first step is always
// taken and the last offset (class) is never moved, so the result is a proper hybrid.
//
//   std::optional<HybridChoice> h = search_hybrid(op, nbh, order, {400}, model, grid);
//   if (h) use(h->plan);  // h->direct: the offsets sent directly
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/cost_model.h"
#include "engine/grid.h"
#include "engine/neighborhood.h"
#include "engine/predict.h"
#include "ir/plan.h"

namespace cartplan::engine {

// Up to this many distinct non-zero offsets the greedy search moves single offsets; above it,
// classes of offsets with the same number of non-zero coordinates.
inline constexpr int kMaxHybridUnits = 32;

// Ops with hybrid plans: alltoall and allgather, and the rooted ops that run their plans
// (scatter; bcast, gather).
bool supports_hybrid(ir::Op op);

// The hybrid plan sending the blocks whose offsets are in `direct` directly. Requires
// supports_hybrid(op), a valid dim_order, and `direct` a set of non-zero offsets of nbh that
// leaves at least one non-zero offset to combine; an empty `direct` gives the combining plan's
// schedule (kind combining).
ir::Plan plan_hybrid(ir::Op op, const Neighborhood& nbh, const std::vector<int>& dim_order,
                     const std::vector<Offset>& direct);

struct HybridChoice {
  std::vector<Offset> direct;  // distinct, in first-occurrence order in nbh
  ir::Plan plan;
  CostBreakdown cost;
};

// The greedy hybrid for block sizes `block_bytes`, predicted with `options`; nullopt when op has no
// hybrid plans or nbh has fewer than two distinct non-zero offsets (or, above kMaxHybridUnits,
// fewer than two classes).
std::optional<HybridChoice> search_hybrid(ir::Op op, const Neighborhood& nbh, const std::vector<int>& dim_order,
                                          const std::vector<std::int64_t>& block_bytes, const CostModel& model,
                                          const std::optional<Grid>& grid, const PredictOptions& options = {});

}  // namespace cartplan::engine
