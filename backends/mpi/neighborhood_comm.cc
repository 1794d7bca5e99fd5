// Creating and finding neighbourhood communicators: argument checks, the cost model found,
// the agreement (neighborhood_agreement.h) and the state attached to the Cartesian communicator.
#include "backends/mpi/neighborhood_comm.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "backends/mpi/another_rank.h"
#include "backends/mpi/comm_keyval.h"
#include "backends/mpi/model_notice.h"
#include "backends/mpi/neighborhood_agreement.h"
#include "backends/mpi/node_map.h"
#include "backends/mpi/out_of_memory.h"
#include "backends/mpi/oversubscribed.h"
#include "backends/mpi/progressing_wait.h"
#include "backends/mpi/test_failure.h"
#include "engine/cost_model_locate.h"

namespace cartplan::mpi {
namespace {

// Keyval of the attribute that carries a NeighborhoodComm. Created on first use; the delete
// callback runs when the user frees the Cartesian communicator and releases everything.
int delete_attr(MPI_Comm, int, void* attr, void*) {
  delete static_cast<NeighborhoodComm*>(attr);
  return MPI_SUCCESS;
}

// MPI_Comm_dup of a cartplan communicator keeps its neighbourhood: the duplicate gets its own
// copy with its own internal communicator. Every rank runs this callback inside the collective
// MPI_Comm_dup in the same order, so the nested MPI_Comm_dup of the internal communicator is a
// properly ordered collective too.
int copy_attr(MPI_Comm, int, void*, void* in, void* out, int* flag) {
  *flag = 0;
  const auto* old = static_cast<const NeighborhoodComm*>(in);
  MPI_Comm internal = MPI_COMM_NULL;
  int rc = MPI_Comm_dup(old->internal(), &internal);
  if (rc != MPI_SUCCESS) return rc;
  MPI_Comm_set_errhandler(internal, MPI_ERRORS_RETURN);
  try {
    *static_cast<void**>(out) = new NeighborhoodComm(*old, internal);
  } catch (...) {
    MPI_Comm_free(&internal);
    return MPI_ERR_NO_MEM;
  }
  *flag = 1;
  return MPI_SUCCESS;
}

int keyval() {
  static int key = MPI_KEYVAL_INVALID;
  static const bool created = (create_state_keyval(copy_attr, delete_attr, &key), true);
  (void)created;
  return key;
}

}  // namespace

NeighborhoodComm::NeighborhoodComm(MPI_Comm internal, engine::Neighborhood nbh, engine::Grid grid, engine::Coords coords,
                                   Options options)
    : internal_(internal), nbh_(std::move(nbh)), grid_(std::move(grid)), coords_(std::move(coords)),
      options_(std::move(options)) {
  for (const ir::Offset& o : nbh_.offsets()) {
    const engine::Grid::Shift s = grid_.relative_shift(coords_, o);
    has_target_.push_back(s.dest != engine::kNoRank);
    has_source_.push_back(s.source != engine::kNoRank);
  }
  for (bool p : grid_.periods()) all_periodic_ = all_periodic_ && p;
  // MPI_TAG_UB is an attribute of MPI_COMM_WORLD only (Open MPI's Cartesian communicators and
  // their duplicates do not carry it); its value holds for every communicator.
  int* tag_ub = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
  shared_ = std::make_shared<CommShared>(MPI_COMM_NULL, flag && tag_ub ? *tag_ub : 32767);
}

void NeighborhoodComm::settle(MPI_Comm internal, const int* coords, const engine::Placement& placement) noexcept {
  internal_ = internal;
  for (std::size_t k = 0; k < coords_.size(); ++k) coords_[k] = coords[k];
  for (std::size_t i = 0; i < nbh_.offsets().size(); ++i) {
    has_target_[i] = grid_.shift_exists(coords_, nbh_.offsets()[i], +1);
    has_source_[i] = grid_.shift_exists(coords_, nbh_.offsets()[i], -1);
  }
  options_.placement = placement;
}

NeighborhoodComm::NeighborhoodComm(const NeighborhoodComm& other, MPI_Comm internal)
    : NeighborhoodComm(internal, other.nbh_, other.grid_, other.coords_, other.options_) {}

NeighborhoodComm::~NeighborhoodComm() {
  shared_->user = MPI_COMM_NULL;  // requests that outlive the communicator report on MPI_COMM_SELF
  shared_->pool.reset();          // pooled exchanges hold shared_ (a cycle) and use internal_
  blocking_cache_.reset();        // its requests live on internal_
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && internal_ != MPI_COMM_NULL) MPI_Comm_free(&internal_);
}

NeighborhoodComm* find_neighborhood(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return nullptr;
  void* attr = nullptr;
  int flag = 0;
  if (MPI_Comm_get_attr(comm, keyval(), &attr, &flag) != MPI_SUCCESS || !flag) return nullptr;
  auto* nc = static_cast<NeighborhoodComm*>(attr);
  nc->shared()->user = comm;
  return nc;
}

