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
#include <memory>
#include <mutex>
#include <vector>

#include "backends/mpi/info_options.h"
#include "backends/mpi/lanes.h"
#include "backends/mpi/plan_cache.h"
#include "backends/mpi/status.h"
#include "engine/grid.h"
#include "engine/neighborhood.h"
#include "ir/plan.h"

namespace cartplan::mpi {

class Exchange;
class ExchangePool;
struct BlockingCache;

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
  // Completed non-blocking exchanges kept for reuse (Exchange::recycle, exchange_reuse.h);
  // made on first use, under mu.
  std::shared_ptr<ExchangePool> pool;
  Exchange*& holder(int lane) {
    return nonblocking_holders[static_cast<std::size_t>(lane - 1 - lanes.persistent_lanes())];
  }
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
  // Cart_neighborhood_create makes the state before its last agreement (with coordinates of
  // any rank) and settles it after MPI_Cart_create: the private communicator, this rank's
  // coordinates there (reorder may move it: d of them) and the placement. Allocates nothing,
  // so nothing can fail after the agreement.
  void settle(MPI_Comm internal, const int* coords, const engine::Placement& placement) noexcept;
  // A state made before its communicator (MPI_COMM_NULL: a creation's local steps come before
  // its agreement, the communicator after it) takes it here; it frees it when destroyed.
  void adopt_internal(MPI_Comm internal) noexcept { internal_ = internal; }

  // The plans of this communicator, bound to this rank and cached (plan_cache.h).
  PlanCache& plans() { return plans_; }
  MpiStatus plan_for(ir::Op op, const Options& options, std::int64_t block_bytes,
                     std::shared_ptr<const BoundPlanEntry>* out, int root = -1) {
    return plans_.plan_for(op, options, block_bytes, out, root);
  }
  MpiStatus plan_for(ir::Op op, const Options& options, const std::vector<std::int64_t>& block_sizes,
                     std::shared_ptr<const BoundPlanEntry>* out, int root = -1, const std::vector<bool>& contiguous = {}) {
    return plans_.plan_for(op, options, block_sizes, out, root, contiguous);
  }

  // True when every dimension is periodic: then every block has a source and a target on
  // every rank, so every rank knows every block's size from its own arguments.
  bool all_periodic() const { return all_periodic_; }

  const std::shared_ptr<CommShared>& shared() const { return shared_; }

  // The exchange of the last blocking call (exchange_reuse.h; made on first use), owned here so
  // that it is released with the communicator.
  std::shared_ptr<BlockingCache>& blocking_cache() { return blocking_cache_; }

 private:
  MPI_Comm internal_;
  engine::Neighborhood nbh_;
  engine::Grid grid_;
  engine::Coords coords_;
  Options options_;
  std::vector<char> has_target_, has_source_;
  PlanCache plans_{nbh_, grid_, coords_};  // after the members it refers to
  bool all_periodic_ = true;
  std::shared_ptr<CommShared> shared_;
  std::shared_ptr<BlockingCache> blocking_cache_;
};

// Collective over `comm`. Checks arguments on every rank and agrees on the result, checks that
// every rank passed the same neighbourhood, dims, periods and Info options (broadcast from rank 0
// and compare, seed 000 Sect. 2.2), and that dims fit the communicator. On any error every rank
// returns the same error class; ranks beyond the grid get MPI_COMM_NULL, as with MPI_Cart_create.
// `caller_error`, if not ok, is an argument error the caller found; it is agreed like the others.
// Its first collective is a barrier whose wait advances the process's pending requests
// (progressing_wait.h), so a rank may call it before completing a multi-phase request that its
// peers complete first.
MpiStatus create_neighborhood(MPI_Comm comm, int d, const int dims[], const int periods[], int t,
                              const int targetrelative[], MPI_Info info, int reorder, MPI_Comm* cartcomm,
                              const MpiStatus& caller_error = {});

// The neighbourhood attached to `comm`, or nullptr. Also records `comm` as the user's handle
// (a duplicate's copy learns it here).
NeighborhoodComm* find_neighborhood(MPI_Comm comm);

// Like find_neighborhood, but an MPI_ERR_TOPOLOGY / MPI_ERR_COMM status when there is none.
MpiStatus require_neighborhood(MPI_Comm comm, NeighborhoodComm** out);

}  // namespace cartplan::mpi