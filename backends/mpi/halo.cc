// The MPI side of halo exchanges (halo.h): creation (checks, planning, one agreement, the
// private communicators) and the schedules of subarray datatypes the exchanges run.
#include "backends/mpi/halo.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <utility>

#include "backends/mpi/exchange.h"
#include "backends/mpi/halo_fields.h"
#include "backends/mpi/measure_trials.h"
#include "backends/mpi/model_notice.h"
#include "backends/mpi/node_map.h"
#include "backends/mpi/out_of_memory.h"
#include "backends/mpi/predefined.h"
#include "backends/mpi/test_failure.h"
#include "backends/mpi/type_copy.h"
#include "engine/cost_model_locate.h"
#include "engine/halo/bind.h"
#include "engine/halo/choose.h"
#include "engine/halo/description.h"
#include "engine/halo/uneven.h"
#include "engine/planner.h"
#include "engine/spec.h"
#include "ir/parse_number.h"

namespace cartplan::mpi {
namespace {

namespace eh = engine::halo;
namespace ih = ir::halo;

// The most array lists whose blocking exchanges a halo keeps (codes alternate between two or
// three arrays: old and new time level).
constexpr std::size_t kBlockingKept = 4;
// The most element-size sums a halo keeps plans for (priced_; halo.h: "the last four sizes").
constexpr std::size_t kPricedKept = 4;

// FNV-1a: a fingerprint that is the same on every rank for the same text.
std::int64_t fingerprint(const std::string& text) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return static_cast<std::int64_t>(h >> 1);  // non-negative: -h stays representable
}

std::string join(const std::vector<int>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

// The grid and this rank's coordinates of a Cartesian communicator of d dimensions: a cartplan
// communicator's own, else MPI's.
MpiStatus read_grid(MPI_Comm comm, int d, const NeighborhoodComm* user, std::optional<engine::Grid>* grid,
                    engine::Coords* coords) {
  const std::string no_topology = "the communicator has no Cartesian topology (create it with MPI_Cart_create or Cart_neighborhood_create)";
  int nd = 0;
  if (user) {
    nd = user->grid().ndims();
  } else {
#ifndef CARTPLAN_SMPI
    int topo = MPI_UNDEFINED;
    CARTPLAN_MPI_CALL(MPI_Topo_test(comm, &topo));
    if (topo != MPI_CART) return mpi_error(MPI_ERR_TOPOLOGY, no_topology);
#endif
    // SimGrid's SMPI has no MPI_Topo_test: there MPI_Cartdim_get's error stands for it (under
    // MPI_ERRORS_ARE_FATAL on the communicator, SMPI aborts instead of returning it).
    if (MPI_Cartdim_get(comm, &nd) != MPI_SUCCESS) return mpi_error(MPI_ERR_TOPOLOGY, no_topology);
  }
  if (d != nd)
    return mpi_error(MPI_ERR_DIMS, "d = " + std::to_string(d) + ", but the communicator's grid has " + std::to_string(nd) + " dimensions");
  if (user) {
    *grid = user->grid();
    *coords = user->coords();
    return {};
  }
  std::vector<int> dims(nd), periods(nd);
  coords->assign(nd, 0);
  CARTPLAN_MPI_CALL(MPI_Cart_get(comm, nd, dims.data(), periods.data(), coords->data()));
  std::vector<bool> per(periods.begin(), periods.end());
  Result<engine::Grid> g = engine::Grid::create(dims, per);
  if (!g) return mpi_error(MPI_ERR_DIMS, g.error());
  *grid = std::move(*g);
  return {};
}

// The array's shape from the arguments (NULL arrays, order and element type checked here; the
// extents and widths by describe_halo).
MpiStatus read_shape(const HaloArgs& a, ih::ArrayShape* shape) {
  if (!a.interior || !a.ghost_lo || !a.ghost_hi) return mpi_error(MPI_ERR_ARG, "interior, ghost_lo or ghost_hi is NULL");
  if (a.order != MPI_ORDER_C && a.order != MPI_ORDER_FORTRAN)
    return mpi_error(MPI_ERR_ARG, "order = " + std::to_string(a.order) + " (expected MPI_ORDER_C or MPI_ORDER_FORTRAN)");
  if (a.elemtype == MPI_DATATYPE_NULL) return mpi_error(MPI_ERR_TYPE, "elemtype is MPI_DATATYPE_NULL");
  MPI_Count size = 0;
  CARTPLAN_MPI_CALL(MPI_Type_size_x(a.elemtype, &size));
  if (size <= 0) return mpi_error(MPI_ERR_TYPE, "elemtype has size " + std::to_string(size) + " (an element must hold data)");
  shape->ndims = a.d;
  shape->interior.assign(a.interior, a.interior + a.d);
  shape->ghost_lo.assign(a.ghost_lo, a.ghost_lo + a.d);
  shape->ghost_hi.assign(a.ghost_hi, a.ghost_hi + a.d);
  shape->elem_bytes = size;
  shape->order = a.order == MPI_ORDER_C ? ih::Order::kC : ih::Order::kFortran;
  return {};
}

// The regions to fill: a cartplan communicator's offsets that are sign vectors, else Info
// cartplan_stencil (a SPEC), else every region (Moore).
MpiStatus read_stencil(const NeighborhoodComm* user, int d, MPI_Info info, std::vector<ir::Offset>* out) {
  bool given = false;
  const std::string spec = info_value(info, "cartplan_stencil", &given);
  if (given && user)
    return mpi_error(MPI_ERR_INFO_VALUE, "cartplan_stencil is for plain MPI_Cart_create communicators: a cartplan communicator's "
                                         "neighbourhood is the halo's stencil");
  if (given) {
    Result<engine::Neighborhood> n = engine::parse_spec(spec);
    if (!n) return mpi_error(MPI_ERR_INFO_VALUE, "cartplan_stencil = '" + spec + "': " + n.error());
    if (n->ndims() != d)
      return mpi_error(MPI_ERR_INFO_VALUE, "cartplan_stencil = '" + spec + "' has " + std::to_string(n->ndims()) + " dimensions, the grid " + std::to_string(d));
    *out = n->offsets();
    return {};
  }
  if (user) {
    for (const ir::Offset& o : user->nbh().offsets())
      if (ih::is_sign_vector(o) && std::any_of(o.begin(), o.end(), [](int c) { return c != 0; })) out->push_back(o);
    if (out->empty())
      return mpi_error(MPI_ERR_ARG, "the communicator's neighbourhood has no non-zero offset with coordinates in -1..1: it names no ghost region to fill");
    return {};
  }
  std::vector<int> t(d, -1);
  for (;;) {  // every sign vector but zero, in lexicographic order
    if (std::any_of(t.begin(), t.end(), [](int c) { return c != 0; })) out->push_back(t);
    int k = d - 1;
    while (k >= 0 && t[k] == 1) t[k--] = -1;
    if (k < 0) return {};
    ++t[k];
  }
}

MpiStatus read_algorithm(MPI_Info info, eh::HaloAlgoChoice* algo) {
  bool given = false;
  const std::string v = info_value(info, "cartplan_algorithm", &given);
  if (!given) return {};
  const std::pair<const char*, eh::HaloAlgoChoice> known[] = {
      {"auto", eh::HaloAlgoChoice::kAuto},       {"direct", eh::HaloAlgoChoice::kDirect}, {"combining", eh::HaloAlgoChoice::kCombining},
      {"dimwise", eh::HaloAlgoChoice::kDimwise}, {"split", eh::HaloAlgoChoice::kSplit},   {"hybrid", eh::HaloAlgoChoice::kHybrid}};
  for (const auto& [name, choice] : known)
    if (v == name) {
      *algo = choice;
      return {};
    }
  return mpi_error(MPI_ERR_INFO_VALUE, "cartplan_algorithm = '" + v + "' (expected auto, direct, combining, dimwise, split or hybrid)");
}

// Info cartplan_dim_order (docs/info-keys.md): auto (search every order, the default), natural,
// or K,K,.. (that order only, for every planner that takes one).
MpiStatus read_dim_order(MPI_Info info, int d, std::optional<std::vector<int>>* order) {
  bool given = false;
  const std::string v = info_value(info, "cartplan_dim_order", &given);
  if (!given || v == "auto") return {};
  if (v == "natural") {
    *order = engine::natural_dim_order(d);
    return {};
  }
  Result<std::vector<int>> list = parse_int_list(v, 0, ih::kMaxHaloDims);
  if (!list) return mpi_error(MPI_ERR_INFO_VALUE, "cartplan_dim_order = '" + v + "': " + list.error() + " (expected auto, natural or K,K,..)");
  Result<std::vector<int>> checked = engine::check_dim_order(*list, d);
  if (!checked) return mpi_error(MPI_ERR_INFO_VALUE, "cartplan_dim_order = '" + v + "': " + checked.error());
  *order = *checked;
  return {};
}

// What each rank works out alone before the agreement: everything that can fail on bad input.
struct Planned {
  std::optional<engine::Grid> grid;
  engine::Coords coords;
  std::vector<ir::Offset> stencil;
  std::optional<engine::Neighborhood> nbh;  // the stencil, for the halo's NeighborhoodComm
  Options options;
  std::optional<ih::HaloPlan> plan;
  eh::HaloProgram program;
  std::optional<eh::HaloDescription> halo;  // what measuring mode re-plans from
  eh::HaloPlanOptions plan_options;
  std::string description;  // the text every rank must share
  std::vector<int> interior;  // this rank's (an uneven decomposition's differ: agree_on_extents)
  // A plain MPI_Cart_create communicator whose model prices placement: a fingerprint of that
  // model (non-zero), so that ranks learn the placement only if all use the same one; 0
  // otherwise (a cartplan communicator's options hold them already).
  std::int64_t placement_model = 0;
};

// FNV-1a of a model's prices (their bits), never 0.
std::int64_t model_fingerprint(const engine::CostModel& m) {
  std::string bytes;
  for (double price : model_prices(m)) bytes.append(reinterpret_cast<const char*>(&price), sizeof price);
  return fingerprint(bytes) | 1;
}

// `placement`: what a plain MPI_Cart_create communicator is planned with (unknown until learned);
// `choice_interior`: an uneven decomposition's shared interior (uneven.h), once agreed.
MpiStatus plan_locally(MPI_Comm comm, const HaloArgs& a, Planned* p, const engine::Placement& placement = {},
                       const std::optional<std::vector<int>>& choice_interior = std::nullopt) {
  if (a.d < 1 || a.d > ih::kMaxHaloDims)
    return mpi_error(MPI_ERR_DIMS, "d = " + std::to_string(a.d) + " (expected 1.." + std::to_string(ih::kMaxHaloDims) + ")");
  const NeighborhoodComm* user = find_neighborhood(comm);
  MpiStatus s = read_grid(comm, a.d, user, &p->grid, &p->coords);
  ih::ArrayShape shape;
  if (s.ok()) s = read_shape(a, &shape);
  if (s.ok()) s = read_stencil(user, a.d, a.info, &p->stencil);
  eh::HaloPlanOptions o;
  if (s.ok()) s = read_algorithm(a.info, &o.algo);
  if (s.ok()) s = read_dim_order(a.info, a.d, &o.dim_order);
  if (!s.ok()) return s;
  if (user) {
    p->options = user->options();
  } else {
    Result<engine::LocatedModel> m = engine::locate_cost_model(std::nullopt, p->grid->size(), std::getenv);
    if (!m) return mpi_error(MPI_ERR_ARG, m.error());
    verbose_model_notice(*m, comm, p->grid->size());
    p->options.model = m->model;
    p->options.placement = placement;
    s = modes_from_env(&p->options);  // CARTPLAN_TUNE (a cartplan communicator's options have it)
  }
  // The halo's own Info names a model over the communicator's or the located one, as a
  // neighbourhood's creation Info does.
  if (s.ok()) s = parse_model(a.info, &p->options);
  if (s.ok() && !user && engine::prices_placement(p->options.model)) p->placement_model = model_fingerprint(p->options.model);
  if (s.ok()) s = parse_tune(a.info, &p->options.tune_measure);
  if (s.ok()) s = parse_check(a.info, &p->options.check_collective);  // checking mode: halo_fields.h
  if (!s.ok()) return s;
  o.model = p->options.model;
  o.placement = planning_placement(p->options);
  o.choice_interior = choice_interior;
  Result<eh::HaloDescription> h = eh::describe_halo(shape, p->stencil, p->grid);
  if (!h) return mpi_error(MPI_ERR_ARG, h.error());
  Result<ih::HaloPlan> plan = eh::make_halo_plan(*h, o);
  if (!plan) return mpi_error(MPI_ERR_ARG, plan.error());
  Result<eh::HaloBinder> binder = eh::HaloBinder::create(*plan);
  if (!binder) return mpi_error(MPI_ERR_INTERN, "cartplan's halo plan does not verify: " + binder.error());
  Result<eh::HaloProgram> program = eh::lower_halo(*binder, *p->grid, p->coords);
  if (!program) return mpi_error(MPI_ERR_INTERN, "cartplan could not lower its halo plan: " + program.error());
  Result<engine::Neighborhood> nbh = engine::Neighborhood::create(a.d, p->stencil);
  if (!nbh) return mpi_error(MPI_ERR_INTERN, nbh.error());
  p->nbh = std::move(*nbh);
  p->plan = std::move(*plan);
  p->program = std::move(*program);
  p->halo = std::move(*h);
  p->plan_options = o;
  bool given = false;
  const std::string algo = info_value(a.info, "cartplan_algorithm", &given);
  p->interior = shape.interior;
  p->description = "ghost_lo " + join(shape.ghost_lo) + " ghost_hi " + join(shape.ghost_hi) +
                   " elem " + std::to_string(shape.elem_bytes) + " order " + ih::to_string(shape.order) + " algorithm " + algo + " dim_order " + (o.dim_order ? join(*o.dim_order) : "auto") + " tune " + (p->options.tune_measure ? "measure" : "model") + " check " + (p->options.check_collective ? "collective" : "none");
  for (const ir::Offset& t : h->neighborhood) p->description += " (" + join(t) + ")";
  return {};
}

// One agreement: the worst error, the fingerprints of the description and the plan, whether
// every rank uses the same model that prices placement (*learn_nodes), whether every rank
// plans with the same model (*same_model: the fields forms may then plan again), and whether
// the interiors differ (*uneven: agree_on_extents follows). The plan's fingerprint is of its
// signature (uneven.h): the same for plans whose interiors alone differ.
MpiStatus agree_on_creation(MPI_Comm comm, const MpiStatus& local, const Planned& p, bool* learn_nodes, bool* same_model, bool* uneven) {
  const bool ok = local.ok();
  const std::int64_t dh = ok ? fingerprint(p.description) : 0;
  const std::int64_t ph = ok ? fingerprint(eh::plan_signature(*p.plan)) : 0;
  const std::int64_t mh = ok ? p.placement_model : 0;
  const std::int64_t model_h = ok ? model_fingerprint(p.plan_options.model) : 0;
  const std::int64_t nh = ok ? fingerprint(join(p.interior)) : 0;
  std::int64_t mine[11] = {ok ? 0 : local.code, dh, -dh, ph, -ph, mh, -mh, model_h, -model_h, nh, -nh}, all[11] = {};
  CARTPLAN_MPI_CALL(Exchange::agree_allreduce(mine, all, 11, MPI_INT64_T, MPI_MAX, comm));
  if (all[0] != 0) return agreed_error(local, static_cast<int>(all[0]));
  *learn_nodes = all[5] != 0 && all[5] == -all[6];
  *same_model = all[7] == -all[8];
  *uneven = all[9] != -all[10];
  if (all[1] != -all[2])
    return mpi_error(MPI_ERR_ARG, "ranks passed different halo descriptions to Cart_halo_create (ghost widths, element "
                                  "size, order, stencil, Info cartplan_algorithm and cartplan_dim_order, and the checking and measuring modes must be the same on every "
                                  "rank); here: " + p.description);
  if (all[3] != -all[4] && !*uneven)
    return mpi_error(MPI_ERR_ARG, "ranks chose different halo plans for the same description (different cost models?)");
  return {};
}

// An uneven decomposition (interiors differ): every rank learns each dimension's extent at each
// coordinate (one MPI_Allreduce of 2 x sum(dims) words: the largest and the negated smallest
// interior[k] of the ranks at coordinate c of dimension k), checks that it depends on that
// coordinate alone (the same table on every rank, so the same verdict), and returns the largest
// extent per dimension, which every rank's choice is priced on. Creation only.
MpiStatus agree_on_extents(MPI_Comm comm, const Planned& p, std::vector<int>* choice_interior) {
  const std::vector<int>& dims = p.grid->dims();
  std::vector<std::int64_t> mine, all;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    for (int c = 0; c < dims[k]; ++c) {
      const bool here = p.coords[k] == c;
      mine.push_back(here ? p.interior[k] : 0);
      mine.push_back(here ? -p.interior[k] : std::numeric_limits<std::int64_t>::min());
    }
  }
  all.resize(mine.size());
  CARTPLAN_MPI_CALL(Exchange::agree_allreduce(mine.data(), all.data(), static_cast<int>(mine.size()), MPI_INT64_T, MPI_MAX, comm));
  choice_interior->assign(dims.size(), 0);
  std::size_t at = 0;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    for (int c = 0; c < dims[k]; ++c, at += 2) {
      if (all[at] != -all[at + 1])
        return mpi_error(MPI_ERR_ARG, "ranks at coordinate " + std::to_string(c) + " of dimension " + std::to_string(k) + " passed interior[" +
                                          std::to_string(k) + "] from " + std::to_string(-all[at + 1]) + " to " + std::to_string(all[at]) +
                                          ": a halo's interiors may differ only as a block decomposition does (each dimension's extent "
                                          "depends on the rank's coordinate in that dimension alone); here: interior " + join(p.interior));
      (*choice_interior)[k] = std::max((*choice_interior)[k], static_cast<int>(all[at]));
    }
  }
  return {};
}

