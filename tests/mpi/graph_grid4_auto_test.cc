// MPI test of where graph auto may have the 4-D virtual grid (np = 16: 2x2x2x2): on a complete
// graph with a cost model that prices messages only (written by the test, CARTPLAN_COST_MODEL),
// the 4-D grid is the cheapest candidate, and a persistent auto init (Info
// cartplan_auto_candidates=grid) picks it for allgather as for alltoall; on one communicator an
// allgather init, an alltoall init after it (the same table) and an allgather init again keep
// that pick. Info cartplan_grid_dims=3 leaves auto the 3-D grid (and does not construct the 4-D
// one: CARTPLAN_TEST_FAIL=pattern-grid4 fails only that construction), 4 the 4-D grid; every
// run's data is MPI_Neighbor_allgather's or MPI_Neighbor_alltoall's, twice per request.
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

// One communicator: allgather, alltoall after it, allgather again; then Info cartplan_grid_dims.
void picks(Harness& h) {
  MPI_Comm g = complete_graph(h, "auto", nullptr);
  expect(h, run(h, g, "allgather"), 4, "allgather auto (the 4-D grid is auto's for allgather too)");
  expect(h, run(h, g, "alltoall"), 4, "alltoall auto after an allgather init (the same table)");
  expect(h, run(h, g, "allgather"), 4, "allgather auto after an alltoall init");
  MPI_Comm_free(&g);
  g = complete_graph(h, "auto", "3");
  expect(h, run(h, g, "allgather"), 3, "allgather auto with Info cartplan_grid_dims=3");
  expect(h, run(h, g, "alltoall"), 3, "alltoall auto with Info cartplan_grid_dims=3");
  MPI_Comm_free(&g);
  g = complete_graph(h, "auto", "4");
  expect(h, run(h, g, "allgather"), 4, "allgather auto with Info cartplan_grid_dims=4");
  MPI_Comm_free(&g);
}

// What each init constructs: failing the 4-D grid's construction fails the inits that construct
// it (auto's allgather and alltoall by default, and with cartplan_grid_dims=4), not those whose
// Info names the 3-D grid.
void constructions(Harness& h) {
  setenv("CARTPLAN_TEST_FAIL", "pattern-grid4", 1);
  for (const char* op : {"allgather", "alltoall"}) {
    MPI_Comm g = complete_graph(h, "auto", nullptr);
    const Outcome o = run(h, g, op);
    h.check(failed_with(o, "CARTPLAN_TEST_FAIL=pattern-grid4"), std::string(op) + " auto constructs the 4-D grid (" + o.message + ")");
    MPI_Comm_free(&g);
  }
  MPI_Comm g = complete_graph(h, "auto", "3");
  expect(h, run(h, g, "allgather"), 3, "allgather auto with Info cartplan_grid_dims=3, the 4-D grid's construction failing: not constructed");
  expect(h, run(h, g, "alltoall"), 3, "alltoall auto with Info cartplan_grid_dims=3, the 4-D grid's construction failing: not constructed");
  MPI_Comm_free(&g);
  g = complete_graph(h, "auto", "4");
  const Outcome asked = run(h, g, "allgather");
  h.check(failed_with(asked, "CARTPLAN_TEST_FAIL=pattern-grid4"),
          "allgather auto with Info cartplan_grid_dims=4 constructs the 4-D grid (" + asked.message + ")");
  MPI_Comm_free(&g);
  unsetenv("CARTPLAN_TEST_FAIL");
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  h.check(cartplan::mpitest::has_4d_grid(h.size), "run at a size with a 4-D grid (16)");
  if (cartplan::mpitest::has_4d_grid(h.size) && cartplan::mpitest::has_3d_grid(h.size)) {
    // A model where a message costs 10 us and a byte next to nothing: on the complete graph of 16
    // ranks the grids cost 6, 5 and 4 messages per rank (2-D, 3-D, 4-D) against linear's 15.
    use_message_model(h, "grid4_auto_model");
    picks(h);
    constructions(h);
  }
  return h.finish("graph_grid4_auto_test");
}
