// A persistent request of Open MPI's own kind (an ompi_request_t), started and completed by
// cartplan (openmpi_request.h).
#include "backends/interpose/openmpi_request.h"

#include <stdio.h>

// Open MPI's internal headers (include/openmpi of libopenmpi-dev): the request's layout, its
// class, OMPI_REQUEST_INIT/FINI and ompi_request_complete.
#include "ompi_config.h"
#include "ompi/request/request.h"

typedef struct {
  ompi_request_t super;  // first: the MPI_Request handle points here
  cartplan_request_start_fn start;
  cartplan_request_release_fn release;
  void* ctx;
} cartplan_request_t;

static OBJ_CLASS_INSTANCE(cartplan_request_t, ompi_request_t, NULL, NULL);

// MPI_Start / MPI_Startall (Open MPI calls req_start of every request that is not a
// point-to-point one). Starting an active request is erroneous; it is refused, as Open MPI's own
// persistent requests refuse it, before anything runs.
static int start_requests(size_t count, ompi_request_t** requests) {
  for (size_t i = 0; i < count; ++i) {
    if (requests[i]->req_state == OMPI_REQUEST_ACTIVE) return MPI_ERR_REQUEST;
  }
  for (size_t i = 0; i < count; ++i) {
    cartplan_request_t* r = (cartplan_request_t*)requests[i];
    r->super.req_status = ompi_status_empty;
    r->super.req_complete = REQUEST_PENDING;  // before start: the work may complete it inside
    r->super.req_state = OMPI_REQUEST_ACTIVE;
    r->start(r->ctx);
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

int cartplan_openmpi_request_usable(void) {
  static int usable = -1;
  if (usable >= 0) return usable;
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0, major = -1, minor = -1;
  if (PMPI_Get_library_version(version, &length) != MPI_SUCCESS) return usable = 0;
  usable = sscanf(version, "Open MPI v%d.%d", &major, &minor) == 2 && major == OMPI_MAJOR_VERSION &&
           minor == OMPI_MINOR_VERSION;
  return usable;
}

int cartplan_openmpi_request_create(cartplan_request_start_fn start, cartplan_request_release_fn release, void* ctx,
                                    MPI_Request* request) {
  cartplan_request_t* r = OBJ_NEW(cartplan_request_t);
  if (r == NULL) return MPI_ERR_NO_MEM;
  OMPI_REQUEST_INIT(&r->super, true);  // persistent: inactive, completed
  r->super.req_type = OMPI_REQUEST_COLL;
  r->super.req_status = ompi_status_empty;
  r->super.req_start = start_requests;
  r->super.req_free = free_request;
  r->super.req_cancel = NULL;  // MPI_Cancel of a collective is erroneous; Open MPI then does nothing
  // Error handlers are never invoked on it (its status carries no error), but every field that
  // Open MPI may read names a valid object.
  r->super.req_mpi_object.comm = MPI_COMM_SELF;
  r->start = start;
  r->release = release;
  r->ctx = ctx;
  *request = &r->super;
  return MPI_SUCCESS;
}

void cartplan_openmpi_request_complete(MPI_Request request) { ompi_request_complete(request, true); }

int cartplan_openmpi_requests_complete(int n, const MPI_Request* requests) {
  for (int i = 0; i < n; ++i) {
    if (requests[i] != MPI_REQUEST_NULL && !REQUEST_COMPLETE(requests[i])) return 0;
  }
  return 1;
}
