// Persistent neighbourhood collectives as MPI requests (issue 34): what MPI promises for a
// persistent request, checked on MPIX_Neighbor_alltoall_init / _allgather_init, so that the
// drop-in's requests (backends/interpose/requests.h) can be held to it. A standard MPI program:
// run under plain Open MPI (the program is correct) and with the drop-in forced to combining
// (every init must run through cartplan), with either kind of request.
//  - the handle keeps its value across starts and completions, the data are right every time;
//  - MPI_Start/MPI_Startall/MPI_Wait/MPI_Waitall called as PMPI_* (as the Fortran bindings or
//    another profiling layer call them) start and complete it too (--no-pmpi skips this: the
//    drop-in's self-message fallback needs its interposed MPI_Start);
//  - mixed with a plain receive that completes only later: MPI_Waitany, a MPI_Testsome loop,
//    MPI_Testany and MPI_Testall see the collective complete exactly once;
//  - MPI_Request_get_status reports completion without completing (the request stays active:
//    MPI_Wait still completes it);
//  - an inactive request counts as complete in MPI_Test/Wait/Testall and as null in
//    MPI_Waitany/Testsome, which then report MPI_UNDEFINED;
//  - MPI_Request_free of an inactive request; with --free-active also of an active one (erroneous
//    for collectives in MPI; the drop-in finishes it first), after which the next collective
//    still runs.
// --duplicate-startall: MPI_Startall with the same handle twice (erroneous) returns an error of
// class MPI_ERR_REQUEST, MPI_Wait on the handle returns, it runs normally afterwards, and
// MPI_Finalize returns (the drop-in used to count the second copy as in flight for ever). Only
// under the drop-in: plain Open MPI 4.1.4 accepts the call and starts its libnbc request twice
// (at np = 2 a rank then died of a segmentation fault).
// --start-active: MPI_Startall of an active request (erroneous) is refused as Open MPI refuses it
// for its own persistent receive in the same run (MPI_ERR_REQUEST through MPI_COMM_WORLD's error
// handler, before starting anything); --start-active-single (drop-in only) also MPI_Start and
// PMPI_Start of it. The request then completes once with its data.
// --startall-mixed: MPI_Startall({a persistent receive, an active request}) starts neither
// (rank 0; its peers start theirs only afterwards), MPI_Startall of both inactive starts both.
// --expect-done-at-start: the collective must have completed inside MPI_Start (the drop-in at
// np = 1, every block a local copy). Grid: a periodic ring, offsets -2, -1, +1, +2, one int per
// block, rank- and iteration-dependent data.
//
//   persistent_request_test [--iterations N] [--expect-accelerated] [--no-pmpi] [--free-active] [--duplicate-startall]
//                           [--start-active | --start-active-single] [--startall-mixed] [--expect-done-at-start]
#include <mpi.h>
#include <mpi-ext.h>

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
  bool expect_accelerated = false, pmpi = true, free_active = false, done_at_start = false, duplicate = false;
  bool start_active = false, start_active_single = false, startall_mixed = false;
};

// A persistent allgather or alltoall on the ring, and the data of one start.
struct Collective {
  bool gather = false;
  std::vector<int> send, recv;
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Request handle = MPI_REQUEST_NULL;  // the value init returned
};

void init(MPI_Comm comm, Collective& c, bool gather) {
  c.gather = gather;
  c.send.assign(gather ? 1 : 4, 0);
  c.recv.assign(4, -1);
  const int rc = gather ? MPIX_Neighbor_allgather_init(c.send.data(), 1, MPI_INT, c.recv.data(), 1, MPI_INT, comm, MPI_INFO_NULL, &c.request)
                        : MPIX_Neighbor_alltoall_init(c.send.data(), 1, MPI_INT, c.recv.data(), 1, MPI_INT, comm, MPI_INFO_NULL, &c.request);
  if (rc != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 3);
  c.handle = c.request;
}

