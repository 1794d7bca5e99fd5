// Blocking graph v calls in the steady state (same counts every call, as PETSc, dolfinx and
// hypre call them): Cart_graph_neighbor_alltoallv with a forced combining schedule reusing the
// previous call's sizes (graph_sized_calls.h), the same with reuse off (the size pass and an
// exchange build on every call: what every call cost before), and Open MPI's
// MPI_Neighbor_alltoallv, interleaved repetition by repetition on one distributed graph from a
// GRAPH spec (engine/graph/graph_spec.h). Counts are rank- and edge-dependent (1 to 4 x
// `ints` ints per edge). Per repetition the slowest rank's time of `iters` calls; prints the
// median and quartiles in microseconds per call. Every result is checked against Open MPI's.
//
//   mpirun -np 4 graph_v_bench --graph moore:dims=2x2,r=1 --algorithm pairing --ints 2 --reps 21
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

// The three variants interleaved; per variant the slowest rank's microseconds per call of each
// repetition after the first. Counts results that differ from Open MPI's in *wrong.
std::vector<std::vector<double>> measure(const Args& a, const cartplan::ir::graph::RankEdges& e, int rank, MPI_Comm g, long* wrong) {
  std::vector<int> sc, sd, rc, rd;
  side(e.out, rank, true, a.ints, &sc, &sd);
  side(e.in, rank, false, a.ints, &rc, &rd);
  std::vector<int> send(sd.empty() ? 1 : sd.back() + sc.back() + 1), ref(rd.empty() ? 1 : rd.back() + rc.back() + 1), mine(ref.size());
  for (std::size_t i = 0; i < send.size(); ++i) send[i] = rank * 1000 + static_cast<int>(i);
  std::vector<std::vector<double>> times(3);
  auto reference = [&] { MPI_Neighbor_alltoallv(send.data(), sc.data(), sd.data(), MPI_INT, ref.data(), rc.data(), rd.data(), MPI_INT, g); };
  for (int r = 0; r < a.reps; ++r) {
    for (int v = 0; v < 3; ++v) {  // 0: reuse on, 1: reuse off (size pass per call), 2: Open MPI
      cartplan::mpi::set_size_reuse(v == 0);
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      for (int it = 0; it < a.iters; ++it) {
        if (v == 2) {
          reference();
        } else if (Cart_graph_neighbor_alltoallv(send.data(), sc.data(), sd.data(), MPI_INT, mine.data(), rc.data(), rd.data(), MPI_INT, g) !=
                   MPI_SUCCESS) {
          MPI_Abort(MPI_COMM_WORLD, 3);
        }
      }
      double dt = (MPI_Wtime() - t0) * 1e6 / a.iters;
      MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (r > 0) times[v].push_back(dt);  // the first repetition warms up
      if (v < 2) {
        reference();
        *wrong += std::memcmp(mine.data(), ref.data(), ref.size() * sizeof(int)) != 0;
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
    if (rank == 0) std::fprintf(stderr, "usage: graph_v_bench [--graph SPEC with %d ranks] [--algorithm pairing|cumulative] [--ints N] [--iters N] [--reps R]\n", size);
    MPI_Finalize();
    return 2;
  }
  MPI_Comm g = make_graph(topo->ranks[rank], a.algorithm);
  long wrong = 0;
  const std::vector<std::vector<double>> times = measure(a, topo->ranks[rank], rank, g, &wrong);
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("graph %s, alltoallv, %s, %d-%d ints per edge, np %d, %d reps x %d calls (us per call, slowest rank)\n", a.graph.c_str(),
                a.algorithm.c_str(), a.ints, 4 * a.ints, size, a.reps - 1, a.iters);
    std::printf("| variant | median | q1 | q3 | min | max |\n|---|---|---|---|---|---|\n");
    const char* names[] = {"cartplan, sizes reused", "cartplan, size pass per call", "Open MPI MPI_Neighbor_alltoallv"};
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
