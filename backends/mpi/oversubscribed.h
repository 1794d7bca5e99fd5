// Whether a node runs more of a communicator's processes than it has cores: the built-in cost
// model then prices a phase as a context switch (engine/cost_model.h, kOversubscribedPhaseUs).
//
//   int mine = 0;
//   int rc = node_oversubscribed(comm, &mine);  // collective over comm; mine: 0 or 1 for this rank's node
//   // agree on it (e.g. MPI_Allreduce with MPI_MAX) before planning with it
#pragma once

#include <mpi.h>

namespace cartplan::mpi {

// *oversubscribed: 1 if this rank's node (MPI_COMM_TYPE_SHARED) runs more of `comm`'s processes
// than the machine has cores online, else 0. Collective over `comm`; returns an MPI error code. Under SimGrid's SMPI (CARTPLAN_SMPI) it is 0
// without asking: the simulated node's cores are not this machine's, and SMPI charges no context
// switches.
int node_oversubscribed(MPI_Comm comm, int* oversubscribed);

}  // namespace cartplan::mpi
