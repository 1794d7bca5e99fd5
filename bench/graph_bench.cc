// Graph collectives against Open MPI in the same run: on a distributed graph from a GRAPH spec
// (engine/graph/graph_spec.h), persistent Cart_graph_neighbor_allgather/alltoall with each
// algorithm (linear, pairing, cumulative, auto) and MPI_Neighbor_allgather/alltoall, the
// variants interleaved repetition by repetition; per repetition the slowest rank's time of
// `iters` calls. Prints, per variant, the median and the quartiles in microseconds per call, the
// init time (pattern construction included, first init of that algorithm on the communicator)
// and the algorithm auto ran. Results of every call are checked against Open MPI's.
//
//   mpirun -np 8 graph_bench --graph moore:dims=4x2,r=1 --op allgather --bytes 8 --reps 21
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "bench/bench_util.h"
#include "engine/graph/graph_spec.h"

namespace {

using cartplan::bench::Summary;

struct Args {
  std::string graph = "moore:dims=4x2,r=1";
  bool alltoall = false;
  int bytes = 8, iters = 200, reps = 21, theta = 1;
};

bool parse(int argc, char** argv, Args* a) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--graph") a->graph = v;
    else if (k == "--op") a->alltoall = v == "alltoall";
    else if (k == "--bytes") a->bytes = std::stoi(v);
    else if (k == "--iters") a->iters = std::stoi(v);
    else if (k == "--reps") a->reps = std::stoi(v);
    else if (k == "--theta") a->theta = std::stoi(v);
    else return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Args a;
  auto topo = cartplan::engine::graph::parse_graph_spec(a.graph);
  if (!parse(argc, argv, &a) || !(topo = cartplan::engine::graph::parse_graph_spec(a.graph)) || topo->size() != size) {
    if (rank == 0) std::fprintf(stderr, "usage: graph_bench [--graph SPEC with %d ranks] [--op allgather|alltoall] [--bytes B] [--iters N] [--reps R] [--theta T]\n", size);
    MPI_Finalize();
    return 2;
  }
  const auto& e = topo->ranks[rank];
  int dummy = 0;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_theta", std::to_string(a.theta).c_str());
  MPI_Comm g;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(e.in.size()), e.in.empty() ? &dummy : e.in.data(), MPI_UNWEIGHTED,
                                 static_cast<int>(e.out.size()), e.out.empty() ? &dummy : e.out.data(), MPI_UNWEIGHTED, info, 0, &g);
  const int n = a.bytes;  // MPI_BYTE blocks
  const std::size_t sblocks = a.alltoall ? e.out.size() : 1;
  std::vector<unsigned char> send(sblocks * n + 1), ref(e.in.size() * n + 1), mine(e.in.size() * n + 1);
  for (std::size_t i = 0; i < send.size(); ++i) send[i] = static_cast<unsigned char>(rank * 31 + i);
  const char* algos[] = {"linear", "pairing", "cumulative", "auto"};
  std::vector<Cart_Request> reqs(4, CART_REQUEST_NULL);
  std::vector<double> init_us(4);
  std::vector<int> ran(4);
  for (int v = 0; v < 4; ++v) {
    MPI_Info_set(info, "cartplan_algorithm", algos[v]);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    const int rc = a.alltoall ? Cart_graph_neighbor_alltoall_init(send.data(), n, MPI_BYTE, mine.data(), n, MPI_BYTE, g, info, &reqs[v])
                              : Cart_graph_neighbor_allgather_init(send.data(), n, MPI_BYTE, mine.data(), n, MPI_BYTE, g, info, &reqs[v]);
    double dt = (MPI_Wtime() - t0) * 1e6;
    MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    init_us[v] = dt;
    if (rc != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 3);
    Cart_graph_request_algorithm(reqs[v], &ran[v]);
  }
  std::vector<std::vector<double>> times(5);
  long wrong = 0;
  auto reference = [&] {
    return a.alltoall ? MPI_Neighbor_alltoall(send.data(), n, MPI_BYTE, ref.data(), n, MPI_BYTE, g)
                      : MPI_Neighbor_allgather(send.data(), n, MPI_BYTE, ref.data(), n, MPI_BYTE, g);
  };
  for (int r = 0; r < a.reps; ++r) {
    for (int v = 0; v < 5; ++v) {  // 4: Open MPI
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      for (int it = 0; it < a.iters; ++it) {
        if (v == 4) {
          reference();
        } else {
          Cart_start(&reqs[v]);
          Cart_wait(&reqs[v]);
        }
      }
      double dt = (MPI_Wtime() - t0) * 1e6 / a.iters;
      MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (r > 0) times[v].push_back(dt);  // the first repetition warms up
      if (v < 4) {
        reference();
        wrong += std::memcmp(mine.data(), ref.data(), e.in.size() * n) != 0;
      }
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("graph %s, %s, %d-byte blocks, np %d, theta %d, %d reps x %d calls (us per call, slowest rank)\n", a.graph.c_str(),
                a.alltoall ? "alltoall" : "allgather", n, size, a.theta, a.reps - 1, a.iters);
    std::printf("| variant | runs | median | q1 | q3 | init us |\n|---|---|---|---|---|---|\n");
    const char* names[] = {"cartplan linear", "cartplan pairing", "cartplan cumulative", "cartplan auto", "Open MPI MPI_Neighbor_*"};
    const char* kinds[] = {"linear", "pairing", "cumulative"};
    for (int v = 0; v < 5; ++v) {
      const Summary s = cartplan::bench::summarize(times[v]);
      std::printf("| %s | %s | %.2f | %.2f | %.2f | %s |\n", names[v], v < 4 ? kinds[ran[v]] : "linear", s.median, s.q1, s.q3,
                  v < 4 ? std::to_string(static_cast<long>(init_us[v])).c_str() : "-");
    }
    std::printf("results differing from Open MPI's: %ld\n", wrong);
  }
  for (auto& q : reqs) Cart_request_free(&q);
  MPI_Info_free(&info);
  MPI_Comm_free(&g);
  MPI_Finalize();
  return wrong == 0 ? 0 : 1;
}
