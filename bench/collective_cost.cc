// What one global collective costs under SMPI on a committed platform (issue 32's set-up): each
// of MPI_Barrier, MPI_Bcast, MPI_Allreduce (1 int, 20 int64 with a user op, 262 doubles: the sizes
// graph init agrees on) and MPI_Comm_dup, started right after a barrier, timed on the slowest
// rank (the graph bench's "init us" measure, barrier exit skew included), three times each.
// It links nothing of cartplan; the committed numbers (bench/results/smpi/graph_setup.md) came
// from an smpicxx build (bazel build --config=smpi //bench:collective_cost builds the same source):
//
//   smpicxx -O2 -std=c++20 bench/collective_cost.cc -o /tmp/collective_cost
//   python3 bench/smpi/platforms.py fattree --np 256 --out-dir /tmp/plat
//   smpirun --log=xbt_cfg.thres:warning --log=smpi_config.thres:warning [--cfg=smpi/coll-selector:ompi] -np 256
//     -platform /tmp/plat/fattree_p256.xml -hostfile /tmp/plat/fattree_p256.hosts /tmp/collective_cost     (one line)
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

double slowest(double us) {
  MPI_Allreduce(MPI_IN_PLACE, &us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return us;
}

void max_op(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const std::int64_t*>(in);
  auto* b = static_cast<std::int64_t*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = a[i] > b[i] ? a[i] : b[i];
}

template <typename F>
void time_it(int rank, const char* name, F f) {
  for (int rep = 0; rep < 3; ++rep) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    f();
    const double us = slowest((MPI_Wtime() - t0) * 1e6);
    if (rank == 0) std::printf("| %s | %d | %.1f |\n", name, rep, us);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Op op;
  MPI_Op_create(&max_op, 1, &op);
  if (rank == 0) std::printf("# np %d: slowest rank's us from a barrier's exit\n| call | rep | us |\n|---|---|---|\n", size);
  time_it(rank, "nothing", [] {});
  time_it(rank, "MPI_Barrier", [] { MPI_Barrier(MPI_COMM_WORLD); });
  time_it(rank, "MPI_Bcast 1 int", [] {
    int a = 1;
    MPI_Bcast(&a, 1, MPI_INT, 0, MPI_COMM_WORLD);
  });
  time_it(rank, "MPI_Allreduce 1 int", [] {
    int a = 1, b = 0;
    MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  });
  time_it(rank, "MPI_Allreduce 20 int64, user op", [&] {
    std::vector<std::int64_t> a(20, 1), b(20);
    MPI_Allreduce(a.data(), b.data(), 20, MPI_INT64_T, op, MPI_COMM_WORLD);
  });
  time_it(rank, "MPI_Allreduce 262 double", [] {
    std::vector<double> a(262, 1.0), b(262);
    MPI_Allreduce(a.data(), b.data(), 262, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  });
  time_it(rank, "MPI_Comm_dup", [] {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_free(&c);
  });
  time_it(rank, "MPI_Comm_dup x2", [] {
    MPI_Comm c, d;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_free(&c);
    MPI_Comm_free(&d);
  });
  MPI_Op_free(&op);
  MPI_Finalize();
  return 0;
}
