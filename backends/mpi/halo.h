// HaloContext: the MPI side of a halo exchange described by an array (Cart_halo_create,
// docs/halo.md): the plan engine/halo/choose.h picks for the description and the
// communicator's grid, this rank's program (engine/halo/program.h), and the exchanges that run
// it on the caller's arrays with MPI subarray datatypes, through the same Exchange machinery
// (phases, progress, lanes, Cart_start/Cart_wait) as the collectives.
//
// The neighbourhood comes from the communicator: a cartplan communicator's offsets that are
// sign vectors name the ghost regions to fill; a plain MPI_Cart_create communicator fills every
// region (Moore, 3^d - 1 offsets) unless Info cartplan_stencil names another stencil. Every
// rank must describe the same array: creation agrees once on errors and on a fingerprint of
// the description and of the chosen plan, then builds two private communicators (one for
// cartplan's messages, one carrying the caller's error handler), so that a halo and its
// requests never depend on the caller's communicator staying alive.
//
//   HaloArgs a{2, interior, ghost_lo, ghost_hi, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL};
//   std::shared_ptr<HaloContext> h;
//   MpiStatus s = HaloContext::create(cart, a, &h);
//   s = h->exchange({u});                                   // blocking, no collective (checking mode: one)
//   std::unique_ptr<Exchange> x;
//   s = h->exchange_init({u}, &x);                          // persistent: x->start(); x->wait();
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/mpi/exchange.h"
#include "backends/mpi/exchange_reuse.h"
#include "backends/mpi/halo_fields.h"
#include "backends/mpi/neighborhood_comm.h"
#include "backends/mpi/status.h"
#include "engine/halo/choose.h"
#include "engine/halo/description.h"
#include "engine/halo/program.h"
#include "ir/halo/plan.h"

namespace cartplan::mpi {

// The arguments of Cart_halo_create after the communicator.
struct HaloArgs {
  int d = 0;
  const int* interior = nullptr;
  const int* ghost_lo = nullptr;
  const int* ghost_hi = nullptr;
  MPI_Datatype elemtype = MPI_DATATYPE_NULL;
  int order = MPI_ORDER_C;
  MPI_Info info = MPI_INFO_NULL;
};

class HaloContext {
 public:
  // Collective over `cartcomm`. Errors: MPI_ERR_COMM (MPI_COMM_NULL), MPI_ERR_TOPOLOGY (no
  // Cartesian topology), MPI_ERR_DIMS (d is not the grid's), MPI_ERR_ARG (NULL arrays, extents,
  // widths, order, a ghost side wider than the interior it is filled from, a stencil with no
  // region, descriptions that differ between ranks), MPI_ERR_TYPE (elemtype), MPI_ERR_INFO_VALUE
  // (an Info value). Every rank returns the same class. `caller_error`, if not ok, is a bad
  // argument the caller found (the C++ API's vector lengths); it is agreed like the others.
  static MpiStatus create(MPI_Comm cartcomm, const HaloArgs& args, std::shared_ptr<HaloContext>* out,
                          const MpiStatus& caller_error = {});
  ~HaloContext();
  HaloContext(const HaloContext&) = delete;
  HaloContext& operator=(const HaloContext&) = delete;

