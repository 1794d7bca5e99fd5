// MPI test of bad input to the graph collectives: every case returns its MPI error class (with
// MPI_ERRORS_RETURN) and a message, never crashes or hangs, and a correct call afterwards still
// delivers the right data. Local errors (blocking, non-blocking) are made on every rank; init's
// agreement is checked with a bad argument on rank 0 only, which every rank must report; a
// failure injected on the last rank while auto's price table is agreed (CARTPLAN_TEST_FAIL)
// must be an error on every rank, not a hang; a failed pattern construction is kept, never
// retried by one rank alone (a forced grid's failed init is retried by every rank, and the grid
// constructed again delivers); a plain MPI graph listing MPI_PROC_NULL (on every rank, or rank 0 only) is
// MPI_ERR_RANK on every rank.
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/graph_algorithm_info.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;

// A ring with both directions and a self edge: sources {left, right, me}, destinations
// {right, left, me} (at np 2 left == right: parallel edges).
struct Ring {
  std::vector<int> in, out;
  MPI_Comm comm = MPI_COMM_NULL;
};

Ring make_ring(Harness& h, const char* algo, bool checking = false) {
  Ring r;
  const int left = (h.rank + h.size - 1) % h.size, right = (h.rank + 1) % h.size;
  r.in = {left, right, h.rank};
  r.out = {right, left, h.rank};
  MPI_Info info;
  MPI_Info_create(&info);
  cartplan::mpitest::set_graph_algorithm(info, algo);
  MPI_Info_set(info, "cartplan_theta", "1");
  if (checking) MPI_Info_set(info, "cartplan_check", "collective");
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, r.in.data(), MPI_UNWEIGHTED, 3, r.out.data(), MPI_UNWEIGHTED, info, 0, &r.comm);
  MPI_Info_free(&info);
  MPI_Comm_set_errhandler(r.comm, MPI_ERRORS_RETURN);
  return r;
}

void expect(Harness& h, int rc, int cls, const std::string& what) {
  int got = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &got);
  h.check(got == cls, what + ": expected class " + std::to_string(cls) + ", got " + std::to_string(got) + " (" + Cart_error_message() + ")");
  if (rc != MPI_SUCCESS) h.check(std::strlen(Cart_error_message()) > 0, what + ": an error message");
}

// After an error a correct call must still work (nothing stale left on the communicator).
void expect_working(Harness& h, MPI_Comm comm, const Ring& r, const std::string& what) {
  std::vector<int> send = {h.rank * 10 + 1}, recv(3, -1), ref(3, -2);
  MPI_Neighbor_allgather(send.data(), 1, MPI_INT, ref.data(), 1, MPI_INT, comm);
  const int rc = Cart_graph_neighbor_allgather(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, comm);
  h.check(rc == MPI_SUCCESS && recv == ref, what + ": a correct call afterwards");
  (void)r;
}

void local_errors(Harness& h, const char* algo) {
  Ring r = make_ring(h, algo);
  const std::string a = std::string(algo) + ": ";
  int sbuf[3] = {1, 2, 3}, rbuf[9] = {0};
  Cart_Request req = CART_REQUEST_NULL;
  expect(h, Cart_graph_neighbor_allgather(sbuf, -1, MPI_INT, rbuf, 1, MPI_INT, r.comm), MPI_ERR_COUNT, a + "negative sendcount");
  expect(h, Cart_graph_neighbor_alltoall(sbuf, 1, MPI_INT, rbuf, -3, MPI_INT, r.comm), MPI_ERR_COUNT, a + "negative recvcount");
  expect(h, Cart_graph_neighbor_allgather(sbuf, 1, MPI_DATATYPE_NULL, rbuf, 1, MPI_INT, r.comm), MPI_ERR_TYPE, a + "MPI_DATATYPE_NULL");
  expect(h, Cart_graph_neighbor_alltoall(MPI_IN_PLACE, 1, MPI_INT, rbuf, 1, MPI_INT, r.comm), MPI_ERR_ARG, a + "MPI_IN_PLACE");
  expect(h, Cart_graph_neighbor_allgather(nullptr, 1, MPI_INT, rbuf, 1, MPI_INT, r.comm), MPI_ERR_BUFFER, a + "NULL sendbuf");
  expect(h, Cart_graph_neighbor_allgather(sbuf, 1, MPI_INT, nullptr, 1, MPI_INT, r.comm), MPI_ERR_BUFFER, a + "NULL recvbuf");
  expect(h, Cart_graph_neighbor_allgather(sbuf, 2, MPI_INT, rbuf, 1, MPI_INT, r.comm), MPI_ERR_ARG, a + "send and recv block sizes differ");
  expect(h, Cart_graph_ineighbor_alltoall(sbuf, -1, MPI_INT, rbuf, 1, MPI_INT, r.comm, &req), MPI_ERR_COUNT, a + "non-blocking, negative count");
  h.check(req == CART_REQUEST_NULL, a + "no request after an error");
  expect(h, Cart_graph_ineighbor_allgather(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, r.comm, nullptr), MPI_ERR_REQUEST, a + "NULL request");
  expect_working(h, r.comm, r, a + "local errors");
  // Truncation found on arrival: rank 0 sends and expects 2 ints per block, the others 1. Rank
  // 0's neighbours get a message too large, rank 0 one too short; everybody finishes.
  const int n = h.rank == 0 ? 2 : 1;
  int big_s[2] = {5, 6}, big_r[6] = {0};
  const int rc = Cart_graph_neighbor_allgather(big_s, n, MPI_INT, big_r, n, MPI_INT, r.comm);
  // Linear: exactly rank 0 and its two neighbours see it. Combining schedules forward blocks,
  // so other ranks may see it too; rank 0 always does (its blocks are larger than everyone's).
  const bool touches_zero = h.size > 1 && (h.rank == 0 || h.rank == 1 || h.rank == h.size - 1);
  if (std::string(algo) == "linear" || h.rank == 0) {
    expect(h, rc, touches_zero ? MPI_ERR_TRUNCATE : MPI_SUCCESS, a + "block sizes that differ between ranks");
  } else {
    h.check(rc == MPI_SUCCESS || rc == MPI_ERR_TRUNCATE, a + "block sizes that differ between ranks: success or MPI_ERR_TRUNCATE");
  }
  expect_working(h, r.comm, r, a + "truncation");
  MPI_Comm_free(&r.comm);
}