void fill(const Harness& h, Collective& c, int iter) {
  for (std::size_t i = 0; i < c.send.size(); ++i) c.send[i] = value(h.rank, c.gather ? 0 : static_cast<int>(i), iter);
  std::fill(c.recv.begin(), c.recv.end(), -1);
}

void verify(Harness& h, const Collective& c, int iter, const std::string& what) {
  h.check(ring_data_ok(h, c.recv, c.gather, iter), what + (c.gather ? " allgather" : " alltoall") + " iteration " + std::to_string(iter) + ": wrong data");
  h.check(c.request == c.handle, what + ": the handle changed");
}

void start(Harness& h, Collective& c, int iter, const Options& o) {
  fill(h, c, iter);
  h.check(MPI_Start(&c.request) == MPI_SUCCESS, "MPI_Start");
  if (!o.done_at_start) return;
  int flag = 0;
  PMPI_Request_get_status(c.request, &flag, MPI_STATUS_IGNORE);
  h.check(flag == 1, "complete inside MPI_Start");
}

void plain_cycles(Harness& h, Collective& c, const Options& o) {
  for (int iter = 0; iter < o.iterations; ++iter) {
    start(h, c, iter, o);
    h.check(MPI_Wait(&c.request, MPI_STATUS_IGNORE) == MPI_SUCCESS, "MPI_Wait");
    verify(h, c, iter, "MPI_Start + MPI_Wait");
  }
}

// The PMPI_ entry points, as the Fortran bindings or another tool's wrappers call them.
void pmpi_cycles(Harness& h, Collective& a, Collective& g, const Options& o) {
  for (int iter = 0; iter < o.iterations; ++iter) {
    fill(h, a, iter);
    h.check(PMPI_Start(&a.request) == MPI_SUCCESS && PMPI_Wait(&a.request, MPI_STATUS_IGNORE) == MPI_SUCCESS, "PMPI_Start/Wait");
    verify(h, a, iter, "PMPI_Start + PMPI_Wait");
    fill(h, a, iter + 1);
    fill(h, g, iter + 1);
    MPI_Request both[2] = {a.request, g.request};
    h.check(PMPI_Startall(2, both) == MPI_SUCCESS && PMPI_Waitall(2, both, MPI_STATUSES_IGNORE) == MPI_SUCCESS,
            "PMPI_Startall/Waitall");
    a.request = both[0];
    g.request = both[1];
    verify(h, a, iter + 1, "PMPI_Startall + PMPI_Waitall");
    verify(h, g, iter + 1, "PMPI_Startall + PMPI_Waitall");
  }
}

// The collective and a receive from self that is only sent after the collective was reported:
// `complete` is called on the two until it has reported the collective, then the message is
// sent, then it must report the receive; each exactly once.
void mixed_cycles(Harness& h, Collective& c, const Options& o) {
  for (int how = 0; how < 4; ++how) {
    for (int iter = 0; iter < o.iterations; ++iter) {
      const std::string what = std::string(kCompletionNames[how]) + " mixed";
      int in = -1, out = iter, reported[2] = {0, 0};
      MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
      MPI_Irecv(&in, 1, MPI_INT, 0, 77, MPI_COMM_SELF, &reqs[0]);
      start(h, c, iter, o);
      reqs[1] = c.request;
      // Testall reports nothing until both are done: send first there.
      if (how == 3) MPI_Send(&out, 1, MPI_INT, 0, 77, MPI_COMM_SELF);
      while (!reported[1] && complete_some(static_cast<Completion>(how), reqs, reported) >= 0) {
      }
      h.check(reported[1] == 1 && reqs[1] == c.handle, what + ": the collective reported once, handle kept");
      c.request = reqs[1];
      verify(h, c, iter, what);
      if (how != 3) MPI_Send(&out, 1, MPI_INT, 0, 77, MPI_COMM_SELF);
      while (!reported[0] && complete_some(static_cast<Completion>(how), reqs, reported) >= 0) {
      }
      h.check(reported[0] == 1 && reported[1] == 1 && in == iter, what + ": the plain receive reported once");
      int idx = 0;
      MPI_Waitany(2, reqs, &idx, MPI_STATUS_IGNORE);
      h.check(idx == MPI_UNDEFINED, what + ": nothing left active");
    }
  }
}

