// MPI test of blocking and non-blocking graph calls with the grid forced (Info cartplan_algorithm
// = grid on the communicator) whose grid construction runs out of memory part-way on one rank
// (CARTPLAN_TEST_FAIL=grid-construct-partway, between its rounds 0 and 1: the construction's
// markers tell only the ranks sharing its coordinate 0). These calls have no agreement after
// the construction; its verdict sweep (engine/graph/grid_verdict.h) must tell every rank. For
// allgather and alltoallv, blocking and non-blocking, the failure on rank 0 and on the last rank:
// every rank returns MPI_ERR_NO_MEM (the failed rank's message says out of memory, the others'
// another rank), nobody hangs (run_mpi.sh's time limit fails a hang), a second call on that
// communicator returns MPI_ERR_NO_MEM on every rank again (the failure is kept, alike
// everywhere), and the same call on a new communicator delivers rank-dependent data. Then a
// forced-grid persistent init failing the same way (agreed there: MPI_ERR_NO_MEM on every rank,
// and every rank forgets the construction) followed by blocking allgathers on that
// communicator: the first constructs again and sweeps, both deliver. Then the room to record the sweep's outcome
// (and its sends' requests) running out of memory on one rank: that call fails on every rank,
// and so does a second call on that communicator, on every rank, without a set-up message
// (that rank kept the agreed failure: no sweep of its own, which would hang). Then the room to
// record the construction's outcome (grid-record-room) running out of memory on one rank, in a
// blocking or non-blocking call: every rank fails alike at every call, nobody hangs; in a
// persistent init: the init fails on every rank, then a second forced-grid init (or a blocking
// call) on that communicator constructs again and delivers on every rank. A rank running out of memory copying its kept
// failure after the sweep (grid-verdict-copy) still returns the agreed class. Without a
// failure: after a successful forced-grid init (its agreement vouches for the grid), a blocking
// call on that communicator sends no set-up message (no sweep), counted through the MPI
// profiling interface; and a first forced-grid call's sweep allocates nothing (operator new,
// counted) from its first word sent to its last word received.
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::error_class;
using cartplan::mpitest::Harness;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The set-up channel's messages (graph_setup.h: tag MPI_TAG_UB, which no exchange uses), counted
// by the MPI_Isend, MPI_Send and MPI_Sendrecv this program defines below.
long setup_sends = 0;
int setup_tag_value() {
  int* ub = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
  return flag ? *ub : -1;
}

// The verdict sweep's window (sweep_allocates_nothing), on a call without failures: opened by
// the first one-word frame sent on the set-up tag (Open MPI's frame is [set-up tag, word]: 2
// ints; a construction's message without a failure is 1 + 3 k ints), closed once this rank has
// sent its `sweep_words` words and holds as many: received on the set-up tag by MPI_Recv, or
// taken during the construction before (early: a line peer a construction ahead, already in
// the sweep; the construction takes its messages by MPI_Mrecv, and only a sweep word there has
// 2 ints).
bool watch_sweep = false, counting = false;
long sweep_words = 0, sweep_sent = 0, sweep_received = 0, early_words = 0, counted_news = 0;

void close_when_done() {
  if (counting && sweep_sent == sweep_words && sweep_received + early_words == sweep_words) counting = false;
}

}  // namespace

extern "C" int MPI_Isend(const void* b, int n, MPI_Datatype t, int to, int tag, MPI_Comm c, MPI_Request* q) {
  static const int setup = setup_tag_value();
  if (tag == setup) ++setup_sends;
  const bool word = tag == setup && watch_sweep && n == 2;
  if (word && sweep_sent == 0) counting = true;
  const int rc = PMPI_Isend(b, n, t, to, tag, c, q);
  if (word && counting) ++sweep_sent, close_when_done();
  return rc;
}

extern "C" int MPI_Mrecv(void* b, int n, MPI_Datatype t, MPI_Message* m, MPI_Status* st) {
  if (watch_sweep && !counting && sweep_sent == 0 && n == 2 && t == MPI_INT) ++early_words;
  return PMPI_Mrecv(b, n, t, m, st);
}

// A sweep without requests (a rank that ran out of memory making its room) sends by these.
extern "C" int MPI_Send(const void* b, int n, MPI_Datatype t, int to, int tag, MPI_Comm c) {
  static const int setup = setup_tag_value();
  if (tag == setup) ++setup_sends;
  return PMPI_Send(b, n, t, to, tag, c);
}