// init agrees: a bad argument on rank 0 only fails init on every rank.
void init_errors(Harness& h) {
  Ring r = make_ring(h, "auto");
  int sbuf[3] = {1, 2, 3}, rbuf[9] = {0};
  Cart_Request req = CART_REQUEST_NULL;
  const bool zero = h.rank == 0;
  expect(h, Cart_graph_neighbor_allgather_init(sbuf, zero ? -1 : 1, MPI_INT, rbuf, 1, MPI_INT, r.comm, MPI_INFO_NULL, &req), MPI_ERR_COUNT,
         "init, negative count on rank 0");
  h.check(req == CART_REQUEST_NULL, "init: no request after an error");
  expect(h, Cart_graph_neighbor_alltoall_init(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, r.comm, MPI_INFO_NULL, zero ? nullptr : &req),
         MPI_ERR_REQUEST, "init, NULL request on rank 0");
  MPI_Info bad, differ;
  MPI_Info_create(&bad);
  MPI_Info_set(bad, "cartplan_algorithm", "bogus");
  expect(h, Cart_graph_neighbor_alltoall_init(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, r.comm, bad, &req), MPI_ERR_INFO_VALUE,
         "init, cartplan_algorithm = bogus");
  MPI_Info_set(bad, "cartplan_algorithm", "pairing");
  MPI_Info_set(bad, "cartplan_theta", "0");
  expect(h, Cart_graph_neighbor_alltoall_init(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, r.comm, bad, &req), MPI_ERR_INFO_VALUE,
         "init, cartplan_theta = 0");
  MPI_Info_set(bad, "cartplan_theta", "1");
  for (const char* dims : {"1", "0", "-3", "99", "31", "x", "4x", "bogus"}) {
    MPI_Info_set(bad, "cartplan_grid_dims", dims);
    expect(h, Cart_graph_neighbor_alltoall_init(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, r.comm, bad, &req), MPI_ERR_INFO_VALUE,
           std::string("init, cartplan_grid_dims = '") + dims + "'");
    h.check(std::strstr(Cart_error_message(), "cartplan_grid_dims") != nullptr, "init, bad cartplan_grid_dims: the message names the key");
    h.check(std::strstr(Cart_error_message(), "from 2 to 30") != nullptr, std::string("init, bad cartplan_grid_dims: the message says what is valid: ") + Cart_error_message());
  }
  MPI_Info_set(bad, "cartplan_grid_dims", "auto");
  MPI_Info_set(bad, "cartplan_progress", "sometimes");
  expect(h, Cart_graph_neighbor_alltoall_init(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, r.comm, bad, &req), MPI_ERR_INFO_VALUE,
         "init, cartplan_progress = sometimes");
  h.check(std::strstr(Cart_error_message(), "cartplan_progress = 'sometimes' (expected any or cartplan)") != nullptr,
          std::string("init, bad cartplan_progress: the message names the key and both values: ") + Cart_error_message());
  MPI_Info_create(&differ);
  MPI_Info_set(differ, "cartplan_algorithm", zero ? "cumulative" : "pairing");
  expect(h, Cart_graph_neighbor_allgather_init(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, r.comm, differ, &req),
         h.size > 1 ? MPI_ERR_INFO_VALUE : MPI_SUCCESS, "init, algorithms that differ between ranks");
  if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  MPI_Info_set(differ, "cartplan_algorithm", "grid");
  MPI_Info_set(differ, "cartplan_grid_dims", zero ? "3" : "2");
  expect(h, Cart_graph_neighbor_allgather_init(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, r.comm, differ, &req),
         h.size > 1 ? MPI_ERR_INFO_VALUE : MPI_SUCCESS, "init, grid dimensions that differ between ranks");
  if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  MPI_Info_free(&bad);
  MPI_Info_free(&differ);
  expect_working(h, r.comm, r, "init errors");
  MPI_Comm_free(&r.comm);
}

