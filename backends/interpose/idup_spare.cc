// Spare private communicators for an accelerated communicator's next MPI_Comm_idup.
#include "backends/interpose/idup_spare.h"

namespace cartplan::interpose {

SpareComms::~SpareComms() {
  int finalized = 0;
  PMPI_Finalized(&finalized);
  if (finalized) return;
  if (exec != MPI_COMM_NULL) PMPI_Comm_free(&exec);
}

mpi::MpiStatus make_spare(MPI_Comm comm, SpareComms* out) {
  const int rc = PMPI_Comm_dup(comm, &out->exec);
  if (rc != MPI_SUCCESS) {
    out->release();
    return mpi::mpi_error(rc, "MPI_Comm_dup of the spare communicator for MPI_Comm_idup failed");
  }
  PMPI_Comm_set_errhandler(out->exec, MPI_ERRORS_RETURN);
  return {};
}

}  // namespace cartplan::interpose
