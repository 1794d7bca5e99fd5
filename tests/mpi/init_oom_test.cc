// MPI test of persistent inits and creations running out of memory on one rank only, between
// or after their agreements: measuring mode's trial builds, before the trials' agreement
// (CARTPLAN_TEST_FAIL=measure-trials), the build of the exchange it keeps, after the trials
// (measure-rebuild), planning after init's first agreement (plan-after-agreement: a Cartesian
// alltoall init measuring or not, and an allreduce init), and Cart_neighborhood_create's checks
// before its agreement (create-check); a graph alltoall init's block layout before its agreement
// (graph-buffers); Cartesian, graph and halo exchange inits. Then, with the failure on rank 0
// and on the last rank: a model-mode halo init's build (halo-init-build), Cart_halo_create's
// local steps (halo-create-local), Cart_neighborhood_create's state (create-local), a graph grid
// construction before and between its rounds (grid-construct, grid-construct-partway; forced grid
// and auto alltoall, and forced-grid alltoallv: its size pass waits for the pattern's agreement),
// and a measuring trial's exchange failing (measure-trial-run: MPI_ERR_OTHER). Every rank must
// return the same error class and no request, halo or communicator, nobody may hang (the run's
// time limit fails a hang), and a call afterwards delivers rank-dependent data.
#include <mpi.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::error_class;
using cartplan::mpitest::Harness;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Sets CARTPLAN_TEST_FAIL=step on rank `at` only while it lives.
struct FailOnRank {
  bool set;
  FailOnRank(const Harness& h, const char* step, int at = 0) : set(h.rank == at) {
    if (set) setenv("CARTPLAN_TEST_FAIL", step, 1);
  }
  ~FailOnRank() {
    if (set) unsetenv("CARTPLAN_TEST_FAIL");
  }
};
using FailOnRankZero = FailOnRank;

// What failed on rank `at` only: MPI_ERR_NO_MEM on every rank (rank at's message says out of
// memory, the others' another rank).
void expect_no_mem_code(Harness& h, int rc, const std::string& what, int at = 0) {
  const std::string msg = rc == MPI_SUCCESS ? "" : Cart_error_message();
  h.check(error_class(rc) == MPI_ERR_NO_MEM && contains(msg, h.rank == at ? "out of memory" : "another rank"),
          what + " out of memory on rank " + std::to_string(at) + " only: every rank MPI_ERR_NO_MEM, got " + std::to_string(rc) + " '" +
              msg + "'");
}

// The init that ran out of memory on rank `at`: MPI_ERR_NO_MEM on every rank, no request.
void expect_no_mem(Harness& h, int rc, Cart_Request req, const std::string& what, int at = 0) {
  expect_no_mem_code(h, rc, what, at);
  h.check(req == CART_REQUEST_NULL, what + " out of memory: no request");
}

int value(int rank, int block, int j, int salt) { return ((salt * 16 + rank) * 64 + block) * 32 + j; }

// A 2-D torus with the 3 x 3 box of offsets (the centre included), whose alltoall has several
// close candidates to measure.
MPI_Comm box_torus(Harness& h, std::vector<int>* sources) {
  int dims[2] = {0, 0}, periods[2] = {1, 1}, offs[18], n = 0;
  MPI_Dims_create(h.size, 2, dims);
  for (int a = -1; a <= 1; ++a)
    for (int b = -1; b <= 1; ++b) offs[n++] = a, offs[n++] = b;
  MPI_Comm comm = MPI_COMM_NULL;
  const int rc = Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, 9, offs, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &comm);
  h.check(rc == MPI_SUCCESS, "Cart_neighborhood_create");
  if (rc != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 2);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  sources->resize(9);
  std::vector<int> targets(9);
  Cart_neighbor_get(comm, 9, sources->data(), MPI_UNWEIGHTED, 9, targets.data(), MPI_UNWEIGHTED);
  return comm;
}

MPI_Info tune_info(bool measuring) {
  if (!measuring) return MPI_INFO_NULL;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_tune", "measure");
  return info;
}

void free_info(MPI_Info* info) {
  if (*info != MPI_INFO_NULL) MPI_Info_free(info);
}

