// MPI test of progressing_sendrecv's and progressing_dup's error paths (progressing_wait.h): after
// an error return or an exception, none of their requests is left in flight or allocated, a
// duplicate made meanwhile is freed, and a receive that may write into the caller's buffer is
// over before the call returns. The errors are injected through the MPI profiling interface
// (MPI_Isend, MPI_Test and MPI_Testall below fail or report "not done" once when asked), and
// exceptions by this program's own progress hook (set_wait_progress; nothing else registers one
// in a program without exchanges). Every request the calls start (MPI_Irecv, MPI_Isend,
// MPI_Comm_idup) is tracked until a wait or test sets its handle to MPI_REQUEST_NULL or
// MPI_Request_free frees it. Rank 0 makes the calls, rank 1 is the peer (other ranks idle).
#include <mpi.h>

#include <algorithm>
#include <array>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/mpi/progressing_wait.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;
namespace cm = cartplan::mpi;

std::set<MPI_Request> live;  // requests started and not yet completed or freed
long comm_frees = 0;
bool fail_isend = false, fail_test = false, fail_testall = false;  // once, then reset
int skip_test = 0, skip_testall = 0;                               // "not done" that many times
bool throw_in_round = false;                                       // the progress hook throws (once)

void forget_finished(int n, const MPI_Request* before, const MPI_Request* after) {
  for (int i = 0; i < n; ++i)
    if (before[i] != MPI_REQUEST_NULL && after[i] == MPI_REQUEST_NULL) live.erase(before[i]);
}

bool progress_needed() { return true; }
void progress_round() {
  if (!throw_in_round) return;
  throw_in_round = false;
  throw std::runtime_error("injected by the test's progress hook");
}

}  // namespace

extern "C" {

int MPI_Irecv(void* b, int n, MPI_Datatype t, int from, int tag, MPI_Comm c, MPI_Request* q) {
  const int rc = PMPI_Irecv(b, n, t, from, tag, c, q);
  if (rc == MPI_SUCCESS) live.insert(*q);
  return rc;
}

int MPI_Isend(const void* b, int n, MPI_Datatype t, int to, int tag, MPI_Comm c, MPI_Request* q) {
  if (fail_isend) return fail_isend = false, MPI_ERR_OTHER;  // nothing started
  const int rc = PMPI_Isend(b, n, t, to, tag, c, q);
  if (rc == MPI_SUCCESS) live.insert(*q);
  return rc;
}

int MPI_Comm_idup(MPI_Comm c, MPI_Comm* out, MPI_Request* q) {
  const int rc = PMPI_Comm_idup(c, out, q);
  if (rc == MPI_SUCCESS) live.insert(*q);
  return rc;
}

// Not done, or an error: both are answers MPI may give while the request is still pending.
int MPI_Test(MPI_Request* q, int* flag, MPI_Status* st) {
  if (skip_test > 0) return --skip_test, *flag = 0, MPI_SUCCESS;
  if (fail_test) return fail_test = false, *flag = 0, MPI_ERR_OTHER;
  const MPI_Request before = *q;
  const int rc = PMPI_Test(q, flag, st);
  forget_finished(1, &before, q);
  return rc;
}

int MPI_Testall(int n, MPI_Request* q, int* flag, MPI_Status* st) {
  if (skip_testall > 0) return --skip_testall, *flag = 0, MPI_SUCCESS;
  if (fail_testall) return fail_testall = false, *flag = 0, MPI_ERR_OTHER;
  const std::vector<MPI_Request> before(q, q + n);
  const int rc = PMPI_Testall(n, q, flag, st);
  forget_finished(n, before.data(), q);
  return rc;
}

int MPI_Wait(MPI_Request* q, MPI_Status* st) {
  const MPI_Request before = *q;
  const int rc = PMPI_Wait(q, st);
  forget_finished(1, &before, q);
  return rc;
}

int MPI_Waitall(int n, MPI_Request* q, MPI_Status* st) {
  const std::vector<MPI_Request> before(q, q + n);
  const int rc = PMPI_Waitall(n, q, st);
  forget_finished(n, before.data(), q);
  return rc;
}

int MPI_Request_free(MPI_Request* q) {
  live.erase(*q);
  return PMPI_Request_free(q);
}

int MPI_Comm_free(MPI_Comm* c) {
  ++comm_frees;
  return PMPI_Comm_free(c);
}

}  // extern "C"

