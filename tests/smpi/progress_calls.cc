// The first waits of Cart_* calls advance the process's pending requests under SMPI, which has no
// progress hook (progress only inside Cart_* calls; tests/mpi/agreement_progress_test.cc is the
// Open MPI counterpart, which needs MPI_Dist_graph_create_adjacent). Rank 0 starts a Cartesian
// combining Cart_ialltoall and completes it only after the call under test; the other ranks
// complete it first, so they wait for rank 0's later phases while rank 0 waits in the call. A
// wait that does not advance them deadlocks (SimGrid then stops the simulation). Calls: the
// first graph collective on a graph made before the request (its state's duplicate: under SMPI
// a barrier and MPI_Comm_dup), a blocking and a non-blocking call that construct pairing or the
// grid (the state made before by a linear init), Cart_graph_comm_create_adjacent and
// Cart_neighborhood_create. Every received int is checked.
//
//   progress_calls [PART]   // only the parts whose name starts with PART (creation, construction/grid, comm, ...)
// Prints "progress_calls: OK (N checks)" on rank 0 when every rank passed.
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"

namespace {

int g_rank = 0, g_size = 1, g_failures = 0;
long g_checks = 0;
const char* g_only = nullptr;

void expect(bool ok, const std::string& what) {
  ++g_checks;
  if (ok) return;
  if (g_failures < 5) std::printf("rank %d: FAILED %s: %s\n", g_rank, what.c_str(), Cart_error_message());
  ++g_failures;
}

bool wanted(const std::string& name) { return !g_only || name.rfind(g_only, 0) == 0; }

// A Cartesian combining alltoall on the Moore torus (two phases), pending until rank0_late's
// call: rank 0 completes it after the call, the others before.
struct CartPending {
  MPI_Comm cart = MPI_COMM_NULL;
  std::vector<int> send, recv, ref;
  Cart_Request q = CART_REQUEST_NULL;
  CartPending() {
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Dims_create(g_size, 2, dims);
    static const int moore[16] = {-1, -1, -1, 0, -1, 1, 0, -1, 0, 1, 1, -1, 1, 0, 1, 1};
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cartplan_algorithm", "combining");
    expect(Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, 8, moore, MPI_UNWEIGHTED, info, 0, &cart) == MPI_SUCCESS, "torus");
    MPI_Info_free(&info);
    for (int i = 0; i < 16; ++i) send.push_back(g_rank * 1000 + i);
    ref.assign(16, -2);
    expect(Cart_alltoall(send.data(), 2, MPI_INT, ref.data(), 2, MPI_INT, cart) == MPI_SUCCESS, "the reference");
  }
  ~CartPending() { MPI_Comm_free(&cart); }
  template <class Call>
  void rank0_late(Call&& call, const std::string& what) {
    recv.assign(16, -1);
    expect(Cart_ialltoall(send.data(), 2, MPI_INT, recv.data(), 2, MPI_INT, cart, &q) == MPI_SUCCESS, what + ": Cart_ialltoall");
    int algorithm = -1;
    Cart_request_algorithm(q, &algorithm);
    expect(algorithm == 1, what + ": the pending request runs the combining plan");
    if (g_rank != 0) expect(Cart_wait(&q) == MPI_SUCCESS, what + ": wait");
    expect(call() == MPI_SUCCESS, what);
    if (g_rank == 0) expect(Cart_wait(&q) == MPI_SUCCESS, what + ": wait after the call");
    expect(recv == ref, what + ": the pending request's data");
  }
};

// A ring both ways by Cart_graph_comm_create_adjacent (an attribute under SMPI), Info
// cartplan_algorithm and theta 1.
MPI_Comm ring(const char* algorithm) {
  const int in[2] = {(g_rank + g_size - 1) % g_size, (g_rank + 1) % g_size}, out[2] = {in[1], in[0]};
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", algorithm);
  MPI_Info_set(info, "cartplan_theta", "1");
  MPI_Comm g = MPI_COMM_NULL;
  expect(Cart_graph_comm_create_adjacent(MPI_COMM_WORLD, 2, in, 2, out, info, &g) == MPI_SUCCESS, std::string("ring ") + algorithm);
  MPI_Info_free(&info);
  MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
  return g;
}