// Planning again after the agreement, where it learned something the plan depends on: a plain
// MPI_Cart_create communicator whose ranks agreed on a model that prices placement (the placement,
// block or cyclic; node_map.h: MPI_Comm_split_type and one MPI_Allreduce, the same on every rank),
// and an uneven decomposition's shared interior (`choice_interior`). The same description, model,
// placement and choice give plans of one signature on every rank; one more MPI_Allreduce checks
// that (and that no rank failed to plan or to `assemble` the halo from the new plan: creation's
// local steps), so that every rank returns the same error rather than some entering
// private_comm's MPI_Comm_create alone. Creation only, never per call.
MpiStatus plan_again(MPI_Comm comm, const HaloArgs& a, Planned* p, bool learn_nodes, const std::optional<std::vector<int>>& choice_interior,
                     const std::function<MpiStatus(const Planned&)>& assemble) {
  engine::Placement placed;
  if (learn_nodes) CARTPLAN_MPI_CALL(node_placement(comm, &placed));
  if (placed == engine::Placement{} && !choice_interior) return {};  // one node, or neither block nor cyclic: nothing to count
  Planned again;
  std::int64_t ph = 0;
  MpiStatus s = out_of_memory_as_error("planning the halo exchange", [&] {
    MpiStatus l = plan_locally(comm, a, &again, placed, choice_interior);
    if (l.ok()) ph = fingerprint(eh::plan_signature(*again.plan));
    return l;
  });
  if (s.ok()) s = assemble(again);
  std::int64_t mine[3] = {s.ok() ? 0 : s.code, ph, -ph}, all[3] = {0, 0, 0};
  CARTPLAN_MPI_CALL(MPI_Allreduce(mine, all, 3, MPI_INT64_T, MPI_MAX, comm));
  if (all[0] != 0) return agreed_error(s, static_cast<int>(all[0]));
  if (all[1] != -all[2])
    return mpi_error(MPI_ERR_ARG, "ranks chose different halo plans for the same description and placement (different cost models?)");
  *p = std::move(again);
  return {};
}