MpiStatus require_neighborhood(MPI_Comm comm, NeighborhoodComm** out) {
  if (comm == MPI_COMM_NULL) return mpi_error(MPI_ERR_COMM, "the communicator is MPI_COMM_NULL");
  *out = find_neighborhood(comm);
  if (!*out)
    return mpi_error(MPI_ERR_TOPOLOGY, "the communicator has no cartplan neighbourhood (create it with Cart_neighborhood_create)");
  return {};
}

// This rank's own checks of Cart_neighborhood_create's arguments, the neighbourhood they
// describe and the options (model found, Info keys). No communication.
MpiStatus check_arguments(int size, int d, const int dims[], const int periods[], int t, const int rel[], MPI_Info info,
                          MPI_Comm* cartcomm, MPI_Comm comm, std::optional<engine::Neighborhood>* nbh, Options* options,
                          bool* builtin_model) {
  if (!cartcomm) return mpi_error(MPI_ERR_ARG, "cartcomm is NULL");
  if (d < 1 || d > engine::Neighborhood::kMaxDims)
    return mpi_error(MPI_ERR_DIMS, "d = " + std::to_string(d) + " (expected 1.." + std::to_string(engine::Neighborhood::kMaxDims) + ")");
  if (!dims || !periods) return mpi_error(MPI_ERR_ARG, "dims or periods is NULL");
  if (t < 1) return mpi_error(MPI_ERR_ARG, "t = " + std::to_string(t) + " (a neighbourhood needs at least one offset)");
  if (!rel) return mpi_error(MPI_ERR_ARG, "targetrelative is NULL");
  for (int k = 0; k < d; ++k)
    if (dims[k] < 1) return mpi_error(MPI_ERR_DIMS, "dims[" + std::to_string(k) + "] = " + std::to_string(dims[k]));
  std::vector<ir::Offset> offsets(t, ir::Offset(d));
  for (int i = 0; i < t; ++i)
    for (int k = 0; k < d; ++k) offsets[i][k] = rel[static_cast<std::size_t>(i) * d + k];
  Result<engine::Neighborhood> n = engine::Neighborhood::create(d, std::move(offsets));
  if (!n) return mpi_error(MPI_ERR_ARG, n.error());
  *nbh = *n;
  // A calibrated model the user did not name: CARTPLAN_COST_MODEL, else the default location
  // (engine/cost_model_locate.h), else the built-in defaults. The Info keys override it.
  bool named = false;
  info_value(info, "cartplan_cost_model", &named);
  if (!named) {
    Result<engine::LocatedModel> found = engine::locate_cost_model(std::nullopt, size, std::getenv);
    if (!found) return mpi_error(MPI_ERR_ARG, found.error());
    options->model = found->model;
    *builtin_model = found->source == engine::ModelSource::kBuiltIn;
    verbose_model_notice(*found, comm, size);
  }
  MpiStatus st = parse_info(info, d, options);
  return st.ok() ? check_given_plan(*options, **nbh, std::nullopt) : st;
}

// The neighbourhood's state, made before creation's last agreement (its local steps: the grid
// and the state's allocations), on coordinates (0, ..., 0) until settle() after MPI_Cart_create.
MpiStatus make_state(int d, const int dims[], const int periods[], const engine::Neighborhood& nbh, const Options& options,
                     std::unique_ptr<NeighborhoodComm>* out) {
  return out_of_memory_as_error("making the neighbourhood's state", [&] {
    inject_out_of_memory("create-local");
    std::vector<bool> pbool(d);
    for (int k = 0; k < d; ++k) pbool[k] = periods[k] != 0;
    Result<engine::Grid> grid = engine::Grid::create(std::vector<int>(dims, dims + d), pbool);
    if (!grid) return mpi_error(MPI_ERR_DIMS, grid.error());
    *out = std::make_unique<NeighborhoodComm>(MPI_COMM_NULL, nbh, std::move(*grid), engine::Coords(d, 0), options);
    return MpiStatus{};
  });
}

