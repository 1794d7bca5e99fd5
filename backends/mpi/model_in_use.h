// The cost model the MPI backend plans with on a communicator when the user names none in Info:
// the located calibration (engine/cost_model_locate.h: an explicit path, CARTPLAN_COST_MODEL, the
// default location) or the built-in defaults, whose phase price becomes a context switch where
// a node is oversubscribed (backends/mpi/oversubscribed.h) -- Cart_neighborhood_create's rule. For
// programs that print the model's prediction beside a measured time (tools/halo, bench/).
//
//   Result<engine::LocatedModel> m = model_in_use(MPI_COMM_WORLD, std::nullopt);  // collective
//   double us = engine::predict(plan, sizes, m->model, grid).total_us();
#pragma once

#include <mpi.h>

#include <optional>
#include <string>

#include "engine/cost_model_locate.h"
#include "ir/result.h"

namespace cartplan::mpi {

// Collective over `comm` (every rank gets the same model). `path`: a file named by the caller
// (as the Info key cartplan_cost_model would), else the lookup's order.
Result<engine::LocatedModel> model_in_use(MPI_Comm comm, const std::optional<std::string>& path);

}  // namespace cartplan::mpi
