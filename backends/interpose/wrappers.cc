// The PMPI interposition layer: the MPI functions this library defines. Each one either
// forwards to its PMPI_ twin, or does cartplan's bookkeeping around it, or runs the call
// through cartplan (see collectives.h, requests.h, comm_table.h).
#include <mpi.h>
// Open MPI 4.1 declares the PMPIX_ twins of its persistent-collective extension here.
#include <mpi-ext.h>
#include <openmpi/mpiext/pmpiext_pcollreq_c.h>

#include <vector>

#include "backends/interpose/cart_records.h"
#include "backends/interpose/collectives.h"
#include "backends/interpose/comm_table.h"
#include "backends/interpose/guard.h"
#include "backends/interpose/requests.h"

using namespace cartplan::interpose;

namespace {

// Whether completion calls have to do anything beyond PMPI: report the error of a persistent
// request of ours whose last start failed, or poll where the progress hook is off
// (requests.h). With the hook, Open MPI's own waiting loop progresses cartplan's exchanges and
// completes their requests.
// Inline in every completion wrapper, whose pass-through is then a test and a tail jump to PMPI
// (the rest of each wrapper is a separate function: a frame set up for it would be paid by every
// pass-through too).
__attribute__((always_inline)) inline bool ours_alive() { return any_persistent_failed() || polling(); }

// After a completion call: a completed persistent request of ours whose exchange failed
// reports that error (MPI_ERR_IN_STATUS for arrays, with the status' MPI_ERROR set).
int array_errors(int rc, int n, const MPI_Request* before, MPI_Status* statuses, const std::vector<int>& completed) {
  if (!any_persistent_failed() || rc != MPI_SUCCESS) return rc;
  int result = rc;
  for (int i : completed) {
    const int e = persistent_error(before[i]);
    if (e == MPI_SUCCESS) continue;
    result = n == 1 ? e : MPI_ERR_IN_STATUS;
    if (statuses != MPI_STATUSES_IGNORE) statuses[i].MPI_ERROR = e;
  }
  return result;
}

// PMPI_Neighbor_alltoall and PMPI_Neighbor_allgather.
using BlockingUniform = int (*)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm);