// Block sizes that differ between two separate rings (evens use 1 int, odds 2, as MPI allows):
// auto runs linear and delivers; a forced pairing is refused at init on every rank.
void differing_sizes(Harness& h) {
  if (h.size < 4 || h.size % 2) return;
  const int half = h.size / 2, me = h.rank / 2, base = h.rank % 2;
  const int left = ((me + half - 1) % half) * 2 + base, right = ((me + 1) % half) * 2 + base;
  int in[2] = {left, right}, out[2] = {right, left};
  MPI_Comm g;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, in, MPI_UNWEIGHTED, 2, out, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
  MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
  const int n = 1 + base;
  std::vector<int> s = {h.rank * 7, h.rank * 7 + 1}, mine(4, -1), ref(4, -1);
  MPI_Neighbor_allgather(s.data(), n, MPI_INT, ref.data(), n, MPI_INT, g);
  Cart_Request req = CART_REQUEST_NULL;
  expect(h, Cart_graph_neighbor_allgather_init(s.data(), n, MPI_INT, mine.data(), n, MPI_INT, g, MPI_INFO_NULL, &req), MPI_SUCCESS,
         "sizes differ between rings: auto");
  int algo = -1;
  if (req != CART_REQUEST_NULL) {
    Cart_graph_request_algorithm(req, &algo);
    h.check(algo == CART_GRAPH_LINEAR, "sizes differ between rings: auto runs linear");
    h.check(Cart_start(&req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS && mine == ref, "sizes differ between rings: data");
    Cart_request_free(&req);
  }
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", "pairing");
  expect(h, Cart_graph_neighbor_allgather_init(s.data(), n, MPI_INT, mine.data(), n, MPI_INT, g, info, &req), MPI_ERR_ARG,
         "sizes differ between rings: pairing refused");
  MPI_Info_free(&info);
  MPI_Comm_free(&g);
}

// The v forms: NULL count arrays; counts that differ between the two ends of an edge (rank 0
// expects 2 ints from each source, which send 1): MPI_ERR_TRUNCATE on rank 0 (blocking), on
// every rank at init of a combining schedule (its size pass agrees).
void v_errors(Harness& h, const char* algo) {
  Ring r = make_ring(h, algo);
  const std::string a = std::string(algo) + " v: ";
  int sbuf[6] = {1, 2, 3, 4, 5, 6}, rbuf[12] = {0};
  int ones[3] = {1, 1, 1}, displs[3] = {0, 2, 4}, rcounts[3] = {1, 1, 1};
  expect(h, Cart_graph_neighbor_alltoallv(sbuf, ones, displs, MPI_INT, rbuf, nullptr, displs, MPI_INT, r.comm), MPI_ERR_ARG,
         a + "NULL recvcounts");
  expect(h, Cart_graph_neighbor_allgatherv(sbuf, 1, MPI_INT, rbuf, rcounts, nullptr, MPI_INT, r.comm), MPI_ERR_ARG, a + "NULL displs");
  // Non-blocking: the pool's key must not read the arrays before they are checked.
  Cart_Request nb = CART_REQUEST_NULL;
  expect(h, Cart_graph_ineighbor_alltoallv(sbuf, ones, nullptr, MPI_INT, rbuf, rcounts, displs, MPI_INT, r.comm, &nb), MPI_ERR_ARG,
         a + "non-blocking, NULL sdispls");
  expect(h, Cart_graph_ineighbor_allgatherv(sbuf, 1, MPI_INT, rbuf, nullptr, displs, MPI_INT, r.comm, &nb), MPI_ERR_ARG,
         a + "non-blocking, NULL recvcounts");
  ones[1] = -1;
  expect(h, Cart_graph_neighbor_alltoallv(sbuf, ones, displs, MPI_INT, rbuf, rcounts, displs, MPI_INT, r.comm), MPI_ERR_COUNT,
         a + "negative sendcounts[1]");
  ones[1] = 1;
  if (h.rank == 0) rcounts[0] = rcounts[1] = 2;  // the self edge (block 2) stays 1: its local copy needs equal sizes
  const int rc = Cart_graph_neighbor_alltoallv(sbuf, ones, displs, MPI_INT, rbuf, rcounts, displs, MPI_INT, r.comm);
  if (h.size == 1) {
    expect(h, rc, MPI_ERR_TRUNCATE, a + "counts that differ between the ends of an edge (np 1: the self edges)");
  } else if (h.rank == 0) {
    expect(h, rc, MPI_ERR_TRUNCATE, a + "counts that differ between the ends of an edge");
  } else {
    h.check(rc == MPI_SUCCESS || rc == MPI_ERR_TRUNCATE, a + "differing counts: success or MPI_ERR_TRUNCATE elsewhere");
  }
  expect_working(h, r.comm, r, a + "after differing counts");
  if (std::string(algo) == "pairing" || std::string(algo) == "cumulative") {
    Cart_Request req = CART_REQUEST_NULL;
    expect(h, Cart_graph_neighbor_alltoallv_init(sbuf, ones, displs, MPI_INT, rbuf, rcounts, displs, MPI_INT, r.comm, MPI_INFO_NULL, &req),
           MPI_ERR_TRUNCATE, a + "init with differing counts fails on every rank");
    h.check(req == CART_REQUEST_NULL, a + "no request after a failed init");
  }
  MPI_Comm_free(&r.comm);
}

// The w form: per-edge datatypes and byte displacements. A bad type names its edge; a bad
// argument on rank 0 only fails init on every rank; counts that differ between the ends of an
// edge are MPI_ERR_TRUNCATE on the receiving rank, as for alltoallv.
void w_errors(Harness& h, const char* algo) {
  Ring r = make_ring(h, algo);
  const std::string a = std::string(algo) + " w: ";
  int sbuf[6] = {1, 2, 3, 4, 5, 6}, rbuf[12] = {0};
  int ones[3] = {1, 1, 1}, rcounts[3] = {1, 1, 1};
  const MPI_Aint displs[3] = {0, 8, 16};
  MPI_Datatype ints[3] = {MPI_INT, MPI_INT, MPI_INT}, bad[3] = {MPI_INT, MPI_DATATYPE_NULL, MPI_INT};
  expect(h, Cart_graph_neighbor_alltoallw(sbuf, ones, displs, bad, rbuf, rcounts, displs, ints, r.comm), MPI_ERR_TYPE,
         a + "sendtypes[1] is MPI_DATATYPE_NULL");
  h.check(std::string(Cart_error_message()).find("sendtypes[1]") != std::string::npos, a + "the message names sendtypes[1]");
  expect(h, Cart_graph_neighbor_alltoallw(sbuf, ones, displs, ints, rbuf, rcounts, displs, nullptr, r.comm), MPI_ERR_ARG,
         a + "NULL recvtypes");
  rcounts[2] = -1;
  Cart_Request req = CART_REQUEST_NULL;
  expect(h, Cart_graph_ineighbor_alltoallw(sbuf, ones, displs, ints, rbuf, rcounts, displs, ints, r.comm, &req), MPI_ERR_COUNT,
         a + "negative recvcounts[2]");
  h.check(req == CART_REQUEST_NULL, a + "no request after an error");
  rcounts[2] = 1;
  expect(h, Cart_graph_neighbor_alltoallw_init(sbuf, ones, displs, h.rank == 0 ? bad : ints, rbuf, rcounts, displs, ints, r.comm,
                                               MPI_INFO_NULL, &req),
         MPI_ERR_TYPE, a + "init, MPI_DATATYPE_NULL on rank 0 only");
  h.check(req == CART_REQUEST_NULL, a + "no request after a failed init");
  if (h.rank == 0) rcounts[0] = rcounts[1] = 2;  // the self edge (block 2) stays 1
  const int rc = Cart_graph_neighbor_alltoallw(sbuf, ones, displs, ints, rbuf, rcounts, displs, ints, r.comm);
  if (h.rank == 0 || h.size == 1) {
    expect(h, rc, MPI_ERR_TRUNCATE, a + "counts that differ between the ends of an edge");
  } else {
    h.check(rc == MPI_SUCCESS || rc == MPI_ERR_TRUNCATE, a + "differing counts: success or MPI_ERR_TRUNCATE elsewhere");
  }
  expect_working(h, r.comm, r, a + "after the w errors");
  MPI_Comm_free(&r.comm);
}

// Checking mode (Info cartplan_check=collective at the graph's creation): a bad argument on rank 0
// only fails the call on every rank with rank 0's class (the others name another rank), in
// blocking and non-blocking, uniform, v and w calls; in the default mode rank 0's peers would wait
// for its messages. Then a pattern construction failing on the last rank only
// (CARTPLAN_TEST_FAIL=pattern, forced pairing or cumulative): the default mode leaves the other
// ranks waiting in the exchange (docs/graphs-results.md, "What is not done"); here every call
// fails on every rank, again after the failure is no longer injected (the failing rank keeps it).
void checking_mode(Harness& h, const char* algo) {
  Ring r = make_ring(h, algo, true);
  const std::string a = std::string(algo) + " checking mode: ";
  const bool bad = h.rank == 0;
  int sbuf[6] = {1, 2, 3, 4, 5, 6}, rbuf[12] = {0};
  int ones[3] = {1, 1, 1}, displs[3] = {0, 2, 4}, negative[3] = {1, -1, 1};
  const MPI_Aint bytes[3] = {0, 8, 16};
  MPI_Datatype ints[3] = {MPI_INT, MPI_INT, MPI_INT}, null_type[3] = {MPI_INT, MPI_DATATYPE_NULL, MPI_INT};
  auto everywhere = [&](int rc, int cls, const std::string& what) {
    expect(h, rc, cls, a + what);
    h.check(bad || std::string(Cart_error_message()).find("another rank") != std::string::npos,
            a + what + ": the other ranks name another rank (" + Cart_error_message() + ")");
  };
  everywhere(Cart_graph_neighbor_allgather(sbuf, bad ? -1 : 1, MPI_INT, rbuf, 1, MPI_INT, r.comm), MPI_ERR_COUNT,
             "blocking allgather, negative sendcount on rank 0");
  Cart_Request req = CART_REQUEST_NULL;
  everywhere(Cart_graph_ineighbor_alltoall(sbuf, 1, bad ? MPI_DATATYPE_NULL : MPI_INT, rbuf, 1, MPI_INT, r.comm, &req), MPI_ERR_TYPE,
             "non-blocking alltoall, MPI_DATATYPE_NULL on rank 0");
  h.check(req == CART_REQUEST_NULL, a + "no request after an agreed error");
  everywhere(Cart_graph_neighbor_alltoallv(sbuf, ones, displs, MPI_INT, rbuf, bad ? nullptr : ones, displs, MPI_INT, r.comm), MPI_ERR_ARG,
             "blocking alltoallv, NULL recvcounts on rank 0");
  everywhere(Cart_graph_ineighbor_allgatherv(sbuf, 1, MPI_INT, rbuf, bad ? negative : ones, displs, MPI_INT, r.comm, &req), MPI_ERR_COUNT,
             "non-blocking allgatherv, negative recvcounts[1] on rank 0");
  everywhere(Cart_graph_neighbor_alltoallw(sbuf, ones, bytes, bad ? null_type : ints, rbuf, ones, bytes, ints, r.comm), MPI_ERR_TYPE,
             "blocking alltoallw, sendtypes[1] MPI_DATATYPE_NULL on rank 0");
  // Block sizes that are right on each rank but differ between ranks (2 ints on rank 0, 1 elsewhere).
  int big[6] = {7, 8, 9, 10, 11, 12};
  if (h.size > 1) {
    expect(h, Cart_graph_neighbor_allgather(big, bad ? 2 : 1, MPI_INT, rbuf, bad ? 2 : 1, MPI_INT, r.comm), MPI_ERR_TRUNCATE,
           a + "blocking allgather, 2 ints per block on rank 0 and 1 elsewhere");
    h.check(std::string(Cart_error_message()).find("block sizes differ between ranks (4 to 8 bytes)") != std::string::npos,
            a + "the size agreement's message on every rank (" + Cart_error_message() + ")");
    expect(h, Cart_graph_ineighbor_alltoall(big, bad ? 2 : 1, MPI_INT, rbuf, bad ? 2 : 1, MPI_INT, r.comm, &req), MPI_ERR_TRUNCATE,
           a + "non-blocking alltoall, sizes that differ between ranks");
    h.check(req == CART_REQUEST_NULL, a + "no request after the size agreement failed");
  }
  expect_working(h, r.comm, r, a + "after the agreed errors");
  {  // a correct allgatherv after the failed one (its chain dropped)
    int counts_in[3] = {1, 1, 1}, at[3] = {0, 1, 2}, ref[3] = {-1, -1, -1}, got[3] = {-2, -2, -2};
    MPI_Neighbor_allgatherv(sbuf, 1, MPI_INT, ref, counts_in, at, MPI_INT, r.comm);
    std::fill(got, got + 3, -2);
    const int rc = Cart_graph_ineighbor_allgatherv(sbuf, 1, MPI_INT, got, counts_in, at, MPI_INT, r.comm, &req);
    h.check(rc == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS && std::equal(ref, ref + 3, got), a + "a correct non-blocking allgatherv afterwards");
  }
  int v_ref[6] = {0};
  MPI_Neighbor_alltoallv(sbuf, ones, displs, MPI_INT, v_ref, ones, displs, MPI_INT, r.comm);
  std::fill(rbuf, rbuf + 6, 0);
  const int rc = Cart_graph_ineighbor_alltoallv(sbuf, ones, displs, MPI_INT, rbuf, ones, displs, MPI_INT, r.comm, &req);
  h.check(rc == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS && std::equal(v_ref, v_ref + 6, rbuf), a + "a correct non-blocking alltoallv afterwards");
  MPI_Comm_free(&r.comm);
  if (h.size < 2 || (std::string(algo) != "pairing" && std::string(algo) != "cumulative")) return;
  Ring one = make_ring(h, algo, true);
  const bool failing = h.rank == h.size - 1;
  for (int call = 0; call < 3; ++call) {
    const std::string what = a + "pattern failure on rank " + std::to_string(h.size - 1) + ", call " + std::to_string(call);
    if (failing && call == 0) setenv("CARTPLAN_TEST_FAIL", "pattern", 1);
    const int got = call < 2 ? Cart_graph_neighbor_allgather(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, one.comm)
                             : Cart_graph_ineighbor_alltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, one.comm, &req);
    unsetenv("CARTPLAN_TEST_FAIL");
    expect(h, got, MPI_ERR_OTHER, what + ": fails on every rank");
    if (failing) h.check(std::string(Cart_error_message()).find("CARTPLAN_TEST_FAIL=pattern") != std::string::npos, what + ": the failing rank names it");
  }
  MPI_Comm_free(&one.comm);
}

