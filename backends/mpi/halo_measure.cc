// Measuring mode for persistent halo exchanges (halo.h, docs/halo.md): at init, time the halo
// planner's close candidates on scratch arrays and run the fastest, the same on every rank. The
// timing, agreement and choice are the collectives' (measure_trials.h); here only what is the
// halo's: its candidates, its scratch arrays and its exchanges.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/mpi/halo.h"
#include "backends/mpi/measure_trials.h"
#include "backends/mpi/out_of_memory.h"
#include "backends/mpi/plan_cache.h"
#include "backends/mpi/plan_dump.h"
#include "backends/mpi/predefined.h"
#include "backends/mpi/test_failure.h"
#include "engine/halo/bind.h"
#include "engine/halo/uneven.h"

namespace cartplan::mpi {

namespace eh = engine::halo;
namespace ih = ir::halo;

MpiStatus HaloContext::measure_list(std::int64_t elem_bytes, std::vector<Trial>* out, std::int64_t* fingerprint) const {
  out->clear();
  eh::HaloDescription d = *description_;
  d.array.elem_bytes = elem_bytes;  // priced for what one cell of all the fields takes in a message
  Result<std::vector<eh::HaloCandidate>> cands = eh::halo_candidates(d, plan_options_);
  if (!cands) return mpi_error(MPI_ERR_INTERN, "cartplan could not re-plan the halo to measure: " + cands.error());
  std::vector<double> predicted;
  for (const eh::HaloCandidate& c : *cands) predicted.push_back(c.cost.us);
  // The model's pick first: make_halo_plan's choice for these element sizes (priced_for's).
  std::vector<std::string> seen;
  std::uint64_t hash = 0;
  for (std::size_t i : PlanCache::measure_order(predicted, eh::pick_halo_candidate(*cands))) {
    if (static_cast<int>(out->size()) >= PlanCache::kMeasureMaxCandidates) break;
    std::string text = eh::plan_signature((*cands)[i].plan);  // alike on ranks whose interiors alone differ
    if (std::find(seen.begin(), seen.end(), text) != seen.end()) continue;
    hash = hash * 1099511628211ull + plan_fingerprint(text);
    seen.push_back(std::move(text));
    const ih::HaloPlan& plan = (*cands)[i].plan;
    out->push_back(Trial{ih::to_string(plan.algorithm()), predicted[i], std::make_shared<const ih::HaloPlan>(plan)});
  }
  *fingerprint = static_cast<std::int64_t>(hash >> 1);  // non-negative: its negation is agreed too
  return {};
}

Result<eh::HaloProgram> HaloContext::lower_plan(const ih::HaloPlan& plan) const {
  Result<eh::HaloBinder> binder = eh::HaloBinder::create(plan);
  if (!binder) return fail("cartplan's halo plan does not verify: " + binder.error());
  return eh::lower_halo(*binder, nc_->grid(), nc_->coords());
}

MpiStatus HaloContext::measure(const std::vector<Trial>& trials, const std::vector<void*>& arrays, const std::vector<MPI_Datatype>& types,
                               int lane, std::size_t* best) const {
  *best = 0;
  // Scratch arrays of the caller's layout and element types: init must not write the caller's
  // arrays (ghost cells), and their interiors need no meaning for a timing. Array f spans
  // (cells - 1) x extent + true extent bytes from its element 0's true lower bound.
  std::int64_t cells = 1;
  for (int k = 0; k < program_.array.ndims; ++k) cells *= program_.array.extent(k);
  std::vector<std::vector<unsigned char>> scratch(arrays.size());
  std::vector<void*> trial_arrays(arrays.size());
  std::uint64_t total = 0;
  std::vector<std::int64_t> span(arrays.size()), lower(arrays.size());
  for (std::size_t f = 0; f < arrays.size(); ++f) {
    MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    const MPI_Datatype t = types.empty() ? elem_ : types[f];
    CARTPLAN_MPI_CALL(MPI_Type_get_extent(t, &lb, &extent));
    CARTPLAN_MPI_CALL(MPI_Type_get_true_extent(t, &true_lb, &true_extent));
    span[f] = std::max<std::int64_t>((cells - 1) * extent + true_extent, 1);
    lower[f] = true_lb;
    total += static_cast<std::uint64_t>(span[f]);
  }
  // Under SimGrid SMPI (3.32) a derived element type's bounds can be wrong (a resized type's true
  // bounds are its new ones, docs/smpi.md), so its scratch array could be too short: the trials are
  // skipped as for too large scratch, and the model's pick stands.
  bool unknown_bounds = false;
#ifdef CARTPLAN_SMPI
  for (std::size_t f = 0; f < arrays.size(); ++f) unknown_bounds = unknown_bounds || !predefined_type(types.empty() ? elem_ : types[f]);
#endif
  const bool no_trials = total > kMeasureMaxScratchBytes || unknown_bounds;
  std::vector<std::unique_ptr<Exchange>> xs(trials.size());
  // Running out of memory here (the scratch arrays, a trial's temps) is this rank's
  // MPI_ERR_NO_MEM for the agreement below: an exception would leave this rank alone out of it.
  const MpiStatus built = no_trials ? MpiStatus{} : out_of_memory_as_error("building the halo's candidates to measure (scratch, exchanges)", [&] {
    inject_out_of_memory("measure-trials");
    for (std::size_t f = 0; f < arrays.size(); ++f) {
      scratch[f].assign(static_cast<std::size_t>(span[f]), 0);
      trial_arrays[f] = scratch[f].data() - lower[f];
    }
    MpiStatus b;
    for (std::size_t i = 0; i < trials.size() && b.ok(); ++i) {
      Result<eh::HaloProgram> program = lower_plan(*trials[i].plan);
      b = program ? build(*program, trial_arrays, types, Exchange::Kind::kPersistent, lane, &xs[i]) : mpi_error(MPI_ERR_INTERN, program.error());
    }
    return b;
  });
  bool skip = false;
  MpiStatus s = agree_to_measure(nc_->internal(), built, no_trials, &skip);
  if (!s.ok() || skip) return s;  // skip: the model's pick stands
  std::vector<std::string> names;
  std::vector<double> predicted;
  for (const Trial& t : trials) {
    names.push_back(t.name);
    predicted.push_back(t.predicted_us);
  }
  return time_and_pick(xs, nc_->internal(), names, predicted, nc_->rank() == 0, best);
}

}  // namespace cartplan::mpi
