// Waits on cartplan's own MPI operations that advance every pending request meanwhile.
#include "backends/mpi/progressing_wait.h"

#include <new>
#include <stdexcept>

#include "backends/mpi/actor_kill.h"
#include "backends/mpi/completion.h"

namespace cartplan::mpi {
namespace {

// Set once at load time (exchange_progress.cc), before any MPI call; constant-initialized, so
// it is ready (empty) before any static constructor runs.
constinit WaitProgress g_progress;

// One progress round. Running out of memory while stepping another request does not end this
// wait: the caller is often a construction or sweep whose peers wait for its next message, and an
// exception would leave its sends in flight and its sequence out of step with them. The request
// that could not step stays as it was and is stepped again by the next round (or its own wait,
// which then reports the error). Any other exception: `requests` may still write into the
// caller's buffers (a receive, a reduction's result), so they complete first.
void progress_round(int n, MPI_Request* requests) {
  try {
    g_progress.progress();
  } catch (const ActorKill&) {  // SMPI: this rank is being killed, no more MPI calls
    throw;
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  } catch (...) {
    completion::waitall(n, requests, MPI_STATUSES_IGNORE);
    throw;
  }
}

// Ends one of a call's own requests after an error or an exception, so that none outlives the
// call: a receive still pending is cancelled (it would write into the caller's buffer later; one
// that matched already completes anyway), then the request is completed (a send still reads the
// caller's buffer, and MPI cannot reliably cancel one: deprecated in MPI 4.0, ignored by Open MPI's
// ob1), then freed if the MPI kept it (a defensive step: Open MPI 4.1 and SMPI free a request
// that completed in error themselves). The wait blocks without advancing other requests: an error
// path, and the sends here are sendrecv's small frames (the grid sweep's 3 ints), which MPI sends
// eagerly, so they complete whether or not the peer has reached its receive.
void release(MPI_Request* r, bool receive) {
  if (*r == MPI_REQUEST_NULL) return;
  if (receive) MPI_Cancel(r);
  completion::wait(r, MPI_STATUS_IGNORE);
  if (*r != MPI_REQUEST_NULL) MPI_Request_free(r);
}

}  // namespace

void set_wait_progress(WaitProgress progress) { g_progress = progress; }

bool wait_progress_needed() { return g_progress.needed && g_progress.needed(); }

// Whether progress is needed is asked again each round: once nothing is pending any more the
// wait blocks in MPI (single-threaded, nothing new can start meanwhile).
int progressing_wait(MPI_Request* request, MPI_Status* status) {
  for (;;) {
    if (!wait_progress_needed()) return completion::wait(request, status);
    int done = 0;
    if (const int rc = completion::test(request, &done, status); rc != MPI_SUCCESS || done) return rc;
    progress_round(1, request);
  }
}

// MPI_ERR_IN_STATUS before all completed: the statuses say which failed; the others are still
// tested (MPI_Waitall would wait for them too).
int progressing_waitall(int n, MPI_Request* requests, MPI_Status* statuses) {
  for (;;) {
    if (!wait_progress_needed()) return completion::waitall(n, requests, statuses);
    int done = 0;
    const int rc = completion::testall(n, requests, &done, statuses);
    if (done || (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS)) return rc;
    progress_round(n, requests);
  }
}

int progressing_probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  for (;;) {
    if (!wait_progress_needed()) return MPI_Probe(source, tag, comm, status);
    int found = 0;
    if (const int rc = MPI_Iprobe(source, tag, comm, &found, status); rc != MPI_SUCCESS || found) return rc;
    progress_round(0, nullptr);  // nothing posted here yet
  }
}

#ifndef CARTPLAN_SMPI
int progressing_mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  for (;;) {
    if (!wait_progress_needed()) return MPI_Mprobe(source, tag, comm, message, status);
    int found = 0;
    if (const int rc = MPI_Improbe(source, tag, comm, &found, message, status); rc != MPI_SUCCESS || found) return rc;
    progress_round(0, nullptr);
  }
}
#endif