// A failure on one rank only while graph auto's price table is agreed (CARTPLAN_TEST_FAIL=pricing
// on the last rank, read at that one-time step of each communicator): every rank returns the
// error instead of waiting in the table's reduction for the rank that failed (run_mpi.sh's time
// limit turns a hang into a failure), in each form. The agreed failure is kept per theta: the
// next auto call on that communicator returns it again on every rank (even with the failure no
// longer injected) instead of agreeing again, a global collective per call; another
// communicator still delivers.
void pricing_failure(Harness& h) {
  const bool failing = h.rank == h.size - 1;
  for (int form = 0; form < 3; ++form) {
    Ring r = make_ring(h, "auto");
    const std::string what = "pricing failure on rank " + std::to_string(h.size - 1) + ", form " + std::to_string(form);
    int sbuf[1] = {h.rank}, rbuf[3] = {0};
    Cart_Request req = CART_REQUEST_NULL;
    if (failing) setenv("CARTPLAN_TEST_FAIL", "pricing", 1);
    int rc = MPI_SUCCESS;
    if (form == 0) rc = Cart_graph_neighbor_allgather(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, r.comm);
    if (form == 1) rc = Cart_graph_ineighbor_allgather(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, r.comm, &req);
    if (form == 2) rc = Cart_graph_neighbor_allgather_init(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, r.comm, MPI_INFO_NULL, &req);
    const std::string message = Cart_error_message();
    if (failing) unsetenv("CARTPLAN_TEST_FAIL");
    expect(h, rc, MPI_ERR_OTHER, what);
    h.check(!failing || message.find("CARTPLAN_TEST_FAIL") != std::string::npos, what + ": the failing rank names it (" + message + ")");
    h.check(failing || message.find("another rank") != std::string::npos, what + ": the other ranks name another rank (" + message + ")");
    h.check(req == CART_REQUEST_NULL, what + ": no request");
    // Kept per theta and candidate list: the same form again gets it. (A persistent init's auto
    // constructs the grids, a blocking call's seed 003's pair: another table, agreed once.)
    const int again = form == 2 ? Cart_graph_neighbor_allgather_init(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, r.comm, MPI_INFO_NULL, &req)
                                : Cart_graph_neighbor_allgather(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, r.comm);
    if (req != CART_REQUEST_NULL) Cart_request_free(&req);
    expect(h, again, MPI_ERR_OTHER, what + ": kept, not agreed again");
    MPI_Comm_free(&r.comm);
    Ring fresh = make_ring(h, "auto");
    expect_working(h, fresh.comm, fresh, what + ", another communicator");
    MPI_Comm_free(&fresh.comm);
  }
}