// MPI_Request_get_status until complete: the request stays active, MPI_Wait completes it.
void get_status_cycles(Harness& h, Collective& c, const Options& o) {
  for (int iter = 0; iter < o.iterations; ++iter) {
    start(h, c, iter, o);
    int flag = 0;
    while (!flag) MPI_Request_get_status(c.request, &flag, MPI_STATUS_IGNORE);
    MPI_Wait(&c.request, MPI_STATUS_IGNORE);
    verify(h, c, iter, "MPI_Request_get_status");
  }
}

// An inactive persistent request: complete for Test/Wait/Testall, null for Waitany/Testsome.
void inactive_checks(Harness& h, Collective& c) {
  int flag = 0, idx = 0, n = 0, ind[2];
  MPI_Test(&c.request, &flag, MPI_STATUS_IGNORE);
  h.check(flag == 1, "inactive: MPI_Test reports it complete");
  h.check(MPI_Wait(&c.request, MPI_STATUS_IGNORE) == MPI_SUCCESS, "inactive: MPI_Wait returns");
  MPI_Request reqs[2] = {c.request, MPI_REQUEST_NULL};
  MPI_Waitany(2, reqs, &idx, MPI_STATUS_IGNORE);
  h.check(idx == MPI_UNDEFINED, "inactive: MPI_Waitany reports MPI_UNDEFINED");
  MPI_Testsome(2, reqs, &n, ind, MPI_STATUSES_IGNORE);
  h.check(n == MPI_UNDEFINED, "inactive: MPI_Testsome reports MPI_UNDEFINED");
  MPI_Testall(2, reqs, &flag, MPI_STATUSES_IGNORE);
  h.check(flag == 1 && reqs[0] == c.handle, "inactive: MPI_Testall reports it complete, handle kept");
}

// An erroneous start's outcome: the class returned, and how often MPI_COMM_WORLD's error
// handler (a counting one that returns, installed by count_world_errors) was invoked, with
// which class last.
struct Refusal {
  int cls = -1, handled = 0, handled_cls = -1;
  bool operator==(const Refusal& o) const { return cls == o.cls && handled == o.handled && handled_cls == o.handled_cls; }
  std::string str() const {
    return "class " + std::to_string(cls) + ", world handler " + std::to_string(handled) + "x class " + std::to_string(handled_cls);
  }
};
int world_errors = 0, world_last = MPI_SUCCESS;
void on_world_error(MPI_Comm*, int* code, ...) { ++world_errors, MPI_Error_class(*code, &world_last); }
void count_world_errors() {
  MPI_Errhandler e = MPI_ERRHANDLER_NULL;
  MPI_Comm_create_errhandler(on_world_error, &e);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, e);
  MPI_Errhandler_free(&e);
}
template <class Start>
Refusal refusal(const Start& start) {
  const int before = world_errors;
  const int rc = start();
  Refusal r;
  r.cls = rc;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &r.cls);
  r.handled = world_errors - before;
  if (r.handled) r.handled_cls = world_last;
  return r;
}
// What Open MPI 4.1's MPI_Startall does with an active request, shown on its own persistent
// receive (point-to-point) in the same run: MPI_ERR_REQUEST through MPI_COMM_WORLD's handler.
const Refusal kRefused{MPI_ERR_REQUEST, 1, MPI_ERR_REQUEST};

// MPI_Startall({r, r}): refused with MPI_ERR_REQUEST through MPI_COMM_WORLD's handler, as an
// active request (kRefused); MPI_Wait on r returns (the drop-in refuses before starting
// anything; had r been started once, the wait completes it) and r keeps its handle.
void duplicate_startall(Harness& h, Collective& c) {
  fill(h, c, 0);
  MPI_Request twice[2] = {c.request, c.request};
  const Refusal r = refusal([&] { return MPI_Startall(2, twice); });
  h.check(r == kRefused, "MPI_Startall with a duplicate handle: " + r.str());
  h.check(MPI_Wait(&c.request, MPI_STATUS_IGNORE) == MPI_SUCCESS && c.request == c.handle, "duplicate MPI_Startall: MPI_Wait");
}

