// node_load and node_oversubscribed (backends/mpi/oversubscribed.h) under affinity masks each
// rank sets itself: every rank on CPU 0 gives one core, so two or more ranks are oversubscribed
// however many CPUs are online; each rank on its own CPU gives min(ranks, CPUs); the masks the
// job started with are restored after each case. `--expect-cores N`: the masks the job started
// with (mpirun's binding) must give N cores, e.g.
//   mpirun --cpu-set 0 --bind-to core:overload-allowed -np 2 node_load_test_bin --expect-cores 1
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "backends/mpi/oversubscribed.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;

// Sets this rank's mask to `cpu` alone; true when every rank could (else the case is skipped:
// a cpuset without that CPU).
bool pin_all(Harness& h, int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  int ok = sched_setaffinity(0, sizeof set, &set) == 0 ? 1 : 0, all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all && h.rank == 0) std::printf("node_load_test: could not pin every rank to CPU %d; case skipped\n", cpu);
  return all == 1;
}

void check_load(Harness& h, int want_cores, const std::string& what) {
  int on_node = 0, cores = 0, over = -1;
  h.check(cartplan::mpi::node_load(MPI_COMM_WORLD, &on_node, &cores) == MPI_SUCCESS, what + ": node_load succeeds");
  h.check(cartplan::mpi::node_oversubscribed(MPI_COMM_WORLD, &over) == MPI_SUCCESS, what + ": node_oversubscribed succeeds");
  // One node here: every rank of the job shares it.
  h.check(on_node == h.size, what + ": " + std::to_string(on_node) + " processes on the node");
  h.check(want_cores < 0 ? cores >= 1 : cores == want_cores,
          what + ": " + std::to_string(cores) + " cores (want " + std::to_string(want_cores) + ")");
  h.check(over == (on_node > cores ? 1 : 0), what + ": oversubscribed iff processes > cores");
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  cpu_set_t original;
  CPU_ZERO(&original);
  sched_getaffinity(0, sizeof original, &original);
  const int online = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  const int expect = argc == 3 && std::string(argv[1]) == "--expect-cores" ? std::atoi(argv[2]) : -1;
  check_load(h, expect, "as started");
  if (pin_all(h, 0)) {
    check_load(h, 1, "every rank on CPU 0");
    int over = 0;
    cartplan::mpi::node_oversubscribed(MPI_COMM_WORLD, &over);
    h.check(over == (h.size > 1 ? 1 : 0), "every rank on CPU 0: oversubscribed from 2 ranks on, whatever the CPUs online");
  }
  sched_setaffinity(0, sizeof original, &original);
  if (online > 0 && pin_all(h, h.rank % online)) check_load(h, std::min(h.size, online), "each rank on CPU rank % online");
  sched_setaffinity(0, sizeof original, &original);
  return h.finish("node_load_test");
}
