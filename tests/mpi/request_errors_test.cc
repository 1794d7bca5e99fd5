// Erroneous neighbourhood collectives whose error every rank sees (issue 34): what plain Open MPI
// does with them, and that the drop-in does the same, so that accelerating a program does not
// change where, when and how its errors are reported. A standard MPI program: run under plain
// Open MPI and with the drop-in forced to combining (--expect-accelerated: the communicator must
// be reported accelerated and the correct calls must run through cartplan).
//
// Every rank makes the same mistake on a ring (offsets -2, -1, +1, +2): an allgather or alltoall
// whose send blocks are 2 ints and receive blocks 1 int, so every receive is truncated. Each
// call is made twice in the same run, once through MPI_ (the drop-in's, when it is loaded) and
// once through PMPI_ (Open MPI's own), in each form: non-blocking (completed by MPI_Wait, an
// MPI_Test loop, or MPI_Waitall with two good requests beside it), persistent (init, MPI_Start,
// the same completions) and blocking. The two must give the same outcome: the error class each
// call returns, which error handler was invoked with which class (counting handlers on
// MPI_COMM_WORLD and on the communicator, which return), MPI_ERROR in Waitall's statuses and
// whether the request was freed. Also asserted, as the documented guarantee (docs/dropin.md): an
// allgather's truncation is reported at completion, never at the call, with class
// MPI_ERR_TRUNCATE; nothing hangs or crashes; correct calls afterwards give the right data. One
// difference is asserted instead: plain Open MPI 4.1.4 returns MPI_ERR_OTHER or MPI_ERR_IN_STATUS
// (either, call to call) from a blocking allgather whose receives are truncated, the drop-in
// MPI_ERR_TRUNCATE (same handler); and at np 1 plain Open MPI reports no allgather truncation.
//
// --mixed (even np): an error found only in the accelerated exchange's messages. Rank r passes
// 1 + r % 2 ints on both sides of an alltoall, so each rank's own arguments agree but its ring
// neighbours at odd offsets send another size. Plain Open MPI reports MPI_ERR_TRUNCATE where a
// message is larger than its receive (even ranks) and nothing where it is smaller; the drop-in
// checks every arrival and must report MPI_ERR_TRUNCATE at completion on every rank
// (--expect-accelerated). The persistent form is compared with Open MPI's as above. The blocking
// form runs a second time as a repeated call (the drop-in's repeat path, mixed_repeat).
//
// Not Open MPI's to report: a persistent init whose cartplan Info options differ by rank fails
// on every rank under the drop-in (MPI_ERR_INFO_VALUE) and succeeds under plain Open MPI.
//
//   request_errors_test [--expect-accelerated] [--mixed]
#include <mpi.h>
#include <mpi-ext.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/mpi/dropin_calls.h"
#include "tests/mpi/harness.h"
#include "tests/mpi/ring_requests.h"

namespace {

using cartplan::mpitest::Harness;
using namespace cartplan::mpitest::ring_requests;

// Counting error handlers that return (as MPI_ERRORS_RETURN): which one MPI invoked, how often,
// with which class last.
struct Handled {
  int calls = 0, last = MPI_SUCCESS;
};
Handled world_handled, comm_handled;

int class_of(int code) {
  int c = code;
  if (code != MPI_SUCCESS) MPI_Error_class(code, &c);
  return c;
}
void on_world(MPI_Comm*, int* code, ...) { ++world_handled.calls, world_handled.last = class_of(*code); }
void on_comm(MPI_Comm*, int* code, ...) { ++comm_handled.calls, comm_handled.last = class_of(*code); }

void install_handlers(MPI_Comm comm) {
  MPI_Errhandler world = MPI_ERRHANDLER_NULL, mine = MPI_ERRHANDLER_NULL;
  MPI_Comm_create_errhandler(on_world, &world);
  MPI_Comm_create_errhandler(on_comm, &mine);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, world);
  MPI_Comm_set_errhandler(comm, mine);
  MPI_Errhandler_free(&world);
  MPI_Errhandler_free(&mine);
}