// PMPI_Startall({r, r}), past the drop-in's wrapper: its request starts r once and refuses the
// second copy through MPI_COMM_WORLD's handler (Open MPI 4.1.4 drops the code returned: the
// handler is how the refusal is seen); r completes with the first copy's data and MPI_Finalize
// still returns (nothing stays counted in flight).
void duplicate_pmpi_startall(Harness& h, Collective& c) {
  fill(h, c, 1);
  MPI_Request twice[2] = {c.request, c.request};
  const Refusal r = refusal([&] { return PMPI_Startall(2, twice); });
  h.check(r.handled == 1 && r.handled_cls == MPI_ERR_REQUEST, "duplicate PMPI_Startall: reported to the handler: " + r.str());
  h.check(MPI_Wait(&c.request, MPI_STATUS_IGNORE) == MPI_SUCCESS, "duplicate PMPI_Startall: MPI_Wait");
  verify(h, c, 1, "duplicate PMPI_Startall");
}

// The reference: MPI_Startall of an active persistent receive (matched only afterwards).
Refusal startall_active_receive(Harness& h) {
  int in = -1, out = 5;
  MPI_Request p2p = MPI_REQUEST_NULL;
  MPI_Recv_init(&in, 1, MPI_INT, 0, 78, MPI_COMM_SELF, &p2p);
  MPI_Start(&p2p);
  const Refusal r = refusal([&] { return MPI_Startall(1, &p2p); });
  // Had it started again (a second receive), a second message completes it.
  for (int k = 0; k < (r.cls == MPI_SUCCESS ? 2 : 1); ++k) MPI_Send(&out, 1, MPI_INT, 0, 78, MPI_COMM_SELF);
  MPI_Wait(&p2p, MPI_STATUS_IGNORE);
  h.check(in == out, "the persistent receive completes");
  MPI_Request_free(&p2p);
  return r;
}

// MPI_Startall of an active request of ours: refused as Open MPI's own persistent receive is in
// the same run (and as kRefused). --start-active-single (the drop-in only: plain Open MPI 4.1's
// MPI_Start would run its libnbc request twice): MPI_Start and PMPI_Start of it too. It stays
// active and completes once, with its data.
void start_active(Harness& h, Collective& c, const Options& o) {
  const Refusal reference = startall_active_receive(h);
  h.check(reference == kRefused, "Open MPI's MPI_Startall of an active persistent receive: " + reference.str());
  start(h, c, 3, o);
  const Refusal all = refusal([&] { return MPI_Startall(1, &c.request); });
  h.check(all == reference, "MPI_Startall of an active request: " + all.str() + "; a persistent receive's: " + reference.str());
  if (o.start_active_single) {
    const Refusal one = refusal([&] { return MPI_Start(&c.request); });
    h.check(one == reference, "MPI_Start of an active request: " + one.str());
    if (o.pmpi) {
      const Refusal p = refusal([&] { return PMPI_Start(&c.request); });
      h.check(p == reference, "PMPI_Start of an active request: " + p.str());
    }
  }
  h.check(MPI_Wait(&c.request, MPI_STATUS_IGNORE) == MPI_SUCCESS, "start of an active request: MPI_Wait");
  verify(h, c, 3, "start of an active request");
}