// A private communicator over the same group and ranks as `comm`, with no attributes copied.
MpiStatus private_comm(MPI_Comm comm, MPI_Comm* out) {
  MPI_Group group = MPI_GROUP_NULL;
  CARTPLAN_MPI_CALL(MPI_Comm_group(comm, &group));
  const int rc = MPI_Comm_create(comm, group, out);
  MPI_Group_free(&group);
  return from_mpi(rc, "MPI_Comm_create");
}

// A local step before an agreement (a build): running out of memory is this rank's error to
// agree on, not an exception that leaves its peers waiting for it.
template <class F>
MpiStatus without_throwing(F&& step) {
  return out_of_memory_as_error("building the halo exchange (its temps or datatypes)", std::forward<F>(step));
}

// The planning steps before an agreement (creation's, init's, checking mode's blocking call's:
// checks, plans, programs, and a blocking call's build), likewise.
template <class F>
MpiStatus planning_without_throwing(F&& step) {
  return out_of_memory_as_error("planning the halo exchange", std::forward<F>(step));
}

void free_all(std::vector<MPI_Datatype>* types) {
  for (MPI_Datatype& t : *types) MPI_Type_free(&t);
  types->clear();
}

}  // namespace

// Creation's local steps: the halo's parts copied from a plan (which still feeds an agreement
// afterwards), made before that agreement so that a rank out of memory (or unable to copy the
// element type) fails every rank in it; after the agreements only MPI's own calls remain.
struct HaloAssembly {
  static MpiStatus make(const HaloArgs& args, const Planned& p, std::shared_ptr<HaloContext>* out) {
    out->reset();
    return out_of_memory_as_error("assembling the halo", [&] {
      inject_out_of_memory("halo-create-local");
      auto h = std::shared_ptr<HaloContext>(new HaloContext());
      // Its internal communicator comes after the agreements (adopt_internal).
      h->nc_ = std::make_unique<NeighborhoodComm>(MPI_COMM_NULL, *p.nbh, *p.grid, p.coords, p.options);
      // The caller may free its element type after creation: a derived one is kept as a private
      // copy (no attributes copied, so no copy callback of the program runs), a predefined one as it is.
      MpiStatus s;
      if (predefined_type(args.elemtype)) h->elem_ = args.elemtype;
      else s = communication_copy(args.elemtype, MPI_COMM_NULL, &h->elem_);  // only built upon: need not be committed
      if (!s.ok()) return s;
      h->plan_ = std::make_shared<const ih::HaloPlan>(*p.plan);
      h->program_ = p.program;
      h->description_ = p.halo;
      h->plan_options_ = p.plan_options;
      h->tune_measure_ = p.options.tune_measure && h->plan_options_.algo == eh::HaloAlgoChoice::kAuto;
      *out = std::move(h);
      return MpiStatus{};
    });
  }