// What one erroneous call did; every field is an error class, a count or a flag (-1: not reached).
struct Outcome {
  int call = -1, start = -1, done = -1, status = -1, others = -1, freed = -1;
  int world = 0, world_class = -1, comm = 0, comm_class = -1;
  bool operator==(const Outcome& o) const {
    return call == o.call && start == o.start && done == o.done && status == o.status && others == o.others &&
           freed == o.freed && world == o.world && world_class == o.world_class && comm == o.comm && comm_class == o.comm_class;
  }
  std::string str() const {
    auto f = [](const char* n, int v) { return std::string(n) + " " + std::to_string(v); };
    return f("call", call) + f(", start", start) + f(", completion", done) + f(", status", status) + f(", others", others) +
           f(", freed", freed) + f(", world handler", world) + f("x class", world_class) + f(", comm handler", comm) +
           f("x class", comm_class);
  }
};

// Counts the handlers' invocations from construction to `into`.
struct Watch {
  Handled w = world_handled, c = comm_handled;
  void into(Outcome* o) const {
    o->world = world_handled.calls - w.calls;
    o->world_class = o->world ? world_handled.last : -1;
    o->comm = comm_handled.calls - c.calls;
    o->comm_class = o->comm ? comm_handled.last : -1;
  }
};

enum class How { kWait, kTest, kWaitall };
const char* const kHowNames[] = {"MPI_Wait", "MPI_Test", "MPI_Waitall"};

// Completes `r` as `how` says. Waitall has two good requests beside it (a receive from self and
// its send): `others` is 1 if their statuses say MPI_SUCCESS after MPI_ERR_IN_STATUS, 0 if not.
void complete(MPI_Request& r, How how, Outcome* o) {
  MPI_Status st[3];
  if (how == How::kWait) {
    o->done = class_of(MPI_Wait(&r, &st[0]));
  } else if (how == How::kTest) {
    int flag = 0, rc = MPI_SUCCESS;
    do rc = MPI_Test(&r, &flag, &st[0]);
    while (!flag && rc == MPI_SUCCESS);
    o->done = class_of(rc);
  } else {
    int in = -1, out = 7;
    MPI_Request reqs[3] = {r, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Irecv(&in, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &reqs[1]);
    MPI_Isend(&out, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &reqs[2]);
    const int rc = MPI_Waitall(3, reqs, st);
    o->done = class_of(rc);
    if (rc == MPI_ERR_IN_STATUS) {
      o->status = class_of(st[0].MPI_ERROR);
      o->others = st[1].MPI_ERROR == MPI_SUCCESS && st[2].MPI_ERROR == MPI_SUCCESS;
    }
    for (int i = 1; i < 3; ++i)
      if (reqs[i] != MPI_REQUEST_NULL) MPI_Request_free(&reqs[i]);
    r = reqs[0];
  }
  o->freed = r == MPI_REQUEST_NULL;
}

// One call of the truncating kind (send blocks `scount` ints, receive blocks `rcount`), its
// buffers alive until it completed.
struct Call {
  bool gather;
  int scount, rcount;
  std::vector<int> send, recv;
  Call(const Harness& h, bool g, int s, int r) : gather(g), scount(s), rcount(r), send(4 * s, h.rank), recv(4 * r, -1) {}
};

Outcome nonblocking(MPI_Comm comm, Call c, bool pmpi, How how) {
  using Fn = int (*)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm, MPI_Request*);
  const Fn fn = c.gather ? (pmpi ? PMPI_Ineighbor_allgather : MPI_Ineighbor_allgather)
                         : (pmpi ? PMPI_Ineighbor_alltoall : MPI_Ineighbor_alltoall);
  Outcome o;
  Watch watch;
  MPI_Request r = MPI_REQUEST_NULL;
  o.call = class_of(fn(c.send.data(), c.scount, MPI_INT, c.recv.data(), c.rcount, MPI_INT, comm, &r));
  if (o.call == MPI_SUCCESS) complete(r, how, &o);
  watch.into(&o);
  return o;
}