  // Fills the ghost cells of every array (one set of messages for all). `types`: one element
  // type per array, or empty for the halo's. By default local arguments only, no collective; the exchanges
  // of the last few (arrays, types) lists are kept and run again, derived element types keyed
  // by layout (exchange_reuse.h) like the collectives' blocking cache. The plan is the one
  // priced for the arrays' element sizes added up (priced_for).
  // Checking mode (Info cartplan_check=collective at creation, or the environment's or the
  // cartplan communicator's default; agreed at creation): each rank checks its arguments and
  // finds or builds its exchange locally (blocking_for), then one MPI_Allreduce on the halo's
  // communicator agrees on errors (a build that failed included) and on the fields' number and
  // element sizes (halo_fields.h: MPI_ERR_TRUNCATE on every rank where they differ). `caller_error`, if not
  // ok, is a bad argument the caller found: returned at once, or in checking mode agreed.
  MpiStatus exchange(const std::vector<void*>& arrays, const std::vector<MPI_Datatype>& types = {},
                     const MpiStatus& caller_error = {});
  // A non-blocking exchange of `arrays`, started: *out runs on the halo communicator's next
  // non-blocking lane (lanes.h) until Exchange::wait or test completes it, so that several may
  // be in flight with blocking exchanges and persistent requests of the same halo. The exchange
  // of the plan priced for the arrays' element sizes added up (as exchange's) is taken from the
  // halo communicator's pool, where completed ones are kept by the arrays and element types'
  // keys (arrays_key), or built. Local in the default mode; in checking mode one agreement
  // before any message, as exchange's. *plan_run: the plan it runs. `caller_error` as exchange's.
  MpiStatus iexchange(const std::vector<void*>& arrays, const std::vector<MPI_Datatype>& types, const MpiStatus& caller_error,
                      std::unique_ptr<Exchange>* out, std::shared_ptr<const ir::halo::HaloPlan>* plan_run);
  // A persistent exchange of `arrays` (collective, as MPI-4 init: one agreement on errors and
  // on a free lane of the halo's communicator). `caller_error`, if not ok, is a bad argument the
  // caller found; it is agreed like the others. `info`: cartplan_tune (model|measure, default
  // the halo's). In measuring mode, on a halo planned with algorithm auto, init times the
  // planner's close candidates on scratch arrays (halo_measure.cc) and the request runs the
  // fastest, the same on every rank; *plan_run (if given) is the plan the request runs (in
  // model mode the one priced for the arrays' element sizes added up, priced_for). Ranks whose
  // fields differ in number or element sizes: MPI_ERR_TRUNCATE naming what differs
  // (halo_fields.h), as checking mode's blocking exchange. Ranks that disagree on measuring
  // mode: MPI_ERR_ARG; ranks that agree on it and on the arrays' element
  // sizes yet list different plans: MPI_ERR_INTERN (cartplan's bug), or MPI_ERR_ARG where
  // measuring candidates come from cost models that differed at creation.
  MpiStatus exchange_init(const std::vector<void*>& arrays, const std::vector<MPI_Datatype>& types, const MpiStatus& caller_error,
                          std::unique_ptr<Exchange>* out, MPI_Info info = MPI_INFO_NULL,
                          std::shared_ptr<const ir::halo::HaloPlan>* plan_run = nullptr);

  const ir::halo::HaloPlan& plan() const { return *plan_; }
  const engine::halo::HaloProgram& program() const { return program_; }
  // Where errors of this halo and its requests are reported: a private communicator carrying
  // the caller's error handler as it was at creation.
  MPI_Comm error_comm() const { return report_; }

 private:
  friend struct HaloAssembly;  // creation's local steps (halo.cc)
  HaloContext() = default;
  // The messages of `program` on `arrays`; the arrays and types were checked (field_sizes).
  MpiStatus schedule_for(const engine::halo::HaloProgram& program, const std::vector<void*>& arrays,
                         const std::vector<MPI_Datatype>& types, Exchange::Schedule* out) const;
  // An exchange of `program` on `arrays` (kind and lane as Exchange::from_schedule).
  MpiStatus build(const engine::halo::HaloProgram& program, const std::vector<void*>& arrays, const std::vector<MPI_Datatype>& types,
                  Exchange::Kind kind, int lane, std::unique_ptr<Exchange>* out) const;