// An alltoall init (measured or not), started twice with rank-dependent data: whether every
// block arrived.
bool alltoall_delivers(Harness& h, MPI_Comm comm, const std::vector<int>& sources, bool measuring) {
  const int m = 40;
  std::vector<int> send(9 * m), recv(9 * m, -1);
  MPI_Info info = tune_info(measuring);
  Cart_Request req = CART_REQUEST_NULL;
  bool ok = Cart_alltoall_init(send.data(), m, MPI_INT, recv.data(), m, MPI_INT, comm, info, &req) == MPI_SUCCESS;
  free_info(&info);
  for (int salt = 1; salt <= 2 && ok; ++salt) {
    for (int i = 0; i < 9 * m; ++i) send[i] = value(h.rank, i / m, i % m, salt);
    ok = Cart_start(&req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS;
    for (int i = 0; i < 9 * m && ok; ++i) ok = recv[i] == value(sources[i / m], i / m, i % m, salt);
  }
  if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  return ok;
}

void alltoall_out_of_memory(Harness& h, const char* step, bool measuring) {
  std::vector<int> sources;
  MPI_Comm comm = box_torus(h, &sources);
  const int m = 40;
  std::vector<int> send(9 * m, h.rank), recv(9 * m, -1);
  const std::string what = std::string(measuring ? "measured" : "model-mode") + " alltoall init, CARTPLAN_TEST_FAIL=" + step + " on rank 0:";
  MPI_Info info = tune_info(measuring);
  Cart_Request req = CART_REQUEST_NULL;
  int rc = MPI_SUCCESS;
  {
    FailOnRankZero fail(h, step);
    rc = Cart_alltoall_init(send.data(), m, MPI_INT, recv.data(), m, MPI_INT, comm, info, &req);
  }
  free_info(&info);
  expect_no_mem(h, rc, req, what);
  if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  h.check(alltoall_delivers(h, comm, sources, measuring), what + " an init afterwards delivers");
  MPI_Comm_free(&comm);
}

// An allreduce init (a reduction: settle_extended's planning) with plan-after-agreement on
// rank 0: every rank MPI_ERR_NO_MEM and no request; then an init sums the sources' values.
void allreduce_out_of_memory(Harness& h) {
  std::vector<int> sources;
  MPI_Comm comm = box_torus(h, &sources);
  const std::string what = "allreduce init, CARTPLAN_TEST_FAIL=plan-after-agreement on rank 0:";
  long long mine = 0, sum = -1;
  Cart_Request req = CART_REQUEST_NULL;
  int rc = MPI_SUCCESS;
  {
    FailOnRankZero fail(h, "plan-after-agreement");
    rc = Cart_allreduce_init(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, comm, MPI_INFO_NULL, &req);
  }
  expect_no_mem(h, rc, req, what);
  if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  bool ok = Cart_allreduce_init(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, comm, MPI_INFO_NULL, &req) == MPI_SUCCESS;
  for (int salt = 1; salt <= 2 && ok; ++salt) {
    mine = 1000LL * salt + h.rank;
    long long want = 0;
    for (int src : sources) want += 1000LL * salt + src;
    ok = Cart_start(&req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS && sum == want;
  }
  if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  h.check(ok, what + " an init afterwards sums the sources' values");
  MPI_Comm_free(&comm);
}

// Cart_neighborhood_create with create-check on rank 0 (its argument checks run out of memory
// before the creation's agreement): every rank MPI_ERR_NO_MEM and MPI_COMM_NULL; then a creation
// works and its alltoall init delivers.
void creation_out_of_memory(Harness& h) {
  int dims[2] = {0, 0}, periods[2] = {1, 1}, offs[4] = {1, 0, -1, 0};
  MPI_Dims_create(h.size, 2, dims);
  MPI_Comm comm = MPI_COMM_NULL;
  int rc = MPI_SUCCESS;
  {
    FailOnRankZero fail(h, "create-check");
    rc = Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, 2, offs, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &comm);
  }
  const std::string msg = rc == MPI_SUCCESS ? "" : Cart_error_message();
  h.check(error_class(rc) == MPI_ERR_NO_MEM && contains(msg, h.rank == 0 ? "out of memory" : "another rank"),
          "Cart_neighborhood_create, create-check on rank 0: every rank MPI_ERR_NO_MEM, got " + std::to_string(rc) + " '" + msg + "'");
  // The others say what happened there: not invalid arguments.
  if (h.rank != 0)
    h.check(contains(msg, "another rank ran out of memory in Cart_neighborhood_create") && !contains(msg, "invalid arguments"),
            "Cart_neighborhood_create, create-check on rank 0: the other ranks' message names running out of memory: '" + msg + "'");
  h.check(comm == MPI_COMM_NULL, "Cart_neighborhood_create out of memory: no communicator");
  if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  std::vector<int> sources;
  comm = box_torus(h, &sources);
  h.check(alltoall_delivers(h, comm, sources, false), "a creation after one out of memory: its alltoall init delivers");
  MPI_Comm_free(&comm);
}

// Cart_neighborhood_create with create-local on rank `at` (making the neighbourhood's state,
// before the description's agreement, runs out of memory): every rank MPI_ERR_NO_MEM and
// MPI_COMM_NULL; then a creation works and its alltoall init delivers.
void creation_state_out_of_memory(Harness& h, int at) {
  int dims[2] = {0, 0}, periods[2] = {1, 1}, offs[4] = {1, 0, -1, 0};
  MPI_Dims_create(h.size, 2, dims);
  MPI_Comm comm = MPI_COMM_NULL;
  int rc = MPI_SUCCESS;
  {
    FailOnRank fail(h, "create-local", at);
    rc = Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, 2, offs, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &comm);
  }
  const std::string what = "Cart_neighborhood_create, create-local on rank " + std::to_string(at) + ":";
  expect_no_mem_code(h, rc, what, at);
  h.check(comm == MPI_COMM_NULL, what + " no communicator");
  if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  std::vector<int> sources;
  comm = box_torus(h, &sources);
  h.check(alltoall_delivers(h, comm, sources, false), what + " a creation afterwards: its alltoall init delivers");
  MPI_Comm_free(&comm);
}