// Persistent allgather init on `r` with Info cartplan_theta = theta (0: the communicator's).
int allgather_init(const Ring& r, int theta, int* sbuf, int* rbuf, Cart_Request* req, const char* algo = nullptr) {
  MPI_Info info = MPI_INFO_NULL;
  if (theta > 0 || algo) MPI_Info_create(&info);
  if (theta > 0) MPI_Info_set(info, "cartplan_theta", std::to_string(theta).c_str());
  if (algo) MPI_Info_set(info, "cartplan_algorithm", algo);
  const int rc = Cart_graph_neighbor_allgather_init(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, r.comm, info, req);
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  return rc;
}

// A persistent allgather with a pattern of another theta (pairing), started once: every rank
// constructs it (the set-up channel is still in step after the failed construction) and it delivers.
void other_theta_works(Harness& h, const Ring& r, const std::string& what) {
  int sbuf[1] = {h.rank * 10 + 7}, rbuf[3] = {-1, -1, -1}, ref[3] = {-2, -2, -2};
  MPI_Neighbor_allgather(sbuf, 1, MPI_INT, ref, 1, MPI_INT, r.comm);
  Cart_Request req = CART_REQUEST_NULL;
  int rc = allgather_init(r, 2, sbuf, rbuf, &req, "pairing");
  if (rc == MPI_SUCCESS) rc = Cart_start(&req);
  if (rc == MPI_SUCCESS) rc = Cart_wait(&req);
  h.check(rc == MPI_SUCCESS && std::equal(rbuf, rbuf + 3, ref), what + ": pairing with theta 2 delivers (" + Cart_error_message() + ")");
  if (req != CART_REQUEST_NULL) Cart_request_free(&req);
}