// MPI_Neighbor_alltoall (allgather if `gather`) once the quick test of blocking_uniform found
// that cartplan may run it: runs the exchange of the last call again when the shape and the
// buffers are the same (rerun_uniform); anything else is looked at closely (neighbor_*).
__attribute__((noinline)) int blocking_uniform_cartplan(bool gather, BlockingUniform pmpi, const void* sendbuf, int sendcount,
                                                        MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                                        MPI_Datatype recvtype, MPI_Comm comm, AcceleratedComm& a) {
  int rc = MPI_SUCCESS;
  if (same_as_last_shape(a, shape_of(gather, Form::kBlocking, sendcount, sendtype, recvcount, recvtype)) &&
      rerun_uniform(a, gather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &rc))
    return rc;
  const bool ran = gather ? neighbor_allgather(Form::kBlocking, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                               MPI_INFO_NULL, nullptr, &rc)
                          : neighbor_alltoall(Form::kBlocking, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                              MPI_INFO_NULL, nullptr, &rc);
  return ran ? rc : pmpi(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

// MPI_Neighbor_alltoall (allgather if `gather`). Inlined into the two wrappers, so that a call
// that passes through (no stencil behind `comm`, or the same shape passed through last time)
// costs a few comparisons and a jump to PMPI, without the frame of the slow path.
inline int blocking_uniform(bool gather, BlockingUniform pmpi, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  AcceleratedComm* a = forward() ? nullptr : find_comm_fast(comm);
  if (!a || (!a->last_shape_accelerated && same_as_last_shape(*a, shape_of(gather, Form::kBlocking, sendcount, sendtype,
                                                                              recvcount, recvtype))))
    return pmpi(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return blocking_uniform_cartplan(gather, pmpi, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, *a);
}

// PMPI_Ineighbor_alltoall and PMPI_Ineighbor_allgather.
using NonblockingUniform = int (*)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm, MPI_Request*);

// MPI_Ineighbor_alltoall (allgather if `gather`) once the wrapper's inline test (passes) found
// that cartplan may run it. Out of line, so that a pass-through sets up no frame for it.
__attribute__((noinline)) int nonblocking_uniform_cartplan(bool gather, NonblockingUniform pmpi, const void* sendbuf, int sendcount,
                                                           MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  int rc = MPI_SUCCESS;
  const bool ran = gather ? neighbor_allgather(Form::kNonblocking, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                               comm, MPI_INFO_NULL, request, &rc)
                          : neighbor_alltoall(Form::kNonblocking, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                              comm, MPI_INFO_NULL, request, &rc);
  return ran ? rc : pmpi(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}

// Whether a persistent request of ours occurs twice among the n (erroneous; Open MPI 4.1 would
// start it twice and drop our refusal of the second start). Only our requests are compared, and
// only while some exist, so a program's own MPI_Startall pays one load.
bool duplicate_of_ours(int n, const MPI_Request* requests) {
  if (!any_persistent()) return false;
  for (int i = 1; i < n; ++i) {
    if (!is_persistent_of_ours(requests[i])) continue;
    for (int j = 0; j < i; ++j)
      if (requests[j] == requests[i]) return true;
  }
  return false;
}

// MPI_Startall with self-message requests of ours alive (the fallback kind, requests.h). As
// Open MPI's MPI_Startall, which checks every request before it starts any: an active one of
// ours refuses the call before anything starts; then the others start in one PMPI_Startall (so
// Open MPI checks them alike: it refuses an active one, where PMPI_Start would start an active
// point-to-point request again), and ours only if it succeeded. MPI_Startall may start its
// requests in any order (MPI-4, Sect. 3.9).
int startall_with_self_messages(int count, MPI_Request* requests) {
  for (int i = 0; i < count; ++i)
    if (active_self_message(requests[i])) {
      PMPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_REQUEST);
      return MPI_ERR_REQUEST;
    }
  std::vector<char> ours(count);
  std::vector<MPI_Request> others;
  for (int i = 0; i < count; ++i) {
    ours[i] = is_self_message(requests[i]);
    if (!ours[i]) others.push_back(requests[i]);
  }
  if (!others.empty()) {
    const int rc = PMPI_Startall(static_cast<int>(others.size()), others.data());
    if (rc != MPI_SUCCESS) return rc;
  }
  for (int i = 0; i < count; ++i) {
    int rc = MPI_SUCCESS;
    if (ours[i] && start_if_self_message(&requests[i], &rc) && rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

// ---- the completion calls past their pass-through (the wrappers below) ----------------------
// Never inlined: a pass-through then sets up no frame for them.

__attribute__((noinline)) int start_ours(MPI_Request* request) {
  int rc = MPI_SUCCESS;
  if (start_if_self_message(request, &rc)) return rc;
  return PMPI_Start(request);
}

__attribute__((noinline)) int startall_ours(int count, MPI_Request array_of_requests[]) {
  // The same handle twice is erroneous: Open MPI 4.1 would start it twice and, for a request
  // of ours, drop the refusal of the second start. Refused here before anything starts, as
  // Open MPI's MPI_Startall refuses an active request (MPI_COMM_WORLD's error handler).
  if (count > 1 && duplicate_of_ours(count, array_of_requests)) {
    PMPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_REQUEST);
    return MPI_ERR_REQUEST;
  }
  if (!any_self_message()) return PMPI_Startall(count, array_of_requests);
  return startall_with_self_messages(count, array_of_requests);
}

__attribute__((noinline)) int request_free_ours(MPI_Request* request) {
  if (is_self_message(*request)) return free_self_message(request);
  return PMPI_Request_free(request);
}

__attribute__((noinline)) int test_ours(MPI_Request* request, int* flag, MPI_Status* status) {
  const MPI_Request before = *request;
  if (polling()) pump();
  const int rc = PMPI_Test(request, flag, status);
  return *flag ? array_errors(rc, 1, &before, status == MPI_STATUS_IGNORE ? MPI_STATUSES_IGNORE : status, {0}) : rc;
}

__attribute__((noinline)) int wait_ours(MPI_Request* request, MPI_Status* status) {
  const MPI_Request before = *request;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? MPI_STATUSES_IGNORE : status;
  // Without the progress hook, poll while accelerated requests are in flight, so that waiting
  // here drives their phases.
  while (polling()) {
    pump();
    int flag = 0;
    const int rc = PMPI_Test(request, &flag, status);
    if (flag || rc != MPI_SUCCESS) return array_errors(rc, 1, &before, st, {0});
  }
  return array_errors(PMPI_Wait(request, status), 1, &before, st, {0});
}

__attribute__((noinline)) int testall_ours(int count, MPI_Request array_of_requests[], int* flag, MPI_Status array_of_statuses[]) {
  const std::vector<MPI_Request> before(array_of_requests, array_of_requests + count);
  if (polling()) pump();
  const int rc = PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
  if (!*flag) return rc;
  std::vector<int> all(count);
  for (int i = 0; i < count; ++i) all[i] = i;
  return array_errors(rc, count, before.data(), array_of_statuses, all);
}

__attribute__((noinline)) int waitall_ours(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]) {
  const std::vector<MPI_Request> before(array_of_requests, array_of_requests + count);
  std::vector<int> all(count);
  for (int i = 0; i < count; ++i) all[i] = i;
  while (polling()) {
    pump();
    int flag = 0;
    const int rc = PMPI_Testall(count, array_of_requests, &flag, array_of_statuses);
    if (flag || rc != MPI_SUCCESS) return array_errors(rc, count, before.data(), array_of_statuses, all);
  }
  return array_errors(PMPI_Waitall(count, array_of_requests, array_of_statuses), count, before.data(), array_of_statuses, all);
}

__attribute__((noinline)) int testany_ours(int count, MPI_Request array_of_requests[], int* index, int* flag, MPI_Status* status) {
  const std::vector<MPI_Request> before(array_of_requests, array_of_requests + count);
  if (polling()) pump();
  const int rc = PMPI_Testany(count, array_of_requests, index, flag, status);
  if (!*flag || *index == MPI_UNDEFINED) return rc;
  return array_errors(rc, 1, &before[*index], status == MPI_STATUS_IGNORE ? MPI_STATUSES_IGNORE : status, {0});
}

__attribute__((noinline)) int waitany_ours(int count, MPI_Request array_of_requests[], int* index, MPI_Status* status) {
  const std::vector<MPI_Request> before(array_of_requests, array_of_requests + count);
  MPI_Status* st = status == MPI_STATUS_IGNORE ? MPI_STATUSES_IGNORE : status;
  int rc = MPI_SUCCESS;
  for (;;) {
    if (!polling()) {
      rc = PMPI_Waitany(count, array_of_requests, index, status);
      break;
    }
    pump();
    int flag = 0;
    rc = PMPI_Testany(count, array_of_requests, index, &flag, status);
    if (flag || rc != MPI_SUCCESS) break;
  }
  if (*index == MPI_UNDEFINED) return rc;
  return array_errors(rc, 1, &before[*index], st, {0});
}

// After MPI_Testsome / MPI_Waitsome: the errors of the completed persistent requests of ours.
int some_errors(int rc, const std::vector<MPI_Request>& before, const int* outcount, const int array_of_indices[],
                MPI_Status array_of_statuses[]) {
  if (*outcount == MPI_UNDEFINED || *outcount == 0 || !any_persistent_failed()) return rc;
  std::vector<MPI_Request> done(*outcount);
  for (int k = 0; k < *outcount; ++k) done[k] = before[array_of_indices[k]];
  std::vector<int> all(*outcount);
  for (int k = 0; k < *outcount; ++k) all[k] = k;
  return array_errors(rc, *outcount, done.data(), array_of_statuses, all);
}

__attribute__((noinline)) int testsome_ours(int incount, MPI_Request array_of_requests[], int* outcount, int array_of_indices[],
                                            MPI_Status array_of_statuses[]) {
  const std::vector<MPI_Request> before(array_of_requests, array_of_requests + incount);
  if (polling()) pump();
  const int rc = PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
  return some_errors(rc, before, outcount, array_of_indices, array_of_statuses);
}

__attribute__((noinline)) int waitsome_ours(int incount, MPI_Request array_of_requests[], int* outcount, int array_of_indices[],
                                            MPI_Status array_of_statuses[]) {
  const std::vector<MPI_Request> before(array_of_requests, array_of_requests + incount);
  int rc = MPI_SUCCESS;
  for (;;) {
    if (!polling()) {
      rc = PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
      break;
    }
    pump();
    rc = PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
    if (rc != MPI_SUCCESS || *outcount == MPI_UNDEFINED || *outcount > 0) break;
  }
  return some_errors(rc, before, outcount, array_of_indices, array_of_statuses);
}

}  // namespace

extern "C" {

// ---- communicators -------------------------------------------------------------------------

int MPI_Cart_create(MPI_Comm old_comm, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm* comm_cart) {
  const int rc = PMPI_Cart_create(old_comm, ndims, dims, periods, reorder, comm_cart);
  if (rc == MPI_SUCCESS && !forward()) record_cart(*comm_cart);
  return rc;
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
                                   int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm* comm_dist_graph) {
  const int rc = PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights, outdegree, destinations,
                                                 destweights, info, reorder, comm_dist_graph);
  if (rc == MPI_SUCCESS && !forward() && *comm_dist_graph != MPI_COMM_NULL) on_graph_created(*comm_dist_graph, info);
  return rc;
}

int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int nodes[], const int degrees[], const int targets[],
                          const int weights[], MPI_Info info, int reorder, MPI_Comm* newcomm) {
  const int rc = PMPI_Dist_graph_create(comm_old, n, nodes, degrees, targets, weights, info, reorder, newcomm);
  if (rc == MPI_SUCCESS && !forward() && *newcomm != MPI_COMM_NULL) on_graph_created(*newcomm, info);
  return rc;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  const int rc = PMPI_Comm_dup(comm, newcomm);
  if (rc == MPI_SUCCESS && !forward()) on_comm_dup(comm, *newcomm);
  return rc;
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  const int rc = PMPI_Comm_dup_with_info(comm, info, newcomm);
  if (rc == MPI_SUCCESS && !forward()) on_comm_dup(comm, *newcomm);
  return rc;
}

int MPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  const int rc = PMPI_Comm_idup(comm, newcomm, request);
  if (rc == MPI_SUCCESS && !forward()) on_comm_idup(comm, *newcomm);
  return rc;
}