  // After the agreements: the two private communicators (collective), MPI calls only. Errors
  // are reported through one that carries the caller's error handler; cartplan's messages travel
  // on the other, whose errors return to cartplan.
  static MpiStatus connect(MPI_Comm cartcomm, HaloContext* h) {
    MpiStatus s = private_comm(cartcomm, &h->report_);
    if (!s.ok()) return s;
    MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
    CARTPLAN_MPI_CALL(MPI_Comm_get_errhandler(cartcomm, &handler));
    CARTPLAN_MPI_CALL(MPI_Comm_set_errhandler(h->report_, handler));
    MPI_Errhandler_free(&handler);
    MPI_Comm internal = MPI_COMM_NULL;
    s = private_comm(cartcomm, &internal);
    if (!s.ok()) return s;
    h->nc_->adopt_internal(internal);
    CARTPLAN_MPI_CALL(MPI_Comm_set_errhandler(internal, MPI_ERRORS_RETURN));
    h->nc_->shared()->user = h->report_;
    return {};
  }
};

MpiStatus HaloContext::create(MPI_Comm cartcomm, const HaloArgs& args, std::shared_ptr<HaloContext>* out,
                              const MpiStatus& caller_error) {
  if (cartcomm == MPI_COMM_NULL) return mpi_error(MPI_ERR_COMM, "the communicator is MPI_COMM_NULL");
  Planned p;
  MpiStatus local = caller_error;
  if (local.ok() && !out) local = mpi_error(MPI_ERR_ARG, "halo is NULL");
  if (local.ok())
    local = planning_without_throwing([&] {
      inject_out_of_memory("halo-plan");
      return plan_locally(cartcomm, args, &p);
    });
  std::shared_ptr<HaloContext> h;
  const auto assemble = [&](const Planned& from) { return HaloAssembly::make(args, from, &h); };
  if (local.ok()) local = assemble(p);
  // Every rank reaches the agreement, whatever it found: a rank with good arguments must not
  // wait forever for one with bad ones.
  bool learn_nodes = false, same_model = false, uneven = false;
  MpiStatus s = agree_on_creation(cartcomm, local, p, &learn_nodes, &same_model, &uneven);
  std::optional<std::vector<int>> choice_interior;
  if (s.ok() && uneven) s = agree_on_extents(cartcomm, p, &choice_interior.emplace());
  if (s.ok() && (learn_nodes || uneven)) s = plan_again(cartcomm, args, &p, learn_nodes, choice_interior, assemble);
  if (s.ok()) s = HaloAssembly::connect(cartcomm, h.get());
  if (!s.ok()) return s;
  h->reprice_ = same_model;
  *out = std::move(h);
  return {};
}

