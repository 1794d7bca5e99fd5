// Forced-grid blocking and non-blocking graph calls under SMPI, whose first call on a communicator
// runs the grid's verdict sweep (backends/mpi/graph_setup.cc agree_grid; run by tests/smpi/run.sh
// on 16 ranks):
//   grid_calls data   on an irregular graph (a ring plus chords from a fixed seed, the same on
//                     every rank), with Info cartplan_algorithm=grid and cartplan_grid_dims 3
//                     (4x2x2) or 4 (2x2x2x2), a communicator per dims and per first call (so each
//                     of the four calls runs the sweep once per dims): Cart_graph_neighbor_allgather,
//                     Cart_graph_neighbor_alltoallv and their Cart_graph_ineighbor_ forms, each
//                     twice on every communicator, every received int checked against its sender's
//                     rank-dependent value (alltoallv: 1 to 4 ints by edge); the non-blocking
//                     requests must run the grid with that many dimensions.
//   grid_calls room   CARTPLAN_TEST_FAIL=grid-sweep-room on every rank, then on rank 0 only, then
//                     on the last rank only (per rank through this program's getenv, below): that
//                     rank runs out of memory making the sweep's room and sweeps without requests
//                     (MPI_Sendrecv along its lines) beside the others' MPI_Isend: each first call
//                     (the four kinds, 3-D and 4-D grids) returns MPI_ERR_NO_MEM on every rank, the failed
//                     ranks' message saying out of memory, the others' another rank; so does the
//                     next call there (the kept verdict, no sweep); then a new communicator delivers.
// Prints "grid_calls MODE: OK (...)" on rank 0 when every rank passed, and the simulated time
// (run.sh runs data twice: the same output both times).
#include <mpi.h>
#include <unistd.h>  // environ

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"

// CARTPLAN_TEST_FAIL per rank (backends/mpi/test_failure.h reads it with getenv): under SMPI the
// ranks share one process and its environment, so this program's getenv, hidden (every call in
// this shared object, cartplan's included, binds to it; SimGrid and libc keep theirs), answers
// that name from g_fail, a global, which SMPI's privatization keeps per rank. Other names: environ.
const char* g_fail = nullptr;

extern "C" __attribute__((visibility("hidden"))) char* getenv(const char* name) noexcept {
  if (std::strcmp(name, "CARTPLAN_TEST_FAIL") == 0) return const_cast<char*>(g_fail);
  const std::size_t n = std::strlen(name);
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
  return nullptr;
}

