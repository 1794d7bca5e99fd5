// How many processes of a communicator share this rank's node, and how many cores their
// affinity masks give them together (oversubscribed.h).
#include "backends/mpi/oversubscribed.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <bitset>

namespace cartplan::mpi {

int union_cores(const std::vector<std::uint64_t>& words, int fallback) {
  std::uint64_t all[kMaskWords] = {};
  for (std::size_t p = 0; p + kProcessWords <= words.size(); p += kProcessWords) {
    if (words[p + kMaskWords] != 1) return fallback;
    for (int w = 0; w < kMaskWords; ++w) all[w] |= words[p + w];
  }
  int cores = 0;
  for (std::uint64_t w : all) cores += static_cast<int>(std::bitset<64>(w).count());
  return cores > 0 ? cores : fallback;
}

#ifdef CARTPLAN_SMPI
int node_load(MPI_Comm /*comm*/, int* on_node, int* cores) {
  *on_node = *cores = 1;
  return MPI_SUCCESS;
}
#else
namespace {

// This process's part of the exchange: its affinity mask and whether it could be read (a
// machine with more than 1024 CPUs, or no sched_getaffinity, falls back to the cores online).
std::vector<std::uint64_t> my_mask() {
  std::vector<std::uint64_t> mine(kProcessWords, 0);
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return mine;
  for (int cpu = 0; cpu < kMaskWords * 64 && cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) mine[cpu / 64] |= std::uint64_t{1} << (cpu % 64);
  mine[kMaskWords] = 1;
  return mine;
}

}  // namespace

int node_load(MPI_Comm comm, int* on_node, int* cores) {
  *on_node = *cores = 1;
  MPI_Comm node = MPI_COMM_NULL;
  int rc = PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  if (rc != MPI_SUCCESS) return rc;
  PMPI_Comm_size(node, on_node);
  const std::vector<std::uint64_t> mine = my_mask();
  std::vector<std::uint64_t> all(mine.size() * static_cast<std::size_t>(*on_node));
  // Node-local: only the processes of this node take part, once per communicator creation.
  rc = PMPI_Allgather(mine.data(), kProcessWords, MPI_UINT64_T, all.data(), kProcessWords, MPI_UINT64_T, node);
  PMPI_Comm_free(&node);
  if (rc != MPI_SUCCESS) return rc;
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  *cores = std::max(1, union_cores(all, online > 0 ? static_cast<int>(online) : *on_node));
  return MPI_SUCCESS;
}
#endif

int node_oversubscribed(MPI_Comm comm, int* oversubscribed) {
  int on_node = 1, cores = 1;
  const int rc = node_load(comm, &on_node, &cores);
  *oversubscribed = rc == MPI_SUCCESS && on_node > cores ? 1 : 0;
  return rc;
}

}  // namespace cartplan::mpi
