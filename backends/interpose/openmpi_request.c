// Requests of Open MPI's own kind (ompi_request_t), persistent or non-blocking, started and
// completed by cartplan (openmpi_request.h).
#include "backends/interpose/openmpi_request.h"

#include <stdio.h>

// Open MPI's internal headers (include/openmpi of libopenmpi-dev): the request's layout, its
// class, OMPI_REQUEST_INIT/FINI and ompi_request_complete.
#include "ompi_config.h"
#include "ompi/request/request.h"
#include "opal/class/opal_free_list.h"

typedef struct cartplan_request {
  ompi_request_t super;  // first: the MPI_Request handle points here
  cartplan_request_start_fn start;  // persistent only
  cartplan_request_release_fn release;
  void* ctx;
  // Non-blocking only: who still holds the request, the program (until MPI_Wait/Test or
  // MPI_Request_free frees it) and the work (until it completes it); the last one releases it.
  int holders;
  // Non-blocking only: the request the free list made before this one (all_made, below).
  struct cartplan_request* made_before;
} cartplan_request_t;

static OBJ_CLASS_INSTANCE(cartplan_request_t, ompi_request_t, NULL, NULL);

// Non-blocking requests come from a free list, as libnbc's do: constructed once, reused after
// they are released (a request's allocation and construction cost about half the instructions
// of a short call's whole request). Set up by cartplan_openmpi_request_usable; thread-safe under
// MPI_THREAD_MULTIPLE (Open MPI's lock-free list). Its items stay until the process ends.
static opal_free_list_t nonblocking_requests;

// Every non-blocking request the free list has made, newest first, for
// cartplan_openmpi_nonblocking_reclaim (MPI_Finalize). Linked when the list makes them
// (opal_free_list calls its item_init as it grows, 8 at a time, under its own lock), so a call
// pays nothing for it. Items never leave the free list's memory, so the chain stays valid.
static cartplan_request_t* all_made = NULL;

static int note_made(opal_free_list_item_t* item, void* ctx) {
  (void)ctx;
  cartplan_request_t* r = (cartplan_request_t*)item;
  r->holders = 0;  // on the list: nobody holds it
  r->made_before = all_made;
  all_made = r;
  return OPAL_SUCCESS;
}

// Starting an active request is erroneous. Open MPI 4.1's MPI_Startall refuses it before
// starting anything with MPI_ERR_REQUEST through MPI_COMM_WORLD's error handler, for every kind
// of persistent request; its MPI_Start leaves it to the request (point-to-point ones start
// again, libnbc's would run twice). Ours refuse it as MPI_Startall does, so that MPI_Start, and
// a copy that MPI_Startall passed, are reported too (Open MPI ignores what req_start returns
// inside MPI_Startall; the handler is how such a refusal is seen there).
static int refuse_start(void) {
  PMPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_REQUEST);
  return MPI_ERR_REQUEST;
}

// MPI_Start / MPI_Startall (Open MPI calls req_start of every request that is not a
// point-to-point one). An active request is refused before anything runs (refuse_start). The
// same handle twice in one MPI_Startall passes that first check; its second copy is refused
// when its turn comes (the first copy has made it active): the requests before it stay started.
static int start_requests(size_t count, ompi_request_t** requests) {
  for (size_t i = 0; i < count; ++i) {
    if (requests[i]->req_state == OMPI_REQUEST_ACTIVE) return refuse_start();
  }
  for (size_t i = 0; i < count; ++i) {
    cartplan_request_t* r = (cartplan_request_t*)requests[i];
    if (r->super.req_state == OMPI_REQUEST_ACTIVE) return refuse_start();  // started just now
    r->super.req_status = ompi_status_empty;
    r->super.req_complete = REQUEST_PENDING;  // before start: the work may complete it inside
    r->super.req_state = OMPI_REQUEST_ACTIVE;
    const int rc = r->start(r->ctx);
    if (rc != MPI_SUCCESS) {  // nothing was started: inactive and complete again
      r->super.req_state = OMPI_REQUEST_INACTIVE;
      r->super.req_complete = REQUEST_COMPLETED;
      return rc;
    }
  }
  return MPI_SUCCESS;
}