extern "C" int MPI_Sendrecv(const void* sb, int sn, MPI_Datatype st, int to, int stag, void* rb, int rn, MPI_Datatype rt, int from,
                            int rtag, MPI_Comm c, MPI_Status* status) {
  static const int setup = setup_tag_value();
  if (stag == setup) ++setup_sends;
  return PMPI_Sendrecv(sb, sn, st, to, stag, rb, rn, rt, from, rtag, c, status);
}

extern "C" int MPI_Recv(void* b, int n, MPI_Datatype t, int from, int tag, MPI_Comm c, MPI_Status* st) {
  static const int setup = setup_tag_value();
  const int rc = PMPI_Recv(b, n, t, from, tag, c, st);
  if (tag == setup && counting) ++sweep_received, close_when_done();
  return rc;
}

// GCC 12 at -c opt inlines these into callers and then takes free() for a mismatched delete of
// new'd memory (-Wmismatched-new-delete); both sides are this file's malloc/free pair.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  if (counting) ++counted_news;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

// Sets CARTPLAN_TEST_FAIL=step on rank `at` only while it lives.
struct FailOnRank {
  bool set;
  FailOnRank(const Harness& h, const char* step, int at) : set(h.rank == at) {
    if (set) setenv("CARTPLAN_TEST_FAIL", step, 1);
  }
  ~FailOnRank() {
    if (set) unsetenv("CARTPLAN_TEST_FAIL");
  }
};

int value(int rank, int block, int j, int salt) { return ((salt * 16 + rank) * 64 + block) * 32 + j; }

// A ring (edges to r + 1 and r + 2) with Info cartplan_algorithm = grid; src: the sources in the
// order of the receive blocks.
MPI_Comm grid_ring(Harness& h, int src[2]) {
  const int p = h.size, r = h.rank;
  const int dst[2] = {(r + 1) % p, (r + 2) % p};
  src[0] = (r + p - 1) % p;
  src[1] = (r + 2 * p - 2) % p;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", "grid");
  MPI_Comm g = MPI_COMM_NULL;
  h.check(Cart_graph_comm_create_adjacent(MPI_COMM_WORLD, 2, src, 2, dst, info, &g) == MPI_SUCCESS, "graph creation");
  MPI_Info_free(&info);
  if (g != MPI_COMM_NULL) MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
  return g;
}

enum class Call { kAllgather, kAlltoallv };

// One call on g (blocking, or non-blocking then Cart_wait) with rank-dependent data: its code
// (the call's, or the wait's), and *delivered whether every block arrived. Alltoallv: edge j's
// block from rank q holds 3 + q + 2 j ints (counts differ by rank and edge).
int run_call(Harness& h, MPI_Comm g, const int src[2], Call call, bool nonblocking, int salt, bool* delivered) {
  auto count = [&](int q, int j) { return call == Call::kAllgather ? 5 : 3 + q + 2 * j; };
  int scount[2], sdispl[2], rcount[2], rdispl[2], stotal = 0, rtotal = 0;
  for (int j = 0; j < 2; ++j) {
    scount[j] = count(h.rank, j), sdispl[j] = stotal, stotal += scount[j];
    rcount[j] = count(src[j], j), rdispl[j] = rtotal, rtotal += rcount[j];
  }
  const int sends = call == Call::kAllgather ? 1 : 2;  // allgather sends one block to both
  std::vector<int> send(stotal), recv(rtotal, -1);
  for (int j = 0; j < sends; ++j)
    for (int i = 0; i < scount[j]; ++i) send[sdispl[j] + i] = value(h.rank, call == Call::kAllgather ? 0 : j, i, salt);
  Cart_Request req = CART_REQUEST_NULL;
  int rc = MPI_SUCCESS;
  if (call == Call::kAllgather && !nonblocking) rc = Cart_graph_neighbor_allgather(send.data(), 5, MPI_INT, recv.data(), 5, MPI_INT, g);
  if (call == Call::kAllgather && nonblocking) rc = Cart_graph_ineighbor_allgather(send.data(), 5, MPI_INT, recv.data(), 5, MPI_INT, g, &req);
  if (call == Call::kAlltoallv && !nonblocking)
    rc = Cart_graph_neighbor_alltoallv(send.data(), scount, sdispl, MPI_INT, recv.data(), rcount, rdispl, MPI_INT, g);
  if (call == Call::kAlltoallv && nonblocking)
    rc = Cart_graph_ineighbor_alltoallv(send.data(), scount, sdispl, MPI_INT, recv.data(), rcount, rdispl, MPI_INT, g, &req);
  if (rc == MPI_SUCCESS && nonblocking) rc = Cart_wait(&req);
  *delivered = rc == MPI_SUCCESS;
  for (int j = 0; j < 2 && *delivered; ++j)
    for (int i = 0; i < rcount[j] && *delivered; ++i)
      *delivered = recv[rdispl[j] + i] == value(src[j], call == Call::kAllgather ? 0 : j, i, salt);
  return rc;
}

