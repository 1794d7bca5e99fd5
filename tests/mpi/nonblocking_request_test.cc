// Non-blocking neighbourhood collectives as MPI requests: what MPI promises for the request of
// MPI_Ineighbor_alltoall / _allgather, checked so that the drop-in's requests
// (backends/interpose/requests.h: Open MPI's own kind, or the generalized-request fallback) can
// be held to it. A standard MPI program: run under plain Open MPI (the program is correct) and
// with the drop-in forced to combining (every call must run through cartplan), with either kind
// of request.
//  - MPI_Wait and MPI_Waitall complete and free it (MPI_REQUEST_NULL), the data are right; the
//    status fields that Open MPI's own (libnbc's) request sets are the same as for the same call
//    started in the same run through PMPI_ (which the drop-in does not take): MPI_Wait leaves
//    MPI_ERROR alone, MPI_Waitall sets it to MPI_SUCCESS, not cancelled. MPI leaves MPI_SOURCE,
//    MPI_TAG and the count undefined for a collective, and libnbc never writes them (under
//    AddressSanitizer they read as its fill pattern): with the drop-in they must be 0
//    (--expect-accelerated), which is what a fresh libnbc request shows without a sanitizer;
//  - mixed with a plain receive that completes only later: MPI_Waitany, a MPI_Testsome loop,
//    MPI_Testany and MPI_Testall report the collective exactly once and free it;
//  - MPI_Request_get_status reports completion without freeing (MPI_Wait then frees it);
//  - PMPI_Wait / PMPI_Test complete it too (as the Fortran bindings or another tool call them);
// --free-active: MPI_Request_free right after the call (erroneous for collectives in MPI; plain
// Open MPI 4.1 refuses it; the drop-in lets the exchange finish), and the next calls still run.
// --cancel: MPI_Cancel of an active request returns MPI_SUCCESS and changes nothing (plain Open
// MPI 4.1 raises MPI_ERR_REQUEST); the request completes with its data, not cancelled.
// Grid: a periodic ring, offsets -2, -1, +1, +2, one int per block.
//
//   nonblocking_request_test [--iterations N] [--expect-accelerated] [--free-active] [--cancel]
#include <mpi.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/mpi/dropin_calls.h"
#include "tests/mpi/harness.h"
#include "tests/mpi/ring_requests.h"

namespace {

using cartplan::mpitest::Harness;
using namespace cartplan::mpitest::ring_requests;

struct Options {
  int iterations = 20;
  bool expect_accelerated = false, free_active = false, cancel = false;
};

// A non-blocking allgather or alltoall on the ring, and the data of one call.
struct Collective {
  MPI_Comm comm = MPI_COMM_NULL;
  bool gather = false;
  std::vector<int> send, recv;
  MPI_Request request = MPI_REQUEST_NULL;
};

Collective make(MPI_Comm comm, bool gather) {
  Collective c;
  c.comm = comm;
  c.gather = gather;
  c.send.assign(gather ? 1 : 4, 0);
  c.recv.assign(4, -1);
  return c;
}

// The call for iteration `iter`: MPI_ (the drop-in's, when it is loaded) or PMPI_ (Open MPI's).
void start(const Harness& h, Collective& c, int iter, bool pmpi = false) {
  for (std::size_t i = 0; i < c.send.size(); ++i) c.send[i] = value(h.rank, c.gather ? 0 : static_cast<int>(i), iter);
  std::fill(c.recv.begin(), c.recv.end(), -1);
  using Call = int (*)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm, MPI_Request*);
  const Call call = c.gather ? (pmpi ? PMPI_Ineighbor_allgather : MPI_Ineighbor_allgather)
                             : (pmpi ? PMPI_Ineighbor_alltoall : MPI_Ineighbor_alltoall);
  if (call(c.send.data(), 1, MPI_INT, c.recv.data(), 1, MPI_INT, c.comm, &c.request) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 3);
}

void verify(Harness& h, const Collective& c, int iter, const std::string& what) {
  h.check(ring_data_ok(h, c.recv, c.gather, iter),
          what + (c.gather ? " allgather" : " alltoall") + " iteration " + std::to_string(iter) + ": wrong data");
  h.check(c.request == MPI_REQUEST_NULL, what + ": the request was not freed");
}