// Starts a persistent allgather on `r` (rank-dependent sbuf[0]) and checks that it delivers what
// MPI_Neighbor_allgather does, twice (with new data the second time).
void delivers(Harness& h, const Ring& r, Cart_Request req, int* sbuf, int* rbuf, const std::string& what) {
  for (int round = 0; round < 2 && req != CART_REQUEST_NULL; ++round) {
    sbuf[0] = h.rank * 100 + round + 1;
    int ref[3] = {-2, -2, -2};
    MPI_Neighbor_allgather(sbuf, 1, MPI_INT, ref, 1, MPI_INT, r.comm);
    std::fill(rbuf, rbuf + 3, -1);
    int rc = Cart_start(&req);
    if (rc == MPI_SUCCESS) rc = Cart_wait(&req);
    h.check(rc == MPI_SUCCESS && std::equal(rbuf, rbuf + 3, ref), what + " delivers, round " + std::to_string(round) + " (" + Cart_error_message() + ")");
  }
}

// A failed pattern construction (CARTPLAN_TEST_FAIL=pattern, injected after the construction's
// messages) is final, like a success: later calls that need the pattern return the same error
// without constructing again, even once the failure is no longer injected. First on every
// rank (blocking calls), then on the last rank only (persistent init, forced pairing: the other
// ranks built their requests and never start them): there a second construction on the failing
// rank alone would wait forever for peers that kept their pattern (run_mpi.sh's time limit turns
// that hang into a failure). Afterwards a pattern of another theta is constructed by every rank
// and delivers. For pairing and for grid (whose construction involves every rank). A forced
// grid's init is the exception: its failed agreement makes every rank forget the construction
// (GraphComm::drop_grid), so the second init constructs again on every rank and succeeds.
void pattern_failure(Harness& h, const char* algo) {
  Ring r = make_ring(h, algo);
  int sbuf[1] = {h.rank}, rbuf[3] = {0};
  setenv("CARTPLAN_TEST_FAIL", "pattern", 1);
  expect(h, Cart_graph_neighbor_allgather(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, r.comm), MPI_ERR_OTHER, "pattern failure everywhere");
  unsetenv("CARTPLAN_TEST_FAIL");
  const int rc = Cart_graph_neighbor_allgather(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, r.comm);
  expect(h, rc, MPI_ERR_OTHER, "pattern failure everywhere: kept, not constructed again");
  h.check(rc == MPI_SUCCESS || std::string(Cart_error_message()).find("CARTPLAN_TEST_FAIL=pattern") != std::string::npos,
          "pattern failure everywhere: the kept error is the construction's");
  other_theta_works(h, r, "pattern failure everywhere");
  MPI_Comm_free(&r.comm);
  if (h.size < 2) return;
  const bool failing = h.rank == h.size - 1;
  const bool grid = std::string(algo).rfind("grid", 0) == 0;
  Ring one = make_ring(h, algo);
  for (int attempt = 0; attempt < 2; ++attempt) {
    const std::string what = std::string(algo) + ": pattern failure on rank " + std::to_string(h.size - 1) + ", init " + std::to_string(attempt);
    if (failing && attempt == 0) setenv("CARTPLAN_TEST_FAIL", "pattern", 1);
    Cart_Request req = CART_REQUEST_NULL;
    const int init_rc = allgather_init(one, 0, sbuf, rbuf, &req);
    const std::string message = Cart_error_message();
    unsetenv("CARTPLAN_TEST_FAIL");
    if (grid && attempt == 1) {  // the failed init left no grid behind: every rank constructed again
      h.check(init_rc == MPI_SUCCESS && req != CART_REQUEST_NULL, what + ": constructed again on every rank, succeeds (" + message + ")");
      delivers(h, one, req, sbuf, rbuf, what + ": the grid constructed again");
    } else if (failing) {
      expect(h, init_rc, MPI_ERR_OTHER, what);
      h.check(message.find("CARTPLAN_TEST_FAIL=pattern") != std::string::npos, what + ": the failing rank names it (" + message + ")");
    }
    if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  }
  other_theta_works(h, one, "pattern failure on one rank");
  MPI_Comm_free(&one.comm);
}

