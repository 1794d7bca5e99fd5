// Requests of accelerated non-blocking and persistent neighbourhood collectives, as real
// MPI_Requests the program can mix with its own in every completion call.
//
// - Non-blocking (MPI_Ineighbor_*): an MPI generalized request (MPI_Grequest_start). It is
//   marked complete (MPI_Grequest_complete) as soon as cartplan's exchange has finished; from
//   then on Open MPI handles it like any request (Wait/Test families, statuses, the error code
//   returned by the query callback, MPI_Request_free).
// - Persistent (MPIX_Neighbor_*_init): a persistent zero-byte receive from this process itself
//   on a private duplicate of MPI_COMM_SELF, with a tag of its own. MPI_Start/MPI_Startall of
//   it start cartplan's exchange and the receive; when the exchange has finished, a zero-byte
//   send to self completes the receive. So the handle stays valid across starts, becomes
//   inactive on completion, and can be freed, exactly as MPI's persistent requests.
//
// Progress: cartplan's later phases start only when cartplan code runs. Every interposed
// completion call (MPI_Wait*, MPI_Test*, MPI_Request_get_status) and every start or accelerated
// call "pumps": it advances every pending exchange of the process (Exchange::progress_all) and
// signals the finished ones to MPI. A blocking completion call polls (pump + MPI_Test*) while
// any accelerated request is in flight, so waiting on anything also drives cartplan's phases.
// Not covered: a rank blocked in another MPI call (MPI_Recv, MPI_Barrier, ...) while its
// accelerated request still has phases to start does not advance them (README).
//
//   MPI_Request r;  start_nonblocking(std::move(exchange), &r);
//   while (in_flight()) pump();
#pragma once

#include <mpi.h>

#include <memory>

#include "backends/mpi/exchange.h"

namespace cartplan::interpose {

// Starts `x` (a non-blocking exchange) and returns its generalized request.
int start_nonblocking(std::unique_ptr<mpi::Exchange> x, MPI_Request* request);
// Wraps `x` (a persistent exchange, inactive) in a persistent request.
int make_persistent(std::unique_ptr<mpi::Exchange> x, MPI_Request* request);

// Whether `request` is one of ours persistent requests (nothing is looked up when none exists).
bool is_persistent(MPI_Request request);
int start_persistent(MPI_Request* request);
int free_persistent(MPI_Request* request);
// The error of the last completed start of a persistent request of ours (MPI_SUCCESS if none).
int persistent_error(MPI_Request request);
bool any_persistent();

// Accelerated requests started and not yet signalled complete to MPI.
bool in_flight();
// Advances every pending exchange and signals those that finished.
void pump();

// MPI_Finalize: releases every persistent request and the private communicator.
void clear_requests();

}  // namespace cartplan::interpose