Outcome persistent(MPI_Comm comm, Call c, bool pmpi, How how) {
  using Fn = int (*)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm, MPI_Info, MPI_Request*);
  const Fn fn = c.gather ? (pmpi ? PMPIX_Neighbor_allgather_init : MPIX_Neighbor_allgather_init)
                         : (pmpi ? PMPIX_Neighbor_alltoall_init : MPIX_Neighbor_alltoall_init);
  Outcome o;
  Watch watch;
  MPI_Request r = MPI_REQUEST_NULL;
  o.call = class_of(fn(c.send.data(), c.scount, MPI_INT, c.recv.data(), c.rcount, MPI_INT, comm, MPI_INFO_NULL, &r));
  if (o.call == MPI_SUCCESS) {
    o.start = class_of(MPI_Start(&r));
    if (o.start == MPI_SUCCESS) complete(r, how, &o);
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  }
  watch.into(&o);
  return o;
}

Outcome blocking(MPI_Comm comm, Call c, bool pmpi) {
  using Fn = int (*)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm);
  const Fn fn = c.gather ? (pmpi ? PMPI_Neighbor_allgather : MPI_Neighbor_allgather)
                         : (pmpi ? PMPI_Neighbor_alltoall : MPI_Neighbor_alltoall);
  Outcome o;
  Watch watch;
  o.call = class_of(fn(c.send.data(), c.scount, MPI_INT, c.recv.data(), c.rcount, MPI_INT, comm));
  watch.into(&o);
  return o;
}

// MPI_ against PMPI_ for one call in every form and completion. At np 1 (every block to the
// process itself) plain Open MPI 4.1.4 reports no truncation of an allgather at all (it copies
// without checking sizes); the drop-in's non-blocking and blocking forms still report it, so
// there only the drop-in's guarantee is asserted for them.
void compare_forms(Harness& h, MPI_Comm comm, const Call& c, const std::string& what, bool accelerated) {
  const bool silent = c.gather && h.size == 1;
  for (int how = 0; how < 3; ++how) {
    const How hw = static_cast<How>(how);
    const std::string name = what + " " + kHowNames[how];
    const long calls = dropin_accelerated_calls(comm);
    const Outcome ours = nonblocking(comm, c, false, hw);
    // The drop-in ran the call itself (a failed call counts): otherwise Open MPI's own report
    // would pass the comparisons below.
    if (accelerated && c.gather)
      h.check(dropin_accelerated_calls(comm) == calls + 1, "non-blocking " + name + ": run through cartplan");
    const Outcome open_mpi = nonblocking(comm, c, true, hw);
    if (!silent) h.check(ours == open_mpi, "non-blocking " + name + ": " + ours.str() + "; Open MPI's: " + open_mpi.str());
    if (c.gather && (!silent || accelerated)) {  // the documented guarantee: at completion, not at the call
      h.check(ours.call == MPI_SUCCESS && ours.freed == 1 && (hw == How::kWaitall ? ours.status : ours.done) == MPI_ERR_TRUNCATE &&
                  ours.world == 1 && ours.comm == 0,
              "non-blocking " + name + ": the truncation is reported at completion: " + ours.str());
    }
    const Outcome p_ours = persistent(comm, c, false, hw), p_open_mpi = persistent(comm, c, true, hw);
    h.check(p_ours == p_open_mpi, "persistent " + name + ": " + p_ours.str() + "; Open MPI's: " + p_open_mpi.str());
  }
  const Outcome ours = blocking(comm, c, false), open_mpi = blocking(comm, c, true);
  if (silent) {
    h.check(!accelerated || (ours.call == MPI_ERR_TRUNCATE && ours.comm == 1), "blocking " + what + " at np 1: " + ours.str());
    return;
  }
  if (c.gather) {
    // Plain Open MPI 4.1.4 returns MPI_ERR_OTHER or MPI_ERR_IN_STATUS (either, from one call to
    // the next) for a blocking allgather's truncation (its non-blocking form: MPI_ERR_TRUNCATE);
    // the drop-in, which runs the call, returns the class MPI names, MPI_ERR_TRUNCATE, through
    // the same handler. Everything else is the same.
    Outcome same = ours;
    same.call = open_mpi.call;
    same.comm_class = open_mpi.comm_class;
    const int expected = accelerated ? MPI_ERR_TRUNCATE : ours.call;
    h.check(same == open_mpi && ours.call != MPI_SUCCESS && ours.call == expected && ours.comm_class == ours.call,
            "blocking " + what + ": " + ours.str() + "; Open MPI's: " + open_mpi.str());
    return;
  }
  h.check(ours == open_mpi, "blocking " + what + ": " + ours.str() + "; Open MPI's: " + open_mpi.str());
}

