// Completing requests (wait, test) with their errors returned to cartplan as codes, in both builds.
//
//   const int rc = completion::waitall(n, requests, statuses);  // MPI_ERR_IN_STATUS: see statuses
//
// cartplan's requests live on its private communicators, whose error handler is MPI_ERRORS_RETURN:
// a truncated message comes back as MPI_ERR_IN_STATUS and becomes the call's MPI_ERR_TRUNCATE. SMPI
// 3.32's MPI_Wait*/MPI_Test* entry points hand any error to MPI_COMM_WORLD's handler instead, whatever
// the requests' communicator (WRAPPED_PMPI_CALL in SimGrid's smpi_mpi.cpp), so under the default
// MPI_ERRORS_ARE_FATAL on MPI_COMM_WORLD a mismatched block killed the run ("MPI_Waitall - returned
// MPI_ERR_IN_STATUS", exit 134). Under SMPI these call the PMPI_ entry points, which return the code
// without that wrapper; under Open MPI the MPI_ ones (tools that intercept MPI_ still see them).
#pragma once

#include <mpi.h>

namespace cartplan::mpi::completion {

#ifdef CARTPLAN_SMPI
inline int wait(MPI_Request* r, MPI_Status* st) { return PMPI_Wait(r, st); }
inline int test(MPI_Request* r, int* flag, MPI_Status* st) { return PMPI_Test(r, flag, st); }
inline int waitall(int n, MPI_Request* r, MPI_Status* st) { return PMPI_Waitall(n, r, st); }
inline int testall(int n, MPI_Request* r, int* flag, MPI_Status* st) { return PMPI_Testall(n, r, flag, st); }
inline int waitsome(int n, MPI_Request* r, int* out, int* idx, MPI_Status* st) { return PMPI_Waitsome(n, r, out, idx, st); }
inline int testsome(int n, MPI_Request* r, int* out, int* idx, MPI_Status* st) { return PMPI_Testsome(n, r, out, idx, st); }
#else
inline int wait(MPI_Request* r, MPI_Status* st) { return MPI_Wait(r, st); }
inline int test(MPI_Request* r, int* flag, MPI_Status* st) { return MPI_Test(r, flag, st); }
inline int waitall(int n, MPI_Request* r, MPI_Status* st) { return MPI_Waitall(n, r, st); }
inline int testall(int n, MPI_Request* r, int* flag, MPI_Status* st) { return MPI_Testall(n, r, flag, st); }
inline int waitsome(int n, MPI_Request* r, int* out, int* idx, MPI_Status* st) { return MPI_Waitsome(n, r, out, idx, st); }
inline int testsome(int n, MPI_Request* r, int* out, int* idx, MPI_Status* st) { return MPI_Testsome(n, r, out, idx, st); }
#endif

}  // namespace cartplan::mpi::completion
