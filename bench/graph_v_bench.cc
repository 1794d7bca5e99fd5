// Graph v calls in the steady state (same counts every call, as PETSc, dolfinx and hypre call
// them), blocking or (`--form nonblocking`) non-blocking, each started and waited:
// Cart_graph_(i)neighbor_alltoallv with a forced combining schedule reusing the previous call's
// sizes (graph_sized_calls.h, graph_sized_chain.h), the same with reuse off (the size pass and
// an exchange build on every call: what every call cost before), and Open MPI's
// MPI_(I)neighbor_alltoallv, interleaved repetition by repetition on one distributed graph from a
// GRAPH spec (engine/graph/graph_spec.h). Counts are rank- and edge-dependent (1 to 4 x
// `ints` ints per edge). Per repetition the slowest rank's time of `iters` calls; prints the
// median and quartiles in microseconds per call. Every result is checked against Open MPI's.
//
//   mpirun -np 4 graph_v_bench --graph moore:dims=2x2,r=1 --algorithm pairing --ints 2 --reps 21 [--form nonblocking]
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "backends/mpi/graph_sized_calls.h"
#include "bench/bench_util.h"
#include "engine/graph/graph_spec.h"

namespace {

struct Args {
  std::string graph = "moore:dims=2x2,r=1", algorithm = "pairing";
  bool nonblocking = false;
  int ints = 2, iters = 200, reps = 21;
};

bool parse(int argc, char** argv, Args* a) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--graph") a->graph = v;
    else if (k == "--algorithm") a->algorithm = v;
    else if (k == "--ints") a->ints = std::stoi(v);
    else if (k == "--iters") a->iters = std::stoi(v);
    else if (k == "--reps") a->reps = std::stoi(v);
    else if (k == "--form" && (v == "blocking" || v == "nonblocking")) a->nonblocking = v == "nonblocking";
    else return false;
  }
  return argc % 2 == 1;
}

// Counts and packed displacements of one side: edge k to/from `peer` (its c-th edge there).
void side(const std::vector<int>& peers, int rank, bool out, int ints, std::vector<int>* counts, std::vector<int>* displs) {
  int at = 0;
  for (std::size_t k = 0; k < peers.size(); ++k) {
    int c = 0;
    for (std::size_t e = 0; e < k; ++e) c += peers[e] == peers[k];
    const int a = out ? rank : peers[k], b = out ? peers[k] : rank;
    counts->push_back(ints * (1 + (a * 7 + b * 3 + c * 5) % 4));
    displs->push_back(at);
    at += counts->back();
  }
}

// The distributed graph of the spec for this rank, with the algorithm in its Info.
MPI_Comm make_graph(const cartplan::ir::graph::RankEdges& e, const std::string& algorithm) {
  int dummy = 0;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", algorithm.c_str());
  MPI_Comm g;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(e.in.size()), e.in.empty() ? &dummy : e.in.data(), MPI_UNWEIGHTED,
                                 static_cast<int>(e.out.size()), e.out.empty() ? &dummy : e.out.data(), MPI_UNWEIGHTED, info, 0, &g);
  MPI_Info_free(&info);
  return g;
}

// The buffers of one rank's call.
struct Call {
  std::vector<int> sc, sd, rc, rd, send, ref, mine;
};

