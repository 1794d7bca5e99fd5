// Requests of accelerated non-blocking and persistent neighbourhood collectives, as real
// MPI_Requests the program can mix with its own in every completion call.
//
// - Non-blocking (MPI_Ineighbor_*): a non-blocking request of Open MPI's own kind
//   (openmpi_request.h), built as libnbc builds its non-blocking collectives, active from the
//   call. The exchange's finish callback marks it complete with the exchange's outcome in its
//   status; Open MPI handles it like any request (Wait/Test families free it, statuses as
//   libnbc's, an error goes to MPI_COMM_WORLD's error handler, as libnbc's do in Open MPI 4.1). MPI_Request_free of an active
//   one lets the exchange run on; its state is released (the exchange back to the pool) once
//   the request is both complete and freed. MPI_Cancel does nothing. Fallback, under the same
//   condition and switch as the persistent one below: an MPI generalized request
//   (MPI_Grequest_start, completed with MPI_Grequest_complete; query_fn gives the same status
//   fields and error, free_fn releases the state, cancel_fn does nothing).
// - Persistent (MPIX_Neighbor_*_init): a persistent request of Open MPI's own kind
//   (openmpi_request.h), built as Open MPI builds its own persistent collectives. MPI_Start /
//   MPI_Startall of it (interposed or not) start cartplan's exchange; when the exchange has
//   finished, its finish callback marks the request complete. So the handle stays valid across
//   starts, becomes inactive on completion, and can be freed, exactly as MPI's persistent
//   requests, and a start costs no message. Where that kind cannot be used (the running Open MPI
//   is not the major.minor version the drop-in was built against, its request layout check
//   fails, or CARTPLAN_INTERPOSE_REQUESTS=self-message), the portable fallback: a persistent zero-byte
//   receive from this process itself on a private duplicate of MPI_COMM_SELF, with a tag of its
//   own, started with each MPI_Start (start_if_self_message) and completed by a zero-byte send
//   to self when the exchange has finished. A failed exchange's error is reported by the
//   interposed completion calls in both (persistent_error): Open MPI sees a success, so it keeps
//   the handle (it frees requests whose status carries an error).
// Graph exchanges (backends/mpi/graph_exchange.h, for graphs that are not a stencil) get the
// same two kinds of request.
//
// Progress: the exchange signals its request from its finish callback (Exchange::on_finish),
// which runs on whichever thread advanced it last: a cartplan call, or Open MPI's progress
// engine inside any MPI call the program makes (backends/mpi/exchange_progress.cc: MPI_Recv,
// MPI_Barrier, MPI_Wait on anything, ...). So a rank blocked anywhere in MPI still sends its
// later phases, and MPI_Wait on the request needs nothing from this layer. Where the progress
// hook is off (CARTPLAN_PROGRESS=cartplan), the interposed completion calls poll instead
// (polling()): then only they, and cartplan's own calls, advance the exchanges.
//
//   MPI_Request r;  start_nonblocking(std::move(exchange), &r);   // MPI_Wait(&r, ...) completes it
#pragma once

#include <mpi.h>

#include <atomic>
#include <memory>

#include "backends/mpi/exchange.h"
#include "backends/mpi/graph_exchange.h"
#include "backends/mpi/progress_hook.h"

namespace cartplan::interpose {

// Starts `x` (a non-blocking exchange, Cartesian or graph) and returns its request (Open MPI's
// own kind, or a generalized request).
int start_nonblocking(std::unique_ptr<mpi::Exchange> x, MPI_Request* request);
int start_nonblocking(std::unique_ptr<mpi::GraphExchange> x, MPI_Request* request);
// A non-blocking call whose exchange could not be made (erroneous arguments only this rank
// can see, such as an allgather's send block larger than its receive blocks): a request of the
// same kind, complete with `error` in its status. So the call returns MPI_SUCCESS and the error
// is reported by the completion call, through MPI_COMM_WORLD's error handler, as plain Open MPI
// 4.1 reports the truncation of such a call (libnbc: docs/dropin.md). MPI_SUCCESS, or the code
// of the request's creation (then nothing was made).
int fail_nonblocking(int error, MPI_Comm comm, MPI_Request* request);
// Wraps `x` (a persistent exchange, inactive) in a persistent request.
int make_persistent(std::unique_ptr<mpi::Exchange> x, MPI_Request* request);
int make_persistent(std::unique_ptr<mpi::GraphExchange> x, MPI_Request* request);

// Counters the completion calls test on every call (inline: they are read far more often than
// written): requests started and not yet signalled, self-message persistent requests alive, and
// persistent requests whose last start failed.
inline std::atomic<int> flying{0}, self_message_count{0}, persistent_failures{0}, persistent_count{0};

// Whether `request` is one of ours self-message persistent requests (nothing is looked up when
// none exists; Open MPI's own kind needs nothing from the wrappers to start or free).
bool is_self_message(MPI_Request request);
// Whether `request` is one of ours self-message requests whose exchange is running (started,
// not yet finished; one that finished is not seen as active: docs/dropin.md, Limitations).
bool active_self_message(MPI_Request request);
// MPI_Start of `*request` if it is one of ours self-message requests (true, with the MPI code
// in *rc); false (nothing done) for any other request. One lookup.
bool start_if_self_message(MPI_Request* request, int* rc);
int free_self_message(MPI_Request* request);
// The error of the last completed start of a persistent request of ours (MPI_SUCCESS if none).
int persistent_error(MPI_Request request);
inline bool any_self_message() { return self_message_count.load(std::memory_order_relaxed) > 0; }
// Whether `request` is a persistent request of ours (either kind); nothing is looked up while
// none exists.
bool is_persistent_of_ours(MPI_Request request);
inline bool any_persistent() { return persistent_count.load(std::memory_order_relaxed) > 0; }
// Whether the last start of some persistent request of ours failed: only then do completion
// calls have errors to report (persistent_error).
inline bool any_persistent_failed() { return persistent_failures.load(std::memory_order_relaxed) > 0; }

// Accelerated requests started and not yet signalled complete to MPI.
inline bool in_flight() { return flying.load(std::memory_order_relaxed) > 0; }
// Whether completion calls must poll: the progress hook is off and a request is in flight.
inline bool polling() { return in_flight() && !mpi::progress_hook_available(); }
// Advances every pending exchange once (and so signals those that finished).
void pump();

// MPI_Finalize: finishes what is in flight, frees every non-blocking request the program never
// freed (erroneous, but their state would stay allocated: reclaim_nonblocking), releases every
// persistent request and the private communicator.
void clear_requests();
// Requests of ours not yet released, of every kind (for tests: 0 after MPI_Finalize).
int unreleased_requests();

}  // namespace cartplan::interpose
