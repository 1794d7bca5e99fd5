// NeighborhoodComm: the state cartplan attaches to a Cartesian communicator (the neighbourhood,
// the grid, this rank's coordinates, planning options, a plan cache and a private duplicate
// communicator for cartplan's own traffic), and the collective that creates it.
//
//   MPI_Comm cart;
//   MpiStatus s = create_neighborhood(MPI_COMM_WORLD, 2, dims, periods, 8, offsets, MPI_INFO_NULL, 0, &cart);
//   NeighborhoodComm* n = find_neighborhood(cart);   // nullptr if cart has no neighbourhood
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "backends/mpi/lanes.h"
#include "backends/mpi/status.h"
#include "engine/bind.h"
#include "engine/grid.h"
#include "engine/lower.h"
#include "engine/neighborhood.h"
#include "engine/optimizer.h"
#include "ir/plan.h"

namespace cartplan::mpi {

// A communicator's options: its Info keys (at Cart_neighborhood_create, or per _init call to
// override; parse_info in neighborhood_comm.cc reads them, docs/info-keys.md lists them with
// their values and defaults), the cost model found or named, and the environment's defaults.
struct Options {
  engine::AlgoChoice algo = engine::AlgoChoice::kAuto;
  std::optional<std::vector<int>> dim_order;  // nullopt: auto
  engine::CostModel model;
  bool check_collective = false;
  // A plan given with cartplan_plan, verified; fingerprint: plan_fingerprint of its canonical
  // text, which ranks compare to agree that they run the same plan.
  struct GivenPlan {
    std::string path;
    ir::Plan plan;
    std::uint64_t fingerprint = 0;
  };
  std::shared_ptr<const GivenPlan> given_plan;
  // engine::LowerOptions::struct_min_bytes (Info cartplan_struct_min_bytes): messages whose
  // contiguous parts all have at least this many bytes go by struct datatype instead of being
  // packed; -1 always packs. Local: sender and receiver may differ (the bytes on the wire are
  // the same either way), so it is not part of the agreement.
  std::int64_t struct_min_bytes = engine::LowerOptions::kDefaultStructMinBytes;
  // engine::LowerOptions::home_max_message_bytes (Info cartplan_home_max_bytes): blocks go
  // straight into their recv blocks in messages of at most this many bytes (-1: every
  // message); nullopt: engine::home_max_message_bytes(model). Local, like struct_min_bytes.
  std::optional<std::int64_t> home_max_message_bytes;
  // engine::LowerOptions::trailer_min_bytes (Info cartplan_trailer_min_bytes): messages of at
  // least this many bytes carry a one-byte trailer, so that Open MPI pipelines them instead of
  // reading them with a single copy (-1: none); nullopt: engine::trailer_min_bytes(model).
  // It changes what travels, so ranks agree on it like on the model.
  std::optional<std::int64_t> trailer_min_bytes;
  // Info cartplan_tune = measure (or CARTPLAN_TUNE=measure): persistent init of alltoall and
  // allgather (plain, v, w) with algorithm auto times the optimizer's close candidates on
  // scratch memory and keeps the fastest (exchange_measure.cc); model (default): the model's
  // pick. It decides which plan runs, so ranks agree on it like on the model.
  bool tune_measure = false;
  // Info cartplan_progress = any (default) | cartplan (or CARTPLAN_PROGRESS in the environment):
  // whether pending exchanges advance inside any MPI call (Open MPI's progress hook,
  // exchange_progress.cc) or only inside cartplan's calls. Local: no agreement needed.
  bool progress_anywhere = true;
};

// A hash of everything in `options` that changes what a collective does (algorithm, dimension
// order, model, checking mode): ranks agree on it at init and in checking mode.
std::int64_t options_fingerprint(const Options& options);

// Every price of the model, in one list (info_options.cc): the description ranks agree on at
// creation, the options' fingerprint and the plan cache key all change when any of them does.
std::vector<double> model_prices(const engine::CostModel& m);

// The value of Info `key` (empty, *present false, when info is MPI_INFO_NULL or lacks it).
std::string info_value(MPI_Info info, const char* key, bool* present);

// Reads the keys above from `info` on top of `base`. Errors (MPI_ERR_INFO_VALUE) name the key.
MpiStatus parse_info(MPI_Info info, int ndims, Options* options);

// Whether a given plan (if any) fits `nbh` and, unless op is nullopt, `op`: MPI_ERR_ARG naming
// the first difference (dimensions, number of offsets, an offset, the op).
MpiStatus check_given_plan(const Options& options, const engine::Neighborhood& nbh, std::optional<ir::Op> op);

class Exchange;

// What requests share with their communicator and may outlive it (a request can be freed after
// the communicator): the user's handle for error handlers, the lanes, and which request holds
// each non-blocking lane.
struct CommShared {
  CommShared(MPI_Comm user_comm, std::int64_t tag_ub) : user(user_comm), lanes(tag_ub) {
    nonblocking_holders.assign(static_cast<std::size_t>(lanes.nonblocking_lanes()), nullptr);
  }
  MPI_Comm user;  // MPI_COMM_NULL once freed
  Lanes lanes;
  std::mutex mu;  // under MPI_THREAD_MULTIPLE: the pool and the lane holders (exchange.cc)
  std::vector<Exchange*> nonblocking_holders;  // by lane - (1 + persistent lanes)
  // Completed non-blocking exchanges kept for reuse (Exchange::recycle). The deleter comes with
  // each entry, so that this header does not need Exchange's definition.
  std::vector<std::unique_ptr<Exchange, void (*)(Exchange*)>> pool;
  Exchange*& holder(int lane) {
    return nonblocking_holders[static_cast<std::size_t>(lane - 1 - lanes.persistent_lanes())];
  }
};

// A plan bound to this rank, shared by every exchange that uses it.
struct BoundPlanEntry {
  ir::Plan plan;
  engine::BoundPlan bound;
};

class NeighborhoodComm {
 public:
  NeighborhoodComm(MPI_Comm internal, engine::Neighborhood nbh, engine::Grid grid, engine::Coords coords, Options options);
  // A copy for a duplicate of the communicator (MPI_Comm_dup): same neighbourhood and options,
  // its own internal communicator, lanes and caches.
  NeighborhoodComm(const NeighborhoodComm& other, MPI_Comm internal);
  ~NeighborhoodComm();
  NeighborhoodComm(const NeighborhoodComm&) = delete;
  NeighborhoodComm& operator=(const NeighborhoodComm&) = delete;