// One call: cartplan's (variant 0 or 1) into `mine`, or Open MPI's (variant 2) into `ref`, in
// the bench's form; aborts on an error.
void one_call(const Args& a, int v, Call& c, MPI_Comm g) {
  int* out = v == 2 ? c.ref.data() : c.mine.data();
  int rc = MPI_SUCCESS;
  if (!a.nonblocking) {
    rc = (v == 2 ? &MPI_Neighbor_alltoallv : &Cart_graph_neighbor_alltoallv)(c.send.data(), c.sc.data(), c.sd.data(), MPI_INT, out,
                                                                             c.rc.data(), c.rd.data(), MPI_INT, g);
  } else if (v == 2) {
    MPI_Request r;
    rc = MPI_Ineighbor_alltoallv(c.send.data(), c.sc.data(), c.sd.data(), MPI_INT, out, c.rc.data(), c.rd.data(), MPI_INT, g, &r);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else {
    Cart_Request r;
    rc = Cart_graph_ineighbor_alltoallv(c.send.data(), c.sc.data(), c.sd.data(), MPI_INT, out, c.rc.data(), c.rd.data(), MPI_INT, g, &r);
    if (rc == MPI_SUCCESS) rc = Cart_wait(&r);
  }
  if (rc != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 3);
}

// The three variants interleaved; per variant the slowest rank's microseconds per call of each
// repetition after the first. Counts results that differ from Open MPI's in *wrong.
std::vector<std::vector<double>> measure(const Args& a, const cartplan::ir::graph::RankEdges& e, int rank, MPI_Comm g, long* wrong) {
  Call c;
  side(e.out, rank, true, a.ints, &c.sc, &c.sd);
  side(e.in, rank, false, a.ints, &c.rc, &c.rd);
  c.send.resize(c.sd.empty() ? 1 : c.sd.back() + c.sc.back() + 1);
  c.ref.resize(c.rd.empty() ? 1 : c.rd.back() + c.rc.back() + 1);
  c.mine.resize(c.ref.size());
  for (std::size_t i = 0; i < c.send.size(); ++i) c.send[i] = rank * 1000 + static_cast<int>(i);
  std::vector<std::vector<double>> times(3);
  for (int r = 0; r < a.reps; ++r) {
    for (int v = 0; v < 3; ++v) {  // 0: reuse on, 1: reuse off (size pass per call), 2: Open MPI
      cartplan::mpi::set_size_reuse(v == 0);
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      for (int it = 0; it < a.iters; ++it) one_call(a, v, c, g);
      double dt = (MPI_Wtime() - t0) * 1e6 / a.iters;
      MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (r > 0) times[v].push_back(dt);  // the first repetition warms up
      if (v < 2) {
        one_call(a, 2, c, g);
        *wrong += std::memcmp(c.mine.data(), c.ref.data(), c.ref.size() * sizeof(int)) != 0;
      }
    }
  }
  cartplan::mpi::set_size_reuse(true);
  return times;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Args a;
  const bool parsed = parse(argc, argv, &a);
  auto topo = cartplan::engine::graph::parse_graph_spec(a.graph);
  if (!parsed || !topo || topo->size() != size) {
    if (rank == 0) std::fprintf(stderr, "usage: graph_v_bench [--graph SPEC with %d ranks] [--algorithm pairing|cumulative] [--ints N] [--iters N] [--reps R] [--form blocking|nonblocking]\n", size);
    MPI_Finalize();
    return 2;
  }
  MPI_Comm g = make_graph(topo->ranks[rank], a.algorithm);
  long wrong = 0;
  const std::vector<std::vector<double>> times = measure(a, topo->ranks[rank], rank, g, &wrong);
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("graph %s, %s alltoallv, %s, %d-%d ints per edge, np %d, %d reps x %d calls (us per call, slowest rank)\n", a.graph.c_str(),
                a.nonblocking ? "non-blocking" : "blocking", a.algorithm.c_str(), a.ints, 4 * a.ints, size, a.reps - 1, a.iters);
    std::printf("| variant | median | q1 | q3 | min | max |\n|---|---|---|---|---|---|\n");
    const char* names[] = {"cartplan, sizes reused", "cartplan, size pass per call",
                           a.nonblocking ? "Open MPI MPI_Ineighbor_alltoallv" : "Open MPI MPI_Neighbor_alltoallv"};
    for (int v = 0; v < 3; ++v) {
      const cartplan::bench::Summary s = cartplan::bench::summarize(times[v]);
      std::printf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f |\n", names[v], s.median, s.q1, s.q3, s.min, s.max);
    }
    std::printf("results differing from Open MPI's: %ld\n", wrong);
  }
  MPI_Comm_free(&g);
  MPI_Finalize();
  return wrong == 0 ? 0 : 1;
}
