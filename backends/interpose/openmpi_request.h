// Requests of Open MPI's own kind, started and completed by cartplan: the drop-in's handle of an
// accelerated MPIX_Neighbor_*_init (persistent) or MPI_Ineighbor_* (non-blocking; requests.h).
//
// It is an ompi_request_t built the way Open MPI 4.1 builds its own persistent collective
// requests (libnbc's): type OMPI_REQUEST_COLL, persistent, with a start and a free function of
// ours. So Open MPI itself does everything MPI promises for it, whoever calls (the interposed
// MPI_* functions, PMPI_*, the Fortran bindings): MPI_Start / MPI_Startall run `start`; every
// completion call (MPI_Wait/Test and their all/any/some forms, MPI_Request_get_status) waits
// for or tests it among the program's requests like any other; completing it turns it
// inactive, keeping the handle; an inactive one counts as a null request in the any/some forms;
// MPI_Request_free runs `release`. Completing it (cartplan_openmpi_request_complete) is
// Open MPI's own ompi_request_complete: an atomic swap that wakes a thread waiting on it.
//
// A non-blocking one is built as libnbc builds its non-blocking collective requests: type
// OMPI_REQUEST_COLL, not persistent, active from creation, with a free function of ours. Open
// MPI completes it like its own (every completion call, MPI_Request_get_status), frees it when a
// completion call reports it (or, failed, hands it to the error handler Open MPI 4.1 uses for
// its own collective requests, MPI_COMM_WORLD's, which frees it too), and MPI_Request_free frees it even while active: the work then runs to
// its end and `release` runs when it completes the request
// (cartplan_openmpi_nonblocking_complete). MPI_Cancel does nothing (no cancel function: as a
// generalized request whose cancel function does nothing). Its status on completion: the work's
// error and not cancelled, as libnbc's; MPI_SOURCE 0, MPI_TAG 0, count 0 (undefined in MPI for
// a collective; libnbc never writes them, and its fresh requests show 0).
//
// cartplan_openmpi_requests_complete reads Open MPI's requests' completion flags: the drop-in's
// progress callback uses it to skip MPI_Testall in rounds where a phase cannot be complete.
//
// This uses Open MPI's internal headers (Debian ships them with libopenmpi-dev, matching the
// library), so the layout is only trusted when the running library has the major.minor version
// the drop-in was compiled against and a persistent receive from MPI_PROC_NULL reads as Open MPI
// 4.1 builds it through the compiled layout (cartplan_openmpi_request_usable; this also catches
// a build with another OPAL_ENABLE_DEBUG); requests.cc falls back to its portable mechanism
// otherwise. The same handle twice in one MPI_Startall: the second copy is refused. C, not C++: Open MPI's internal headers are C only.
//
//   MPI_Request r;
//   if (cartplan_openmpi_request_usable()) cartplan_openmpi_request_create(start, release, ctx, &r);
//   ... start(ctx) runs inside MPI_Start(&r); when the work is done:
//   cartplan_openmpi_request_complete(r);   // MPI_Wait(&r, ...) returns, r stays valid
//
//   cartplan_openmpi_nonblocking_create(release, ctx, comm, &r);   // the work is running
//   cartplan_openmpi_nonblocking_complete(r, MPI_SUCCESS);   // MPI_Wait(&r, ...) frees it
#pragma once

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

// Runs inside MPI_Start of an inactive request, after it was marked active: starts the work,
// which may complete the request before this returns. MPI_SUCCESS, or an error code if nothing
// was started (the request is then made inactive again and MPI_Start returns the code).
typedef int (*cartplan_request_start_fn)(void* ctx);
// Persistent: runs inside MPI_Request_free (or MPI_Finalize's clean-up through it): the work
// must be finished and ctx released when this returns. Non-blocking: runs when the request was
// both completed and freed (the work has finished): ctx is released.
typedef void (*cartplan_request_release_fn)(void* ctx);

// 1 if the running Open MPI has the major.minor version of the headers this file was compiled
// with and the request layout check passes (looked up once, after MPI_Init), else 0. Must have
// returned 1 before any request is created (it also sets up the non-blocking requests' free list).
int cartplan_openmpi_request_usable(void);

// A new inactive persistent request. MPI_SUCCESS, or MPI_ERR_NO_MEM.
int cartplan_openmpi_request_create(cartplan_request_start_fn start, cartplan_request_release_fn release, void* ctx,
                                    MPI_Request* request);

// A new active non-blocking request on `comm` (held until the request is released; its errors
// reach MPI_COMM_WORLD's handler, as libnbc's do in Open MPI 4.1). `release(ctx)` runs once the request was both completed and freed,
// on the thread that did the later of the two. MPI_SUCCESS, or MPI_ERR_NO_MEM.
int cartplan_openmpi_nonblocking_create(cartplan_request_release_fn release, void* ctx, MPI_Comm comm,
                                        MPI_Request* request);

// Completes a non-blocking request with `error` in its status (exactly once; the request may
// already be freed by the program, and may be released before this returns). Safe from any
// thread and inside Open MPI's progress engine.
void cartplan_openmpi_nonblocking_complete(MPI_Request request, int error);

// Marks an active persistent request complete with an empty status (source MPI_ANY_SOURCE, tag
// MPI_ANY_TAG, no error: errors of the work are reported by the interposed completion calls).
// Safe from any thread and inside Open MPI's progress engine.
void cartplan_openmpi_request_complete(MPI_Request request);

// 1 if `request` was made by cartplan_openmpi_request_create (persistent; one comparison), else 0.
int cartplan_openmpi_request_is_ours(MPI_Request request);

// MPI_Finalize, once no work is running (every non-blocking request complete): frees every
// non-blocking request the program still holds (complete but never freed by a completion call or
// MPI_Request_free; erroneous, but its state would stay allocated to the end of the process), as
// MPI_Request_free would. Not concurrently with any other call on these requests. Returns how many.
int cartplan_openmpi_nonblocking_reclaim(void);
// How many non-blocking requests are held by the program or by their work (for tests: 0 after
// MPI_Finalize). A walk over every request the free list made; no MPI call.
int cartplan_openmpi_nonblocking_held(void);

// 1 if every one of the n requests (any kind of Open MPI request, MPI_REQUEST_NULL included) is
// complete, 0 if one is not: a read of each request's completion flag, no progress, nothing
// changed. Only where cartplan_openmpi_request_usable().
int cartplan_openmpi_requests_complete(int n, const MPI_Request* requests);

#ifdef __cplusplus
}
#endif