// Correct calls on the same communicator after the errors: right data in every form, and (with
// --expect-accelerated) run through cartplan.
void correct_calls(Harness& h, MPI_Comm comm, bool expect_accelerated, int iter) {
  const long before = dropin_accelerated_calls(comm);
  for (int gather = 0; gather < 2; ++gather) {
    std::vector<int> send(4), recv(4, -1);
    for (int i = 0; i < 4; ++i) send[i] = value(h.rank, gather ? 0 : i, iter);
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = gather ? MPI_Ineighbor_allgather(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, comm, &r)
                    : MPI_Ineighbor_alltoall(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, comm, &r);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    h.check(rc == MPI_SUCCESS && ring_data_ok(h, recv, gather, iter), "a correct non-blocking call after the errors");
    std::fill(recv.begin(), recv.end(), -1);
    rc = gather ? MPI_Neighbor_allgather(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, comm)
                : MPI_Neighbor_alltoall(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, comm);
    h.check(rc == MPI_SUCCESS && ring_data_ok(h, recv, gather, iter), "a correct blocking call after the errors");
  }
  if (expect_accelerated) h.check(dropin_accelerated_calls(comm) >= before + 4, "the correct calls ran through cartplan");
}

// --mixed: rank-dependent sizes, each rank's own arguments consistent.
void mixed(Harness& h, MPI_Comm comm, bool expect_accelerated) {
  const int count = 1 + h.rank % 2;
  const Call c(h, false, count, count);
  const long before = dropin_accelerated_calls(comm);
  for (int how = 0; how < 3; ++how) {
    const Outcome o = nonblocking(comm, c, false, static_cast<How>(how));
    const std::string what = std::string("mixed sizes, non-blocking ") + kHowNames[how] + ": " + o.str();
    const int seen = how == 2 ? o.status : o.done;
    h.check(o.call == MPI_SUCCESS && o.freed == 1, what);
    if (h.rank % 2 == 0 || expect_accelerated) h.check(seen == MPI_ERR_TRUNCATE && o.world == 1 && o.comm == 0, what);
  }
  // Plain Open MPI's blocking form fails with MPI_ERR_OTHER or MPI_ERR_IN_STATUS (see compare_forms).
  const Outcome b = blocking(comm, c, false);
  if (h.rank % 2 == 0 || expect_accelerated)
    h.check(b.call != MPI_SUCCESS && (b.call == MPI_ERR_TRUNCATE || !expect_accelerated) && b.comm == 1 && b.world == 0,
            "mixed sizes, blocking: " + b.str());
  if (expect_accelerated) h.check(dropin_accelerated_calls(comm) >= before + 4, "mixed sizes: the calls ran through cartplan");
  for (int how = 0; how < 3; ++how) {
    const Outcome ours = persistent(comm, c, false, static_cast<How>(how)), open_mpi = persistent(comm, c, true, static_cast<How>(how));
    h.check(ours == open_mpi, std::string("mixed sizes, persistent ") + kHowNames[how] + ": " + ours.str() + "; Open MPI's: " + open_mpi.str());
  }
}

