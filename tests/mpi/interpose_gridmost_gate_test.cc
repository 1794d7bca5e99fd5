// MPI test of the drop-in's degree gate on the most-D grid (np = 32: 2x2x2x2x2): at a graph's
// creation the drop-in constructs auto's candidates, the most-D grid only where some rank's in-
// or out-degree exceeds its 5 dimensions. With CARTPLAN_TEST_FAIL=pattern-gridmost (only that
// construction fails, and a failed construction leaves the graph to Open MPI) a graph of degree 5
// keeps cartplan's graph collectives and one of degree 6 does not; without the failure both keep
// them. The graphs are unions of random permutations (no Cartesian stencil); every
// MPI_Neighbor_allgather is checked against PMPI_Neighbor_allgather, rank-dependent.
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "tests/mpi/harness.h"

extern "C" int CARTPLAN_Graph_collectives(MPI_Comm comm);

namespace {

using cartplan::mpitest::Harness;

// The union of `k` random permutations of the ranks (one seed, the same on every rank): in- and
// out-degree k on every rank (parallel and self edges possible, as MPI allows), and no Cartesian
// stencil for the drop-in to find.
MPI_Comm permutations(Harness& h, int k) {
  std::mt19937 rng(2026);
  std::vector<int> in, out;
  std::vector<int> perm(static_cast<std::size_t>(h.size));
  for (int i = 0; i < k; ++i) {
    for (int r = 0; r < h.size; ++r) perm[static_cast<std::size_t>(r)] = r;
    std::shuffle(perm.begin(), perm.end(), rng);  // r -> perm[r]
    out.push_back(perm[static_cast<std::size_t>(h.rank)]);
    in.push_back(static_cast<int>(std::find(perm.begin(), perm.end(), h.rank) - perm.begin()));
  }
  MPI_Comm g = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, k, in.data(), MPI_UNWEIGHTED, k, out.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
  return g;
}

bool delivers(Harness& h, MPI_Comm g, int degree) {
  const int send[2] = {h.rank * 1000 + 17, h.rank * 31 + 5};
  std::vector<int> recv(static_cast<std::size_t>(2 * degree), -1), ref(recv.size(), -2);
  PMPI_Neighbor_allgather(send, 2, MPI_INT, ref.data(), 2, MPI_INT, g);
  bool ok = true;
  for (int call = 0; call < 2; ++call) {
    std::fill(recv.begin(), recv.end(), -1);
    ok = ok && MPI_Neighbor_allgather(send, 2, MPI_INT, recv.data(), 2, MPI_INT, g) == MPI_SUCCESS && recv == ref;
  }
  return ok;
}

void check(Harness& h, int degree, bool failing, int want) {
  const std::string what = "degree " + std::to_string(degree) + (failing ? ", the most-D construction failing" : "");
  MPI_Comm g = permutations(h, degree);
  const int graph = CARTPLAN_Graph_collectives(g);
  h.check(graph == want, what + ": cartplan's graph collectives " + (want ? "kept" : "refused") + " (got " + std::to_string(graph) + ")");
  h.check(delivers(h, g, degree), what + ": MPI_Neighbor_allgather delivers Open MPI's result");
  MPI_Comm_free(&g);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  h.check(h.size == 32, "run at np = 32 (the most-D grid 2x2x2x2x2)");
  if (h.size == 32) {
    setenv("CARTPLAN_TEST_FAIL", "pattern-gridmost", 1);
    check(h, 5, true, 1);  // 5 = dimensions: not constructed
    check(h, 6, true, 0);  // 6 > 5: constructed, and its failure refuses the graph
    unsetenv("CARTPLAN_TEST_FAIL");
    check(h, 5, false, 1);
    check(h, 6, false, 1);
  }
  return h.finish("interpose_gridmost_gate_test");
}
