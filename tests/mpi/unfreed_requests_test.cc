// Accelerated requests a program never frees (issue 34): erroneous in MPI (every request must be
// completed or freed before MPI_Finalize), but the drop-in's MPI_Finalize must still release
// what it holds for them, so that a leak check of the program finds nothing of cartplan's. Only
// with the drop-in (preloaded, or linked with -rdynamic for valgrind_unfreed_requests_test).
//  - 11 non-blocking allgathers and alltoalls on a ring (more than the 8 requests the drop-in's
//    free list makes at a time), each seen complete with MPI_Request_get_status, data checked,
//    then its handle dropped;
//  - a non-blocking alltoall never completed at all (no completion call; its data are checked
//    after MPI_Finalize, which must finish it);
//  - a persistent alltoall started and completed, and a persistent allgather never started,
//    neither freed.
// After MPI_Finalize each rank asks the drop-in how many of its requests are still held
// (CARTPLAN_Unreleased_requests, no MPI call): it must be 0.
// The drop-in is forced to combining (CARTPLAN_INTERPOSE_ALGORITHM, set before MPI_Init unless
// given), so that every call runs through cartplan. --self-message: the fallback kinds
// (generalized and self-message requests), set through CARTPLAN_INTERPOSE_REQUESTS.
//
//   unfreed_requests_test [--self-message] [--expect-accelerated]
#include <dlfcn.h>
#include <mpi.h>
#include <mpi-ext.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/mpi/dropin_calls.h"
#include "tests/mpi/harness.h"
#include "tests/mpi/ring_requests.h"

namespace {

using cartplan::mpitest::Harness;
using namespace cartplan::mpitest::ring_requests;

constexpr int kNonblocking = 11;
constexpr int kNeverCompleted = 50;  // the iteration of its data

// The buffers of every call, alive until MPI_Finalize (the requests are never freed).
struct Buffers {
  std::vector<std::vector<int>> send, recv;
};

void unfreed_nonblocking(Harness& h, MPI_Comm comm, Buffers& b) {
  for (int i = 0; i < kNonblocking; ++i) {
    const bool gather = i % 2 == 1;
    b.send.emplace_back(4);
    b.recv.emplace_back(4, -1);
    for (int k = 0; k < 4; ++k) b.send.back()[k] = value(h.rank, gather ? 0 : k, i);
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc = gather ? MPI_Ineighbor_allgather(b.send.back().data(), 1, MPI_INT, b.recv.back().data(), 1, MPI_INT, comm, &r)
                          : MPI_Ineighbor_alltoall(b.send.back().data(), 1, MPI_INT, b.recv.back().data(), 1, MPI_INT, comm, &r);
    int flag = 0;
    while (rc == MPI_SUCCESS && !flag) MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
    h.check(rc == MPI_SUCCESS && ring_data_ok(h, b.recv.back(), gather, i), "non-blocking call " + std::to_string(i));
  }
}

// A non-blocking alltoall never completed at all (no completion call, handle dropped): the
// drop-in's MPI_Finalize finishes its exchange (the data are checked after MPI_Finalize) and
// frees it. Returns the index of its receive buffer.
std::size_t never_completed(Harness& h, MPI_Comm comm, Buffers& b) {
  b.send.emplace_back(4);
  b.recv.emplace_back(4, -1);
  for (int k = 0; k < 4; ++k) b.send.back()[k] = value(h.rank, k, kNeverCompleted);
  MPI_Request r = MPI_REQUEST_NULL;
  const int rc = MPI_Ineighbor_alltoall(b.send.back().data(), 1, MPI_INT, b.recv.back().data(), 1, MPI_INT, comm, &r);
  h.check(rc == MPI_SUCCESS, "a non-blocking call never completed");
  return b.recv.size() - 1;
}

void unfreed_persistent(Harness& h, MPI_Comm comm, Buffers& b) {
  b.send.emplace_back(4);
  b.recv.emplace_back(4, -1);
  for (int k = 0; k < 4; ++k) b.send.back()[k] = value(h.rank, k, 99);
  MPI_Request r = MPI_REQUEST_NULL, idle = MPI_REQUEST_NULL;
  int rc = MPIX_Neighbor_alltoall_init(b.send.back().data(), 1, MPI_INT, b.recv.back().data(), 1, MPI_INT, comm, MPI_INFO_NULL, &r);
  if (rc == MPI_SUCCESS) rc = MPI_Start(&r);
  if (rc == MPI_SUCCESS) rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
  h.check(rc == MPI_SUCCESS && ring_data_ok(h, b.recv.back(), false, 99), "persistent alltoall");
  b.recv.emplace_back(4, -1);
  rc = MPIX_Neighbor_allgather_init(b.send.back().data(), 1, MPI_INT, b.recv.back().data(), 1, MPI_INT, comm, MPI_INFO_NULL, &idle);
  h.check(rc == MPI_SUCCESS, "persistent allgather init");
}

}  // namespace

int main(int argc, char** argv) {
  bool expect_accelerated = false;
  setenv("CARTPLAN_INTERPOSE_ALGORITHM", "combining", 0);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--self-message") setenv("CARTPLAN_INTERPOSE_REQUESTS", "self-message", 1);
    else if (a == "--expect-accelerated") expect_accelerated = true;
    else return 2;
  }
  Harness h(&argc, &argv);
  MPI_Comm comm = ring(h);
  const long before = dropin_accelerated_calls(comm);
  Buffers b;
  b.send.reserve(kNonblocking + 2);  // no buffer moves while a request may still use it
  b.recv.reserve(kNonblocking + 3);
  unfreed_nonblocking(h, comm, b);
  const std::size_t never = never_completed(h, comm, b);
  unfreed_persistent(h, comm, b);
  if (expect_accelerated)
    h.check(dropin_accelerated_calls(comm) - before >= kNonblocking + 3, "the drop-in ran every call and init");
  MPI_Comm_free(&comm);
  const int rank = h.rank;
  int rc = h.finish("unfreed_requests_test");
  using Unreleased = int (*)();
  auto unreleased = reinterpret_cast<Unreleased>(dlsym(RTLD_DEFAULT, "CARTPLAN_Unreleased_requests"));
  const int left = unreleased ? unreleased() : 0;
  if (!ring_data_ok(h, b.recv[never], false, kNeverCompleted)) {
    std::fprintf(stderr, "[rank %d] FAILED: the call never completed did not deliver its data by MPI_Finalize\n", rank);
    rc = 1;
  }
  if (left != 0) {
    std::fprintf(stderr, "[rank %d] FAILED: %d requests of the drop-in still held after MPI_Finalize\n", rank, left);
    rc = 1;
  }
  if (expect_accelerated && !unreleased) {
    std::fprintf(stderr, "[rank %d] FAILED: no drop-in loaded\n", rank);
    rc = 1;
  }
  return rc;
}