// A plain MPI distributed graph that lists MPI_PROC_NULL (Open MPI accepts it), on every rank
// and then on rank 0 only: the first graph collective is MPI_ERR_RANK on every rank (the state's
// creation is agreed), with auto (whose price table is an agreement) and linear, never a hang;
// a second call fails alike (nothing attached). The calls are blocking, or persistent inits
// (`init`: there the creation is agreed inside init's own agreement).
void proc_null_errors(Harness& h, bool init) {
  const int left = (h.rank + h.size - 1) % h.size, right = (h.rank + 1) % h.size;
  for (const bool rank0_only : {false, true}) {
    for (const char* algo : {"auto", "linear"}) {
      const bool listed = !rank0_only || h.rank == 0;
      const int degree = listed ? 2 : 1, in[2] = {left, MPI_PROC_NULL}, out[2] = {right, MPI_PROC_NULL};
      MPI_Info info;
      MPI_Info_create(&info);
      MPI_Info_set(info, "cartplan_algorithm", algo);
      MPI_Comm g = MPI_COMM_NULL;
      MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, degree, in, MPI_UNWEIGHTED, degree, out, MPI_UNWEIGHTED, info, 0, &g);
      MPI_Info_free(&info);
      MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
      const std::string what = std::string(rank0_only ? "MPI_PROC_NULL listed on rank 0 only" : "MPI_PROC_NULL listed everywhere") +
                               " (" + algo + (init ? ", persistent init)" : ")");
      int send = h.rank, recv[2] = {-1, -1};
      for (int call = 0; call < 2; ++call) {
        Cart_Request req = CART_REQUEST_NULL;
        const int rc = init ? Cart_graph_neighbor_allgather_init(&send, 1, MPI_INT, recv, 1, MPI_INT, g, MPI_INFO_NULL, &req)
                            : Cart_graph_neighbor_allgather(&send, 1, MPI_INT, recv, 1, MPI_INT, g);
        expect(h, rc, MPI_ERR_RANK, what + ", call " + std::to_string(call));
        h.check(req == CART_REQUEST_NULL, what + ": no request");
        if (listed) h.check(std::strstr(Cart_error_message(), "MPI_PROC_NULL") != nullptr, what + ": the message names MPI_PROC_NULL");
      }
      MPI_Comm_free(&g);
    }
  }
}

