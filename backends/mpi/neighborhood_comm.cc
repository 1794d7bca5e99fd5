// Creating, finding and caching plans for neighbourhood communicators.
#include "backends/mpi/neighborhood_comm.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <string>
#include <utility>

#include "backends/mpi/comm_keyval.h"
#include "backends/mpi/oversubscribed.h"
#include "backends/mpi/plan_dump.h"
#include "engine/cost_model_file.h"
#include "engine/cost_model_locate.h"
#include "engine/planner.h"
#include "ir/json.h"
#include "ir/parse_number.h"
#include "ir/read_file.h"
#include "ir/verify.h"

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

// Everything that must agree across ranks, flattened for one broadcast. Doubles travel as
// their bit patterns so that "the same" means bit-identical.
std::vector<std::int64_t> describe(int d, const int dims[], const int periods[], int t, const int rel[],
                                   const Options& o) {
  std::vector<std::int64_t> v;
  v.push_back(d);
  for (int k = 0; k < d; ++k) v.push_back(dims[k]);
  for (int k = 0; k < d; ++k) v.push_back(periods[k] ? 1 : 0);
  v.push_back(t);
  for (std::int64_t i = 0; i < std::int64_t{t} * d; ++i) v.push_back(rel[i]);
  v.push_back(static_cast<std::int64_t>(o.algo));
  v.push_back(o.dim_order ? 1 : 0);
  if (o.dim_order)
    for (int k : *o.dim_order) v.push_back(k);
  for (double price : model_prices(o.model)) {
    std::int64_t bits = 0;
    std::memcpy(&bits, &price, sizeof bits);
    v.push_back(bits);
  }
  v.push_back(o.check_collective ? 1 : 0);
  v.push_back(o.given_plan ? static_cast<std::int64_t>(o.given_plan->fingerprint >> 1) : -1);
  v.push_back(o.trailer_min_bytes ? *o.trailer_min_bytes : -2);
  v.push_back(o.tune_measure ? 1 : 0);
  return v;
}

// With CARTPLAN_VERBOSE=1, says once per process (on rank 0 of the first communicator) which
// cost model the backend found, or that it falls back to the built-in defaults.
void verbose_model_notice(const engine::LocatedModel& m, MPI_Comm comm, int np) {
  static bool said = false;
  const char* v = std::getenv("CARTPLAN_VERBOSE");
  if (said || !v || std::string(v) != "1") return;
  said = true;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank != 0) return;
  if (m.source == engine::ModelSource::kBuiltIn)
  {
    std::string where;
    for (const std::string& p : engine::default_cost_model_paths(np, std::getenv)) where += (where.empty() ? "" : " or ") + p;
    std::cerr << "cartplan: no calibrated cost model (CARTPLAN_COST_MODEL is unset and there is none at "
              << (where.empty() ? std::string("the default location: neither $XDG_CONFIG_HOME nor $HOME is set") : where)
              << "); using the built-in defaults. bench/calibrate measures one.\n";
  }
  else
    std::cerr << "cartplan: cost model from " << engine::describe(m) << "\n";
}

