// The cost model the MPI backend plans with on a communicator (Cart_neighborhood_create's rule).
#include "backends/mpi/model_in_use.h"

#include <cstdlib>

#include "backends/mpi/oversubscribed.h"
#include "engine/cost_model.h"

namespace cartplan::mpi {

Result<engine::LocatedModel> model_in_use(MPI_Comm comm, const std::optional<std::string>& path) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  Result<engine::LocatedModel> found = engine::locate_cost_model(path, size, std::getenv);
  // Collective whatever the lookup found, so that no rank is left waiting.
  int mine = 0, any = 0;
  if (node_oversubscribed(comm, &mine) != MPI_SUCCESS) mine = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
  if (found && found->source == engine::ModelSource::kBuiltIn && any)
    found->model.phase_us = engine::CostModel::kOversubscribedPhaseUs;
  return found;
}

}  // namespace cartplan::mpi
