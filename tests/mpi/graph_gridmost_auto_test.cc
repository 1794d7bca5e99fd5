// MPI test of the grid with the most dimensions (grid_dims(p, kMaxGridD), p's factorization; np =
// 32: the 5-D binary hypercube 2x2x2x2x2): on a complete graph with a cost model that prices
// messages only (written by the test, CARTPLAN_COST_MODEL), the most-D grid is the cheapest
// candidate (5 messages per rank against 6 for the 4-D grid and 31 for linear), and a persistent
// auto init (Info cartplan_auto_candidates=grid) picks it for allgather and alltoall; Info
// cartplan_grid_dims=4 leaves auto the 4-D grid (and does not construct the most-D one:
// CARTPLAN_TEST_FAIL=pattern-gridmost fails only that construction), 5 and 30 the most-D one.
// Forced grid with cartplan_grid_dims 5, 6 and 30 runs the 5-D grid, 3 the 3-D one. Every run's
// data is MPI_Neighbor_allgather's or MPI_Neighbor_alltoall's, twice per request.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/graph_algorithm_info.h"
#include "tests/mpi/graph_grid_runs.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;
using cartplan::mpitest::complete_graph;
using cartplan::mpitest::run;
using cartplan::mpitest::expect;
using cartplan::mpitest::failed_with;
using cartplan::mpitest::Outcome;
using cartplan::mpitest::use_message_model;

// Auto: the most-D grid by default and with cartplan_grid_dims 5 or 30, the 4-D one with 4.
void auto_picks(Harness& h, int most) {
  MPI_Comm g = complete_graph(h, "auto", nullptr);
  expect(h, run(h, g, "allgather"), most, "allgather auto");
  expect(h, run(h, g, "alltoall"), most, "alltoall auto after an allgather init (the same table)");
  MPI_Comm_free(&g);
  for (const char* d : {"5", "30"}) {
    g = complete_graph(h, "auto", d);
    expect(h, run(h, g, "allgather"), most, std::string("allgather auto with Info cartplan_grid_dims=") + d);
    MPI_Comm_free(&g);
  }
  g = complete_graph(h, "auto", "4");
  expect(h, run(h, g, "alltoall"), 4, "alltoall auto with Info cartplan_grid_dims=4");
  MPI_Comm_free(&g);
}

// Forced grid on grid_dims(p, d): d = 5, 6 and 30 give the most-D grid at 32, 3 the 3-D one.
void forced(Harness& h, int most) {
  for (const auto& [d, want] : {std::pair<const char*, int>{"5", most}, {"6", most}, {"30", most}, {"3", 3}}) {
    MPI_Comm g = complete_graph(h, "grid", d);
    for (const char* op : {"allgather", "alltoall"}) expect(h, run(h, g, op), want, std::string(op) + " grid with Info cartplan_grid_dims=" + d);
    MPI_Comm_free(&g);
  }
}

// Failing the most-D grid's construction fails the auto inits that construct it (default and
// cartplan_grid_dims=30), not the one whose Info names the 4-D grid.
void constructions(Harness& h) {
  setenv("CARTPLAN_TEST_FAIL", "pattern-gridmost", 1);
  MPI_Comm g = complete_graph(h, "auto", nullptr);
  Outcome o = run(h, g, "allgather");
  h.check(failed_with(o, "CARTPLAN_TEST_FAIL=pattern-gridmost"), "allgather auto constructs the most-D grid (" + o.message + ")");
  MPI_Comm_free(&g);
  g = complete_graph(h, "auto", "4");
  expect(h, run(h, g, "allgather"), 4, "allgather auto with Info cartplan_grid_dims=4, the most-D construction failing: not constructed");
  MPI_Comm_free(&g);
  g = complete_graph(h, "auto", "30");
  o = run(h, g, "alltoall");
  h.check(failed_with(o, "CARTPLAN_TEST_FAIL=pattern-gridmost"), "alltoall auto with cartplan_grid_dims=30 constructs it (" + o.message + ")");
  MPI_Comm_free(&g);
  unsetenv("CARTPLAN_TEST_FAIL");
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  const int most = cartplan::mpitest::grid_ndims(h.size, 30);
  h.check(most > 4 && cartplan::mpitest::has_4d_grid(h.size), "run at a size whose most-D grid has more than 4 dimensions (32)");
  if (most > 4 && cartplan::mpitest::has_4d_grid(h.size)) {
    // A model where a message costs 10 us and a byte next to nothing: on the complete graph of 32
    // ranks the grids cost 10, 7, 6 and 5 messages per rank (2-D to 5-D) against linear's 31.
    use_message_model(h, "gridmost_auto_model");
    auto_picks(h, most);
    forced(h, most);
    constructions(h);
  }
  return h.finish("graph_gridmost_auto_test");
}
