// Options: a neighbourhood communicator's planning options, read from Info keys and the
// environment, with the fingerprint ranks agree on and the check that a given plan fits.
//
//   Options o;
//   MpiStatus s = parse_info(info, /*ndims=*/2, &o);   // MPI_ERR_INFO_VALUE naming the key
//   if (s.ok()) s = check_given_plan(o, nbh, ir::Op::kAlltoall);
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/mpi/status.h"
#include "engine/cost_model.h"
#include "engine/lower.h"
#include "engine/neighborhood.h"
#include "engine/placement.h"
#include "engine/optimizer.h"
#include "ir/plan.h"

namespace cartplan::mpi {

// A communicator's options: its Info keys (at Cart_neighborhood_create, or per _init call to
// override; parse_info in info_options.cc reads them, docs/info-keys.md lists them with
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
  // message); nullopt: the Open MPI profile's for the model (openmpi_profile.h). Local, like
  // struct_min_bytes.
  std::optional<std::int64_t> home_max_message_bytes;
  // engine::LowerOptions::trailer_min_bytes (Info cartplan_trailer_min_bytes): messages of at
  // least this many bytes carry a one-byte trailer, so that Open MPI pipelines them instead of
  // reading them with a single copy (-1: none); nullopt: the Open MPI profile's for the model.
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
  // Which ranks share a node (block or cyclic placement, node_map.h), agreed at creation;
  // unknown: neither pattern, or one node. The planner counts placement (engine/placement.h)
  // only where the model prices it.
  engine::Placement placement{};
};

// A hash of everything in `options` that changes what a collective does (algorithm, dimension
// order, model, checking mode): ranks agree on it at init and in checking mode.
std::int64_t options_fingerprint(const Options& options);

// The lowering `options` ask for: their struct_min_bytes, and the Info trailer and home
// thresholds, else the Open MPI profile's for the model (openmpi_profile.h). The executor
// lowers with it.
engine::LowerOptions lower_options(const Options& options);

// The lowering the planner and the drop-in's verdicts predict with: lower_options without the
// local keys (struct_min_bytes and the home threshold may differ between ranks, docs/info-keys.md),
// so that it depends only on what ranks agreed on (the model and the trailer threshold) and every
// rank picks the same plan. Where a rank sets a local key, it runs a lowering the prediction did
// not price; what travels is the same.
engine::LowerOptions agreed_lower_options(const Options& options);

// The placement the planner counts with: options.placement where the model prices placement
// (engine::prices_placement), else unknown (no placement counts, no cost).
engine::Placement planning_placement(const Options& options);

// Every price of the model, in one list (info_options.cc): the description ranks agree on at
// creation, the options' fingerprint and the plan cache key all change when any of them does.
std::vector<double> model_prices(const engine::CostModel& m);

// The value of Info `key` (empty, *present false, when info is MPI_INFO_NULL or lacks it).
std::string info_value(MPI_Info info, const char* key, bool* present);

// The cost model's Info keys on top of options->model: cartplan_cost_model (a calibrated file,
// cartplan-calibrate's), then cartplan_alpha_us and cartplan_beta_us_per_byte, which override it.
// MPI_ERR_INFO_VALUE names a file that does not load or a number that does not parse.
//   MpiStatus s = parse_model(info, &options);   // options.model: the located model before
MpiStatus parse_model(MPI_Info info, Options* options);

// Info cartplan_check alone (none|collective; *collective left alone when absent): the halo API
// reads it at creation. MPI_ERR_INFO_VALUE for another value.
MpiStatus parse_check(MPI_Info info, bool* collective);
// CARTPLAN_CHECK's default of the checking mode into *collective (unchanged when unset);
// MPI_ERR_ARG for a value other than none or collective.
//   bool check = false;  MpiStatus s = check_from_env(&check);
MpiStatus check_from_env(bool* collective);

// Info cartplan_tune alone (model|measure; *measure left alone when absent): the halo API reads
// it at creation and at persistent init. MPI_ERR_INFO_VALUE for another value.
MpiStatus parse_tune(MPI_Info info, bool* measure);

// Info cartplan_progress alone (any|cartplan; *anywhere left alone when absent): communicator
// creation reads it, the Cartesian and the graph kind alike. MPI_ERR_INFO_VALUE for another value.
MpiStatus parse_progress(MPI_Info info, bool* anywhere);

// The environment's defaults of the checking and measuring modes (CARTPLAN_CHECK,
// CARTPLAN_TUNE: MPI_ERR_ARG for another value); Info keys override them.
MpiStatus modes_from_env(Options* options);

// Reads the keys above from `info` on top of `base`. Errors (MPI_ERR_INFO_VALUE) name the key.
MpiStatus parse_info(MPI_Info info, int ndims, Options* options);

// Whether a given plan (if any) fits `nbh` and, unless op is nullopt, `op`: MPI_ERR_ARG naming
// the first difference (dimensions, number of offsets, an offset, the op).
MpiStatus check_given_plan(const Options& options, const engine::Neighborhood& nbh, std::optional<ir::Op> op);

}  // namespace cartplan::mpi
