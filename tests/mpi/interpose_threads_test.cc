// The drop-in under MPI_THREAD_MULTIPLE (mpi4py's default level): a plain MPI program with two
// threads per process, each with its own distributed-graph communicator (created concurrently,
// so detection and the communicator table see two threads at once).
//  - Phase A: thread 1 runs blocking and persistent neighbourhood collectives on its communicator
//    while thread 0 runs non-blocking ones on its own: cartplan is used from two threads at once.
//  - Phase B, cross-thread progress: on a "blocked" rank, thread 0 starts a non-blocking
//    collective and then sleeps (no MPI call) while thread 1 sits in MPI_Recv from a partner; the
//    partner only sends after its own collective completed, which needs the blocked rank's later
//    phases. Only thread 1's MPI_Recv can post them: Open MPI's progress engine runs cartplan's
//    hook on that thread (exchange_progress.cc, try-lock).
// Pairs and roles are drawn per iteration; data is rank-, thread- and iteration-dependent.
//   interpose_threads_test [--iterations N] [--expect-accelerated] [--algorithm A]
// --algorithm: CARTPLAN_INTERPOSE_ALGORITHM, set before MPI_Init (for the linked build).
#include <mpi.h>
#include <mpi-ext.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/mpi/dropin_calls.h"

namespace {

struct Shared {
  int rank = 0, size = 1, iterations = 20;
  std::vector<int> dims{0, 0};
  std::mutex mu;
  long checks = 0, failures = 0;
  void check(bool ok, const std::string& what) {
    std::lock_guard<std::mutex> lock(mu);
    ++checks;
    if (!ok && ++failures <= 20) std::fprintf(stderr, "[rank %d] FAILED: %s\n", rank, what.c_str());
  }
};

// One graph: the Moore neighbourhood of radius 1 on the periodic 2-D grid, as
// MPI_Dist_graph_create_adjacent over `base` after an MPI_Cart_create of that grid.
struct Graph {
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<int> sources, dests;
};

int rank_at(const Shared& s, int rank, int a, int b) {
  const int x = ((rank / s.dims[1] + a) % s.dims[0] + s.dims[0]) % s.dims[0];
  const int y = ((rank % s.dims[1] + b) % s.dims[1] + s.dims[1]) % s.dims[1];
  return x * s.dims[1] + y;
}

Graph make_graph(const Shared& s, MPI_Comm base) {
  const int periods[2] = {1, 1};
  MPI_Comm cart = MPI_COMM_NULL;
  MPI_Cart_create(base, 2, s.dims.data(), periods, 0, &cart);
  MPI_Comm_free(&cart);
  Graph g;
  for (int a = -1; a <= 1; ++a)
    for (int b = -1; b <= 1; ++b)
      if (a || b) {
        g.dests.push_back(rank_at(s, s.rank, a, b));
        g.sources.push_back(rank_at(s, s.rank, -a, -b));
      }
  const int t = static_cast<int>(g.dests.size());
  MPI_Dist_graph_create_adjacent(base, t, g.sources.data(), MPI_UNWEIGHTED, t, g.dests.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                 &g.comm);
  return g;
}

int value(int rank, int block, int iter, int thread) { return ((iter * 4 + thread) * 512 + rank) * 16 + block; }

bool received(const Graph& g, const std::vector<int>& recv, int iter, int thread, bool gather) {
  for (std::size_t i = 0; i < recv.size(); ++i)
    if (recv[i] != value(g.sources[i], gather ? 0 : static_cast<int>(i), iter, thread)) return false;
  return true;
}

// Rendezvous between the two threads of a process (no MPI call while waiting).
struct Baton {
  std::mutex mu;
  std::condition_variable cv;
  int stage = 0;
  void pass(int to) {
    std::lock_guard<std::mutex> lock(mu);
    stage = to;
    cv.notify_all();
  }
  void await(int at) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return stage >= at; });
  }
};

// Which role this rank plays in `iter`: partner rank (or size) and whether it blocks.
void roles(const Shared& s, int iter, int* partner, bool* blocked) {
  std::vector<int> order(s.size);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 rng(static_cast<unsigned>(iter * 977 + 13));
  std::shuffle(order.begin(), order.end(), rng);
  const int pos = static_cast<int>(std::find(order.begin(), order.end(), s.rank) - order.begin());
  *partner = (pos ^ 1) < s.size ? order[pos ^ 1] : s.size;
  *blocked = pos % 2 == 0;
}

// Phase A, both threads at once, each on its own communicator: thread 0 non-blocking alltoalls
// completed by a busy MPI_Test loop, thread 1 blocking allgathers and a persistent allgather.
void concurrent(Shared& s, const Graph& g, int thread, MPI_Request persistent, std::vector<int>& psend,
                std::vector<int>& precv) {
  const std::size_t t = g.sources.size();
  std::vector<int> send(thread == 0 ? t : 1), recv(t);
  for (int iter = 0; iter < s.iterations; ++iter) {
    for (std::size_t i = 0; i < send.size(); ++i) send[i] = value(s.rank, static_cast<int>(i), iter, thread);
    if (thread == 0) {
      MPI_Request r;
      MPI_Ineighbor_alltoall(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, g.comm, &r);
      for (int flag = 0; !flag;) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    } else {
      MPI_Neighbor_allgather(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, g.comm);
    }
    s.check(received(g, recv, iter, thread, thread == 1), "phase A thread " + std::to_string(thread) + " iteration " + std::to_string(iter));
    if (thread == 1) {
      psend[0] = value(s.rank, 0, iter, 2);
      MPI_Start(&persistent);
      MPI_Wait(&persistent, MPI_STATUS_IGNORE);
      s.check(received(g, precv, iter, 2, true), "phase A thread 1 allgather_init iteration " + std::to_string(iter));
    }
  }
}

