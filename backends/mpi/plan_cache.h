// PlanCache: a communicator's plans, made (or taken from Info cartplan_plan), bound to this rank
// and kept by everything that chooses them, so that repeated calls do not re-plan.
//
//   PlanCache plans(nbh, grid, coords);              // the owner's, which outlive it
//   std::shared_ptr<const BoundPlanEntry> entry;
//   MpiStatus s = plans.plan_for(ir::Op::kAlltoall, options, /*block_bytes=*/64, &entry);
//   // entry->plan is the plan, entry->bound this rank's view of it; the same call again
//   // returns the same entry.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "backends/mpi/info_options.h"
#include "backends/mpi/status.h"
#include "engine/bind.h"
#include "engine/grid.h"
#include "engine/neighborhood.h"
#include "ir/plan.h"

namespace cartplan::mpi {

// A plan bound to this rank, shared by every exchange that uses it.
struct BoundPlanEntry {
  ir::Plan plan;
  engine::BoundPlan bound;
};

class PlanCache {
 public:
  // `nbh`, `grid` and `coords` are the owner's (NeighborhoodComm) and must outlive the cache.
  PlanCache(const engine::Neighborhood& nbh, const engine::Grid& grid, const engine::Coords& coords)
      : nbh_(nbh), grid_(grid), coords_(coords) {}
  PlanCache(const PlanCache&) = delete;
  PlanCache& operator=(const PlanCache&) = delete;

  // The plan for `op` with `options` and blocks of `block_bytes`, bound to this rank (rooted
  // ops: with the root's rank, which the caller has checked is in the grid). Cached: blocking
  // calls re-plan only when the size class, options or root change.
  MpiStatus plan_for(ir::Op op, const Options& options, std::int64_t block_bytes,
                     std::shared_ptr<const BoundPlanEntry>* out, int root = -1);
  // The same with one size per block (size t, v/w requests; negative: no rank uses the block),
  // so that the prediction sees faces and corners as they are instead of their mean, and,
  // where every rank agreed on it, whether each block is contiguous in memory on every rank
  // (one flag per size; empty: assume contiguous).
  MpiStatus plan_for(ir::Op op, const Options& options, const std::vector<std::int64_t>& block_sizes,
                     std::shared_ptr<const BoundPlanEntry>* out, int root = -1, const std::vector<bool>& contiguous = {});

  // Measuring mode (Options::tune_measure): the optimizer's distinct candidates for `op` with
  // these block sizes, the model's pick (engine::pick_candidate) first, then cheapest
  // prediction first, those predicted within kMeasureRange of the cheapest and at most
  // kMeasureMaxCandidates, each bound to this rank. The same list on every rank: it depends
  // only on agreed arguments. Not cached: persistent init keeps the one it measures fastest.
  static constexpr double kMeasureRange = 2.0;
  static constexpr int kMeasureMaxCandidates = 4;
  // The order and range above on any list of predictions (the halo API's candidates too), as
  // indices: `pick` first, then the others cheapest first (stable), only those within
  // kMeasureRange of the cheapest. The caller drops duplicates and stops at kMeasureMaxCandidates.
  //   measure_order({5, 3, 7, 9}, 0) == {0, 1, 2}   // 9 > 2 x 3
  static std::vector<std::size_t> measure_order(const std::vector<double>& predicted_us, std::size_t pick);
  struct CandidateEntry {
    std::string name;  // engine::Candidate::name
    double predicted_us = 0;
    std::shared_ptr<const BoundPlanEntry> entry;
  };
  MpiStatus candidate_entries(ir::Op op, const Options& options, const std::vector<std::int64_t>& block_sizes,
                              const std::vector<bool>& contiguous, std::vector<CandidateEntry>* out);

  // How many plans are kept; at most kMaxEntries (then the cache starts again empty).
  static constexpr std::size_t kMaxEntries = 64;
  std::size_t size() const { return cache_.size(); }

 private:
  engine::PlanOptions planner_options(const Options& o, const std::vector<std::int64_t>& block_sizes,
                                      const std::vector<bool>& contiguous) const;
  // `plan` bound to this rank (rooted ops: with the root's rank, else -1), dumped if asked.
  MpiStatus bind_entry(const ir::Plan& plan, int root, std::shared_ptr<const BoundPlanEntry>* out);

  const engine::Neighborhood& nbh_;
  const engine::Grid& grid_;
  const engine::Coords& coords_;
  // (op, algorithm, model terms, dimension order or {-1} for auto, block sizes ({0} unless auto),
  // root or -1, fingerprint of a given plan or 0, contiguity flags (empty unless auto))
  using PlanKey =
      std::tuple<int, int, std::vector<double>, std::vector<int>, std::vector<std::int64_t>, int, std::uint64_t, std::vector<bool>>;
  std::map<PlanKey, std::shared_ptr<const BoundPlanEntry>> cache_;
};

}  // namespace cartplan::mpi