// MPI_Startall({a persistent receive, r}) with r active: Open MPI checks every request before it
// starts any, so the receive stays inactive (MPI_Request_get_status: complete). Rank 0 runs it
// while its peers wait for its word before they start r (so that r's exchange cannot have
// finished, as with the self-message kind it could: docs/dropin.md, Limitations); then each
// peer runs MPI_Startall({receive, r}), which starts both, and every rank's r completes once.
void startall_mixed(Harness& h, Collective& c, MPI_Comm comm, const Options& o) {
  int in = -1, out = 7 + h.rank, go = 0, me = 0, size = 1;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &size);
  MPI_Request p2p = MPI_REQUEST_NULL;
  MPI_Recv_init(&in, 1, MPI_INT, 0, 80, MPI_COMM_SELF, &p2p);
  MPI_Request mixed[2] = {p2p, c.request};
  if (me == 0) {
    start(h, c, 5, o);
    const Refusal r = refusal([&] { return MPI_Startall(2, mixed); });
    h.check(r == kRefused, "MPI_Startall({persistent receive, active request}): " + r.str());
    int flag = 0;
    MPI_Request_get_status(p2p, &flag, MPI_STATUS_IGNORE);
    h.check(flag == 1, "MPI_Startall refused: the persistent receive was not started");
    for (int peer = 1; peer < size; ++peer) MPI_Send(&go, 1, MPI_INT, peer, 81, comm);
  } else {
    MPI_Recv(&go, 1, MPI_INT, 0, 81, comm, MPI_STATUS_IGNORE);
    fill(h, c, 5);
    h.check(MPI_Startall(2, mixed) == MPI_SUCCESS, "MPI_Startall({persistent receive, inactive request})");
    c.request = mixed[1];
    p2p = mixed[0];
    MPI_Send(&out, 1, MPI_INT, 0, 80, MPI_COMM_SELF);
    h.check(MPI_Wait(&p2p, MPI_STATUS_IGNORE) == MPI_SUCCESS && in == out, "mixed MPI_Startall: the persistent receive completes");
  }
  h.check(MPI_Wait(&c.request, MPI_STATUS_IGNORE) == MPI_SUCCESS, "mixed MPI_Startall: MPI_Wait");
  verify(h, c, 5, "mixed MPI_Startall");
  MPI_Request_free(&p2p);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--iterations" && i + 1 < argc) o.iterations = std::atoi(argv[++i]);
    else if (a == "--expect-accelerated") o.expect_accelerated = true;
    else if (a == "--no-pmpi") o.pmpi = false;
    else if (a == "--free-active") o.free_active = true;
    else if (a == "--expect-done-at-start") o.done_at_start = true;
    else if (a == "--duplicate-startall") o.duplicate = true;
    else if (a == "--start-active") o.start_active = true;
    else if (a == "--start-active-single") o.start_active = o.start_active_single = true;
    else if (a == "--startall-mixed") o.startall_mixed = true;
    else MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm comm = ring(h);
  Collective a, g;
  init(comm, a, false);
  init(comm, g, true);
  long inits = 2;
  plain_cycles(h, a, o);
  plain_cycles(h, g, o);
  if (o.pmpi) pmpi_cycles(h, a, g, o);
  mixed_cycles(h, g, o);
  get_status_cycles(h, a, o);
  inactive_checks(h, a);
  if (o.duplicate || o.start_active || o.startall_mixed) count_world_errors();
  if (o.duplicate) {
    duplicate_startall(h, a);
    if (o.pmpi) duplicate_pmpi_startall(h, a);
    plain_cycles(h, a, o);  // it still runs normally afterwards
  }
  if (o.start_active) {
    start_active(h, a, o);
    plain_cycles(h, a, o);
  }
  if (o.startall_mixed) {
    startall_mixed(h, a, comm, o);
    plain_cycles(h, a, o);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  if (o.free_active) {
    start(h, a, 0, o);
    h.check(MPI_Request_free(&a.request) == MPI_SUCCESS && a.request == MPI_REQUEST_NULL, "MPI_Request_free of an active request");
    init(comm, a, false);
    ++inits;
    plain_cycles(h, a, o);
  }
  MPI_Request_free(&a.request);
  MPI_Request_free(&g.request);
  h.check(a.request == MPI_REQUEST_NULL && g.request == MPI_REQUEST_NULL, "MPI_Request_free sets MPI_REQUEST_NULL");
  if (o.expect_accelerated)
    h.check(dropin_accelerated_calls(comm) >= inits, "the drop-in ran every init (" + std::to_string(dropin_accelerated_calls(comm)) + ")");
  MPI_Comm_free(&comm);
  return h.finish("persistent_request_test");
}
