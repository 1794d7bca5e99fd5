// Waits on cartplan's own MPI operations inside a Cart_* call (its agreements, a graph
// communicator's creation and pattern construction, a neighbourhood's creation) that advance
// every pending cartplan request of the process while they wait.
//
// Why: MPI's progress rule. A correct program may start a multi-phase request, then make a call
// that its peers reach only after completing that request; they wait for this rank's later
// phases meanwhile, and with progress only inside Cart_* calls (cartplan_progress=cartplan) or
// under SimGrid's SMPI (no progress hook) nothing but this call can post them. A call's first
// wait for its peers needs it (docs/mpi-semantics.md, "Progress"); once a collective over the
// whole communicator completed, every peer is inside the call.
//
// Each wait tests and runs one progress round of every pending request in turn while something
// may need it (a request pending, or MPI_THREAD_MULTIPLE: another thread may start one
// meanwhile); otherwise it blocks in MPI as the plain call would. The results are MPI's codes,
// as the plain call's.
//
//   MPI_Request r = MPI_REQUEST_NULL;
//   MPI_Isend(buf, n, MPI_INT, peer, tag, comm, &r);
//   int rc = progressing_wait(&r, MPI_STATUS_IGNORE);
//   rc = progressing_allreduce(mine, all, 2, MPI_INT, MPI_MAX, comm);   // MPI_Iallreduce inside
#pragma once

#include <mpi.h>

namespace cartplan::mpi {

// What the waits advance: whether any request of the process may need progress, and one
// progress round of every pending request (either may throw what a round throws). Registered once at
// load time by the progress registry (exchange_progress.cc); until then, or in a program that
// links no exchange (nothing can be pending), the waits block in MPI.
struct WaitProgress {
  bool (*needed)() = nullptr;
  void (*progress)() = nullptr;
};
void set_wait_progress(WaitProgress progress);

// Whether the waits below would advance pending requests now (false: they block in MPI).
bool wait_progress_needed();

// MPI_Wait and MPI_Waitall. If a progress round throws, the requests are completed (blocking)
// before the exception leaves, since they may still write into the caller's buffers.
int progressing_wait(MPI_Request* request, MPI_Status* status);
int progressing_waitall(int n, MPI_Request* requests, MPI_Status* statuses);

// MPI_Probe, and (not under SMPI, which has no matched probe) MPI_Mprobe.
int progressing_probe(int source, int tag, MPI_Comm comm, MPI_Status* status);
#ifndef CARTPLAN_SMPI
int progressing_mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status);
#endif

// Blocking point-to-point calls as a non-blocking one and a progressing wait while something
// may need progress; the plain blocking call otherwise.
int progressing_recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status);
int progressing_send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm);
// progressing_sendrecv after an error or an exception: neither request is left in MPI (the
// receive cancelled if pending, both completed, a failed one freed).
int progressing_sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf, int recvcount,
                         MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status);

// Collectives, non-blocking on every rank whatever this rank has pending: MPI matches a
// blocking collective only with blocking ones, and what is pending differs between ranks.
int progressing_allreduce(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
int progressing_barrier(MPI_Comm comm);
// MPI_Comm_dup: MPI_Comm_idup and a progressing wait. Under SMPI, whose MPI_Comm_idup aborts
// ("Not yet implemented" in 3.32), a progressing barrier and then MPI_Comm_dup: once the barrier
// completed every rank is inside the call. After an error or an exception nothing is left: the
// request completed (and freed), a duplicate made meanwhile freed, *out MPI_COMM_NULL.
int progressing_dup(MPI_Comm comm, MPI_Comm* out);

}  // namespace cartplan::mpi