// Phase B, thread 0: a non-blocking alltoall per iteration, started while thread 1 does not
// call MPI; on blocked ranks it then sleeps until thread 1's MPI_Recv returned, on the others
// it waits for the collective first and then lets thread 1 send. Stages per iteration i:
// 4i+1 thread 1 ready, 4i+2 started, 4i+3 thread 1's receive done, 4i+4 complete.
void thread0(Shared& s, const Graph& g, Baton& baton) {
  const std::size_t t = g.sources.size();
  std::vector<int> send(t), recv(t);
  for (int iter = 0; iter < s.iterations; ++iter) {
    int partner = 0;
    bool blocked = false;
    roles(s, iter, &partner, &blocked);
    for (std::size_t i = 0; i < t; ++i) send[i] = value(s.rank, static_cast<int>(i), iter, 0);
    baton.await(4 * iter + 1);
    MPI_Request r;
    MPI_Ineighbor_alltoall(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, g.comm, &r);
    baton.pass(4 * iter + 2);
    if (blocked && partner < s.size) baton.await(4 * iter + 3);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    s.check(received(g, recv, iter, 0, false), "phase B thread 0 ineighbor_alltoall iteration " + std::to_string(iter));
    baton.pass(4 * iter + 4);
  }
}

// Phase B, thread 1: the plain point-to-point part; on a blocked rank its MPI_Recv is the only
// MPI call of the process while thread 0's collective needs its later phases.
void thread1(Shared& s, MPI_Comm p2p, Baton& baton) {
  for (int iter = 0; iter < s.iterations; ++iter) {
    int partner = 0;
    bool blocked = false;
    roles(s, iter, &partner, &blocked);
    baton.pass(4 * iter + 1);
    baton.await(4 * iter + 2);
    int token = value(s.rank, 0, iter, 3), got = -1;
    if (partner < s.size && blocked) {
      MPI_Recv(&got, 1, MPI_INT, partner, iter, p2p, MPI_STATUS_IGNORE);
      s.check(got == value(partner, 0, iter, 3), "phase B thread 1 MPI_Recv iteration " + std::to_string(iter));
      baton.pass(4 * iter + 3);
    } else if (partner < s.size) {
      baton.await(4 * iter + 4);
      MPI_Send(&token, 1, MPI_INT, partner, iter, p2p);
    }
    baton.await(4 * iter + 4);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Shared s;
  bool expect_accelerated = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--iterations") && i + 1 < argc) s.iterations = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--expect-accelerated")) expect_accelerated = true;
    else if (!std::strcmp(argv[i], "--algorithm") && i + 1 < argc) setenv("CARTPLAN_INTERPOSE_ALGORITHM", argv[++i], 1);
  }
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &s.size);
  s.check(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE provided");
  MPI_Dims_create(s.size, 2, s.dims.data());
  MPI_Comm base[2], p2p;
  MPI_Comm_dup(MPI_COMM_WORLD, &base[0]);
  MPI_Comm_dup(MPI_COMM_WORLD, &base[1]);
  MPI_Comm_dup(MPI_COMM_WORLD, &p2p);
  // Open MPI 4.1 opens its topology framework lazily at the first topology call, and that is not
  // thread-safe (two first MPI_Cart_create at once crash inside Open MPI): one call first.
  const int periods[2] = {1, 1};
  MPI_Comm first = MPI_COMM_NULL;
  MPI_Cart_create(MPI_COMM_WORLD, 2, s.dims.data(), periods, 0, &first);
  MPI_Comm_free(&first);
  Graph g[2];
  std::thread maker([&] { g[1] = make_graph(s, base[1]); });  // two detections at once
  g[0] = make_graph(s, base[0]);
  maker.join();
  std::vector<int> psend(1), precv(g[1].sources.size());
  MPI_Request persistent;
  MPIX_Neighbor_allgather_init(psend.data(), 1, MPI_INT, precv.data(), 1, MPI_INT, g[1].comm, MPI_INFO_NULL, &persistent);
  std::thread other([&] { concurrent(s, g[1], 1, persistent, psend, precv); });
  concurrent(s, g[0], 0, persistent, psend, precv);
  other.join();
  MPI_Request_free(&persistent);
  Baton baton;
  std::thread second([&] { thread1(s, p2p, baton); });
  thread0(s, g[0], baton);
  second.join();
  if (expect_accelerated)
    for (int k = 0; k < 2; ++k)
      s.check(dropin_accelerated_calls(g[k].comm) >= s.iterations,
              "thread " + std::to_string(k) + "'s communicator: " + std::to_string(dropin_accelerated_calls(g[k].comm)) +
                  " calls accelerated (-2: the drop-in is not loaded)");
  for (int k = 0; k < 2; ++k) {
    MPI_Comm_free(&g[k].comm);
    MPI_Comm_free(&base[k]);
  }
  MPI_Comm_free(&p2p);
  long totals[2] = {s.checks, s.failures}, sums[2] = {0, 0};
  MPI_Allreduce(totals, sums, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (s.rank == 0) std::printf("interpose_threads_test on %d ranks: %ld checks, %ld failed\n", s.size, sums[0], sums[1]);
  MPI_Finalize();
  return sums[1] == 0 ? 0 : 1;
}