namespace {

int g_failures = 0;
long g_checked = 0;  // received ints compared with their expected values
std::string g_message;  // the last failed call's Cart_error_message, taken at once (SMPI's ranks may share a thread)

void expect(bool ok, int rank, const std::string& what) {
  if (ok) return;
  if (g_failures < 5) std::printf("rank %d: %s\n", rank, what.c_str());
  ++g_failures;
}

// Rank s's destinations: s + 1, then up to 3 chords (no self edge, no repeat), from a fixed seed.
std::vector<std::vector<int>> graph(int p) {
  std::vector<std::vector<int>> dst(static_cast<std::size_t>(p));
  unsigned x = 20261128u;
  auto next = [&x] { return (x = x * 1103515245u + 12345u) >> 8; };
  for (int s = 0; s < p; ++s) {
    auto& d = dst[static_cast<std::size_t>(s)];
    d.push_back((s + 1) % p);
    const int chords = static_cast<int>(next() % 4);
    for (int c = 0; c < chords; ++c) {
      const int t = static_cast<int>(next() % static_cast<unsigned>(p));
      bool seen = t == s;
      for (int e : d) seen = seen || e == t;
      if (!seen) d.push_back(t);
    }
  }
  return dst;
}

int value(int s, int d, int i, int salt) { return ((salt * 64 + s) * 64 + d + 1) * 16 + i; }  // d = -1: allgather's block
int count(int s, int d) { return 1 + (3 * s + 5 * d) % 4; }                                     // alltoallv's block s -> d

struct Graph {
  int rank = 0, ndims = 0;
  std::vector<int> src, dst;
  MPI_Comm comm = MPI_COMM_NULL;
};

Graph make_graph(int rank, int p, int grid_dims) {
  Graph g;
  g.rank = rank, g.ndims = grid_dims;
  const auto all = graph(p);
  g.dst = all[static_cast<std::size_t>(rank)];
  for (int q = 0; q < p; ++q)
    for (int t : all[static_cast<std::size_t>(q)])
      if (t == rank) g.src.push_back(q);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", "grid");
  MPI_Info_set(info, "cartplan_grid_dims", std::to_string(grid_dims).c_str());
  const int rc = Cart_graph_comm_create_adjacent(MPI_COMM_WORLD, static_cast<int>(g.src.size()), g.src.data(),
                                                 static_cast<int>(g.dst.size()), g.dst.data(), info, &g.comm);
  MPI_Info_free(&info);
  expect(rc == MPI_SUCCESS, rank, "Cart_graph_comm_create_adjacent returned " + std::to_string(rc));
  if (g.comm != MPI_COMM_NULL) MPI_Comm_set_errhandler(g.comm, MPI_ERRORS_RETURN);
  return g;
}

enum Call { kAllgather, kAlltoallv, kIallgather, kIalltoallv };
const char* const kCallName[] = {"allgather", "alltoallv", "ineighbor_allgather", "ineighbor_alltoallv"};

// A non-blocking call's request runs the grid of g.ndims dimensions; then Cart_wait.
int finish(const Graph& g, Cart_Request* req, const std::string& what) {
  int algorithm = -1, ndims = -1;
  Cart_graph_request_algorithm(*req, &algorithm);
  Cart_graph_request_grid_dims(*req, &ndims);
  expect(algorithm == CART_GRAPH_GRID && ndims == g.ndims, g.rank,
         what + ": request runs algorithm " + std::to_string(algorithm) + " on " + std::to_string(ndims) + " dimensions");
  return Cart_wait(req);
}

// One call with salt's data; its code (the call's or the wait's). With `check`, every received int.
int run_call(const Graph& g, Call call, int salt, bool check) {
  const bool v = call == kAlltoallv || call == kIalltoallv;
  const std::size_t nd = g.dst.size(), ns = g.src.size();
  std::vector<int> scount(nd, 3), sdispl(nd), rcount(ns, 3), rdispl(ns), send, recv;
  for (std::size_t k = 0; k < nd; ++k) {
    if (v) scount[k] = count(g.rank, g.dst[k]);
    sdispl[k] = static_cast<int>(send.size());
    for (int i = 0; i < scount[k] && (v || k == 0); ++i) send.push_back(value(g.rank, v ? g.dst[k] : -1, i, salt));
  }
  for (std::size_t j = 0; j < ns; ++j) {
    if (v) rcount[j] = count(g.src[j], g.rank);
    rdispl[j] = static_cast<int>(recv.size());
    recv.resize(recv.size() + static_cast<std::size_t>(rcount[j]), -1);
  }
  send.resize(send.size() + 1), recv.resize(recv.size() + 1);  // never empty
  Cart_Request req = CART_REQUEST_NULL;
  const std::string what = std::string(kCallName[call]) + " (salt " + std::to_string(salt) + ")";
  int rc = MPI_SUCCESS;
  if (call == kAllgather) rc = Cart_graph_neighbor_allgather(send.data(), 3, MPI_INT, recv.data(), 3, MPI_INT, g.comm);
  if (call == kAlltoallv)
    rc = Cart_graph_neighbor_alltoallv(send.data(), scount.data(), sdispl.data(), MPI_INT, recv.data(), rcount.data(), rdispl.data(),
                                       MPI_INT, g.comm);
  if (call == kIallgather) rc = Cart_graph_ineighbor_allgather(send.data(), 3, MPI_INT, recv.data(), 3, MPI_INT, g.comm, &req);
  if (call == kIalltoallv)
    rc = Cart_graph_ineighbor_alltoallv(send.data(), scount.data(), sdispl.data(), MPI_INT, recv.data(), rcount.data(),
                                        rdispl.data(), MPI_INT, g.comm, &req);
  if (rc == MPI_SUCCESS && req != CART_REQUEST_NULL) rc = finish(g, &req, what);
  g_message = rc == MPI_SUCCESS ? "" : Cart_error_message();
  if (!check) return rc;
  expect(rc == MPI_SUCCESS, g.rank, what + " returned " + std::to_string(rc) + " '" + g_message + "'");
  for (std::size_t j = 0; j < ns && rc == MPI_SUCCESS; ++j)
    for (int i = 0; i < rcount[j]; ++i, ++g_checked) {
      const int want = value(g.src[j], v ? g.rank : -1, i, salt), got = recv[static_cast<std::size_t>(rdispl[j] + i)];
      expect(got == want, g.rank, what + ": int " + std::to_string(i) + " from rank " + std::to_string(g.src[j]) + " is " +
                                      std::to_string(got) + ", expected " + std::to_string(want));
    }
  return rc;
}

// Per dims (3, 4) and first call: a new communicator, its first call (the sweep), then every call twice.
int data_mode(int rank, int p) {
  int calls = 0;
  for (int d : {3, 4})
    for (int first = kAllgather; first <= kIalltoallv; ++first) {
      Graph g = make_graph(rank, p, d);
      if (g.comm == MPI_COMM_NULL) continue;
      run_call(g, static_cast<Call>(first), 1, true), ++calls;
      for (int salt = 2; salt <= 3; ++salt)
        for (int c = kAllgather; c <= kIalltoallv; ++c) run_call(g, static_cast<Call>(c), salt * 4 + c, true), ++calls;
      MPI_Comm_free(&g.comm);
    }
  return calls;
}

// Every rank the same class, MPI_ERR_NO_MEM; a failed rank's message says out of memory, the others' another rank.
void expect_no_mem(int rank, int rc, bool failed, const std::string& what, bool show) {
  int cls = rc;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  const std::string message = g_message;  // the reductions below leave it alone, but keep it plain
  int lo = 0, hi = 0;
  MPI_Allreduce(&cls, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&cls, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  expect(lo == MPI_ERR_NO_MEM && hi == MPI_ERR_NO_MEM, rank,
         what + ": classes from " + std::to_string(lo) + " to " + std::to_string(hi) + " over the ranks, this rank " + std::to_string(cls) +
             " '" + message + "' (expected MPI_ERR_NO_MEM " + std::to_string(MPI_ERR_NO_MEM) + ")");
  const bool worded = message.find(failed ? "out of memory" : "another rank") != std::string::npos;
  expect(worded, rank, what + ": message '" + message + "' (expected " + (failed ? "out of memory" : "another rank") + ")");
  if (show) std::printf("grid_calls room: %s: rank %d: '%s'\n", what.c_str(), rank, message.c_str());
}

// The sweep's room out of memory on rank `at` (-1: every rank) at each first call on a d-D grid; a second call there fails alike.
int room_fails(int rank, int p, int at, int d) {
  int calls = 0;
  for (int first = kAllgather; first <= kIalltoallv; ++first) {
    Graph g = make_graph(rank, p, d);
    if (g.comm == MPI_COMM_NULL) continue;
    const bool failed = at < 0 || rank == at;
    const std::string what = std::string(kCallName[first]) + " (" + std::to_string(d) + "-D), grid-sweep-room on " +
                             (at < 0 ? "every rank" : "rank " + std::to_string(at));
    g_fail = failed ? "grid-sweep-room" : nullptr;
    const int rc = run_call(g, static_cast<Call>(first), 1, false);
    g_fail = nullptr;
    const bool show = first == kAllgather && d == 3 && (rank == 0 || rank == p - 1);
    expect_no_mem(rank, rc, failed, what, show);
    expect_no_mem(rank, run_call(g, static_cast<Call>((first + 1) % 4), 2, false), failed, what + ", the next call", show);
    MPI_Comm_free(&g.comm);
    calls += 2;
  }
  return calls;
}

// Every rank, then rank 0, then the last rank, on the 3-D and the 4-D grid; then a new communicator delivers.
int room_mode(int rank, int p) {
  int calls = 0;
  for (int d : {3, 4})
    for (int at : {-1, 0, p - 1}) calls += room_fails(rank, p, at, d);
  Graph g = make_graph(rank, p, 3);
  if (g.comm != MPI_COMM_NULL) {
    for (int c = kAllgather; c <= kIalltoallv; ++c) run_call(g, static_cast<Call>(c), 5 + c, true), ++calls;
    MPI_Comm_free(&g.comm);
  }
  return calls;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const std::string mode = argc > 1 ? argv[1] : "";
  int calls = 0;
  if (mode == "data") calls = data_mode(rank, p);
  else if (mode == "room") calls = room_mode(rank, p);
  else std::fprintf(stderr, "usage: grid_calls data|room\n"), ++g_failures;
  const double t = MPI_Wtime();
  long mine[2] = {g_failures, g_checked}, total[2] = {0, 0};
  MPI_Allreduce(mine, total, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("grid_calls %s: simulated time %.9f s\n", mode.c_str(), t);
    std::printf("grid_calls %s: %s (%d calls on every rank, %ld ints checked, %ld failures)\n", mode.c_str(), total[0] == 0 ? "OK" : "FAILED",
                calls, total[1], total[0]);
  }
  MPI_Finalize();
  return total[0] == 0 ? 0 : 1;
}