// Every rank MPI_ERR_NO_MEM; rank `at`'s message says out of memory, the others' another rank.
void expect_no_mem(Harness& h, int rc, const std::string& what, int at) {
  const std::string msg = rc == MPI_SUCCESS ? "" : Cart_error_message();
  h.check(error_class(rc) == MPI_ERR_NO_MEM && contains(msg, h.rank == at ? "out of memory" : "another rank"),
          what + " every rank MPI_ERR_NO_MEM, got " + std::to_string(rc) + " '" + msg + "'");
}

void call_fails(Harness& h, Call call, bool nonblocking, int at) {
  const std::string what = std::string(nonblocking ? "non-blocking " : "blocking ") + (call == Call::kAllgather ? "allgather" : "alltoallv") +
                           " (grid), grid-construct-partway on rank " + std::to_string(at) + ":";
  int src[2];
  MPI_Comm g = grid_ring(h, src);
  if (g == MPI_COMM_NULL) return;
  bool delivered = false;
  int rc = MPI_SUCCESS;
  {
    FailOnRank fail(h, "grid-construct-partway", at);
    rc = run_call(h, g, src, call, nonblocking, 1, &delivered);
  }
  expect_no_mem(h, rc, what, at);
  rc = run_call(h, g, src, call, nonblocking, 2, &delivered);  // the kept failure: no construction, no message
  expect_no_mem(h, rc, what + " the next call on that communicator:", at);
  MPI_Comm_free(&g);
  g = grid_ring(h, src);
  if (g == MPI_COMM_NULL) return;
  for (int salt = 3; salt <= 4; ++salt) {
    rc = run_call(h, g, src, call, nonblocking, salt, &delivered);
    h.check(rc == MPI_SUCCESS && delivered, what + " the call on a new communicator delivers (call " + std::to_string(salt - 2) + ")");
  }
  MPI_Comm_free(&g);
}

// A forced-grid alltoall init on `g` with the failure `point` injected on rank `at`: its return
// code (the request, if any, freed). `v_form`: an alltoallv init with the same counts (a v form
// agrees on the pattern before its size pass: build_forced's own agreement).
int failing_init(Harness& h, MPI_Comm g, const char* point, int at, bool v_form = false) {
  std::vector<int> send(10, h.rank), recv(10, -1);
  const int counts[2] = {5, 5}, displs[2] = {0, 5};
  Cart_Request req = CART_REQUEST_NULL;
  int rc = MPI_SUCCESS;
  {
    FailOnRank fail(h, point, at);
    rc = v_form ? Cart_graph_neighbor_alltoallv_init(send.data(), counts, displs, MPI_INT, recv.data(), counts, displs, MPI_INT, g,
                                                     MPI_INFO_NULL, &req)
                : Cart_graph_neighbor_alltoall_init(send.data(), 5, MPI_INT, recv.data(), 5, MPI_INT, g, MPI_INFO_NULL, &req);
  }
  if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  return rc;
}

// A forced-grid alltoall init failing part-way on rank `at` (agreed: every rank MPI_ERR_NO_MEM;
// the uninformed ranks held the grid, and every rank forgets the construction: drop_grid), then
// blocking allgathers on that communicator: the first constructs again on every rank and sweeps,
// both deliver. (Before the drop the first call's sweep failed, MPI_ERR_NO_MEM everywhere, for
// good.)
void init_then_call(Harness& h, int at) {
  const std::string what = "grid alltoall init, grid-construct-partway on rank " + std::to_string(at) + ", then a blocking allgather:";
  int src[2];
  MPI_Comm g = grid_ring(h, src);
  if (g == MPI_COMM_NULL) return;
  expect_no_mem(h, failing_init(h, g, "grid-construct-partway", at), what + " the init:", at);
  bool delivered = false;
  for (int salt = 1; salt <= 2; ++salt) {
    const int rc = run_call(h, g, src, Call::kAllgather, false, salt, &delivered);
    h.check(rc == MPI_SUCCESS && delivered, what + " call " + std::to_string(salt) + " delivers, got " + std::to_string(rc));
  }
  MPI_Comm_free(&g);
}