// What differs between this rank's description and rank 0's, in words.
std::string difference(const std::vector<std::int64_t>& mine, const std::vector<std::int64_t>& root, int d, int t) {
  if (mine.empty() || root.empty() || mine[0] != root[0])
    return "d differs: " + std::to_string(d) + " here, " + std::to_string(root.empty() ? -1 : root[0]) + " on rank 0";
  for (int k = 0; k < d; ++k)
    if (mine[1 + k] != root[1 + k]) return "dims[" + std::to_string(k) + "] differs: " + std::to_string(mine[1 + k]) +
                                           " here, " + std::to_string(root[1 + k]) + " on rank 0";
  for (int k = 0; k < d; ++k)
    if (mine[1 + d + k] != root[1 + d + k]) return "periods[" + std::to_string(k) + "] differs from rank 0";
  const std::size_t tpos = 1 + 2 * static_cast<std::size_t>(d);
  if (mine[tpos] != root[tpos])
    return "the neighbourhood size t differs: " + std::to_string(t) + " here, " + std::to_string(root[tpos]) + " on rank 0";
  for (int i = 0; i < t; ++i) {
    bool same = true;
    std::string here = "(", there = "(";
    for (int k = 0; k < d; ++k) {
      const std::size_t at = tpos + 1 + static_cast<std::size_t>(i) * d + k;
      same = same && mine[at] == root[at];
      here += (k ? "," : "") + std::to_string(mine[at]);
      there += (k ? "," : "") + std::to_string(root[at]);
    }
    if (!same) return "offset " + std::to_string(i) + " differs: " + here + ") here, " + there + ") on rank 0";
  }
  return "the Info options (cartplan_algorithm, cartplan_dim_order, cartplan_alpha_us, cartplan_beta_us_per_byte, "
         "cartplan_cost_model, cartplan_check, cartplan_plan, cartplan_trailer_min_bytes, cartplan_tune), CARTPLAN_CHECK, CARTPLAN_TUNE or the cost model found "
         "(CARTPLAN_COST_MODEL, the default location) differ from rank 0";
}

}  // namespace

MpiStatus check_given_plan(const Options& o, const engine::Neighborhood& nbh, std::optional<ir::Op> op) {
  if (!o.given_plan) return {};
  const ir::Plan& plan = o.given_plan->plan;
  const std::string key = "Info cartplan_plan = '" + o.given_plan->path + "': ";
  auto show = [](const ir::Offset& off) {
    std::string s = "(";
    for (std::size_t k = 0; k < off.size(); ++k) s += (k ? "," : "") + std::to_string(off[k]);
    return s + ")";
  };
  if (plan.ndims() != nbh.ndims())
    return mpi_error(MPI_ERR_ARG, key + "the plan has " + std::to_string(plan.ndims()) + " dimensions, the neighbourhood " +
                                      std::to_string(nbh.ndims()));
  if (plan.num_blocks() != nbh.size())
    return mpi_error(MPI_ERR_ARG, key + "the plan's neighbourhood has " + std::to_string(plan.num_blocks()) +
                                      " offsets, the communicator's " + std::to_string(nbh.size()));
  for (int i = 0; i < nbh.size(); ++i)
    if (plan.neighborhood()[i] != nbh.offsets()[i])
      return mpi_error(MPI_ERR_ARG, key + "offset " + std::to_string(i) + " is " + show(plan.neighborhood()[i]) +
                                        " in the plan, " + show(nbh.offsets()[i]) + " on the communicator");
  if (op && plan.op() != *op)
    return mpi_error(MPI_ERR_ARG, key + "the plan is for " + ir::to_string(plan.op()) + ", the request is " +
                                      ir::to_string(*op));
  return {};
}

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

NeighborhoodComm::NeighborhoodComm(const NeighborhoodComm& other, MPI_Comm internal)
    : NeighborhoodComm(internal, other.nbh_, other.grid_, other.coords_, other.options_) {}

NeighborhoodComm::~NeighborhoodComm() {
  shared_->user = MPI_COMM_NULL;  // requests that outlive the communicator report on MPI_COMM_SELF
  shared_->pool.clear();          // pooled exchanges hold shared_ (a cycle) and use internal_
  blocking_slot_.reset();         // its requests live on internal_
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && internal_ != MPI_COMM_NULL) MPI_Comm_free(&internal_);
}

MpiStatus NeighborhoodComm::plan_for(ir::Op op, const Options& o, std::int64_t block_bytes,
                                     std::shared_ptr<const BoundPlanEntry>* out, int root) {
  return plan_for(op, o, std::vector<std::int64_t>{block_bytes}, out, root);
}