int MPI_Comm_free(MPI_Comm* comm) {
  if (!forward() && comm) on_comm_free(*comm);
  return PMPI_Comm_free(comm);
}

int MPI_Finalize(void) {
  if (!forward()) {
    clear_requests();
    clear_comms();
    clear_carts();
  }
  return PMPI_Finalize();
}

// ---- blocking collectives ------------------------------------------------------------------

int MPI_Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm) {
  return blocking_uniform(false, PMPI_Neighbor_alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                           void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  int rc = MPI_SUCCESS;
  if (!forward() && neighbor_alltoallv(Form::kBlocking, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                       recvtype, comm, MPI_INFO_NULL, nullptr, &rc))
    return rc;
  return PMPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
}

int MPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                           void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                           MPI_Comm comm) {
  int rc = MPI_SUCCESS;
  if (!forward() && neighbor_alltoallw(Form::kBlocking, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                       recvtypes, comm, MPI_INFO_NULL, nullptr, &rc))
    return rc;
  return PMPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
}

int MPI_Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm) {
  return blocking_uniform(true, PMPI_Neighbor_allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                            const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  int rc = MPI_SUCCESS;
  if (!forward() && neighbor_allgatherv(Form::kBlocking, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                                        comm, MPI_INFO_NULL, nullptr, &rc))
    return rc;
  return PMPI_Neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}

// ---- non-blocking collectives --------------------------------------------------------------

int MPI_Ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  if (forward() || passes(comm, shape_of(false, Form::kNonblocking, sendcount, sendtype, recvcount, recvtype)))
    return PMPI_Ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  return nonblocking_uniform_cartplan(false, PMPI_Ineighbor_alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                      request);
}

int MPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request* request) {
  int rc = MPI_SUCCESS;
  if (!forward() && neighbor_alltoallv(Form::kNonblocking, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                       rdispls, recvtype, comm, MPI_INFO_NULL, request, &rc))
    return rc;
  return PMPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request);
}

int MPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                            void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                            MPI_Comm comm, MPI_Request* request) {
  int rc = MPI_SUCCESS;
  if (!forward() && neighbor_alltoallw(Form::kNonblocking, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                       rdispls, recvtypes, comm, MPI_INFO_NULL, request, &rc))
    return rc;
  return PMPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                                  request);
}

int MPI_Ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  if (forward() || passes(comm, shape_of(true, Form::kNonblocking, sendcount, sendtype, recvcount, recvtype)))
    return PMPI_Ineighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  return nonblocking_uniform_cartplan(true, PMPI_Ineighbor_allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                      request);
}

int MPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                             const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  int rc = MPI_SUCCESS;
  if (!forward() && neighbor_allgatherv(Form::kNonblocking, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                        recvtype, comm, MPI_INFO_NULL, request, &rc))
    return rc;
  return PMPI_Ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
}

// ---- persistent collectives (Open MPI 4.1's MPIX_ extension) -------------------------------

int MPIX_Neighbor_alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  int rc = MPI_SUCCESS;
  if (!forward() && neighbor_alltoall(Form::kPersistent, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info,
                                      request, &rc))
    return rc;
  return PMPIX_Neighbor_alltoall_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request);
}

int MPIX_Neighbor_alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                                 void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                                 MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  int rc = MPI_SUCCESS;
  if (!forward() && neighbor_alltoallv(Form::kPersistent, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                       rdispls, recvtype, comm, info, request, &rc))
    return rc;
  return PMPIX_Neighbor_alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                                       info, request);
}

int MPIX_Neighbor_alltoallw_init(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                 const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                                 MPI_Request* request) {
  int rc = MPI_SUCCESS;
  if (!forward() && neighbor_alltoallw(Form::kPersistent, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                       rdispls, recvtypes, comm, info, request, &rc))
    return rc;
  return PMPIX_Neighbor_alltoallw_init(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                                       info, request);
}