  const engine::Neighborhood& nbh() const { return nbh_; }
  const engine::Grid& grid() const { return grid_; }
  const engine::Coords& coords() const { return coords_; }
  int rank() const { return grid_.rank(coords_); }
  const Options& options() const { return options_; }
  // Whether the process at +offset[i] (target) / -offset[i] (source) exists; computed once.
  bool has_target(int i) const { return has_target_[i]; }
  bool has_source(int i) const { return has_source_[i]; }
  // cartplan's own communicator (a duplicate, errors return): never matches user messages.
  MPI_Comm internal() const { return internal_; }

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
  // prediction first, those predicted
  // within kMeasureRange of the cheapest and at most kMeasureMaxCandidates, each bound to this
  // rank. The same list on every rank: it depends only on agreed arguments.
  static constexpr double kMeasureRange = 2.0;
  static constexpr int kMeasureMaxCandidates = 4;
  struct CandidateEntry {
    std::string name;  // engine::Candidate::name
    double predicted_us = 0;
    std::shared_ptr<const BoundPlanEntry> entry;
  };
  MpiStatus candidate_entries(ir::Op op, const Options& options, const std::vector<std::int64_t>& block_sizes,
                              const std::vector<bool>& contiguous, std::vector<CandidateEntry>* out);

  // True when every dimension is periodic: then every block has a source and a target on
  // every rank, so every rank knows every block's size from its own arguments.
  bool all_periodic() const { return all_periodic_; }

  const std::shared_ptr<CommShared>& shared() const { return shared_; }

  // Storage for the exchange of the last blocking call (owned here, typed by exchange.cc), so
  // that it is released with the communicator.
  std::shared_ptr<void>& blocking_slot() { return blocking_slot_; }

 private:
  engine::PlanOptions planner_options(const Options& o, const std::vector<std::int64_t>& block_sizes,
                                      const std::vector<bool>& contiguous) const;
  // `plan` bound to this rank (rooted ops: with the root's rank, else -1), dumped if asked.
  MpiStatus bind_entry(const ir::Plan& plan, int root, std::shared_ptr<const BoundPlanEntry>* out);

  MPI_Comm internal_;
  engine::Neighborhood nbh_;
  engine::Grid grid_;
  engine::Coords coords_;
  Options options_;
  std::vector<char> has_target_, has_source_;
  // (op, algorithm, model terms, dimension order or {-1} for auto, block sizes ({0} unless auto),
  // root or -1, fingerprint of a given plan or 0)
  using PlanKey =
      std::tuple<int, int, std::vector<double>, std::vector<int>, std::vector<std::int64_t>, int, std::uint64_t, std::vector<bool>>;
  std::map<PlanKey, std::shared_ptr<const BoundPlanEntry>> cache_;
  bool all_periodic_ = true;
  std::shared_ptr<CommShared> shared_;
  std::shared_ptr<void> blocking_slot_;
};

// Collective over `comm`. Checks arguments on every rank and agrees on the result, checks that
// every rank passed the same neighbourhood, dims, periods and Info options (broadcast from rank 0
// and compare, seed 000 Sect. 2.2), and that dims fit the communicator. On any error every rank
// returns the same error class; ranks beyond the grid get MPI_COMM_NULL, as with MPI_Cart_create.
// `caller_error`, if not ok, is an argument error the caller found; it is agreed like the others.
MpiStatus create_neighborhood(MPI_Comm comm, int d, const int dims[], const int periods[], int t,
                              const int targetrelative[], MPI_Info info, int reorder, MPI_Comm* cartcomm,
                              const MpiStatus& caller_error = {});

// The neighbourhood attached to `comm`, or nullptr. Also records `comm` as the user's handle
// (a duplicate's copy learns it here).
NeighborhoodComm* find_neighborhood(MPI_Comm comm);

// Like find_neighborhood, but an MPI_ERR_TOPOLOGY / MPI_ERR_COMM status when there is none.
MpiStatus require_neighborhood(MPI_Comm comm, NeighborhoodComm** out);

}  // namespace cartplan::mpi