MpiStatus NeighborhoodComm::plan_for(ir::Op op, const Options& o, const std::vector<std::int64_t>& sizes,
                                     std::shared_ptr<const BoundPlanEntry>* out, int root, const std::vector<bool>& contiguous) {
  // The optimizer predicts with the real per-block sizes (faces and corners of a halo); a block
  // no rank uses (negative: unknown) costs nothing. With a fixed algorithm the sizes do not
  // change the plan.
  std::vector<std::int64_t> block_sizes;
  for (std::int64_t s : sizes) block_sizes.push_back(std::max<std::int64_t>(s, 0));
  if (block_sizes.size() != 1 && static_cast<int>(block_sizes.size()) != nbh_.size())
    return mpi_error(MPI_ERR_INTERN, "plan_for: " + std::to_string(block_sizes.size()) + " block sizes for " +
                                         std::to_string(nbh_.size()) + " blocks");
  std::vector<bool> block_contiguous = contiguous;
  if (!block_contiguous.empty() && block_contiguous.size() != block_sizes.size())
    return mpi_error(MPI_ERR_INTERN, "plan_for: " + std::to_string(block_contiguous.size()) + " contiguity flags for " +
                                         std::to_string(block_sizes.size()) + " block sizes");
  if (o.algo != engine::AlgoChoice::kAuto || o.given_plan) {
    block_sizes.assign(1, 0);
    block_contiguous.clear();
  }
  const PlanKey key{static_cast<int>(op), static_cast<int>(o.algo), model_prices(o.model),
                    o.dim_order ? *o.dim_order : std::vector<int>{-1}, block_sizes, root,
                    o.given_plan ? o.given_plan->fingerprint : 0, block_contiguous};
  if (auto it = cache_.find(key); it != cache_.end()) {
    *out = it->second;
    return {};
  }
  engine::PlanOptions po = planner_options(o, block_sizes, block_contiguous);
  Result<ir::Plan> plan = fail("no plan");
  if (o.given_plan) {
    // A plan from cartplan_plan, verified when it was read; it must be this request's.
    MpiStatus fits = check_given_plan(o, nbh_, op);
    if (!fits.ok()) return fits;
    plan = o.given_plan->plan;
  } else {
    plan = engine::make_plan(op, nbh_, po);
  }
  if (!plan) return mpi_error(MPI_ERR_ARG, plan.error());
  std::shared_ptr<const BoundPlanEntry> entry;
  MpiStatus bound = bind_entry(*plan, root, &entry);
  if (!bound.ok()) return bound;
  if (cache_.size() >= 64) cache_.clear();  // bounded: a long run with many sizes does not grow
  cache_.emplace(key, entry);
  *out = entry;
  return {};
}

engine::PlanOptions NeighborhoodComm::planner_options(const Options& o, const std::vector<std::int64_t>& block_sizes,
                                                      const std::vector<bool>& contiguous) const {
  engine::PlanOptions po;
  po.algo = o.algo;
  po.dim_order = o.dim_order;
  po.model = o.model;
  if (block_sizes.size() == 1) po.block_bytes = block_sizes[0];
  else po.block_sizes = block_sizes;
  po.block_contiguous = contiguous;
  po.grid = grid_;  // rounds that wrap to this process are local copies: free in the prediction
  return po;
}

MpiStatus NeighborhoodComm::bind_entry(const ir::Plan& plan, int root, std::shared_ptr<const BoundPlanEntry>* out) {
  Result<engine::Binder> binder = engine::Binder::create(plan);
  if (!binder) return mpi_error(MPI_ERR_INTERN, binder.error());
  // Byte counts of the bound plan are not used by this backend (datatypes carry the sizes).
  std::optional<engine::Coords> root_coords;
  if (root >= 0) root_coords = grid_.coords(root);
  Result<engine::BoundPlan> bound = binder->bind(grid_, coords_, {0}, root_coords);
  if (!bound) return mpi_error(MPI_ERR_INTERN, bound.error());
  // CARTPLAN_DUMP_PLANS: every new plan once (plan_dump.h). A directory that cannot be written
  // is the user's to fix; the call fails before anything is sent.
  Result<std::string> dumped = dump_plan_if_requested(plan);
  if (!dumped) return mpi_error(MPI_ERR_IO, dumped.error());
  *out = std::make_shared<const BoundPlanEntry>(BoundPlanEntry{plan, std::move(*bound)});
  return {};
}

