// The accelerated neighbourhood collectives: the program's MPI arguments (blocks in list
// order: block k to destinations[k], block j from sources[j]) become an ExchangeSpec in the
// neighbourhood's order through the communicator's EdgeOrder, and run as a blocking call, a
// non-blocking request or a persistent request of the MPI backend.
//
// Each function returns false when the call must go to Open MPI unchanged: the communicator is
// not accelerated, or the arguments are unusual (MPI_IN_PLACE, NULL arrays, negative counts,
// MPI_DATATYPE_NULL, a NULL request), so that Open MPI reports exactly its own errors; or a
// blocking or non-blocking v/w form (alltoallv, alltoallw, allgatherv: MPI lets their block
// sizes vary by rank and direction, cartplan cannot check that without an agreement per call;
// their persistent forms agree at init and fall back to Open MPI when sizes are not uniform);
// or the do-no-harm rule (policy.h) finds cartplan's plan not clearly cheaper for this call
// shape (decided before the call for uniform calls, after init's agreement for persistent ones).
// Otherwise it returns true with the MPI return code in *rc (errors raised through the
// communicator's error handler). On a graph that is not a stencil the calls go to cartplan's
// graph collectives instead (graph_collectives.h), the v and w forms included.
//
//   int rc;
//   if (!neighbor_alltoall(Form::kBlocking, sb, 1, MPI_INT, rb, 1, MPI_INT, comm, MPI_INFO_NULL, nullptr, &rc))
//     rc = PMPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, comm);
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>

#include "backends/interpose/comm_table.h"
#include "backends/interpose/guard.h"
#include "backends/interpose/policy.h"

namespace cartplan::interpose {

// A uniform call's shape: which call (alltoall or allgather, blocking or non-blocking) and its
// counts and datatypes. The do-no-harm verdict depends on nothing else (buffers do not count).
inline std::array<std::uintptr_t, 5> shape_of(bool gather, Form form, int sendcount, MPI_Datatype sendtype, int recvcount,
                                               MPI_Datatype recvtype) {
  return {static_cast<std::uintptr_t>(gather) * 2 + (form == Form::kNonblocking ? 1 : 0), static_cast<std::uintptr_t>(sendcount),
          reinterpret_cast<std::uintptr_t>(sendtype), static_cast<std::uintptr_t>(recvcount),
          reinterpret_cast<std::uintptr_t>(recvtype)};
}

// Whether `a`'s last uniform call had `shape`. Compared word by word: std::array's operator==
// becomes a call to memcmp, which costs more than the rest of a passed-through call's test.
inline bool same_as_last_shape(const AcceleratedComm& a, const std::array<std::uintptr_t, 5>& shape) {
  const auto& last = a.last_shape;
  return a.last_shape_valid && last[0] == shape[0] && last[1] == shape[1] && last[2] == shape[2] && last[3] == shape[3] &&
         last[4] == shape[4];
}

// The cheapest test, inline in the wrappers: true when a blocking or non-blocking alltoall or
// allgather on `comm` certainly goes to Open MPI unchanged (no stencil behind the communicator,
// or the same shape passed through last time). False: look closer (neighbor_alltoall & co.).
inline bool passes(MPI_Comm comm, const std::array<std::uintptr_t, 5>& shape) {
  const AcceleratedComm* a = find_comm_fast(comm);
  return !a || (!a->last_shape_accelerated && same_as_last_shape(*a, shape));
}

// Raises a failed status through `comm`'s error handler; returns its MPI code.
int raise_status(MPI_Comm comm, const mpi::MpiStatus& s);

// The fast path of a repeated blocking alltoall (allgather if `gather`) on a stencil whose last
// call had the same shape and ran through cartplan: runs the exchange built for the same
// buffers, counts and datatypes again (Exchange::rerun_blocking) and returns true with the MPI
// code in *rc. False when it is not such a repeat (other buffers, a graph, checking mode):
// nothing was done, neighbor_alltoall & co. look closer.
// (Inline: its only caller, the wrappers' blocking path, then sets up one call frame, not two.)
inline bool rerun_uniform(AcceleratedComm& a, bool gather, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm, int* rc) {
  if (!a.nc) return false;  // a graph's collectives (graph_collectives.h)
  // The shape matched the last call's, which was taken with its used sides (used_sides): a
  // rank with edges both ways uses its arguments as given, any other matches only if they equal
  // what its used sides made of them. The key is neighbor_uniform's for the same call.
  const mpi::CallKey key = mpi::uniform_call_key(gather ? 101 : 100, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  Inside inside;
  mpi::MpiStatus s;
  if (!mpi::Exchange::rerun_blocking(*a.nc, key, &s)) return false;
  count_call(a);
  *rc = s.ok() ? MPI_SUCCESS : raise_status(comm, s);
  return true;
}

bool neighbor_alltoall(Form form, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request, int* rc);
bool neighbor_alltoallv(Form form, const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                        void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                        MPI_Info info, MPI_Request* request, int* rc);
bool neighbor_alltoallw(Form form, const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                        const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                        const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request* request, int* rc);
bool neighbor_allgather(Form form, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request, int* rc);
bool neighbor_allgatherv(Form form, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                         MPI_Request* request, int* rc);

}  // namespace cartplan::interpose