// The Cartesian communicator with the neighbourhood's state attached (MPI_COMM_NULL beyond the
// grid, as MPI_Cart_create). After the agreements: MPI's own calls, and settle (allocates nothing).
MpiStatus attach_neighborhood(MPI_Comm comm, int d, const int dims[], const int periods[], int reorder,
                              std::unique_ptr<NeighborhoodComm> state, MPI_Comm* cartcomm) {
  std::array<int, engine::Neighborhood::kMaxDims> per{}, coords{};
  for (int k = 0; k < d; ++k) per[static_cast<std::size_t>(k)] = periods[k];
  MPI_Comm cart = MPI_COMM_NULL;
  CARTPLAN_MPI_CALL(MPI_Cart_create(comm, d, dims, per.data(), reorder, &cart));
  *cartcomm = cart;
  if (cart == MPI_COMM_NULL) return {};
  // Which ranks share a node (block or cyclic placement, node_map.h), learned on the Cartesian
  // communicator: the planner maps its ranks with r / R or r mod N, and reorder may renumber
  // them. Only where the model prices placement (agreed above, so every rank takes this branch alike).
  engine::Placement placement = state->options().placement;
  if (engine::prices_placement(state->options().model)) CARTPLAN_MPI_CALL(node_placement(cart, &placement));
  int cart_rank = 0;
  CARTPLAN_MPI_CALL(MPI_Comm_rank(cart, &cart_rank));
  CARTPLAN_MPI_CALL(MPI_Cart_coords(cart, cart_rank, d, coords.data()));
  MPI_Comm internal = MPI_COMM_NULL;
  CARTPLAN_MPI_CALL(MPI_Comm_dup(cart, &internal));
  CARTPLAN_MPI_CALL(MPI_Comm_set_errhandler(internal, MPI_ERRORS_RETURN));
  state->settle(internal, coords.data(), placement);
  // MPI_Cart_create numbers ranks row-major, exactly as engine::Grid does.
  assert(state->rank() == cart_rank && "MPI_Cart_coords agrees with row-major order");
  const int rc = MPI_Comm_set_attr(cart, keyval(), state.get());
  if (rc != MPI_SUCCESS) return from_mpi(rc, "MPI_Comm_set_attr");
  state.release();  // the attribute's now: delete_attr frees it with the communicator
  return {};
}

MpiStatus create_neighborhood(MPI_Comm comm, int d, const int dims[], const int periods[], int t,
                              const int rel[], MPI_Info info, int reorder, MPI_Comm* cartcomm,
                              const MpiStatus& caller_error) {
  if (comm == MPI_COMM_NULL) return mpi_error(MPI_ERR_COMM, "the communicator is MPI_COMM_NULL");
  int size = 0;
  CARTPLAN_MPI_CALL(MPI_Comm_size(comm, &size));

  // Local checks first, without returning: every rank must reach the agreement below, or a
  // rank with good arguments would wait forever for one with bad ones.
  MpiStatus local = caller_error;
  Options options;
  bool builtin_model = false;  // no calibrated model found or named
  std::optional<engine::Neighborhood> nbh;
  if (local.ok()) local = modes_from_env(&options);
  // Running out of memory here (the neighbourhood, the model) is this rank's MPI_ERR_NO_MEM for
  // the agreement, not an exception that passes it.
  if (local.ok())
    local = out_of_memory_as_error("checking the arguments of Cart_neighborhood_create", [&] {
      inject_out_of_memory("create-check");
      return check_arguments(size, d, dims, periods, t, rel, info, cartcomm, comm, &nbh, &options, &builtin_model);
    });
  // The call's first wait for its peers, before MPI_Comm_split_type (node_oversubscribed), which
  // has no non-blocking form: a barrier that advances the process's pending requests meanwhile
  // (progressing_wait.h), since a peer may need one of them to reach this call. Once it
  // completed every rank is inside the call, and the collectives after it block in MPI.
  CARTPLAN_MPI_CALL(progressing_barrier(comm));
  // Whether any node runs more of these processes than it has cores (see below).
  int oversubscribed = 0;
  CARTPLAN_MPI_CALL(node_oversubscribed(comm, &oversubscribed));
  // The largest error class any rank found: every rank returns the same class.
  const int mine_flags[2] = {local.ok() ? 0 : local.code, oversubscribed};
  int all_flags[2] = {};
  CARTPLAN_MPI_CALL(MPI_Allreduce(mine_flags, all_flags, 2, MPI_INT, MPI_MAX, comm));
  const int any_bad = all_flags[0];
  // Built-in defaults only (no calibration found, none named): on oversubscribed nodes a
  // phase costs a context switch (engine/cost_model.h). The same on every rank: agreed above.
  if (builtin_model && all_flags[1]) options.model.phase_us = engine::CostModel::kOversubscribedPhaseUs;
  if (any_bad)
    return mpi_error(any_bad, local.ok() ? another_rank_failed(any_bad, "Cart_neighborhood_create") : local.message);
  // The state's local steps, before the description's agreement, which carries their outcome.
  std::unique_ptr<NeighborhoodComm> state;
  const MpiStatus made = make_state(d, dims, periods, *nbh, options, &state);
  MpiStatus agreed = agree_on_description(comm, d, dims, periods, t, rel, options, made);
  if (!agreed.ok()) return agreed;

  std::int64_t product = 1;
  for (int k = 0; k < d; ++k) {
    product *= dims[k];
    if (product > size) break;
  }
  if (product > size)
    return mpi_error(MPI_ERR_DIMS, "dims multiply to more processes than the communicator has (" + std::to_string(size) + ")");
  return attach_neighborhood(comm, d, dims, periods, reorder, std::move(state), cartcomm);
}

}  // namespace cartplan::mpi