MpiStatus NeighborhoodComm::candidate_entries(ir::Op op, const Options& o, const std::vector<std::int64_t>& sizes,
                                              const std::vector<bool>& contiguous, std::vector<CandidateEntry>* out) {
  out->clear();
  std::vector<std::int64_t> block_sizes;
  for (std::int64_t s : sizes) block_sizes.push_back(std::max<std::int64_t>(s, 0));
  const engine::PlanOptions po = planner_options(o, block_sizes, contiguous);
  Result<std::vector<engine::Candidate>> cands = engine::plan_candidates(op, nbh_, po);
  if (!cands) return mpi_error(MPI_ERR_ARG, cands.error());
  // The model's own pick (make_plan's: engine::pick_candidate) first, then the others cheapest
  // first. Plans that are the same under another name are timed once.
  std::vector<const engine::Candidate*> order;
  for (const engine::Candidate& c : *cands) order.push_back(&c);
  const engine::Candidate* pick = &(*cands)[engine::pick_candidate(*cands)];
  std::stable_sort(order.begin(), order.end(), [pick](const engine::Candidate* a, const engine::Candidate* b) {
    if ((a == pick) != (b == pick)) return a == pick;
    return a->cost.total_us() < b->cost.total_us();
  });
  double cheapest = order.front()->cost.total_us();
  for (const engine::Candidate* c : order) cheapest = std::min(cheapest, c->cost.total_us());
  std::vector<std::string> seen;
  for (const engine::Candidate* c : order) {
    if (static_cast<int>(out->size()) >= kMeasureMaxCandidates) break;
    if (c->cost.total_us() > kMeasureRange * cheapest) break;
    std::string text = ir::to_json_string(c->plan);
    if (std::find(seen.begin(), seen.end(), text) != seen.end()) continue;
    seen.push_back(std::move(text));
    CandidateEntry e{c->name, c->cost.total_us(), nullptr};
    MpiStatus bound = bind_entry(engine::with_choice_stats(op, nbh_, po, c->plan), -1, &e.entry);
    if (!bound.ok()) return bound;
    out->push_back(std::move(e));
  }
  return {};
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

// The environment's defaults of the checking and measuring modes (CARTPLAN_CHECK,
// CARTPLAN_TUNE); Info keys override them. Both are part of the description every rank must
// agree on.
MpiStatus modes_from_env(Options* options) {
  if (const char* env = std::getenv("CARTPLAN_CHECK")) {
    const std::string mode = env;
    if (mode == "collective") options->check_collective = true;
    else if (!mode.empty() && mode != "none") return mpi_error(MPI_ERR_ARG, "CARTPLAN_CHECK = '" + mode + "' (expected none or collective)");
  }
  if (const char* env = std::getenv("CARTPLAN_TUNE")) {
    const std::string mode = env;
    if (mode == "measure") options->tune_measure = true;
    else if (!mode.empty() && mode != "model") return mpi_error(MPI_ERR_ARG, "CARTPLAN_TUNE = '" + mode + "' (expected model or measure)");
  }
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

// Isomorphism: rank 0's description against everyone's (O(t d) data, one broadcast).
MpiStatus agree_on_description(MPI_Comm comm, int d, const int dims[], const int periods[], int t, const int rel[],
                               const Options& options) {
  std::vector<std::int64_t> mine = describe(d, dims, periods, t, rel, options);
  std::int64_t root_len = static_cast<std::int64_t>(mine.size());
  CARTPLAN_MPI_CALL(MPI_Bcast(&root_len, 1, MPI_INT64_T, 0, comm));
  std::vector<std::int64_t> root = mine;
  root.resize(static_cast<std::size_t>(root_len));
  CARTPLAN_MPI_CALL(MPI_Bcast(root.data(), static_cast<int>(root_len), MPI_INT64_T, 0, comm));
  int differs = root != mine ? 1 : 0, any_differs = 0;
  CARTPLAN_MPI_CALL(MPI_Allreduce(&differs, &any_differs, 1, MPI_INT, MPI_MAX, comm));
  if (any_differs)
    return mpi_error(MPI_ERR_ARG, "ranks passed different neighbourhoods to Cart_neighborhood_create: " +
                                      (differs ? difference(mine, root, d, t) : std::string("another rank differs from rank 0")));
  return {};
}

// The Cartesian communicator with the neighbourhood's state attached (MPI_COMM_NULL beyond the
// grid, as MPI_Cart_create).
MpiStatus attach_neighborhood(MPI_Comm comm, int d, const int dims[], const int periods[], int reorder,
                              engine::Neighborhood nbh, const Options& options, MPI_Comm* cartcomm) {
  std::vector<int> per(periods, periods + d);
  MPI_Comm cart = MPI_COMM_NULL;
  CARTPLAN_MPI_CALL(MPI_Cart_create(comm, d, dims, per.data(), reorder, &cart));
  *cartcomm = cart;
  if (cart == MPI_COMM_NULL) return {};
  int cart_rank = 0;
  CARTPLAN_MPI_CALL(MPI_Comm_rank(cart, &cart_rank));
  std::vector<int> coords(d);
  CARTPLAN_MPI_CALL(MPI_Cart_coords(cart, cart_rank, d, coords.data()));
  std::vector<bool> pbool(d);
  for (int k = 0; k < d; ++k) pbool[k] = periods[k] != 0;
  Result<engine::Grid> grid = engine::Grid::create(std::vector<int>(dims, dims + d), pbool);
  if (!grid) return mpi_error(MPI_ERR_DIMS, grid.error());
  // MPI_Cart_create numbers ranks row-major, exactly as engine::Grid does.
  if (grid->rank(coords) != cart_rank) return mpi_error(MPI_ERR_INTERN, "MPI_Cart_coords disagrees with row-major order");

  MPI_Comm internal = MPI_COMM_NULL;
  CARTPLAN_MPI_CALL(MPI_Comm_dup(cart, &internal));
  CARTPLAN_MPI_CALL(MPI_Comm_set_errhandler(internal, MPI_ERRORS_RETURN));
  auto* state = new NeighborhoodComm(internal, std::move(nbh), std::move(*grid), std::move(coords), options);
  const int rc = MPI_Comm_set_attr(cart, keyval(), state);
  if (rc != MPI_SUCCESS) {
    delete state;
    return from_mpi(rc, "MPI_Comm_set_attr");
  }
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
  if (local.ok()) local = check_arguments(size, d, dims, periods, t, rel, info, cartcomm, comm, &nbh, &options, &builtin_model);
  // Whether any node runs more of these processes than it has cores (see below).
  int oversubscribed = 0;
  CARTPLAN_MPI_CALL(node_oversubscribed(comm, &oversubscribed));
  // The largest error class any rank found: every rank returns the same class.
  int mine_flags[2] = {local.ok() ? 0 : local.code, oversubscribed}, all_flags[2] = {0, 0};
  CARTPLAN_MPI_CALL(MPI_Allreduce(mine_flags, all_flags, 2, MPI_INT, MPI_MAX, comm));
  const int any_bad = all_flags[0];
  // Built-in defaults only (no calibration found, none named): on oversubscribed nodes a
  // phase costs a context switch (engine/cost_model.h). The same on every rank: agreed above.
  if (builtin_model && all_flags[1]) options.model.phase_us = engine::CostModel::kOversubscribedPhaseUs;
  if (any_bad)
    return mpi_error(any_bad, local.ok() ? "another rank passed invalid arguments to Cart_neighborhood_create (error class " +
                                               std::to_string(any_bad) + " there)"
                                         : local.message);
  MpiStatus agreed = agree_on_description(comm, d, dims, periods, t, rel, options);
  if (!agreed.ok()) return agreed;

  std::int64_t product = 1;
  for (int k = 0; k < d; ++k) {
    product *= dims[k];
    if (product > size) break;
  }
  if (product > size)
    return mpi_error(MPI_ERR_DIMS, "dims multiply to more processes than the communicator has (" + std::to_string(size) + ")");
  return attach_neighborhood(comm, d, dims, periods, reorder, std::move(*nbh), options, cartcomm);
}

}  // namespace cartplan::mpi
