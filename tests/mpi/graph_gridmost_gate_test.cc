// MPI test of the degree gate on auto's most-D grid (np = 32: the 5-D hypercube 2x2x2x2x2): auto
// constructs the most-D grid only where some rank's in- or out-degree, agreed at creation,
// exceeds its 5 dimensions. Circulant graphs r -> r + o (mod 32): degree 5 (offsets +-1, +-2,
// 16) does not construct it, degree 6 (+-1, +-2, +-3) does (CARTPLAN_TEST_FAIL=pattern-gridmost
// fails only that construction), and so does degree 5 with one rank of degree 11 (the agreed
// maximum, not a rank's own); Info cartplan_grid_dims=5 constructs it at degree 5 too. Both
// creation paths: the state made by the persistent init itself, and by a blocking call before
// it. Every run's data is MPI_Neighbor_allgather's, rank-dependent, twice per request.
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/graph_algorithm_info.h"
#include "tests/mpi/graph_grid_runs.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::failed_with;
using cartplan::mpitest::Harness;
using cartplan::mpitest::Outcome;

// r -> r + o for every offset (mod p): in- and out-degree = offsets.size() on every rank. Info
// auto over linear and the grids, and cartplan_grid_dims if given.
// With `hub_extra`, rank kHub also sends to kHub + o for each of them (its targets gain one source):
// the degree differs by rank, and only the agreed maximum tells every rank alike.
constexpr int kHub = 7;
MPI_Comm circulant(Harness& h, const std::vector<int>& offsets, const char* grid_dims, const std::vector<int>& hub_extra = {}) {
  std::vector<int> out, in;
  for (int o : offsets) {
    out.push_back(((h.rank + o) % h.size + h.size) % h.size);
    in.push_back(((h.rank - o) % h.size + h.size) % h.size);
  }
  for (int o : hub_extra) {
    if (h.rank == kHub) out.push_back((kHub + o) % h.size);
    if (h.rank == (kHub + o) % h.size) in.push_back(kHub);
  }
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", "auto");
  MPI_Info_set(info, "cartplan_auto_candidates", "grid");
  if (grid_dims) MPI_Info_set(info, "cartplan_grid_dims", grid_dims);
  MPI_Comm g = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(in.size()), in.data(), MPI_UNWEIGHTED, static_cast<int>(out.size()),
                                 out.data(), MPI_UNWEIGHTED, info, 0, &g);
  MPI_Info_free(&info);
  MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
  return g;
}

std::vector<int> send_block(Harness& h) { return {h.rank * 1000 + 17, h.rank * 31 + 5}; }

// A blocking Cart_graph_neighbor_allgather (it creates the communicator's state when it is the
// first graph collective), checked against MPI's.
bool blocking_delivers(Harness& h, MPI_Comm g, int degree) {
  const std::vector<int> send = send_block(h);
  std::vector<int> recv(static_cast<std::size_t>(2 * degree), -1), ref(recv.size(), -2);
  MPI_Neighbor_allgather(send.data(), 2, MPI_INT, ref.data(), 2, MPI_INT, g);
  return Cart_graph_neighbor_allgather(send.data(), 2, MPI_INT, recv.data(), 2, MPI_INT, g) == MPI_SUCCESS && recv == ref;
}

const std::vector<int> kDegree5 = {1, -1, 2, -2, 16};  // 16 = -16 mod 32: in-degree 5 too
const std::vector<int> kDegree6 = {1, -1, 2, -2, 3, -3};
const std::vector<int> kHubExtra = {3, 4, 5, 6, 7, 8};
// A rank's in-degree in circulant(kDegree5, .., kHubExtra): 6 for the hub's extra targets.
int hub_in_degree(const Harness& h) {
  const int from_hub = (h.rank - kHub + h.size) % h.size;
  return std::count(kHubExtra.begin(), kHubExtra.end(), from_hub) ? 6 : 5;
}

