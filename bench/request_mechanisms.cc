// What a drop-in request costs per start, by mechanism, without the exchange: one
// process, one start -> complete -> wait cycle per call of each cycle_* function, counted with
// callgrind (bench/request_mechanisms.sh divides each function's inclusive instructions by the
// cycles). The work the request stands for is left out: the request is completed right after
// its start, as a finished exchange's callback would complete it, so nothing waits or polls.
//  - self_message: the drop-in's portable fallback (requests.h): a persistent zero-byte receive
//    from self on a private duplicate of MPI_COMM_SELF, restarted; completed by MPI_Isend of a
//    zero-byte message to self and MPI_Request_free of the send.
//  - send_init: the same receive, completed by a persistent send to self prepared once
//    (MPI_Send_init; MPI_Start at completion, MPI_Wait of the send before it is restarted).
//  - openmpi_kind: the request of Open MPI's own kind (openmpi_request.h): its start function and
//    cartplan_openmpi_request_complete.
//  - grequest: a generalized request (the non-blocking calls' fallback), made and released each
//    cycle (it cannot be restarted, so it cannot be a persistent request's handle).
//  - openmpi_nonblocking: the non-blocking request of Open MPI's own kind (openmpi_request.h),
//    made, completed (cartplan_openmpi_nonblocking_complete) and freed by MPI_Wait each cycle.
//
//   request_mechanisms [--cycles N]
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backends/interpose/openmpi_request.h"

namespace {

MPI_Request openmpi_handle = MPI_REQUEST_NULL;

int start_nothing(void*) { return MPI_SUCCESS; }
void release_nothing(void*) {}

int query(void*, MPI_Status* status) {
  MPI_Status_set_elements(status, MPI_BYTE, 0);
  MPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  return MPI_SUCCESS;
}
int free_state(void*) { return MPI_SUCCESS; }
int cancel_nothing(void*, int) { return MPI_SUCCESS; }

}  // namespace

// One start -> complete -> wait cycle each; not inlined, so that callgrind counts them apart.
extern "C" {
__attribute__((noinline)) void cycle_self_message(MPI_Request* recv, MPI_Comm self) {
  PMPI_Start(recv);
  MPI_Request send = MPI_REQUEST_NULL;
  PMPI_Isend(nullptr, 0, MPI_BYTE, 0, 7, self, &send);
  PMPI_Request_free(&send);
  PMPI_Wait(recv, MPI_STATUS_IGNORE);
}

__attribute__((noinline)) void cycle_send_init(MPI_Request* recv, MPI_Request* send) {
  PMPI_Start(recv);
  PMPI_Start(send);
  PMPI_Wait(recv, MPI_STATUS_IGNORE);
  PMPI_Wait(send, MPI_STATUS_IGNORE);
}

__attribute__((noinline)) void cycle_openmpi_kind(MPI_Request* request) {
  PMPI_Start(request);
  cartplan_openmpi_request_complete(*request);
  PMPI_Wait(request, MPI_STATUS_IGNORE);
}

__attribute__((noinline)) void cycle_openmpi_nonblocking() {
  MPI_Request r = MPI_REQUEST_NULL;
  cartplan_openmpi_nonblocking_create(release_nothing, nullptr, MPI_COMM_SELF, &r);
  cartplan_openmpi_nonblocking_complete(r, MPI_SUCCESS);
  PMPI_Wait(&r, MPI_STATUS_IGNORE);
}

__attribute__((noinline)) void cycle_grequest() {
  MPI_Request r = MPI_REQUEST_NULL;
  PMPI_Grequest_start(query, free_state, cancel_nothing, nullptr, &r);
  PMPI_Grequest_complete(r);
  PMPI_Wait(&r, MPI_STATUS_IGNORE);
}
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int cycles = 10000;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--cycles") && i + 1 < argc) cycles = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "request_mechanisms: unknown argument '%s' (--cycles N)\n", argv[i]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  if (!cartplan_openmpi_request_usable()) {
    std::fprintf(stderr, "request_mechanisms: this Open MPI is not the version the drop-in was built for\n");
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  MPI_Comm self = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_SELF, &self);
  MPI_Request recv = MPI_REQUEST_NULL, send = MPI_REQUEST_NULL;
  MPI_Recv_init(nullptr, 0, MPI_BYTE, 0, 7, self, &recv);
  MPI_Send_init(nullptr, 0, MPI_BYTE, 0, 7, self, &send);
  cartplan_openmpi_request_create(start_nothing, release_nothing, nullptr, &openmpi_handle);
  for (int i = 0; i < cycles; ++i) {
    cycle_self_message(&recv, self);
    cycle_send_init(&recv, &send);
    cycle_openmpi_kind(&openmpi_handle);
    cycle_grequest();
    cycle_openmpi_nonblocking();
  }
  MPI_Request_free(&recv);
  MPI_Request_free(&send);
  MPI_Request_free(&openmpi_handle);
  MPI_Comm_free(&self);
  std::printf("request_mechanisms: %d cycles of each\n", cycles);
  MPI_Finalize();
  return 0;
}