void communicator_errors(Harness& h) {
  int s = 1, r = 0;
  expect(h, Cart_graph_neighbor_allgather(&s, 1, MPI_INT, &r, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TOPOLOGY, "MPI_COMM_WORLD (no graph)");
  Cart_Request req = CART_REQUEST_NULL;
  expect(h, Cart_graph_neighbor_allgather_init(&s, 1, MPI_INT, &r, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &req), MPI_ERR_TOPOLOGY,
         "MPI_COMM_WORLD (no graph), persistent init");
  h.check(req == CART_REQUEST_NULL, "MPI_COMM_WORLD (no graph), persistent init: no request");
  expect(h, Cart_graph_neighbor_alltoall_init(&s, 1, MPI_INT, &r, 1, MPI_INT, MPI_COMM_NULL, MPI_INFO_NULL, &req), MPI_ERR_COMM,
         "MPI_COMM_NULL, persistent init");
  expect(h, Cart_graph_neighbor_alltoall(&s, 1, MPI_INT, &r, 1, MPI_INT, MPI_COMM_NULL), MPI_ERR_COMM, "MPI_COMM_NULL");
  int algo = 0;
  expect(h, Cart_graph_request_algorithm(CART_REQUEST_NULL, &algo), MPI_ERR_ARG, "algorithm of a NULL request");
  expect(h, Cart_graph_request_grid_dims(CART_REQUEST_NULL, &algo), MPI_ERR_ARG, "grid dimensions of a NULL request");
}

// A ring (one in- and one out-neighbour per rank) whose creation Info sets `keys` to `values`.
using InfoKeys = std::vector<std::pair<const char*, const char*>>;

MPI_Comm ring_with_info(const Harness& h, const InfoKeys& keys) {
  const int left = (h.rank + h.size - 1) % h.size, right = (h.rank + 1) % h.size;
  MPI_Info info;
  MPI_Info_create(&info);
  for (const auto& [key, value] : keys) MPI_Info_set(info, key, value);
  MPI_Comm g = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &right, MPI_UNWEIGHTED, info, 0, &g);
  MPI_Info_free(&info);
  MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
  return g;
}

// A bad cartplan_grid_dims in the graph's creation Info: the first graph collective (which
// reads it) fails on every rank with MPI_ERR_INFO_VALUE naming the key, and so does the next.
void creation_info_errors(Harness& h) {
  MPI_Comm g = ring_with_info(h, {{"cartplan_algorithm", "grid"}, {"cartplan_grid_dims", "99"}});
  int send = h.rank, recv = -1;
  for (int call = 0; call < 2; ++call) {
    expect(h, Cart_graph_neighbor_allgather(&send, 1, MPI_INT, &recv, 1, MPI_INT, g), MPI_ERR_INFO_VALUE,
           "creation Info cartplan_grid_dims = 99, call " + std::to_string(call));
    h.check(std::strstr(Cart_error_message(), "cartplan_grid_dims") != nullptr, "creation Info: the message names cartplan_grid_dims");
  }
  MPI_Comm_free(&g);
}

// Valid creation Info values that differ between ranks (rank 0 against the others): blocking
// and non-blocking calls construct the forced schedule (or auto's listed candidates,
// cartplan_auto_candidates) with their peers, so creation agrees on the values and the first
// graph collective fails on every rank, never a hang.
void creation_info_differs(Harness& h) {
  const bool zero = h.rank == 0;
  const std::vector<InfoKeys> cases = {{{"cartplan_algorithm", zero ? "pairing" : "grid"}},
                                       {{"cartplan_algorithm", "grid"}, {"cartplan_grid_dims", zero ? "3" : "2"}},
                                       {{"cartplan_theta", zero ? "2" : "3"}},
                                       {{"cartplan_auto_candidates", zero ? "auto" : "all"}},
                                       {{"cartplan_check", zero ? "collective" : "none"}}};
  for (const InfoKeys& keys : cases) {
    MPI_Comm g = ring_with_info(h, keys);
    int send = h.rank, recv = -1;
    expect(h, Cart_graph_neighbor_allgather(&send, 1, MPI_INT, &recv, 1, MPI_INT, g), MPI_ERR_INFO_VALUE,
           std::string("creation Info differing in ") + keys.back().first);
    h.check(std::strstr(Cart_error_message(), "different") != nullptr, "differing creation Info: the message says so");
    MPI_Comm_free(&g);
    // The same with a persistent init as the first graph collective: the creation's verdict
    // (agreed inside init's agreement) comes first, and nothing is attached.
    g = ring_with_info(h, keys);
    for (int call = 0; call < 2; ++call) {
      Cart_Request req = CART_REQUEST_NULL;
      expect(h, Cart_graph_neighbor_allgather_init(&send, 1, MPI_INT, &recv, 1, MPI_INT, g, MPI_INFO_NULL, &req), MPI_ERR_INFO_VALUE,
             std::string("creation Info differing in ") + keys.back().first + ", persistent init, call " + std::to_string(call));
      h.check(std::strstr(Cart_error_message(), "graph communicator's Info") != nullptr && req == CART_REQUEST_NULL,
              "differing creation Info, persistent init: the creation's message, no request");
    }
    MPI_Comm_free(&g);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  communicator_errors(h);
  creation_info_errors(h);
  if (h.size > 1) creation_info_differs(h);
  proc_null_errors(h, false);
  proc_null_errors(h, true);
  for (const char* algo : {"linear", "pairing", "cumulative", "auto"}) local_errors(h, algo);
  for (const char* algo : {"linear", "pairing", "cumulative", "auto"}) v_errors(h, algo);
  for (const char* algo : {"linear", "pairing", "cumulative", "auto"}) w_errors(h, algo);
  init_errors(h);
  differing_sizes(h);
  pricing_failure(h);
  for (const char* algo : {"pairing", "grid", "grid3"}) pattern_failure(h, algo);  // grid3: Info cartplan_grid_dims=3
  for (const char* algo : {"linear", "pairing", "cumulative", "grid", "auto"}) checking_mode(h, algo);
  return h.finish("graph_errors_test");
}
