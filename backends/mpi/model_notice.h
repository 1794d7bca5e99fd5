// With CARTPLAN_VERBOSE=1: which cost model the backend found, said once per process on rank 0 of
// the first communicator it plans for (Cart_neighborhood_create, Cart_halo_create on a plain
// MPI_Cart_create communicator, or the first graph collective on a distributed-graph
// communicator), or that it falls back to the built-in defaults.
//
//   Result<engine::LocatedModel> m = engine::locate_cost_model(std::nullopt, np, std::getenv);
//   if (m) verbose_model_notice(*m, comm, np);   // stderr, e.g. "cartplan: cost model from ..."
//   else verbose_model_lookup_failed(m.error(), comm);   // the graph path, which then uses the defaults
#pragma once

#include <mpi.h>

#include <string>

#include "engine/cost_model_locate.h"

namespace cartplan::mpi {

void verbose_model_notice(const engine::LocatedModel& m, MPI_Comm comm, int np);

// The same notice (the same once per process) for a lookup that failed where the caller plans
// with the built-in defaults instead of failing (graph communicators): says why.
void verbose_model_lookup_failed(const std::string& why, MPI_Comm comm);

}  // namespace cartplan::mpi