int MPIX_Neighbor_allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  int rc = MPI_SUCCESS;
  if (!forward() && neighbor_allgather(Form::kPersistent, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                       info, request, &rc))
    return rc;
  return PMPIX_Neighbor_allgather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request);
}

int MPIX_Neighbor_allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                  MPI_Info info, MPI_Request* request) {
  int rc = MPI_SUCCESS;
  if (!forward() && neighbor_allgatherv(Form::kPersistent, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                        recvtype, comm, info, request, &rc))
    return rc;
  return PMPIX_Neighbor_allgatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info,
                                        request);
}

// ---- requests ------------------------------------------------------------------------------
// Each wrapper's pass-through (forward(), or nothing of ours that the call could concern) is an
// inline test and a tail jump to PMPI; the rest is a function of its own above (*_ours), so
// that its frame is not set up on every call.

int MPI_Start(MPI_Request* request) {
  // Open MPI's own kind of persistent request of ours starts inside PMPI_Start (requests.h).
  if (forward() || !request || !any_self_message()) return PMPI_Start(request);
  return start_ours(request);
}

int MPI_Startall(int count, MPI_Request array_of_requests[]) {
  // Nothing of ours could be among them, nothing to start, or erroneous arguments (count < 0,
  // no array): Open MPI does it all and checks them.
  if (forward() || count <= 0 || !array_of_requests || (!any_persistent() && !any_self_message()))
    return PMPI_Startall(count, array_of_requests);
  return startall_ours(count, array_of_requests);
}

int MPI_Request_free(MPI_Request* request) {
  if (forward() || !request || !any_self_message()) return PMPI_Request_free(request);
  return request_free_ours(request);
}

int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  if (!forward() && polling()) pump();
  return PMPI_Request_get_status(request, flag, status);
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (forward() || !ours_alive()) return PMPI_Test(request, flag, status);
  return test_ours(request, flag, status);
}

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (forward() || !ours_alive()) return PMPI_Wait(request, status);
  return wait_ours(request, status);
}

int MPI_Testall(int count, MPI_Request array_of_requests[], int* flag, MPI_Status array_of_statuses[]) {
  if (forward() || !ours_alive()) return PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
  return testall_ours(count, array_of_requests, flag, array_of_statuses);
}

int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]) {
  if (forward() || !ours_alive()) return PMPI_Waitall(count, array_of_requests, array_of_statuses);
  return waitall_ours(count, array_of_requests, array_of_statuses);
}

int MPI_Testany(int count, MPI_Request array_of_requests[], int* index, int* flag, MPI_Status* status) {
  if (forward() || !ours_alive()) return PMPI_Testany(count, array_of_requests, index, flag, status);
  return testany_ours(count, array_of_requests, index, flag, status);
}

int MPI_Waitany(int count, MPI_Request array_of_requests[], int* index, MPI_Status* status) {
  if (forward() || !ours_alive()) return PMPI_Waitany(count, array_of_requests, index, status);
  return waitany_ours(count, array_of_requests, index, status);
}

int MPI_Testsome(int incount, MPI_Request array_of_requests[], int* outcount, int array_of_indices[],
                 MPI_Status array_of_statuses[]) {
  if (forward() || !ours_alive()) return PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
  return testsome_ours(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
}

int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int* outcount, int array_of_indices[],
                 MPI_Status array_of_statuses[]) {
  if (forward() || !ours_alive()) return PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
  return waitsome_ours(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
}

// For tests and tools: whether the drop-in found a stencil behind `comm` (its calls may then be
// accelerated, call shape by call shape: verdicts.h)...
int CARTPLAN_Interposed(MPI_Comm comm) { return find_comm(comm) != nullptr; }
// ... whether those are cartplan's graph collectives (a graph that is not a stencil) ...
int CARTPLAN_Graph_collectives(MPI_Comm comm) {
  AcceleratedComm* a = find_comm(comm);
  return a && a->graph ? 1 : 0;
}
// ... and how many collective calls on `comm` cartplan ran itself (blocking and non-blocking
// calls, persistent inits; -1 if the drop-in found no stencil behind `comm`).
long CARTPLAN_Accelerated_calls(MPI_Comm comm) {
  AcceleratedComm* a = find_comm(comm);
  return a ? a->calls.load() : -1;
}
// ... and how many of its requests are not yet released (every kind; no MPI call, so it may be
// asked after MPI_Finalize, which must have released them all).
int CARTPLAN_Unreleased_requests(void) { return unreleased_requests(); }

}  // extern "C"