bool ring_gathered(const int got[2]) { return got[0] == (g_rank + g_size - 1) % g_size + 7 && got[1] == (g_rank + 1) % g_size + 7; }

void graph_calls(CartPending& p) {
  const int mine = g_rank + 7;
  if (wanted("creation")) {
    MPI_Comm g = ring("linear");
    int got[2] = {-1, -1};
    p.rank0_late([&] { return Cart_graph_neighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, g); }, "creation: a first blocking call");
    expect(ring_gathered(got), "creation: the call's data");
    MPI_Comm_free(&g);
  }
  MPI_Info linear;
  MPI_Info_create(&linear);
  MPI_Info_set(linear, "cartplan_algorithm", "linear");
  for (const char* algorithm : {"pairing", "grid"}) {
    for (const bool blocking : {true, false}) {
      const std::string what = std::string("construction/") + algorithm + (blocking ? "/blocking" : "/nonblocking");
      if (!wanted(what)) continue;
      MPI_Comm g = ring(algorithm);
      int got[2] = {-1, -1};
      Cart_Request q = CART_REQUEST_NULL;
      expect(Cart_graph_neighbor_allgather_init(&mine, 1, MPI_INT, got, 1, MPI_INT, g, linear, &q) == MPI_SUCCESS, what + ": linear init");
      Cart_request_free(&q);
      p.rank0_late([&] {
        return blocking ? Cart_graph_neighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, g)
                        : Cart_graph_ineighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, g, &q);
      }, what);
      if (!blocking) expect(Cart_wait(&q) == MPI_SUCCESS, what + ": wait");
      expect(ring_gathered(got), what + ": the call's data");
      MPI_Comm_free(&g);
    }
  }
  MPI_Info_free(&linear);
}

void comm_calls(CartPending& p) {
  const int mine = g_rank + 7;
  if (wanted("comm/graph_adjacent")) {
    const int in[2] = {(g_rank + g_size - 1) % g_size, (g_rank + 1) % g_size}, out[2] = {in[1], in[0]};
    MPI_Comm g = MPI_COMM_NULL;
    p.rank0_late([&] { return Cart_graph_comm_create_adjacent(MPI_COMM_WORLD, 2, in, 2, out, MPI_INFO_NULL, &g); }, "comm/graph_adjacent");
    int got[2] = {-1, -1};
    expect(Cart_graph_neighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, g) == MPI_SUCCESS && ring_gathered(got), "comm/graph_adjacent: a call");
    MPI_Comm_free(&g);
  }
  if (wanted("comm/neighborhood")) {
    int dims[1] = {g_size}, periods[1] = {1};
    static const int sides[2] = {-1, 1};
    MPI_Comm c = MPI_COMM_NULL;
    p.rank0_late([&] { return Cart_neighborhood_create(MPI_COMM_WORLD, 1, dims, periods, 2, sides, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c); },
                 "comm/neighborhood");
    int got[2] = {-1, -1};  // block i from the process at -offset[i]: the right one, then the left one
    expect(Cart_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, c) == MPI_SUCCESS && got[0] == (g_rank + 1) % g_size + 7 &&
               got[1] == (g_rank + g_size - 1) % g_size + 7,
           "comm/neighborhood: a call");
    MPI_Comm_free(&c);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (argc > 1) g_only = argv[1];
  {
    CartPending p;
    graph_calls(p);
    comm_calls(p);
  }
  long mine[2] = {g_failures, g_checks}, all[2] = {0, 0};
  MPI_Allreduce(mine, all, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0) std::printf("progress_calls: %s (%ld checks, %ld failed)\n", all[0] == 0 ? "OK" : "FAILED", all[1], all[0]);
  MPI_Finalize();
  return all[0] == 0 ? 0 : 1;
}