// The status fields a completion call leaves; == compares those libnbc sets (MPI_ERROR and
// cancelled), zeroed() the ones it leaves alone (the drop-in's requests give 0).
struct Fields {
  int source, tag, error, count, cancelled;
  explicit Fields(const MPI_Status& s) : source(s.MPI_SOURCE), tag(s.MPI_TAG), error(s.MPI_ERROR), count(-1), cancelled(-1) {
    MPI_Get_count(&s, MPI_BYTE, &count);
    MPI_Test_cancelled(&s, &cancelled);
  }
  bool operator==(const Fields& o) const { return error == o.error && cancelled == o.cancelled; }
  bool zeroed() const { return source == 0 && tag == 0 && count == 0; }
  std::string str() const {
    return "source " + std::to_string(source) + " tag " + std::to_string(tag) + " error " + std::to_string(error) + " count " +
           std::to_string(count) + " cancelled " + std::to_string(cancelled);
  }
};

// MPI_Wait's and MPI_Waitall's status after `pmpi` (Open MPI's request) or MPI_ calls; statuses
// start poisoned, so that a field the call leaves alone shows.
std::pair<Fields, Fields> wait_statuses(Harness& h, Collective& c, int iter, bool pmpi) {
  MPI_Status s, all[2];
  std::memset(&s, 0x5a, sizeof s);
  std::memset(all, 0x5a, sizeof all);
  start(h, c, iter, pmpi);
  h.check(MPI_Wait(&c.request, &s) == MPI_SUCCESS, "MPI_Wait");
  verify(h, c, iter, pmpi ? "PMPI_ call, MPI_Wait" : "MPI_Wait");
  MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  start(h, c, iter + 1, pmpi);
  reqs[0] = c.request;
  h.check(MPI_Waitall(2, reqs, all) == MPI_SUCCESS, "MPI_Waitall");
  c.request = reqs[0];
  verify(h, c, iter + 1, pmpi ? "PMPI_ call, MPI_Waitall" : "MPI_Waitall");
  return {Fields(s), Fields(all[0])};
}

void wait_cycles(Harness& h, Collective& c, const Options& o) {
  for (int iter = 0; iter < o.iterations; iter += 2) {
    const auto ours = wait_statuses(h, c, iter, false);
    const auto open_mpi = wait_statuses(h, c, iter, true);
    h.check(ours.first == open_mpi.first, "MPI_Wait status: " + ours.first.str() + ", Open MPI's " + open_mpi.first.str());
    h.check(ours.second == open_mpi.second, "MPI_Waitall status: " + ours.second.str() + ", Open MPI's " + open_mpi.second.str());
    h.check(ours.second.error == MPI_SUCCESS, "MPI_Waitall status: MPI_ERROR is MPI_SUCCESS");
    if (o.expect_accelerated)
      h.check(ours.first.zeroed() && ours.second.zeroed(), "drop-in statuses: source, tag, count 0: " + ours.first.str());
  }
}

// The collective and a receive from self that is only sent after the collective was reported.
void mixed_cycles(Harness& h, Collective& c, const Options& o) {
  for (int how = 0; how < 4; ++how) {
    for (int iter = 0; iter < o.iterations; ++iter) {
      const std::string what = std::string(kCompletionNames[how]) + " mixed";
      int in = -1, out = iter, reported[2] = {0, 0};
      MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
      MPI_Irecv(&in, 1, MPI_INT, 0, 77, MPI_COMM_SELF, &reqs[0]);
      start(h, c, iter);
      reqs[1] = c.request;
      if (how == 3) MPI_Send(&out, 1, MPI_INT, 0, 77, MPI_COMM_SELF);  // Testall reports nothing until both are done
      while (!reported[1] && complete_some(static_cast<Completion>(how), reqs, reported) >= 0) {
      }
      h.check(reported[1] == 1 && reqs[1] == MPI_REQUEST_NULL, what + ": the collective reported once and freed");
      c.request = reqs[1];
      verify(h, c, iter, what);
      if (how != 3) MPI_Send(&out, 1, MPI_INT, 0, 77, MPI_COMM_SELF);
      while (!reported[0] && complete_some(static_cast<Completion>(how), reqs, reported) >= 0) {
      }
      h.check(reported[0] == 1 && reported[1] == 1 && in == iter, what + ": the plain receive reported once");
    }
  }
}