int progressing_recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (!wait_progress_needed()) return MPI_Recv(buf, count, type, source, tag, comm, status);
  MPI_Request r = MPI_REQUEST_NULL;
  if (const int rc = MPI_Irecv(buf, count, type, source, tag, comm, &r); rc != MPI_SUCCESS) return rc;
  return progressing_wait(&r, status);
}

int progressing_send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!wait_progress_needed()) return MPI_Send(buf, count, type, dest, tag, comm);
  MPI_Request r = MPI_REQUEST_NULL;
  if (const int rc = MPI_Isend(buf, count, type, dest, tag, comm, &r); rc != MPI_SUCCESS) return rc;
  return progressing_wait(&r, MPI_STATUS_IGNORE);
}

// On every error or exception both requests are released (nothing of this call stays in MPI).
int progressing_sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf, int recvcount,
                         MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  if (!wait_progress_needed())
    return MPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status);
  MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  if (const int rc = MPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &r[0]); rc != MPI_SUCCESS) return rc;
  MPI_Status both[2];
  int rc = MPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &r[1]);
  if (rc != MPI_SUCCESS) r[1] = MPI_REQUEST_NULL;  // nothing started (the handle is undefined)
  try {
    if (rc == MPI_SUCCESS) rc = progressing_waitall(2, r, both);
  } catch (const ActorKill&) {  // SMPI: this rank is being killed, no more MPI calls
    throw;
  } catch (...) {  // progress_round completed both first; one that failed may still be allocated
    release(&r[0], true), release(&r[1], false);
    throw;
  }
  if ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && status != MPI_STATUS_IGNORE) *status = both[0];  // both completed
  // The failed request's code: not MPI_ERR_PENDING, which an MPI may report for the other one.
  if (rc == MPI_ERR_IN_STATUS)
    rc = both[0].MPI_ERROR != MPI_SUCCESS && both[0].MPI_ERROR != MPI_ERR_PENDING ? both[0].MPI_ERROR : both[1].MPI_ERROR;
  if (rc != MPI_SUCCESS) release(&r[0], true), release(&r[1], false);
  return rc;
}

int progressing_allreduce(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  MPI_Request r = MPI_REQUEST_NULL;
  if (const int rc = MPI_Iallreduce(in, out, count, type, op, comm, &r); rc != MPI_SUCCESS) return rc;
  return progressing_wait(&r, MPI_STATUS_IGNORE);
}

int progressing_barrier(MPI_Comm comm) {
  MPI_Request r = MPI_REQUEST_NULL;
  if (const int rc = MPI_Ibarrier(comm, &r); rc != MPI_SUCCESS) return rc;
  return progressing_wait(&r, MPI_STATUS_IGNORE);
}

// After an error or an exception the idup request is released and a duplicate it made meanwhile
// freed (*out is MPI_COMM_NULL): the caller learns of no communicator, so it could not free it.
int progressing_dup(MPI_Comm comm, MPI_Comm* out) {
  *out = MPI_COMM_NULL;
#ifdef CARTPLAN_SMPI
  if (const int rc = progressing_barrier(comm); rc != MPI_SUCCESS) return rc;
  return MPI_Comm_dup(comm, out);
#else
  MPI_Request r = MPI_REQUEST_NULL;
  if (const int rc = MPI_Comm_idup(comm, out, &r); rc != MPI_SUCCESS) return rc;
  auto drop = [&] {  // release completes the idup: *out is the duplicate then, if one was made
    release(&r, false);
    if (*out != MPI_COMM_NULL) MPI_Comm_free(out);
    *out = MPI_COMM_NULL;
  };
  int rc = MPI_SUCCESS;
  try {
    rc = progressing_wait(&r, MPI_STATUS_IGNORE);
  } catch (...) {  // no ActorKill here: that is SMPI's, which takes the branch above
    drop();
    throw;
  }
  if (rc != MPI_SUCCESS) drop();
  return rc;
#endif
}

}  // namespace cartplan::mpi