// With the most-D construction failing: an init that constructs it fails on every rank, one
// that does not runs and delivers MPI's result.
void gate(Harness& h, bool blocking_first) {
  const std::string how = blocking_first ? " (state made by a blocking call)" : " (state made by the init)";
  setenv("CARTPLAN_TEST_FAIL", "pattern-gridmost", 1);
  MPI_Comm g = circulant(h, kDegree5, nullptr);
  if (blocking_first) h.check(blocking_delivers(h, g, 5), "degree 5: blocking allgather delivers MPI's result" + how);
  Outcome o = cartplan::mpitest::run(h, g, "allgather", 5);
  h.check(o.rc == MPI_SUCCESS && o.delivered, "degree 5 = dimensions: the most-D grid not constructed, MPI's result" + how + " (" + o.message + ")");
  h.check(o.rc == MPI_SUCCESS && o.grid_dims != 5, "degree 5: auto does not run the most-D grid" + how);
  MPI_Comm_free(&g);
  g = circulant(h, kDegree6, nullptr);
  if (blocking_first) h.check(blocking_delivers(h, g, 6), "degree 6: blocking allgather delivers MPI's result" + how);
  o = cartplan::mpitest::run(h, g, "allgather", 6);
  h.check(failed_with(o, "CARTPLAN_TEST_FAIL=pattern-gridmost"), "degree 6 > dimensions: the most-D grid constructed" + how + " (" + o.message + ")");
  MPI_Comm_free(&g);
  // Degree 5 everywhere except rank 7 (out-degree 11) and its six extra targets (in-degree 6):
  // the agreed maximum 11 > 5, so every rank constructs it (and fails), also where its own
  // degree is 5. The data check of this graph is in delivers().
  g = circulant(h, kDegree5, nullptr, kHubExtra);
  o = cartplan::mpitest::run(h, g, "allgather", hub_in_degree(h));
  h.check(failed_with(o, "CARTPLAN_TEST_FAIL=pattern-gridmost"), "one rank of degree 11, the others 5 or 6: constructed on every rank" + how + " (" + o.message + ")");
  MPI_Comm_free(&g);
  g = circulant(h, kDegree5, "5");
  o = cartplan::mpitest::run(h, g, "allgather", 5);
  h.check(failed_with(o, "CARTPLAN_TEST_FAIL=pattern-gridmost"), "degree 5 with Info cartplan_grid_dims=5: constructed" + how + " (" + o.message + ")");
  MPI_Comm_free(&g);
  unsetenv("CARTPLAN_TEST_FAIL");
}

// Without failures: both degrees deliver MPI's result with whatever auto picks.
void delivers(Harness& h) {
  for (const std::vector<int>* offsets : {&kDegree5, &kDegree6}) {
    const int degree = static_cast<int>(offsets->size());
    MPI_Comm g = circulant(h, *offsets, nullptr);
    const Outcome o = cartplan::mpitest::run(h, g, "allgather", degree);
    h.check(o.rc == MPI_SUCCESS && o.delivered, "degree " + std::to_string(degree) + ": auto delivers MPI's result (" + o.message + ")");
    MPI_Comm_free(&g);
  }
  MPI_Comm g = circulant(h, kDegree5, nullptr, kHubExtra);
  const Outcome o = cartplan::mpitest::run(h, g, "allgather", hub_in_degree(h));
  h.check(o.rc == MPI_SUCCESS && o.delivered, "one rank of degree 11: auto delivers MPI's result (" + o.message + ")");
  MPI_Comm_free(&g);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  const bool five = h.size == 32 && cartplan::mpitest::grid_ndims(h.size, 30) == 5;
  h.check(five, "run at np = 32 (the most-D grid 2x2x2x2x2)");
  if (five) {
    cartplan::mpitest::use_message_model(h, "gridmost_gate_model");
    gate(h, false);
    gate(h, true);
    delivers(h);
  }
  return h.finish("graph_gridmost_gate_test");
}
