// Per-call cost of the graph collectives' non-blocking calls with and without the pool, in one
// run: on a distributed graph from a GRAPH spec (engine/graph/graph_spec.h) with one algorithm
// forced, per call (call + wait) of
//   - Open MPI's MPI_Ineighbor_allgather/alltoall;
//   - cartplan's persistent request (Cart_start + Cart_wait: nothing built per call);
//   - Cart_graph_ineighbor_* into one receive buffer (after the first call, the pooled exchange);
//   - Cart_graph_ineighbor_* cycling through one buffer more than the pool holds (every call
//     misses the pool, which drops its oldest: each call builds, as every call did before it);
//   - the v forms with every count equal, Open MPI's MPI_Ineighbor_allgatherv/alltoallv and
//     Cart_graph_ineighbor_allgatherv/alltoallv (not pooled: their sizes travel with the data,
//     graph_sized_calls.h).
// Variants interleaved repetition by repetition; per repetition the slowest rank's mean over
// `iters` calls; median and quartiles over the repetitions. Every variant's last result is
// compared with Open MPI's.
//
//   mpirun -np 4 graph_nonblocking_bench --graph moore:dims=2x2,r=1 --algorithm pairing --bytes 8
//   (--only V runs variant V alone, 0-5 in the order above: for a profiler)
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "bench/bench_util.h"
#include "engine/graph/graph_spec.h"

namespace {

struct Args {
  std::string graph = "moore:dims=2x2,r=1", algorithm = "pairing";
  bool alltoall = false;
  int bytes = 8, iters = 200, reps = 21;
  int only = -1;  // --only V: run variant V alone (for a profiler)
};

bool parse(int argc, char** argv, Args* a) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--graph") a->graph = v;
    else if (k == "--algorithm") a->algorithm = v;
    else if (k == "--op") a->alltoall = v == "alltoall";
    else if (k == "--bytes") a->bytes = std::stoi(v);
    else if (k == "--iters") a->iters = std::stoi(v);
    else if (k == "--reps") a->reps = std::stoi(v);
    else if (k == "--only") a->only = std::stoi(v);
    else return false;
  }
  return (argc % 2) == 1;
}

constexpr int kBuffers = 9;  // one more than the pool holds (GraphExchange::kPoolCapacity)
constexpr int kVariants = 6;
const char* const kNames[kVariants] = {"Open MPI MPI_Ineighbor_*", "cartplan persistent", "cartplan non-blocking, pooled",
                                       "cartplan non-blocking, every call builds", "Open MPI MPI_Ineighbor_*v, equal counts",
                                       "cartplan non-blocking v form, equal counts"};

struct Bench {
  Args a;
  MPI_Comm g = MPI_COMM_NULL;
  std::vector<unsigned char> send;
  std::vector<std::vector<unsigned char>> recv;  // kBuffers; 0 is the persistent request's and the pooled calls'
  std::vector<unsigned char> ref;
  Cart_Request persistent = CART_REQUEST_NULL;
  std::vector<int> scounts, sdispls, rcounts, rdispls;  // the v forms' (every count a.bytes)

  void lay_out_v(int out_degree, int in_degree) {
    const bool a2a = a.alltoall;
    for (int k = 0; k < out_degree; ++k) scounts.push_back(a.bytes), sdispls.push_back(a2a ? k * a.bytes : 0);
    for (int k = 0; k < in_degree; ++k) rcounts.push_back(a.bytes), rdispls.push_back(k * a.bytes);
  }

