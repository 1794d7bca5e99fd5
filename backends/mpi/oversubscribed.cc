// Whether this rank's node runs more of a communicator's processes than it has cores.
#include "backends/mpi/oversubscribed.h"

#include <unistd.h>

namespace cartplan::mpi {

int node_oversubscribed(MPI_Comm comm, int* oversubscribed) {
  *oversubscribed = 0;
#ifdef CARTPLAN_SMPI
  (void)comm;
  return MPI_SUCCESS;
#else
  MPI_Comm node = MPI_COMM_NULL;
  const int rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  if (rc != MPI_SUCCESS) return rc;
  int on_node = 1;
  MPI_Comm_size(node, &on_node);
  MPI_Comm_free(&node);
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  *oversubscribed = cores > 0 && on_node > cores ? 1 : 0;
  return MPI_SUCCESS;
#endif
}

}  // namespace cartplan::mpi
