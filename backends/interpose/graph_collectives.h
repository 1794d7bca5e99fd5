// The neighbourhood collectives of a graph that is not a stencil, through the drop-in: the
// program's MPI arguments become a call of cartplan's graph collectives (backends/mpi/
// graph_collective.h: MPI's block order, k-th edge rule and duplicate edges as they are), run
// with the algorithm the communicator's verdict picked (graph_verdicts.h), as a blocking call,
// a non-blocking request or a persistent request of requests.h (the same requests as the
// stencil's). The caller (collectives.cc) has checked the arguments as for a stencil.
//
// Each function returns false when the call goes to Open MPI unchanged (the verdict, or the
// agreement of a persistent init failed on every rank alike), else true with the MPI return
// code in *rc (errors raised through the communicator's error handler).
//
//   if (a->graph && graph_uniform(*a, Form::kBlocking, GraphOp::kAllgather, sb, 1, MPI_INT, rb, 1, MPI_INT,
//                                 comm, MPI_INFO_NULL, nullptr, &rc)) return rc;
#pragma once

#include <mpi.h>

#include <cstdint>

#include "backends/interpose/comm_table.h"
#include "backends/interpose/policy.h"
#include "backends/mpi/graph_collective.h"

namespace cartplan::interpose {

// Whether a call of this shape runs through cartplan (the verdict; `bytes` -1 for the v forms).
bool graph_taken(AcceleratedComm& a, ir::graph::GraphOp op, Form form, std::int64_t bytes);

bool graph_uniform(AcceleratedComm& a, Form form, ir::graph::GraphOp op, const void* sendbuf, int sendcount,
                   MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                   MPI_Request* request, int* rc);

// allgatherv, alltoallv and alltoallw (`call.varied` set, its arrays in MPI's order).
bool graph_varied(AcceleratedComm& a, Form form, const mpi::GraphCall& call, MPI_Comm comm, MPI_Info info,
                  MPI_Request* request, int* rc);

}  // namespace cartplan::interpose