  // One call + wait of a v form: Open MPI's (v 4) or cartplan's (v 5).
  void call_v(int v, unsigned char* out) {
    const int n = a.bytes;
    if (v == 4) {
      MPI_Request r;
      if (a.alltoall) MPI_Ineighbor_alltoallv(send.data(), scounts.data(), sdispls.data(), MPI_BYTE, out, rcounts.data(), rdispls.data(), MPI_BYTE, g, &r);
      else MPI_Ineighbor_allgatherv(send.data(), n, MPI_BYTE, out, rcounts.data(), rdispls.data(), MPI_BYTE, g, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      return;
    }
    Cart_Request r = CART_REQUEST_NULL;
    if (a.alltoall) Cart_graph_ineighbor_alltoallv(send.data(), scounts.data(), sdispls.data(), MPI_BYTE, out, rcounts.data(), rdispls.data(), MPI_BYTE, g, &r);
    else Cart_graph_ineighbor_allgatherv(send.data(), n, MPI_BYTE, out, rcounts.data(), rdispls.data(), MPI_BYTE, g, &r);
    Cart_wait(&r);
  }

  // One call + wait of variant v into buffer b.
  void call(int v, int b) {
    const int n = a.bytes;
    unsigned char* out = recv[static_cast<std::size_t>(b)].data();
    if (v == 0) {
      MPI_Request r;
      if (a.alltoall) MPI_Ineighbor_alltoall(send.data(), n, MPI_BYTE, out, n, MPI_BYTE, g, &r);
      else MPI_Ineighbor_allgather(send.data(), n, MPI_BYTE, out, n, MPI_BYTE, g, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      return;
    }
    if (v >= 4) return call_v(v, out);
    if (v == 1) {
      Cart_start(&persistent);
      Cart_wait(&persistent);
      return;
    }
    Cart_Request r = CART_REQUEST_NULL;
    if (a.alltoall) Cart_graph_ineighbor_alltoall(send.data(), n, MPI_BYTE, out, n, MPI_BYTE, g, &r);
    else Cart_graph_ineighbor_allgather(send.data(), n, MPI_BYTE, out, n, MPI_BYTE, g, &r);
    Cart_wait(&r);
  }
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Bench b;
  auto topo = cartplan::engine::graph::parse_graph_spec(b.a.graph);
  if (!parse(argc, argv, &b.a) || !(topo = cartplan::engine::graph::parse_graph_spec(b.a.graph)) || topo->size() != size) {
    if (rank == 0)
      std::fprintf(stderr, "usage: graph_nonblocking_bench [--graph SPEC with %d ranks] [--algorithm A] [--op allgather|alltoall] "
                           "[--bytes B] [--iters N] [--reps R] [--only V]\n", size);
    MPI_Finalize();
    return 2;
  }
  const auto& e = topo->ranks[rank];
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", b.a.algorithm.c_str());
  MPI_Info_set(info, "cartplan_theta", "1");
  int dummy = 0;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(e.in.size()), e.in.empty() ? &dummy : e.in.data(), MPI_UNWEIGHTED,
                                 static_cast<int>(e.out.size()), e.out.empty() ? &dummy : e.out.data(), MPI_UNWEIGHTED, info, 0, &b.g);
  const int n = b.a.bytes;
  b.send.resize((b.a.alltoall ? e.out.size() : 1) * n + 1);
  for (std::size_t i = 0; i < b.send.size(); ++i) b.send[i] = static_cast<unsigned char>(rank * 31 + i);
  b.recv.assign(kBuffers, std::vector<unsigned char>(e.in.size() * n + 1));
  b.ref.resize(e.in.size() * n + 1);
  b.lay_out_v(static_cast<int>(e.out.size()), static_cast<int>(e.in.size()));
  const int rc = b.a.alltoall ? Cart_graph_neighbor_alltoall_init(b.send.data(), n, MPI_BYTE, b.recv[0].data(), n, MPI_BYTE, b.g, info, &b.persistent)
                              : Cart_graph_neighbor_allgather_init(b.send.data(), n, MPI_BYTE, b.recv[0].data(), n, MPI_BYTE, b.g, info, &b.persistent);
  if (rc != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 3);
  int ran = 0;
  Cart_graph_request_algorithm(b.persistent, &ran);
  if (b.a.alltoall) MPI_Neighbor_alltoall(b.send.data(), n, MPI_BYTE, b.ref.data(), n, MPI_BYTE, b.g);
  else MPI_Neighbor_allgather(b.send.data(), n, MPI_BYTE, b.ref.data(), n, MPI_BYTE, b.g);
  std::vector<std::vector<double>> times(kVariants);
  long wrong = 0;
  for (int r = 0; r < b.a.reps; ++r) {
    for (int v = 0; v < kVariants; ++v) {
      if (b.a.only >= 0 && v != b.a.only) continue;
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      for (int it = 0; it < b.a.iters; ++it) b.call(v, v == 3 ? it % kBuffers : 0);
      double dt = (MPI_Wtime() - t0) * 1e6 / b.a.iters;
      MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (r > 0) times[static_cast<std::size_t>(v)].push_back(dt);  // the first repetition warms up
      const int last = v == 3 ? (b.a.iters - 1) % kBuffers : 0;
      wrong += std::memcmp(b.recv[static_cast<std::size_t>(last)].data(), b.ref.data(), e.in.size() * n) != 0;
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("graph %s, %s, %d-byte blocks, np %d, cartplan_algorithm %s (ran %s), %d reps x %d calls (us per call + wait, slowest rank)\n",
                b.a.graph.c_str(), b.a.alltoall ? "alltoall" : "allgather", n, size, b.a.algorithm.c_str(),
                ran == CART_GRAPH_LINEAR ? "linear" : ran == CART_GRAPH_PAIRING ? "pairing" : ran == CART_GRAPH_CUMULATIVE ? "cumulative" : "grid",
                b.a.reps - 1, b.a.iters);
    std::printf("| variant | median | q1 | q3 |\n|---|---|---|---|\n");
    for (int v = 0; v < kVariants; ++v) {
      if (times[static_cast<std::size_t>(v)].empty()) continue;
      const cartplan::bench::Summary s = cartplan::bench::summarize(times[static_cast<std::size_t>(v)]);
      std::printf("| %s | %.2f | %.2f | %.2f |\n", kNames[v], s.median, s.q1, s.q3);
    }
    std::printf("results differing from Open MPI's: %ld\n", wrong);
  }
  Cart_request_free(&b.persistent);
  MPI_Info_free(&info);
  MPI_Comm_free(&b.g);
  MPI_Finalize();
  return wrong == 0 ? 0 : 1;
}
