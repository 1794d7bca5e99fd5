// The Open MPI profile: how cartplan lowers for Open MPI's point-to-point layer (ob1 over its
// shared-memory transport), as thresholds of engine::LowerOptions derived from a cost model.
// The engine prices what a lowering sends and lowers as it is told (engine/lower.h; its default:
// no trailers, blocks at home in every message); this profile decides, from a machine's
// calibration, whether one-byte trailers steer large messages away from Open MPI's single copy
// onto its pipeline, and in which messages blocks are received at home. Plain C++ (no <mpi.h>):
// the MPI backend, the CLI, the tools and the benchmarks lower and predict alike with it.
//
//   engine::PlanOptions o;  o.model = calibrated;
//   o.lowering = openmpi::lower_options(o.model);           // what the MPI backend runs
//   Result<ir::Plan> p = engine::make_plan(op, nbh, o);
#pragma once

#include <cstdint>

#include "engine/cost_model.h"
#include "engine/lower.h"

namespace cartplan::openmpi {

// The trailer threshold for a machine: the smallest message size above the eager limit from
// which the cost model prices a pipelined message with a trailer (pipeline_us and its per-byte
// term) below the same message by single copy (rendezvous_us + single copy per byte), else -1.
// Only a threshold: where the pipeline wins for small messages and loses for large ones, -1. The
// built-in model prices both paths alike: -1, Open MPI decides as it would without cartplan.
std::int64_t trailer_min_bytes(const engine::CostModel& model);

// The home limit for a machine: its eager limit where the cost model prices a message just
// above it dearer by single copy (rendezvous + single copy) than pipelined (the pipeline, its
// per-byte term, and the copy of its blocks that the homes save), else -1: where the single copy
// is slow, a message that homes make one run of the caller's memory would take it. Where the
// trailers put every message above the eager limit on the pipeline, no message is one run of
// memory to Open MPI: -1 then (homes in every message). The second form is for a trailer
// threshold other than the model's (Info cartplan_trailer_min_bytes).
std::int64_t home_max_message_bytes(const engine::CostModel& model);
std::int64_t home_max_message_bytes(const engine::CostModel& model, std::int64_t trailer_min_bytes);

// The lowering the MPI backend runs under `model` without Info overrides: the default
// struct_min_bytes, trailer_min_bytes(model) and home_max_message_bytes(model).
engine::LowerOptions lower_options(const engine::CostModel& model);

}  // namespace cartplan::openmpi
