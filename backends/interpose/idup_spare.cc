// Spare private communicators for an accelerated communicator's next MPI_Comm_idup.
#include "backends/interpose/idup_spare.h"

namespace cartplan::interpose {

SpareComms::~SpareComms() {
  int finalized = 0;
  PMPI_Finalized(&finalized);
  if (finalized) return;
  if (exec != MPI_COMM_NULL) PMPI_Comm_free(&exec);
  if (setup != MPI_COMM_NULL) PMPI_Comm_free(&setup);
}

mpi::MpiStatus make_spare(MPI_Comm comm, SpareFor use, SpareComms* out) {
  // Both calls are made whatever the first returned: every rank makes the same collective calls.
  const int rc_exec = PMPI_Comm_dup(comm, &out->exec);
  const int rc_setup = use == SpareFor::kGraph ? PMPI_Comm_dup(comm, &out->setup) : MPI_SUCCESS;
  if (rc_exec != MPI_SUCCESS || rc_setup != MPI_SUCCESS) {
    SpareComms failed;  // frees whichever was made
    failed.exec = rc_exec == MPI_SUCCESS ? out->exec : MPI_COMM_NULL;
    failed.setup = rc_setup == MPI_SUCCESS ? out->setup : MPI_COMM_NULL;
    out->release();
    return mpi::mpi_error(rc_exec != MPI_SUCCESS ? rc_exec : rc_setup, "MPI_Comm_dup of the spare communicators for MPI_Comm_idup failed");
  }
  PMPI_Comm_set_errhandler(out->exec, MPI_ERRORS_RETURN);
  if (out->setup != MPI_COMM_NULL) PMPI_Comm_set_errhandler(out->setup, MPI_ERRORS_RETURN);
  return {};
}

}  // namespace cartplan::interpose