// Out of memory on rank `at` where a rank records a forced-grid call's outcome; the construction
// succeeds everywhere. `point`:
// - grid-sweep-room: the room for the sweep's outcome (the sweep's requests are part of it). The
//   rank still sends MPI_ERR_NO_MEM in the sweep, one line peer after the other without requests.
// - grid-record-room: the room for the construction's outcome, made before the construction. The
//   rank still constructs and sweeps with MPI_ERR_NO_MEM (before, it threw out of the call after
//   its construction, and its line peers waited in the sweep for good).
// Either way a blocking or non-blocking allgather returns MPI_ERR_NO_MEM on every rank; so does a
// second call on that communicator, with no set-up message from anyone (rank `at` kept the agreed
// class; before, after grid-sweep-room it swept alone and hung), and a forced-grid persistent init
// there. After grid-record-room rank `at` words the second call's failure as the earlier one.
void kept_failure(Harness& h, const std::string& point, bool nonblocking, int at) {
  const std::string what =
      std::string(nonblocking ? "non-blocking" : "blocking") + " allgather (grid), " + point + " on rank " + std::to_string(at) + ":";
  int src[2];
  MPI_Comm g = grid_ring(h, src);
  if (g == MPI_COMM_NULL) return;
  bool delivered = false;
  int rc = MPI_SUCCESS;
  {
    FailOnRank fail(h, point.c_str(), at);
    rc = run_call(h, g, src, Call::kAllgather, nonblocking, 1, &delivered);
  }
  expect_no_mem(h, rc, what, at);
  const long before = setup_sends;
  rc = run_call(h, g, src, Call::kAllgather, nonblocking, 2, &delivered);
  expect_no_mem(h, rc, what + " the next call on that communicator:", at);
  h.check(setup_sends == before, what + " the next call sends no set-up message (no sweep), sent " + std::to_string(setup_sends - before));
  if (point == "grid-record-room" && h.rank == at && rc != MPI_SUCCESS)  // worded as the earlier failure, not as this call's
    h.check(contains(Cart_error_message(), "an earlier grid construction on this communicator failed"),
            what + " the next call's message on rank " + std::to_string(at) + ": '" + Cart_error_message() + "'");
  std::vector<int> send(10, h.rank), recv(10, -1);
  Cart_Request req = CART_REQUEST_NULL;
  rc = Cart_graph_neighbor_alltoall_init(send.data(), 5, MPI_INT, recv.data(), 5, MPI_INT, g, MPI_INFO_NULL, &req);
  expect_no_mem(h, rc, what + " a grid alltoall init on that communicator:", at);
  h.check(req == CART_REQUEST_NULL, what + " the init makes no request");
  if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  MPI_Comm_free(&g);
}

