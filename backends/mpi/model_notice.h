// With CARTPLAN_VERBOSE=1: which cost model the backend found, said once per process on rank 0 of
// the first communicator it plans for (Cart_neighborhood_create, or Cart_halo_create on a plain
// MPI_Cart_create communicator), or that it falls back to the built-in defaults.
//
//   Result<engine::LocatedModel> m = engine::locate_cost_model(std::nullopt, np, std::getenv);
//   if (m) verbose_model_notice(*m, comm, np);   // stderr, e.g. "cartplan: cost model from ..."
#pragma once

#include <mpi.h>

#include "engine/cost_model_locate.h"

namespace cartplan::mpi {

void verbose_model_notice(const engine::LocatedModel& m, MPI_Comm comm, int np);

}  // namespace cartplan::mpi