// MPI_Request_free: the work finishes first (release), then the request goes.
static int free_request(ompi_request_t** request) {
  cartplan_request_t* r = (cartplan_request_t*)*request;
  r->release(r->ctx);
  OMPI_REQUEST_FINI(&r->super);
  OBJ_RELEASE(r);
  *request = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}

// The layout also depends on how Open MPI was built (OPAL_ENABLE_DEBUG adds fields to the
// object header before the request's own), which the version does not tell: a persistent
// receive from MPI_PROC_NULL is read through the compiled layout. Open MPI 4.1 makes it a
// persistent no-op request (ompi_request_persistent_noop_create, request.h): type
// OMPI_REQUEST_NOOP, persistent, inactive, complete (OMPI_REQUEST_INIT), and not in the Fortran
// table (MPI_UNDEFINED, as OMPI_REQUEST_FINI expects) - each field checked on Debian's 4.1.4.
static int layout_matches(void) {
  char byte = 0;
  MPI_Request r = MPI_REQUEST_NULL;
  if (PMPI_Recv_init(&byte, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, &r) != MPI_SUCCESS) return 0;
  const int same = r != MPI_REQUEST_NULL && r->req_type == OMPI_REQUEST_NOOP && r->req_persistent &&
                   r->req_state == OMPI_REQUEST_INACTIVE && r->req_complete == REQUEST_COMPLETED &&
                   r->req_f_to_c_index == MPI_UNDEFINED;
  if (r != MPI_REQUEST_NULL) PMPI_Request_free(&r);
  return same;
}

int cartplan_openmpi_request_usable(void) {
  static int usable = -1;
  if (usable >= 0) return usable;
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0, major = -1, minor = -1;
  if (PMPI_Get_library_version(version, &length) != MPI_SUCCESS) return usable = 0;
  usable = sscanf(version, "Open MPI v%d.%d", &major, &minor) == 2 && major == OMPI_MAJOR_VERSION &&
           minor == OMPI_MINOR_VERSION && layout_matches();
  if (usable) {  // as libnbc sets up its list: grows 8 items at a time, no limit
    OBJ_CONSTRUCT(&nonblocking_requests, opal_free_list_t);
    usable = opal_free_list_init(&nonblocking_requests, sizeof(cartplan_request_t), 8, OBJ_CLASS(cartplan_request_t), 0, 0, 0,
                                 -1, 8, NULL, 0, NULL, note_made, NULL) == OPAL_SUCCESS;
  }
  return usable;
}

// The fields both kinds set on each new (or reused) request: a collective request, empty status.
static cartplan_request_t* init_request(cartplan_request_t* r, bool persistent, cartplan_request_release_fn release,
                                        void* ctx) {
  if (r == NULL) return NULL;
  OMPI_REQUEST_INIT(&r->super, persistent);  // persistent: inactive, completed; else pending
  r->super.req_type = OMPI_REQUEST_COLL;
  r->super.req_status = ompi_status_empty;
  r->super.req_cancel = NULL;  // MPI_Cancel of a collective is erroneous; Open MPI then does nothing
  r->release = release;
  r->ctx = ctx;
  return r;
}

int cartplan_openmpi_request_create(cartplan_request_start_fn start, cartplan_request_release_fn release, void* ctx,
                                    MPI_Request* request) {
  cartplan_request_t* r = init_request(OBJ_NEW(cartplan_request_t), true, release, ctx);
  if (r == NULL) return MPI_ERR_NO_MEM;
  r->super.req_start = start_requests;
  r->super.req_free = free_request;
  // Error handlers are never invoked on it (its status carries no error), but every field that
  // Open MPI may read names a valid object.
  r->super.req_mpi_object.comm = MPI_COMM_SELF;
  r->start = start;
  *request = &r->super;
  return MPI_SUCCESS;
}