// MPI_Request_get_status until complete (the request stays), then MPI_Wait frees it; PMPI_Test
// until complete.
void get_status_and_pmpi_cycles(Harness& h, Collective& c, const Options& o) {
  for (int iter = 0; iter < o.iterations; ++iter) {
    start(h, c, iter);
    const MPI_Request handle = c.request;
    int flag = 0;
    while (!flag) MPI_Request_get_status(c.request, &flag, MPI_STATUS_IGNORE);
    h.check(c.request == handle, "MPI_Request_get_status keeps the request");
    h.check(MPI_Wait(&c.request, MPI_STATUS_IGNORE) == MPI_SUCCESS, "MPI_Wait after MPI_Request_get_status");
    verify(h, c, iter, "MPI_Request_get_status");
    start(h, c, iter + 1);
    flag = 0;
    while (!flag) PMPI_Test(&c.request, &flag, MPI_STATUS_IGNORE);
    verify(h, c, iter + 1, "PMPI_Test");
    start(h, c, iter + 2);
    PMPI_Wait(&c.request, MPI_STATUS_IGNORE);
    verify(h, c, iter + 2, "PMPI_Wait");
  }
}

// MPI_Request_free of an active request: the buffers of the freed calls stay untouched by the
// program until MPI_Finalize (each call its own).
void free_active(Harness& h, MPI_Comm comm, std::vector<Collective>& freed, Collective& c, const Options& o) {
  for (int iter = 0; iter < o.iterations; ++iter) {
    freed.push_back(make(comm, iter % 2 == 0));
    start(h, freed.back(), iter);
    h.check(MPI_Request_free(&freed.back().request) == MPI_SUCCESS && freed.back().request == MPI_REQUEST_NULL,
            "MPI_Request_free of an active request");
    start(h, c, iter);
    MPI_Wait(&c.request, MPI_STATUS_IGNORE);
    verify(h, c, iter, "after MPI_Request_free of an active request");
  }
}

// MPI_Cancel of an active request: MPI_SUCCESS, and the request completes as usual.
void cancel_active(Harness& h, Collective& c) {
  start(h, c, 5);
  h.check(MPI_Cancel(&c.request) == MPI_SUCCESS, "MPI_Cancel of an active request returns MPI_SUCCESS");
  MPI_Status s;
  MPI_Wait(&c.request, &s);
  int cancelled = -1;
  MPI_Test_cancelled(&s, &cancelled);
  h.check(cancelled == 0, "MPI_Cancel: not cancelled");
  verify(h, c, 5, "MPI_Cancel");
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--iterations" && i + 1 < argc) o.iterations = std::atoi(argv[++i]);
    else if (a == "--expect-accelerated") o.expect_accelerated = true;
    else if (a == "--free-active") o.free_active = true;
    else if (a == "--cancel") o.cancel = true;
    else MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm comm = ring(h);
  Collective a = make(comm, false), g = make(comm, true);
  std::vector<Collective> freed;
  freed.reserve(o.iterations);  // their buffers must not move while their exchanges run
  const long before = dropin_accelerated_calls(comm);
  wait_cycles(h, a, o);
  wait_cycles(h, g, o);
  mixed_cycles(h, g, o);
  mixed_cycles(h, a, o);
  get_status_and_pmpi_cycles(h, a, o);
  if (o.free_active) free_active(h, comm, freed, g, o);
  if (o.cancel) cancel_active(h, a);
  if (o.expect_accelerated) {
    // wait_cycles' MPI_ calls, the mixed loops, the get_status cycles.
    const long expected = 2 * o.iterations + 8 * o.iterations + 3 * o.iterations;
    const long ran = dropin_accelerated_calls(comm) - before;
    h.check(ran >= expected, "the drop-in ran every MPI_ call (" + std::to_string(ran) + " of " + std::to_string(expected) + ")");
  }
  MPI_Comm_free(&comm);
  return h.finish("nonblocking_request_test");
}