HaloContext::~HaloContext() {
  blocking_.clear();
  nc_.reset();  // frees the internal communicator
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (report_ != MPI_COMM_NULL) MPI_Comm_free(&report_);
  if (elem_ != MPI_DATATYPE_NULL && !predefined_type(elem_)) MPI_Type_free(&elem_);
}

namespace {

// Where the cells of a program live for one list of arrays: the arrays, and per array one set
// of temps (slot s of array f: memory[f * slots + s], its element 0 at data() - true_lb).
struct Buffers {
  const eh::HaloProgram& program;
  const std::vector<void*>& arrays;
  std::vector<std::vector<unsigned char>>& memory;
  std::vector<MPI_Datatype> types;       // per array: its element type
  std::vector<MPI_Datatype> temp_types;  // per array: the element type of its temps
  std::vector<MPI_Aint> true_lb;         // per array: its temps' element type's true lower bound

  char* base(std::size_t f, int buffer) const {
    if (buffer == eh::HaloRegion::kArray) return static_cast<char*>(arrays[f]);
    const std::size_t slot = f * program.temp_extents.size() + static_cast<std::size_t>(buffer);
    return reinterpret_cast<char*>(memory[slot].data()) - true_lb[f];
  }
  std::vector<int> sizes(int buffer) const {
    if (buffer != eh::HaloRegion::kArray) return program.temp_extents[static_cast<std::size_t>(buffer)];
    std::vector<int> s(static_cast<std::size_t>(program.array.ndims));
    for (int k = 0; k < program.array.ndims; ++k) s[k] = program.array.extent(k);
    return s;
  }
};

// One message of a transfer: nothing, one subarray at its buffer's address, or a struct of
// subarrays at absolute addresses (MPI_BOTTOM): the transfer's regions in every array, array
// by array (the same wire order on both sides). Its datatype goes to `owned`.
MpiStatus message_of(const eh::HaloTransfer& t, bool recv, const Buffers& b, Exchange::ScheduledMessage* m,
                     std::vector<MPI_Datatype>* owned) {
  // Tags: the plan's message tag, unique in the plan, so every phase has its own. A rank posts
  // phase p+1 once its phase p has completed, but a neighbour may be a phase ahead and send its
  // phase p+1 message while this rank still waits in phase p for another message from that
  // neighbour: MPI orders only messages of one (source, tag, communicator), so with a tag per
  // phase the early message can only match its own phase's receive, whatever the sizes. The
  // lane (lanes.h) keeps requests in flight together apart.
  *m = Exchange::ScheduledMessage{recv, nullptr, 0, MPI_BYTE, t.peer, t.tag};
  const int order = b.program.array.order == ih::Order::kC ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
  std::vector<MPI_Datatype> subs;
  std::vector<MPI_Aint> displs;
  for (std::size_t f = 0; f < b.arrays.size(); ++f)
    for (const eh::HaloRegion& r : t.regions) {
      if (r.cells() == 0) continue;
      const std::vector<int> sz = b.sizes(r.buffer);
      MPI_Datatype sub = MPI_DATATYPE_NULL;
      const MPI_Datatype elem = r.buffer == eh::HaloRegion::kArray ? b.types[f] : b.temp_types[f];
      const int rc = MPI_Type_create_subarray(b.program.array.ndims, sz.data(), r.extent.data(), r.start.data(), order, elem, &sub);
      if (rc != MPI_SUCCESS) {
        free_all(&subs);
        return from_mpi(rc, "MPI_Type_create_subarray");
      }
      subs.push_back(sub);
      m->buf = b.base(f, r.buffer);
      displs.push_back(0);
      MPI_Get_address(m->buf, &displs.back());
    }
  if (subs.empty()) return {};
  m->count = 1;
  if (subs.size() == 1) {
    m->type = subs[0];
  } else {
    std::vector<int> lens(subs.size(), 1);
    const int rc = MPI_Type_create_struct(static_cast<int>(subs.size()), lens.data(), displs.data(), subs.data(), &m->type);
    free_all(&subs);
    if (rc != MPI_SUCCESS) return from_mpi(rc, "MPI_Type_create_struct");
    m->buf = MPI_BOTTOM;
  }
  owned->push_back(m->type);
  CARTPLAN_MPI_CALL(MPI_Type_commit(&m->type));
  return {};
}

// Ranks that agreed on the description, the arrays' element sizes and measuring mode yet list
// different plans (persistent init): measuring candidates listed from cost models that differ
// (reprice_ false: the ranks' models were not the same at creation) is the caller's setup;
// otherwise the same description, model and sizes gave different plans, which is cartplan's bug.
MpiStatus plans_differ(bool measuring, bool same_model) {
  if (measuring && !same_model)
    return mpi_error(MPI_ERR_ARG, "ranks list different candidate plans to measure for the persistent halo exchange (their cost "
                                  "models differ)");
  return mpi_error(MPI_ERR_INTERN, std::string("cartplan chose different ") + (measuring ? "candidate plans to measure" : "plans") +
                                       " on different ranks for the same halo, cost model and element sizes (a cartplan bug)");
}

// How a temp holds the cells of an array of element type `t`: their element type, its extent,
// true lower bound and true extent. Temps are laid out in `t` itself, except under SimGrid SMPI
// (3.32), whose bounds are wrong for subarray and resized types (a resized type's true bounds are
// its new ones, so data outside them fell outside the temp: for a double at -8 resized to lb 0,
// extent 8, cartplan wrote 8 bytes before the temp). There a derived element's temps hold it
// packed, as contiguous bytes of its size: MPI moves the same bytes in the same order into and
// out of them, and the temps are cartplan's own (type signatures differ; SMPI does not check).
MpiStatus temp_element(MPI_Datatype t, std::vector<MPI_Datatype>* owned, MPI_Datatype* temp, MPI_Aint* extent, MPI_Aint* true_lb,
                       MPI_Aint* true_extent) {
  *temp = t;
#ifdef CARTPLAN_SMPI
  if (!predefined_type(t)) {
    MPI_Count size = 0;
    CARTPLAN_MPI_CALL(MPI_Type_size_x(t, &size));
    CARTPLAN_MPI_CALL(MPI_Type_contiguous(static_cast<int>(size), MPI_BYTE, temp));
    owned->push_back(*temp);
    CARTPLAN_MPI_CALL(MPI_Type_commit(temp));
    *extent = *true_extent = static_cast<MPI_Aint>(size);
    *true_lb = 0;
    return {};
  }
#else
  (void)owned;
#endif
  MPI_Aint lb = 0;
  CARTPLAN_MPI_CALL(MPI_Type_get_extent(t, &lb, extent));
  CARTPLAN_MPI_CALL(MPI_Type_get_true_extent(t, true_lb, true_extent));
  return {};
}

}  // namespace