// A forced-grid alltoall init on g, started twice with rank-dependent data (block j to the
// out-neighbour r + 1 + j, so block j arrives from src[j]): whether it succeeded and every
// block arrived.
bool init_delivers(Harness& h, MPI_Comm g, const int src[2], int salt) {
  const int m = 5;
  std::vector<int> send(2 * m), recv(2 * m, -1);
  Cart_Request req = CART_REQUEST_NULL;
  bool ok = Cart_graph_neighbor_alltoall_init(send.data(), m, MPI_INT, recv.data(), m, MPI_INT, g, MPI_INFO_NULL, &req) == MPI_SUCCESS &&
            req != CART_REQUEST_NULL;
  for (int start = 0; start < 2 && ok; ++start) {
    for (int i = 0; i < 2 * m; ++i) send[i] = value(h.rank, i / m, i % m, salt + start);
    std::fill(recv.begin(), recv.end(), -1);
    ok = Cart_start(&req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS;
    for (int i = 0; i < 2 * m && ok; ++i) ok = recv[i] == value(src[i / m], i / m, i % m, salt + start);
  }
  if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  return ok;
}

// grid-record-room on rank `at` in a forced-grid persistent init (an agreement follows the
// construction, no sweep; `v_form`: an alltoallv init, agreed before its size pass): every rank MPI_ERR_NO_MEM, and every rank forgets that construction
// (rank `at` its pending bare verdict, the others their grid: GraphComm::drop_grid). Then, with
// memory back, on that communicator:
// - `then_init`: a second forced-grid init constructs again and succeeds on every rank, and its
//   exchange delivers; a blocking allgather after it sends no set-up message (vouched) and delivers.
// - otherwise a blocking allgather constructs again, sweeps and delivers; the next sends no
//   set-up message and delivers.
// Before, rank `at` kept its class pending: every later init failed on every rank, and the first
// blocking call's sweep made the failure permanent everywhere.
void init_record_fails(Harness& h, int at, bool then_init, bool v_form) {
  const std::string what = std::string(v_form ? "grid alltoallv init" : "grid alltoall init") + ", grid-record-room on rank " +
                           std::to_string(at) + ", then " + (then_init ? "a grid alltoall init:" : "blocking allgathers:");
  int src[2];
  MPI_Comm g = grid_ring(h, src);
  if (g == MPI_COMM_NULL) return;
  expect_no_mem(h, failing_init(h, g, "grid-record-room", at, v_form), what + " the init:", at);
  long before = setup_sends;
  if (then_init) {
    h.check(init_delivers(h, g, src, 1), what + " the second init succeeds and delivers");
    h.check(setup_sends > before, what + " the second init constructs again (sends set-up messages)");
  }
  bool delivered = false;
  for (int salt = 3; salt <= 4; ++salt) {
    before = setup_sends;
    const int rc = run_call(h, g, src, Call::kAllgather, false, salt, &delivered);
    h.check(rc == MPI_SUCCESS && delivered, what + " blocking allgather " + std::to_string(salt - 2) + " delivers, got " +
                                                std::to_string(rc) + (rc == MPI_SUCCESS ? "" : std::string(" '") + Cart_error_message() + "'"));
    const bool sweeps = !then_init && salt == 3;  // the first call after the failed init constructs and sweeps
    h.check(sweeps ? setup_sends > before : setup_sends == before,
            what + " blocking allgather " + std::to_string(salt - 2) + (sweeps ? " constructs and sweeps" : " sends no set-up message") +
                ", sent " + std::to_string(setup_sends - before));
  }
  MPI_Comm_free(&g);
}

// Rank `at`'s grid fails after its construction (pattern-grid: MPI_ERR_OTHER) and the last rank
// runs out of memory copying its kept failure after the sweep (grid-verdict-copy): every rank
// returns MPI_ERR_OTHER, the agreed class (before, that rank returned MPI_ERR_NO_MEM); the ranks
// that did not fail say another rank failed (not invalid arguments).
void verdict_copy_fails(Harness& h) {
  const int at = 0, copier = h.size - 1;
  const std::string what = "blocking allgather (grid), pattern-grid on rank 0, grid-verdict-copy on the last rank:";
  int src[2];
  MPI_Comm g = grid_ring(h, src);
  if (g == MPI_COMM_NULL) return;
  if (h.rank == at) setenv("CARTPLAN_TEST_FAIL", "pattern-grid", 1);
  if (h.rank == copier) setenv("CARTPLAN_TEST_FAIL", "grid-verdict-copy", 1);
  bool delivered = false;
  const int rc = run_call(h, g, src, Call::kAllgather, false, 1, &delivered);
  unsetenv("CARTPLAN_TEST_FAIL");
  const std::string msg = rc == MPI_SUCCESS ? "" : Cart_error_message();
  h.check(error_class(rc) == MPI_ERR_OTHER, what + " every rank MPI_ERR_OTHER, got " + std::to_string(rc) + " '" + msg + "'");
  if (h.rank != at && h.rank != copier)
    h.check(contains(msg, "another rank failed in the grid construction or its verdict sweep"), what + " the others' message: '" + msg + "'");
  MPI_Comm_free(&g);
}

// A successful forced-grid alltoall init (its construction sends set-up messages; its agreement
// vouches for the grid), then blocking allgathers on that communicator: no set-up message, no
// sweep, and rank-dependent data. Without the vouching the first call would sweep
// (sum(dims[k] - 1) words from each rank).
void agreed_then_call(Harness& h) {
  const std::string what = "a successful grid alltoall init, then a blocking allgather:";
  int src[2];
  MPI_Comm g = grid_ring(h, src);
  if (g == MPI_COMM_NULL) return;
  std::vector<int> send(10, h.rank), recv(10, -1);
  Cart_Request req = CART_REQUEST_NULL;
  const long before_init = setup_sends;
  const int rc = Cart_graph_neighbor_alltoall_init(send.data(), 5, MPI_INT, recv.data(), 5, MPI_INT, g, MPI_INFO_NULL, &req);
  h.check(rc == MPI_SUCCESS && req != CART_REQUEST_NULL, what + " the init succeeds");
  h.check(setup_sends > before_init, what + " the init's grid construction sends set-up messages (the count sees them)");
  if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  const long before_calls = setup_sends;
  for (int salt = 1; salt <= 2; ++salt) {
    bool delivered = false;
    const int call_rc = run_call(h, g, src, Call::kAllgather, false, salt, &delivered);
    h.check(call_rc == MPI_SUCCESS && delivered, what + " call " + std::to_string(salt) + " delivers");
  }
  h.check(setup_sends == before_calls,
          what + " the calls send no set-up message (no sweep), sent " + std::to_string(setup_sends - before_calls));
  MPI_Comm_free(&g);
}

// A first forced-grid blocking allgather on a new communicator (construction and sweep succeed):
// no operator new on any rank from the sweep's first word sent to its last word received
// (sum(dims[k] - 1) of them, dims the balanced 2-D grid, as MPI_Dims_create makes it), so
// running out of memory cannot stop a rank half-way through the sweep; and the call delivers.
void sweep_allocates_nothing(Harness& h) {
  const std::string what = "a first forced-grid blocking allgather:";
  int src[2];
  MPI_Comm g = grid_ring(h, src);
  if (g == MPI_COMM_NULL) return;
  int dims[2] = {0, 0};
  MPI_Dims_create(h.size, 2, dims);
  sweep_words = (dims[0] - 1) + (dims[1] - 1);
  sweep_sent = sweep_received = early_words = counted_news = 0;
  bool delivered = false;
  watch_sweep = true;
  const int rc = run_call(h, g, src, Call::kAllgather, false, 1, &delivered);
  watch_sweep = false;
  const bool left_open = counting;
  counting = false;
  h.check(rc == MPI_SUCCESS && delivered, what + " delivers");
  h.check(!left_open && sweep_sent == sweep_words && sweep_received + early_words == sweep_words,
          what + " the sweep sends " + std::to_string(sweep_words) + " words and receives them from their senders by name: sent " +
              std::to_string(sweep_sent) + ", received " + std::to_string(sweep_received) + " (and " + std::to_string(early_words) +
              " during the construction)" + (left_open ? ", window left open" : ""));
  h.check(counted_news == 0, what + " no allocation during the sweep, counted " + std::to_string(counted_news));
  MPI_Comm_free(&g);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const char* which = std::getenv("GRID_CALL_FAIL_CASE");  // one case only, for a before/after run
  auto runs = [&](const std::string& name) { return !which || name == which; };
  for (int at : {0, h.size - 1})
    for (Call call : {Call::kAllgather, Call::kAlltoallv})
      for (bool nonblocking : {false, true})
        if (runs(std::string(nonblocking ? "nonblocking-" : "blocking-") + (call == Call::kAllgather ? "allgather" : "alltoallv")))
          call_fails(h, call, nonblocking, at);
  for (int at : {0, h.size - 1})
    if (runs("init-then-call")) init_then_call(h, at);
  for (int at : {0, h.size - 1})
    for (bool nonblocking : {false, true})
      if (runs("room-fails")) kept_failure(h, "grid-sweep-room", nonblocking, at);
  for (int at : {0, h.size - 1})
    for (bool nonblocking : {false, true})
      if (runs("record-fails")) kept_failure(h, "grid-record-room", nonblocking, at);
  for (int at : {0, h.size - 1})
    for (bool then_init : {true, false})
      for (bool v_form : {false, true})
        if (runs("init-record-fails")) init_record_fails(h, at, then_init, v_form);
  if (runs("verdict-copy")) verdict_copy_fails(h);
  if (runs("agreed-then-call")) agreed_then_call(h);
  if (runs("sweep-allocations")) sweep_allocates_nothing(h);
  return h.finish("grid_call_fail_test");
}