// A graph alltoall init on a ring (edges to r + 1 and r + 2) with graph-buffers on rank 0
// (laying out its blocks runs out of memory before init's agreement): every rank MPI_ERR_NO_MEM,
// no request; then an init delivers rank-dependent blocks.
void graph_out_of_memory(Harness& h) {
  const int p = h.size, r = h.rank;
  const int dst[2] = {(r + 1) % p, (r + 2) % p}, src[2] = {(r + p - 1) % p, (r + 2 * p - 2) % p};
  MPI_Comm g = MPI_COMM_NULL;
  h.check(Cart_graph_comm_create_adjacent(MPI_COMM_WORLD, 2, src, 2, dst, MPI_INFO_NULL, &g) == MPI_SUCCESS, "graph creation");
  if (g == MPI_COMM_NULL) return;
  MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
  const int m = 8;
  std::vector<int> send(2 * m), recv(2 * m, -1);
  Cart_Request req = CART_REQUEST_NULL;
  int rc = MPI_SUCCESS;
  {
    FailOnRankZero fail(h, "graph-buffers");
    rc = Cart_graph_neighbor_alltoall_init(send.data(), m, MPI_INT, recv.data(), m, MPI_INT, g, MPI_INFO_NULL, &req);
  }
  expect_no_mem(h, rc, req, "graph alltoall init, CARTPLAN_TEST_FAIL=graph-buffers on rank 0:");
  if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  bool ok = Cart_graph_neighbor_alltoall_init(send.data(), m, MPI_INT, recv.data(), m, MPI_INT, g, MPI_INFO_NULL, &req) == MPI_SUCCESS;
  for (int salt = 1; salt <= 2 && ok; ++salt) {
    for (int i = 0; i < 2 * m; ++i) send[i] = value(r, i / m, i % m, salt);
    ok = Cart_start(&req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS;
    // Block j comes from src[j] = r - 1 - j, whose block j goes to r.
    for (int i = 0; i < 2 * m && ok; ++i) ok = recv[i] == value(src[i / m], i / m, i % m, salt);
  }
  if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  h.check(ok, "graph alltoall init after one out of memory delivers");
  MPI_Comm_free(&g);
}

// A ring graph (edges to r + 1 and r + 2) over MPI_COMM_WORLD, errors returned; *src gets the
// sources in the order of the receive blocks.
MPI_Comm ring_graph(Harness& h, int src[2]) {
  const int p = h.size, r = h.rank;
  const int dst[2] = {(r + 1) % p, (r + 2) % p};
  src[0] = (r + p - 1) % p;
  src[1] = (r + 2 * p - 2) % p;
  MPI_Comm g = MPI_COMM_NULL;
  h.check(Cart_graph_comm_create_adjacent(MPI_COMM_WORLD, 2, src, 2, dst, MPI_INFO_NULL, &g) == MPI_SUCCESS, "graph creation");
  if (g != MPI_COMM_NULL) MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
  return g;
}

// A graph alltoall init with Info cartplan_algorithm = algo (nullptr: the communicator's, auto).
int graph_init(MPI_Comm g, const char* algo, std::vector<int>& send, std::vector<int>& recv, int m, Cart_Request* req) {
  MPI_Info info = MPI_INFO_NULL;
  if (algo) {
    MPI_Info_create(&info);
    MPI_Info_set(info, "cartplan_algorithm", algo);
  }
  const int rc = Cart_graph_neighbor_alltoall_init(send.data(), m, MPI_INT, recv.data(), m, MPI_INT, g, info, req);
  free_info(&info);
  return rc;
}

// Whether a graph alltoall init with `algo` on g delivers rank-dependent blocks, twice.
bool graph_delivers(Harness& h, MPI_Comm g, const int src[2], const char* algo) {
  const int m = 8;
  std::vector<int> send(2 * m), recv(2 * m, -1);
  Cart_Request req = CART_REQUEST_NULL;
  bool ok = graph_init(g, algo, send, recv, m, &req) == MPI_SUCCESS;
  for (int salt = 1; salt <= 2 && ok; ++salt) {
    for (int i = 0; i < 2 * m; ++i) send[i] = value(h.rank, i / m, i % m, salt);
    ok = Cart_start(&req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS;
    for (int i = 0; i < 2 * m && ok; ++i) ok = recv[i] == value(src[i / m], i / m, i % m, salt);  // block j from r - 1 - j
  }
  if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  return ok;
}

// The grid's pattern construction failing on rank `at` only (CARTPLAN_TEST_FAIL=grid-construct
// before its first round, grid-construct-partway between its first two), in a graph alltoall
// init with the grid forced (prepare) or auto (its table constructs the grid): every rank
// MPI_ERR_NO_MEM and no request, nobody left waiting for the failed rank's messages; then a
// linear init on that communicator and a grid or auto init on a new one deliver.
void grid_construction_fails(Harness& h, const char* step, const char* algo, int at) {
  int src[2];
  MPI_Comm g = ring_graph(h, src);
  if (g == MPI_COMM_NULL) return;
  const std::string what = std::string("graph alltoall init (") + (algo ? algo : "auto") + "), CARTPLAN_TEST_FAIL=" + step + " on rank " +
                           std::to_string(at) + ":";
  const int m = 8;
  std::vector<int> send(2 * m, h.rank), recv(2 * m, -1);
  Cart_Request req = CART_REQUEST_NULL;
  int rc = MPI_SUCCESS;
  {
    FailOnRank fail(h, step, at);
    rc = graph_init(g, algo, send, recv, m, &req);
  }
  expect_no_mem(h, rc, req, what, at);
  if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  h.check(graph_delivers(h, g, src, "linear"), what + " a linear init on that communicator afterwards delivers");
  MPI_Comm_free(&g);
  g = ring_graph(h, src);
  if (g == MPI_COMM_NULL) return;
  h.check(graph_delivers(h, g, src, algo), what + " the same init on a new communicator delivers");
  MPI_Comm_free(&g);
}

// A graph alltoallv init on the ring with cartplan_algorithm = algo: edge j's block from rank
// q holds 3 + q + 2 j ints (counts differ by rank and edge), started twice with rank-dependent
// data; returns the init's code, *ok whether every block arrived (false if not started) and
// *requested whether the init gave a request.
int graph_v_init_runs(Harness& h, MPI_Comm g, const int src[2], const char* algo, bool* ok, bool* requested) {
  auto count = [](int q, int j) { return 3 + q + 2 * j; };
  int scount[2], sdispl[2], rcount[2], rdispl[2], stotal = 0, rtotal = 0;
  for (int j = 0; j < 2; ++j) {
    scount[j] = count(h.rank, j), sdispl[j] = stotal, stotal += scount[j];
    rcount[j] = count(src[j], j), rdispl[j] = rtotal, rtotal += rcount[j];
  }
  std::vector<int> send(stotal), recv(rtotal, -1);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", algo);
  Cart_Request req = CART_REQUEST_NULL;
  const int rc = Cart_graph_neighbor_alltoallv_init(send.data(), scount, sdispl, MPI_INT, recv.data(), rcount, rdispl, MPI_INT, g, info, &req);
  MPI_Info_free(&info);
  *ok = rc == MPI_SUCCESS;
  for (int salt = 1; salt <= 2 && *ok; ++salt) {
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < scount[j]; ++i) send[sdispl[j] + i] = value(h.rank, j, i, salt);
    *ok = Cart_start(&req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS;
    for (int j = 0; j < 2 && *ok; ++j)
      for (int i = 0; i < rcount[j] && *ok; ++i) *ok = recv[rdispl[j] + i] == value(src[j], j, i, salt);
  }
  *requested = req != CART_REQUEST_NULL;
  if (!*requested) *ok = false;
  if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  return rc;
}

// A forced-grid alltoallv init (a v form: its size pass runs along the grid's schedule) with
// grid-construct-partway on rank `at`: the construction's markers reach only some ranks, so
// the others have the pattern; every rank must still return MPI_ERR_NO_MEM (none may enter the
// size pass while the failed ranks are elsewhere: that hung); then the same init on a new
// communicator and a linear one on the old deliver.
void grid_v_construction_fails(Harness& h, int at) {
  int src[2];
  MPI_Comm g = ring_graph(h, src);
  if (g == MPI_COMM_NULL) return;
  const std::string what = "graph alltoallv init (grid), CARTPLAN_TEST_FAIL=grid-construct-partway on rank " + std::to_string(at) + ":";
  bool ok = false, requested = false;
  int rc = MPI_SUCCESS;
  {
    FailOnRank fail(h, "grid-construct-partway", at);
    rc = graph_v_init_runs(h, g, src, "grid", &ok, &requested);
  }
  expect_no_mem_code(h, rc, what, at);
  h.check(!requested, what + " no request");
  h.check(graph_v_init_runs(h, g, src, "linear", &ok, &requested) == MPI_SUCCESS && ok,
          what + " a linear alltoallv init on that communicator delivers");
  MPI_Comm_free(&g);
  g = ring_graph(h, src);
  if (g == MPI_COMM_NULL) return;
  h.check(graph_v_init_runs(h, g, src, "grid", &ok, &requested) == MPI_SUCCESS && ok,
          what + " the grid alltoallv init on a new communicator delivers");
  MPI_Comm_free(&g);
}

// The halo: a periodic 2-D torus, interior 6 x 5, one ghost layer, doubles (C order).
constexpr int kNx = 6, kNy = 5, kEx = kNx + 2, kEy = kNy + 2;

double cell(int rank, int i, int j, int salt) { return rank * 1000 + i * 10 + j + salt * 100000; }

void fill(std::vector<double>& a, int rank, int salt) {
  for (int i = 0; i < kEx; ++i)
    for (int j = 0; j < kEy; ++j) {
      const bool ghost = i == 0 || j == 0 || i == kEx - 1 || j == kEy - 1;
      a[i * kEy + j] = ghost ? -1 : cell(rank, i - 1, j - 1, salt);
    }
}

// Whether every ghost cell holds its source's interior cell.
bool ghosts_ok(MPI_Comm cart, const std::vector<double>& a, int salt) {
  int me = 0, c[2] = {0, 0};
  MPI_Comm_rank(cart, &me);
  MPI_Cart_coords(cart, me, 2, c);
  for (int i = -1; i <= kNx; ++i)
    for (int j = -1; j <= kNy; ++j) {
      const int t[2] = {i < 0 ? -1 : i >= kNx ? 1 : 0, j < 0 ? -1 : j >= kNy ? 1 : 0};
      if (t[0] == 0 && t[1] == 0) continue;
      int at[2] = {c[0] + t[0], c[1] + t[1]}, source = 0;
      MPI_Cart_rank(cart, at, &source);
      if (a[(i + 1) * kEy + (j + 1)] != cell(source, i - t[0] * kNx, j - t[1] * kNy, salt)) return false;
    }
  return true;
}

bool halo_init_delivers(Harness& h, MPI_Comm cart, Cart_Halo halo, bool measuring = true) {
  std::vector<double> a(kEx * kEy);
  MPI_Info info = tune_info(measuring);
  Cart_Request req = CART_REQUEST_NULL;
  bool ok = Cart_halo_exchange_init(a.data(), halo, info, &req) == MPI_SUCCESS;
  free_info(&info);
  for (int salt = 1; salt <= 2 && ok; ++salt) {
    fill(a, h.rank, salt);
    ok = Cart_start(&req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS && ghosts_ok(cart, a, salt);
  }
  if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  return ok;
}

// A halo init with CARTPLAN_TEST_FAIL=`step` on rank `at`, in measuring mode (the trials' steps)
// or model mode (halo-init-build: building the request, its temps and datatypes, runs out of
// memory). Every rank MPI_ERR_NO_MEM, no request; then an init of the same mode delivers every
// ghost cell.
void halo_init_out_of_memory(Harness& h, const char* step, int at, bool measuring) {
  MPI_Comm cart = cartplan::mpitest::open_plain_cart2(h.size);
  MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
  const int interior[2] = {kNx, kNy}, ghost[2] = {1, 1};
  Cart_Halo halo = CART_HALO_NULL;
  int rc = Cart_halo_create(cart, 2, interior, ghost, ghost, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL, &halo);
  h.check(rc == MPI_SUCCESS, "Cart_halo_create (auto)");
  const std::string mode = measuring ? "measured" : "model-mode";
  const std::string what = mode + " halo init, CARTPLAN_TEST_FAIL=" + step + " on rank " + std::to_string(at) + ":";
  if (rc == MPI_SUCCESS) {
    std::vector<double> a(kEx * kEy);
    fill(a, h.rank, 0);
    MPI_Info info = tune_info(measuring);
    Cart_Request req = CART_REQUEST_NULL;
    {
      FailOnRank fail(h, step, at);
      rc = Cart_halo_exchange_init(a.data(), halo, info, &req);
    }
    free_info(&info);
    expect_no_mem(h, rc, req, what, at);
    if (req != CART_REQUEST_NULL) Cart_request_free(&req);
    h.check(halo_init_delivers(h, cart, halo, measuring), what + " a " + mode + " init afterwards delivers every ghost cell");
    Cart_halo_free(&halo);
  }
  MPI_Comm_free(&cart);
}

// Cart_halo_create with CARTPLAN_TEST_FAIL=halo-create-local on rank `at` (its local steps,
// the halo's parts, run out of memory): every rank MPI_ERR_NO_MEM and CART_HALO_NULL; then a
// creation works and its init delivers every ghost cell.
void halo_create_out_of_memory(Harness& h, int at) {
  MPI_Comm cart = cartplan::mpitest::open_plain_cart2(h.size);
  MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
  const int interior[2] = {kNx, kNy}, ghost[2] = {1, 1};
  const std::string what = "Cart_halo_create, CARTPLAN_TEST_FAIL=halo-create-local on rank " + std::to_string(at) + ":";
  Cart_Halo halo = CART_HALO_NULL;
  int rc = MPI_SUCCESS;
  {
    FailOnRank fail(h, "halo-create-local", at);
    rc = Cart_halo_create(cart, 2, interior, ghost, ghost, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL, &halo);
  }
  expect_no_mem_code(h, rc, what, at);
  h.check(halo == CART_HALO_NULL, what + " no halo");
  if (halo != CART_HALO_NULL) Cart_halo_free(&halo);
  rc = Cart_halo_create(cart, 2, interior, ghost, ghost, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL, &halo);
  h.check(rc == MPI_SUCCESS && halo_init_delivers(h, cart, halo, false), what + " a creation afterwards delivers every ghost cell");
  if (halo != CART_HALO_NULL) Cart_halo_free(&halo);
  MPI_Comm_free(&cart);
}

// A measuring init whose exchange fails in a trial on rank `at` only
// (CARTPLAN_TEST_FAIL=measure-trial-run: MPI_ERR_OTHER after the trial's messages): every rank
// MPI_ERR_OTHER (the failing rank's message names the variable, the others' another rank) and
// no request, for a Cartesian alltoall init and a halo init; then measuring inits deliver.
void trial_run_fails(Harness& h, int at) {
  const std::string tag = "CARTPLAN_TEST_FAIL=measure-trial-run on rank " + std::to_string(at) + ":";
  auto expect_other = [&](int rc, Cart_Request req, const std::string& what) {
    const std::string msg = rc == MPI_SUCCESS ? "" : Cart_error_message();
    h.check(error_class(rc) == MPI_ERR_OTHER && contains(msg, h.rank == at ? "CARTPLAN_TEST_FAIL" : "another rank"),
            what + " every rank MPI_ERR_OTHER, got " + std::to_string(rc) + " '" + msg + "'");
    h.check(req == CART_REQUEST_NULL, what + " no request");
  };
  std::vector<int> sources;
  MPI_Comm comm = box_torus(h, &sources);
  const int m = 40;
  std::vector<int> send(9 * m, h.rank), recv(9 * m, -1);
  MPI_Info info = tune_info(true);
  Cart_Request req = CART_REQUEST_NULL;
  int rc = MPI_SUCCESS;
  {
    FailOnRank fail(h, "measure-trial-run", at);
    rc = Cart_alltoall_init(send.data(), m, MPI_INT, recv.data(), m, MPI_INT, comm, info, &req);
  }
  free_info(&info);
  expect_other(rc, req, "measured alltoall init, " + tag);
  if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  h.check(alltoall_delivers(h, comm, sources, true), "measured alltoall init, " + tag + " a measured init afterwards delivers");
  MPI_Comm_free(&comm);
  MPI_Comm cart = cartplan::mpitest::open_plain_cart2(h.size);
  MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
  const int interior[2] = {kNx, kNy}, ghost[2] = {1, 1};
  Cart_Halo halo = CART_HALO_NULL;
  h.check(Cart_halo_create(cart, 2, interior, ghost, ghost, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL, &halo) == MPI_SUCCESS, "Cart_halo_create");
  if (halo != CART_HALO_NULL) {
    std::vector<double> a(kEx * kEy);
    fill(a, h.rank, 0);
    info = tune_info(true);
    {
      FailOnRank fail(h, "measure-trial-run", at);
      rc = Cart_halo_exchange_init(a.data(), halo, info, &req);
    }
    free_info(&info);
    expect_other(rc, req, "measured halo init, " + tag);
    if (req != CART_REQUEST_NULL) Cart_request_free(&req);
    h.check(halo_init_delivers(h, cart, halo), "measured halo init, " + tag + " a measured init afterwards delivers every ghost cell");
    Cart_halo_free(&halo);
  }
  MPI_Comm_free(&cart);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  const char* which = std::getenv("INIT_OOM_CASE");  // one case only, for a before/after run
  auto runs = [&](const std::string& name) { return !which || name == which; };
  for (const char* step : {"measure-trials", "measure-rebuild"}) {
    if (runs(std::string("alltoall:") + step)) alltoall_out_of_memory(h, step, true);
    if (runs(std::string("halo:") + step)) halo_init_out_of_memory(h, step, 0, true);
  }
  if (runs("alltoall:plan-after-agreement")) alltoall_out_of_memory(h, "plan-after-agreement", false);
  if (runs("alltoall-measured:plan-after-agreement")) alltoall_out_of_memory(h, "plan-after-agreement", true);
  if (runs("allreduce:plan-after-agreement")) allreduce_out_of_memory(h);
  if (runs("create:create-check")) creation_out_of_memory(h);
  if (runs("graph:graph-buffers")) graph_out_of_memory(h);
  // The failing rank: rank 0, then the last rank.
  for (int at : {0, h.size - 1}) {
    if (runs("halo:halo-init-build")) halo_init_out_of_memory(h, "halo-init-build", at, false);
    if (runs("halo:halo-create-local")) halo_create_out_of_memory(h, at);
    for (const char* step : {"grid-construct", "grid-construct-partway"})
      if (runs(std::string("graph-grid:") + step)) grid_construction_fails(h, step, "grid", at);
    if (runs("graph-auto:grid-construct")) grid_construction_fails(h, "grid-construct", nullptr, at);
    if (runs("graph-grid-v:grid-construct-partway")) grid_v_construction_fails(h, at);
    if (runs("measure:measure-trial-run")) trial_run_fails(h, at);
    if (runs("create:create-local")) creation_state_out_of_memory(h, at);
  }
  return h.finish("init_oom_test");
}