// The messages of every phase for these arrays, one per transfer. Arrays are sent from and
// received into where the cells live; only temps (combining and split plans) are cartplan's
// memory, one set per array. Every caller checked the arrays and types first (field_sizes).
MpiStatus HaloContext::schedule_for(const eh::HaloProgram& program, const std::vector<void*>& arrays,
                                    const std::vector<MPI_Datatype>& types, Exchange::Schedule* out) const {
  Buffers buffers{program, arrays, out->memory, {}, {}, {}};
  for (std::size_t f = 0; f < arrays.size(); ++f) {
    MPI_Datatype t = types.empty() ? elem_ : types[f], temp = MPI_DATATYPE_NULL;
    MPI_Aint extent = 0, true_lb = 0, true_extent = 0;
    MpiStatus st = temp_element(t, &out->owned_types, &temp, &extent, &true_lb, &true_extent);
    if (!st.ok()) return st;
    buffers.types.push_back(t);
    buffers.temp_types.push_back(temp);
    buffers.true_lb.push_back(true_lb);
    for (const std::vector<int>& e : program.temp_extents) {  // temp slot s of array f: memory[f * slots + s]
      std::int64_t cells = 1;
      for (int n : e) cells *= n;
      out->memory.emplace_back(static_cast<std::size_t>(std::max<std::int64_t>((cells - 1) * extent + true_extent, 1)));
    }
  }
  for (const eh::HaloPhaseProgram& ph : program.phases) {
    std::vector<Exchange::ScheduledMessage>& list = out->phases.emplace_back();
    for (int side = 0; side < 2; ++side)  // receives first, then sends
      for (const eh::HaloTransfer& t : side == 0 ? ph.recvs : ph.sends) {
        MpiStatus s = message_of(t, side == 0, buffers, &list.emplace_back(), &out->owned_types);
        if (!s.ok()) return s;
      }
  }
  return {};
}

MpiStatus HaloContext::build(const eh::HaloProgram& program, const std::vector<void*>& arrays, const std::vector<MPI_Datatype>& types,
                             Exchange::Kind kind, int lane, std::unique_ptr<Exchange>* out) const {
  Exchange::Schedule schedule;
  const MpiStatus s = without_throwing([&] { return schedule_for(program, arrays, types, &schedule); });
  if (s.ok()) return Exchange::from_schedule(*nc_, std::move(schedule), kind, lane, out);
  free_all(&schedule.owned_types);
  return s;
}

MpiStatus HaloContext::priced_for(const FieldSizes& sizes, Priced* out) {
  const std::int64_t own = description_->array.elem_bytes;
  const std::int64_t total = sizes.sum;
  if (total == own || !reprice_) {
    // program_ is the halo's own, alive as long as it: a pointer that owns nothing.
    *out = Priced{own, plan_, std::shared_ptr<const eh::HaloProgram>(std::shared_ptr<void>(), &program_)};
    return {};
  }
  auto it = std::find_if(priced_.begin(), priced_.end(), [&](const Priced& p) { return p.elem_bytes == total; });
  if (it == priced_.end()) {
    eh::HaloDescription d = *description_;
    d.array.elem_bytes = total;
    inject_out_of_memory("halo-plan");  // once per element size: a set-up step
    const std::string what = "cartplan could not plan the halo for fields of " + std::to_string(total) + " bytes per cell: ";
    Result<ih::HaloPlan> plan = eh::make_halo_plan(d, plan_options_);
    if (!plan) return mpi_error(MPI_ERR_TYPE, what + plan.error());
    Result<eh::HaloProgram> program = lower_plan(*plan);
    if (!program) return mpi_error(MPI_ERR_INTERN, what + program.error());
    if (priced_.size() >= kPricedKept) priced_.erase(priced_.begin());
    priced_.push_back(Priced{total, std::make_shared<const ih::HaloPlan>(std::move(*plan)),
                             std::make_shared<const eh::HaloProgram>(std::move(*program))});
    it = priced_.end() - 1;
  }
  std::rotate(it, it + 1, priced_.end());  // most recently used last
  *out = priced_.back();
  return {};
}