  // A plan for arrays whose element sizes add up to elem_bytes (what one cell takes in a
  // message), and this rank's program of it.
  struct Priced {
    std::int64_t elem_bytes = 0;
    std::shared_ptr<const ir::halo::HaloPlan> plan;
    std::shared_ptr<const engine::halo::HaloProgram> program;
  };
  // The plan the exchanges of `arrays` run: the halo's own (plan_, program_) where their element
  // sizes add up to the halo's element size, or where the ranks' cost models differ (then a plan
  // made again could differ between ranks: reprice_ is false); else the planner's choice for the
  // description with that element size, made once per size (the last four sizes kept), the same
  // on every rank: the same description, model and sizes (element types of matching signatures
  // have equal sizes). `sizes`: the arrays' (field_sizes, which checks them). Errors:
  // MPI_ERR_TYPE (no plan for that size), MPI_ERR_INTERN.
  MpiStatus priced_for(const FieldSizes& sizes, Priced* out);

  // The blocking exchange a call runs, found or built locally (no message): kept ones are last
  // in blocking_ (`built`: by this call); one whose types cannot be keyed is `once`, per call.
  struct BlockingFound {
    bool built = false;
    std::unique_ptr<Exchange> once;
  };
  MpiStatus blocking_for(const std::vector<void*>& arrays, const std::vector<MPI_Datatype>& types, FieldSizes* sizes,
                         DerivedTypes* derived, BlockingFound* found);
  // A new blocking exchange; *sizes computed (field_sizes) unless given (not empty).
  MpiStatus build_blocking(const std::vector<void*>& arrays, const std::vector<MPI_Datatype>& types, FieldSizes* sizes,
                           std::unique_ptr<Exchange>* out);

  // Measuring mode (halo_measure.cc). A candidate worth timing: the planner's, model's pick first.
  struct Trial {
    std::string name;
    double predicted_us = 0;
    std::shared_ptr<const ir::halo::HaloPlan> plan;
  };
  // Local: the candidates to time for elements of elem_bytes (the fields' sizes added up;
  // PlanCache::measure_order's rule, duplicates dropped) and a fingerprint of the list, which
  // ranks agree on before timing.
  MpiStatus measure_list(std::int64_t elem_bytes, std::vector<Trial>* out, std::int64_t* fingerprint) const;
  // This rank's program of `plan` on the halo's grid.
  Result<engine::halo::HaloProgram> lower_plan(const ir::halo::HaloPlan& plan) const;
  // Collective: times the trials on scratch arrays like `arrays` and sets *best (index into
  // trials; 0 when the trials are skipped), the same on every rank. A rank out of memory for
  // its scratch or trial builds is MPI_ERR_NO_MEM on every rank (agree_to_measure).
  MpiStatus measure(const std::vector<Trial>& trials, const std::vector<void*>& arrays, const std::vector<MPI_Datatype>& types,
                    int lane, std::size_t* best) const;

  MPI_Comm report_ = MPI_COMM_NULL;
  std::unique_ptr<NeighborhoodComm> nc_;  // owns cartplan's internal communicator
  MPI_Datatype elem_ = MPI_DATATYPE_NULL; // the caller's element type: predefined as it is, derived a private copy
  std::shared_ptr<const ir::halo::HaloPlan> plan_;
  engine::halo::HaloProgram program_;
  // What measuring mode re-plans from: the description and the planner's options, and whether
  // persistent init measures by default (CARTPLAN_TUNE, the cartplan communicator's mode, Info
  // cartplan_tune at creation) and may (algorithm auto).
  std::optional<engine::halo::HaloDescription> description_;
  engine::halo::HaloPlanOptions plan_options_;
  bool tune_measure_ = false;
  // Whether every rank plans with the same cost model (agreed at creation): only then do the
  // fields forms plan again for their element sizes.
  bool reprice_ = false;
  std::vector<Priced> priced_;  // plans made for other element sizes, most recently used last
  // A kept blocking exchange: the arrays and the element types' keys (datatype_key: handles of
  // predefined types, layout ids of derived ones) it was built for.
  struct Blocking {
    std::vector<std::uintptr_t> key;  // arrays_key
    std::unique_ptr<Exchange> exchange;
  };
  std::vector<Blocking> blocking_;  // most recently used last
};

}  // namespace cartplan::mpi