// The program or the work lets go of a non-blocking request; the last one releases it (its work
// has finished then: the work lets go only after completing it).
static void let_go(cartplan_request_t* r) {
  if (__atomic_sub_fetch(&r->holders, 1, __ATOMIC_ACQ_REL) != 0) return;
  r->release(r->ctx);
  MPI_Comm comm = r->super.req_mpi_object.comm;
  OBJ_RELEASE(comm);
  opal_free_list_return(&nonblocking_requests, &r->super.super);
}

// MPI_Wait/Test and their array forms (once complete without error), MPI_Request_free (maybe
// still active: the work keeps running and releases it when it completes), the error handler.
static int free_nonblocking(ompi_request_t** request) {
  cartplan_request_t* r = (cartplan_request_t*)*request;
  OMPI_REQUEST_FINI(&r->super);  // out of the Fortran table, invalid
  *request = MPI_REQUEST_NULL;
  let_go(r);
  return MPI_SUCCESS;
}

int cartplan_openmpi_nonblocking_create(cartplan_request_release_fn release, void* ctx, MPI_Comm comm,
                                        MPI_Request* request) {
  cartplan_request_t* r =
      init_request((cartplan_request_t*)opal_free_list_get(&nonblocking_requests), false, release, ctx);
  if (r == NULL) return MPI_ERR_NO_MEM;
  r->super.req_state = OMPI_REQUEST_ACTIVE;  // as libnbc's requests once started
  // MPI leaves MPI_SOURCE, MPI_TAG and the count of a collective's status undefined; libnbc
  // never writes them, and its freshly allocated requests show 0: so do these (count 0 from
  // ompi_status_empty; MPI_ERROR and cancelled are set as libnbc sets them).
  r->super.req_status.MPI_SOURCE = 0;
  r->super.req_status.MPI_TAG = 0;
  r->super.req_free = free_nonblocking;
  // An error in its status goes where Open MPI 4.1 sends the errors of its own collective
  // requests: ompi_errhandler_request_invoke routes only point-to-point, file and window
  // requests to their object's handler, so a COLL request's error reaches MPI_COMM_WORLD's
  // handler, exactly as plain libnbc's does (a drop-in must not differ). The request holds comm
  // (as Open MPI's point-to-point requests do) until it is released.
  OBJ_RETAIN(comm);
  r->super.req_mpi_object.comm = comm;
  r->holders = 2;
  *request = &r->super;
  return MPI_SUCCESS;
}

void cartplan_openmpi_nonblocking_complete(MPI_Request request, int error) {
  cartplan_request_t* r = (cartplan_request_t*)request;
  r->super.req_status.MPI_ERROR = error;
  ompi_request_complete(&r->super, true);
  let_go(r);  // the program may have freed it already: then it goes here
}

void cartplan_openmpi_request_complete(MPI_Request request) { ompi_request_complete(request, true); }

// Held by the program alone (holders 1: the work let go, which it does only after completing
// the request; a request the program freed while active is held by the work alone, and not
// complete until the work lets go): freed as MPI_Request_free would.
int cartplan_openmpi_nonblocking_reclaim(void) {
  int freed = 0;
  for (cartplan_request_t* r = all_made; r != NULL; r = r->made_before) {
    if (__atomic_load_n(&r->holders, __ATOMIC_ACQUIRE) != 1 || !REQUEST_COMPLETE(&r->super)) continue;
    ompi_request_t* handle = &r->super;
    free_nonblocking(&handle);
    ++freed;
  }
  return freed;
}

int cartplan_openmpi_nonblocking_held(void) {
  int held = 0;
  for (cartplan_request_t* r = all_made; r != NULL; r = r->made_before) held += __atomic_load_n(&r->holders, __ATOMIC_ACQUIRE) != 0;
  return held;
}

int cartplan_openmpi_requests_complete(int n, const MPI_Request* requests) {
  for (int i = 0; i < n; ++i) {
    if (requests[i] != MPI_REQUEST_NULL && !REQUEST_COMPLETE(requests[i])) return 0;
  }
  return 1;
}

int cartplan_openmpi_request_is_ours(MPI_Request request) {
  return request != MPI_REQUEST_NULL && request->req_free == free_request;
}