namespace {

constexpr int kTag = 7;

// Rank 0's sendrecv with rank 1 after `inject()`; rank 1 receives `peer_recv` ints (0: none) and
// sends `peer_send` (0: none) on kTag. Rank 0 receives into 3 ints. Returns rank 0's code (or -1
// when the call threw), its receive buffer in *got.
int sendrecv_case(Harness& h, void (*inject)(), int peer_recv, int peer_send, std::array<int, 3>* got) {
  int rc = MPI_SUCCESS;
  got->fill(-1);
  if (h.rank == 0) {
    const std::array<int, 2> out{10, 11};
    inject();
    try {
      rc = cm::progressing_sendrecv(out.data(), 2, MPI_INT, 1, kTag, got->data(), 3, MPI_INT, 1, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } catch (const std::runtime_error&) {
      rc = -1;
    }
  } else if (h.rank == 1) {
    std::vector<int> in(static_cast<std::size_t>(std::max(peer_recv, 1))), out(static_cast<std::size_t>(std::max(peer_send, 1)), 20);
    if (peer_send) MPI_Send(out.data(), peer_send, MPI_INT, 0, kTag, MPI_COMM_WORLD);
    if (peer_recv) MPI_Recv(in.data(), peer_recv, MPI_INT, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return rc;
}

void check_sendrecv(Harness& h) {
  std::array<int, 3> got{};
  // The send fails to start: the posted receive is cancelled and completed.
  int rc = sendrecv_case(h, [] { fail_isend = true; }, 0, 0, &got);
  if (h.rank == 0) {
    h.check(rc == MPI_ERR_OTHER, "a failed MPI_Isend is the sendrecv's error");
    h.check(live.empty(), "no request left after a failed MPI_Isend (" + std::to_string(live.size()) + " left)");
  }
  // The wait's test fails with both requests pending: the receive is cancelled, the send
  // completes (rank 1 receives it), nothing is left.
  rc = sendrecv_case(h, [] { skip_testall = 1, fail_testall = true; }, 2, 0, &got);
  if (h.rank == 0) {
    h.check(rc == MPI_ERR_OTHER, "a failed MPI_Testall is the sendrecv's error");
    h.check(live.empty(), "no request left after a failed MPI_Testall (" + std::to_string(live.size()) + " left)");
    h.check(got[0] == -1, "the cancelled receive wrote nothing");
  }
  // The receive is truncated (4 ints into 3): MPI_ERR_TRUNCATE, and the failed request (which
  // Open MPI's test and wait keep allocated) is freed.
  rc = sendrecv_case(h, [] {}, 2, 4, &got);
  if (h.rank == 0) {
    h.check(rc == MPI_ERR_TRUNCATE, "a truncated receive is MPI_ERR_TRUNCATE (got " + std::to_string(rc) + ")");
    h.check(live.empty(), "no request left after a truncated receive (" + std::to_string(live.size()) + " left)");
  }
  // A progress round throws: both requests complete before the exception leaves (the receive
  // delivered into the caller's buffer).
  rc = sendrecv_case(h, [] { skip_testall = 1, throw_in_round = true; }, 2, 3, &got);
  if (h.rank == 0) {
    h.check(rc == -1, "the progress round's exception leaves the sendrecv");
    h.check(live.empty(), "no request left after an exception (" + std::to_string(live.size()) + " left)");
    h.check(got[0] == 20 && got[2] == 20, "the receive completed before the exception left");
  }
  // The same with a truncated receive: the failed request is freed too.
  rc = sendrecv_case(h, [] { skip_testall = 1, throw_in_round = true; }, 2, 4, &got);
  if (h.rank == 0) {
    h.check(rc == -1, "the progress round's exception leaves the sendrecv (truncated receive)");
    h.check(live.empty(), "no request left after an exception and a truncated receive (" + std::to_string(live.size()) + " left)");
  }
}

// Every rank duplicates MPI_COMM_WORLD after `inject()` on rank 0. Returns rank 0's code (-1: it
// threw); *out is what its caller sees.
int dup_case(Harness& h, void (*inject)(), MPI_Comm* out) {
  *out = MPI_COMM_NULL;
  int rc = MPI_SUCCESS;
  if (h.rank == 0) inject();
  try {
    rc = cm::progressing_dup(MPI_COMM_WORLD, out);
  } catch (const std::runtime_error&) {
    rc = -1;
  }
  return rc;
}

void check_dup(Harness& h) {
  MPI_Comm dup = MPI_COMM_NULL;
  // The wait's test fails while the duplicate is pending: the request completes, the duplicate
  // is freed, the caller gets MPI_COMM_NULL.
  long frees = comm_frees;
  int rc = dup_case(h, [] { skip_test = 1, fail_test = true; }, &dup);
  if (h.rank == 0) {
    h.check(rc == MPI_ERR_OTHER, "a failed MPI_Test is the dup's error");
    h.check(live.empty(), "no request left after a failed MPI_Test in the dup");
    h.check(dup == MPI_COMM_NULL && comm_frees == frees + 1, "the duplicate made meanwhile is freed, the caller gets MPI_COMM_NULL");
  }
  if (dup != MPI_COMM_NULL) MPI_Comm_free(&dup);
  // A progress round throws: the same, and the exception leaves.
  frees = comm_frees;
  rc = dup_case(h, [] { skip_test = 1, throw_in_round = true; }, &dup);
  if (h.rank == 0) {
    h.check(rc == -1, "the progress round's exception leaves the dup");
    h.check(live.empty(), "no request left after an exception in the dup");
    h.check(dup == MPI_COMM_NULL && comm_frees == frees + 1, "the duplicate made meanwhile is freed after an exception");
  }
  if (dup != MPI_COMM_NULL) MPI_Comm_free(&dup);
  // Without a failure: a working duplicate, nothing left.
  rc = dup_case(h, [] {}, &dup);
  int size = 0;
  if (rc == MPI_SUCCESS && dup != MPI_COMM_NULL) MPI_Comm_size(dup, &size);
  h.check(rc == MPI_SUCCESS && size == h.size && live.empty(), "a dup without failures works and leaves nothing");
  if (dup != MPI_COMM_NULL) MPI_Comm_free(&dup);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  cm::set_wait_progress({&progress_needed, &progress_round});
  if (h.size >= 2) {
    check_sendrecv(h);
    check_dup(h);
  }
  return h.finish("progressing_errors_test");
}