MpiStatus HaloContext::build_blocking(const std::vector<void*>& arrays, const std::vector<MPI_Datatype>& types, FieldSizes* sizes,
                                      std::unique_ptr<Exchange>* out) {
  MpiStatus s = sizes->bytes.empty() ? field_sizes(arrays, types, description_->array.elem_bytes, sizes) : MpiStatus{};
  Priced priced;
  if (s.ok()) s = priced_for(*sizes, &priced);
  if (s.ok()) s = build(*priced.program, arrays, types, Exchange::Kind::kBlocking, 0, out);
  return s;
}

// The key of an exchange of `arrays` with element `types` (empty: the halo's own for every
// array): the arrays' addresses, then each type's datatype_key. False if a type cannot be keyed.
static bool arrays_key(const std::vector<void*>& arrays, const std::vector<MPI_Datatype>& types, DerivedTypes* derived,
                       std::vector<std::uintptr_t>* key) {
  key->assign({arrays.size()});
  for (void* a : arrays) key->push_back(reinterpret_cast<std::uintptr_t>(a));
  for (MPI_Datatype t : types) {
    std::uintptr_t word = 0, kind = 0;
    if (!datatype_key(t, derived, &word, &kind)) {
      key->clear();
      return false;
    }
    key->insert(key->end(), {word, kind});
  }
  return true;
}

// Kept exchanges are found by the arrays and the keys of the element types (datatype_key):
// predefined ones by handle, derived ones by layout once vouched for, since a derived type may
// be freed and its handle come back for another layout. An exchange does not use the caller's
// handles after it was built: its subarray datatypes were made from them and stay valid when
// they are freed (MPI_Type_free). A type not vouched for yet builds again (that checks it); one
// that cannot be keyed builds per call. With types empty, the halo's own element type is used
// (its own copy of a derived one, never freed before the halo).
MpiStatus HaloContext::blocking_for(const std::vector<void*>& arrays, const std::vector<MPI_Datatype>& types, FieldSizes* sizes,
                                    DerivedTypes* derived, BlockingFound* found) {
  std::vector<std::uintptr_t> key;
  if (!arrays_key(arrays, types, derived, &key)) return build_blocking(arrays, types, sizes, &found->once);
  auto it = std::find_if(blocking_.begin(), blocking_.end(), [&](const Blocking& b) { return b.key == key; });
  if (it != blocking_.end() && !derived->unvouched.empty()) {
    blocking_.erase(it);
    it = blocking_.end();
  }
  if (it != blocking_.end()) {
    std::rotate(it, it + 1, blocking_.end());  // most recently used last
    return {};
  }
  std::unique_ptr<Exchange> x;
  if (MpiStatus s = build_blocking(arrays, types, sizes, &x); !s.ok()) return s;
  if (blocking_.size() >= kBlockingKept) blocking_.erase(blocking_.begin());
  blocking_.push_back(Blocking{std::move(key), std::move(x)});
  found->built = true;
  return {};
}

MpiStatus HaloContext::exchange(const std::vector<void*>& arrays, const std::vector<MPI_Datatype>& types,
                                const MpiStatus& caller_error) {
  const bool checking = nc_->options().check_collective;
  if (!checking && !caller_error.ok()) return caller_error;  // default mode: each rank reports its own arguments
  // Checking mode: this rank's checks and the exchange's lookup or build, all local, then one
  // agreement before any message, so that a rank that failed anywhere (a bad argument, a build
  // out of memory) is an error on every rank rather than a peer waiting for its messages.
  FieldSizes sizes;  // computed where needed: checking mode, or an exchange to build
  MpiStatus local = caller_error;
  if (local.ok() && checking) local = field_sizes(arrays, types, description_->array.elem_bytes, &sizes);
  DerivedTypes derived;
  BlockingFound found;
  // Checking mode agrees next: running out of memory is then this rank's error to agree on.
  if (local.ok())
    local = checking ? planning_without_throwing([&] { return blocking_for(arrays, types, &sizes, &derived, &found); })
                     : blocking_for(arrays, types, &sizes, &derived, &found);
  if (checking) {
    if (MpiStatus s = agree_on_fields(*nc_, local, sizes, "the blocking halo exchange"); !s.ok()) {
      if (found.built) blocking_.pop_back();  // built for a call that does not run: nothing vouched for
      return s;
    }
  } else if (!local.ok()) {
    return local;
  }
  if (found.once) return found.once->run_once();
  MpiStatus s = blocking_.back().exchange->run_once();
  if (!s.ok()) blocking_.pop_back();  // a failed exchange is not run again
  if (s.ok()) vouch_for(derived);      // these types passed the checks of a call that built
  return s;
}