// --mixed, blocking, as a repeated call: the even ranks first make a correct blocking alltoall
// with the buffers, counts and types of their erroneous call (twice: built, then repeated), so
// that the drop-in runs the erroneous one on its repeat path (Exchange::rerun_blocking, which
// raises only the error code); the odd ranks' erroneous call differs from their correct one
// (2 ints, not 1). The outcome must be the first call's: an error through the communicator's
// handler on the even ranks (every rank under the drop-in, MPI_ERR_TRUNCATE), and correct calls
// afterwards.
void mixed_repeat(Harness& h, MPI_Comm comm, bool expect_accelerated) {
  const int count = 1 + h.rank % 2;
  std::vector<int> send(4 * count), recv(4 * count), send1(4), recv1(4);
  const bool even = h.rank % 2 == 0;
  for (int iter = 0; iter < 2; ++iter) {
    int* s = even ? send.data() : send1.data();
    int* r = even ? recv.data() : recv1.data();
    for (int i = 0; i < 4; ++i) s[i] = value(h.rank, i, iter), r[i] = -1;
    const int rc = MPI_Neighbor_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, comm);
    h.check(rc == MPI_SUCCESS && ring_data_ok(h, std::vector<int>(r, r + 4), false, iter),
            "mixed sizes, repeated blocking: the correct call " + std::to_string(iter));
  }
  std::fill(send.begin(), send.end(), h.rank);
  Outcome b;
  Watch watch;
  b.call = class_of(MPI_Neighbor_alltoall(send.data(), count, MPI_INT, recv.data(), count, MPI_INT, comm));
  watch.into(&b);
  if (even || expect_accelerated)
    h.check(b.call != MPI_SUCCESS && (b.call == MPI_ERR_TRUNCATE || !expect_accelerated) && b.comm == 1 && b.world == 0,
            "mixed sizes, repeated blocking: " + b.str());
  else
    h.check(b.call == MPI_SUCCESS && b.comm == 0 && b.world == 0, "mixed sizes, repeated blocking, odd rank: " + b.str());
}

// A persistent init whose cartplan Info options differ between ranks (rank 0: trailers, the
// others: none) is cartplan's own error, not one Open MPI would report: under the drop-in every
// rank's init fails with MPI_ERR_INFO_VALUE through the communicator's handler (it must not fall
// back to Open MPI's init, which ignores the key); under plain Open MPI the init succeeds.
void info_mismatch(Harness& h, MPI_Comm comm, bool expect_accelerated) {
  MPI_Info info = MPI_INFO_NULL;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_trailer_min_bytes", h.rank == 0 ? "0" : "-1");
  std::vector<int> send(4, h.rank), recv(4, -1);
  Outcome o;
  Watch watch;
  MPI_Request r = MPI_REQUEST_NULL;
  o.call = class_of(MPIX_Neighbor_alltoall_init(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, comm, info, &r));
  watch.into(&o);
  if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  MPI_Info_free(&info);
  const bool refused = expect_accelerated && h.size > 1;
  h.check(refused ? o.call == MPI_ERR_INFO_VALUE && o.comm == 1 && o.comm_class == MPI_ERR_INFO_VALUE && o.world == 0
                  : o.call == MPI_SUCCESS && o.comm == 0 && o.world == 0,
          "persistent init with Info options that differ by rank: " + o.str());
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  bool expect_accelerated = false, with_mixed = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--expect-accelerated") expect_accelerated = true;
    else if (a == "--mixed") with_mixed = true;
    else MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm comm = ring(h);
  install_handlers(comm);
  if (expect_accelerated) h.check(dropin_interposed(comm) == 1, "the drop-in accelerates the ring");
  correct_calls(h, comm, expect_accelerated, 0);
  compare_forms(h, comm, Call(h, true, 2, 1), "truncated", expect_accelerated);
  compare_forms(h, comm, Call(h, false, 2, 1), "truncated", expect_accelerated);
  correct_calls(h, comm, expect_accelerated, 1);
  info_mismatch(h, comm, expect_accelerated);
  if (with_mixed && h.size % 2 == 0) {
    mixed(h, comm, expect_accelerated);
    mixed_repeat(h, comm, expect_accelerated);
    correct_calls(h, comm, expect_accelerated, 2);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_free(&comm);
  return h.finish("request_errors_test");
}
