// An unchanged standard-API stencil program (the kind the interposition layer accelerates): only
// <mpi.h>, nothing of cartplan. MPI_Dims_create, a periodic MPI_Cart_create, the Moore
// neighbourhood of radius r (zero excluded) with MPI_Cart_rank, MPI_Dist_graph_create_adjacent on
// MPI_COMM_WORLD, then timed blocking MPI_Neighbor_alltoall / MPI_Neighbor_allgather with a
// barrier between timed calls. It checks every received block, so a run under the preload
// proves the data too.
//
//   mpirun -np 2 stencil_program --d 3 --r 1 --sizes 1,8,64 --iterations 2000
//   LD_PRELOAD=libcartplan_interpose.so mpirun -np 2 stencil_program ...   (same program)
// Output, rank 0: "op bytes median_us mean_us" per line, over iterations, of the slowest rank's
// time per call (the median resists preemption spikes on a shared machine).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int d = 3, r = 1, iterations = 2000;
  std::vector<int> sizes = {1, 2, 4, 8, 16, 32, 64};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--d")) d = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--r")) r = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--iterations")) iterations = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--sizes")) {
      sizes.clear();
      for (char* s = argv[i + 1]; *s;) {
        sizes.push_back(static_cast<int>(std::strtol(s, &s, 10)));
        if (*s == ',') ++s;
      }
    }
  }
  int p = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  std::vector<int> dims(d, 0), periods(d, 1), me(d);
  MPI_Dims_create(p, d, dims.data());
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, d, dims.data(), periods.data(), 0, &cart);
  MPI_Comm_rank(cart, &rank);
  MPI_Cart_coords(cart, rank, d, me.data());
  // Moore neighbourhood of radius r without the zero offset, in lexicographic order.
  std::vector<int> dests, sources, o(d, -r);
  for (;;) {
    bool zero = true;
    for (int v : o) zero = zero && v == 0;
    if (!zero) {
      std::vector<int> to(d), from(d);
      for (int k = 0; k < d; ++k) {
        to[k] = me[k] + o[k];
        from[k] = me[k] - o[k];
      }
      int a = 0, b = 0;
      MPI_Cart_rank(cart, to.data(), &a);
      MPI_Cart_rank(cart, from.data(), &b);
      dests.push_back(a);
      sources.push_back(b);
    }
    int k = d - 1;
    while (k >= 0 && o[k] == r) o[k--] = -r;
    if (k < 0) break;
    ++o[k];
  }
  MPI_Comm graph;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(sources.size()), sources.data(), MPI_UNWEIGHTED,
                                 static_cast<int>(dests.size()), dests.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);
  const int t = static_cast<int>(dests.size());
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  int errors = 0;
  for (int op = 0; op < 2; ++op) {
    for (int bytes : sizes) {
      std::vector<char> send(static_cast<std::size_t>(t) * bytes), recv(static_cast<std::size_t>(t) * bytes);
      for (int k = 0; k < t; ++k)
        for (int b = 0; b < bytes; ++b) send[static_cast<std::size_t>(k) * bytes + b] = static_cast<char>(world_rank * 31 + (op ? 0 : k) * 7 + b);
      auto call = [&] {
        return op == 0 ? MPI_Neighbor_alltoall(send.data(), bytes, MPI_BYTE, recv.data(), bytes, MPI_BYTE, graph)
                       : MPI_Neighbor_allgather(send.data(), bytes, MPI_BYTE, recv.data(), bytes, MPI_BYTE, graph);
      };
      const int n = bytes > 4096 ? iterations / 10 + 1 : iterations;
      for (int i = 0; i < n / 10 + 2; ++i) call();
      // Check: block j comes from sources[j] (its block j in send order, since offsets line up).
      for (int j = 0; j < t; ++j)
        for (int b = 0; b < bytes; ++b)
          if (recv[static_cast<std::size_t>(j) * bytes + b] != static_cast<char>(sources[j] * 31 + (op ? 0 : j) * 7 + b)) ++errors;
      double total = 0;
      std::vector<double> times;
      for (int i = 0; i < n; ++i) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        call();
        double dt = MPI_Wtime() - t0, slowest = 0;
        MPI_Reduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        total += slowest;
        times.push_back(slowest);
      }
      std::sort(times.begin(), times.end());
      if (world_rank == 0)
        std::printf("%s %d %.3f %.3f\n", op == 0 ? "alltoall" : "allgather", bytes, 1e6 * times[times.size() / 2], 1e6 * total / n);
    }
  }
  int all_errors = 0;
  MPI_Reduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (world_rank == 0 && all_errors) std::printf("ERRORS %d\n", all_errors);
  MPI_Comm_free(&graph);
  MPI_Comm_free(&cart);
  MPI_Finalize();
  return all_errors ? 1 : 0;
}