MpiStatus HaloContext::iexchange(const std::vector<void*>& arrays, const std::vector<MPI_Datatype>& types,
                                 const MpiStatus& caller_error, std::unique_ptr<Exchange>* out,
                                 std::shared_ptr<const ih::HaloPlan>* plan_run) {
  // Taken first, by every call that gets this far, failing or not: the lane is the call's
  // sequence number on the halo's communicator, the same on every rank (lanes.h).
  const int lane = nc_->shared()->lanes.next_nonblocking();
  // Every rank completes the lane's previous holder here, before its own checks: a rank whose
  // checks fail goes to checking mode's agreement, and a rank that waited for that holder's
  // later phases after this point would wait for a peer already in the agreement.
  Exchange::clear_lane(*nc_, lane);
  const bool checking = nc_->options().check_collective;
  if (!checking && !caller_error.ok()) return caller_error;  // default mode: each rank reports its own arguments
  FieldSizes sizes;
  Priced priced;
  DerivedTypes derived;
  std::vector<std::uintptr_t> key;  // empty: a type that cannot be keyed, built per call
  MpiStatus local = caller_error;
  if (local.ok()) local = field_sizes(arrays, types, description_->array.elem_bytes, &sizes);
  // A completed exchange of the same arrays and element types comes back from the halo
  // communicator's pool (derived types by layout, once vouched for); else one is built. Out of
  // memory here is this rank's error (checking mode agrees on it next).
  if (local.ok())
    local = planning_without_throwing([&] {
      MpiStatus l = priced_for(sizes, &priced);
      if (l.ok() && arrays_key(arrays, types, &derived, &key) && derived.unvouched.empty())
        *out = Exchange::take_pooled(*nc_, key, lane);
      if (l.ok() && !*out) l = build(*priced.program, arrays, types, Exchange::Kind::kNonblocking, lane, out);
      return l;
    });
  if (checking) local = agree_on_fields(*nc_, local, sizes, "the non-blocking halo exchange");
  if (local.ok()) {
    (*out)->set_pool_key(key);  // kept by recycle once complete (Cart_wait, the C++ request)
    local = (*out)->start();
  }
  if (!local.ok()) {
    out->reset();
    return local;
  }
  vouch_for(derived);  // these types passed a build's checks (nothing to vouch for when pooled)
  *plan_run = priced.plan;
  return {};
}

MpiStatus HaloContext::exchange_init(const std::vector<void*>& arrays, const std::vector<MPI_Datatype>& types,
                                     const MpiStatus& caller_error, std::unique_ptr<Exchange>* out, MPI_Info info,
                                     std::shared_ptr<const ih::HaloPlan>* plan_run) {
  Exchange::Schedule schedule;
  bool measuring = tune_measure_;
  MpiStatus local = caller_error.ok() ? parse_tune(info, &measuring) : caller_error;
  measuring = measuring && plan_options_.algo == eh::HaloAlgoChoice::kAuto;
  std::vector<Trial> trials;
  std::int64_t listed = 0;  // the fingerprint of the trials' list, or of the plan the model picked
  Priced priced;            // the model's pick for these arrays' element sizes
  FieldSizes sizes;         // what every rank must pass alike (halo_fields.h)
  if (local.ok())
    local = planning_without_throwing([&] {
      MpiStatus l = field_sizes(arrays, types, description_->array.elem_bytes, &sizes);
      if (l.ok()) l = priced_for(sizes, &priced);
      if (l.ok() && measuring) l = measure_list(priced.elem_bytes, &trials, &listed);
      if (l.ok() && !measuring) listed = fingerprint(eh::plan_signature(*priced.plan));
      return l;
    });
  // The model's pick is built here, before the agreement, whose lane it takes afterwards
  // (hold_lane allocates nothing): a rank that cannot build it fails every rank in the agreement
  // instead of leaving its peers a request whose messages never come.
  std::unique_ptr<Exchange> pick;
  if (local.ok())
    local = without_throwing([&] {
      inject_out_of_memory("halo-init-build");
      MpiStatus l = schedule_for(*priced.program, arrays, types, &schedule);
      return l.ok() ? Exchange::from_schedule(*nc_, std::move(schedule), Exchange::Kind::kPersistent, Exchange::kLaneLater, &pick) : l;
    });
  free_all(&schedule.owned_types);  // left only if from_schedule did not take them
  // Collective like MPI-4 init: every rank learns whether any failed, whether all pass as many
  // arrays with elements of the same sizes and measure the same candidates, and the persistent
  // lanes every rank holds, so that the new request takes a lane free everywhere (lanes.h).
  const std::int64_t measures = measuring ? 1 : 0;
  const std::array<std::int64_t, kFieldWords> field = field_words(local, sizes);
  std::vector<std::int64_t> mine(field.begin(), field.end()), all;
  mine.insert(mine.end(), {listed, -listed, measures, -measures});
  std::vector<std::uint64_t> held;
  MpiStatus s = agree_on(*nc_, true, mine, &all, &held);
  if (s.ok()) s = fields_agreed(local, all.data(), sizes, "the persistent halo exchange's init");
  const std::int64_t* rest = s.ok() ? all.data() + kFieldWords : nullptr;  // listed, -listed, measures, -measures
  if (s.ok() && rest[2] != -rest[3])
    s = mpi_error(MPI_ERR_ARG, "ranks disagree on measuring mode (Info cartplan_tune of the persistent halo exchange)");
  if (s.ok() && rest[0] != -rest[1]) s = plans_differ(measuring, reprice_);
  const int lane = s.ok() ? nc_->shared()->lanes.first_free(held) : -1;
  if (s.ok() && lane < 0)
    s = mpi_error(MPI_ERR_NO_MEM, "more than " + std::to_string(nc_->shared()->lanes.persistent_lanes()) +
                                      " persistent requests are alive on this halo; free some first");
  std::size_t best = 0;
  const bool measured = s.ok() && trials.size() > 1;  // alike on every rank: they agreed on the list
  if (measured) s = measure(trials, arrays, types, lane, &best);
  if (!s.ok()) return s;
  // The exchange the request keeps: the model's pick built before the agreement (it takes the
  // lane, allocating nothing), or the measured pick built now on the caller's arrays. After
  // measuring, that step is agreed too: a rank that failed alone (out of memory) would leave its
  // peers with a request whose messages never come.
  s = out_of_memory_as_error("building the halo exchange measuring kept (its temps or datatypes)", [&] {
    if (measured) inject_out_of_memory("measure-rebuild");
    if (best == 0) {
      pick->hold_lane(lane);
      *out = std::move(pick);
      return MpiStatus{};
    }
    pick.reset();
    Result<eh::HaloProgram> program = lower_plan(*trials[best].plan);
    return program ? build(*program, arrays, types, Exchange::Kind::kPersistent, lane, out) : mpi_error(MPI_ERR_INTERN, program.error());
  });
  if (measured) s = agree_on_kept(nc_->internal(), s);
  if (!s.ok()) {
    out->reset();
    return s;
  }
  if (plan_run) *plan_run = best == 0 ? priced.plan : trials[best].plan;
  return {};
}

}  // namespace cartplan::mpi
