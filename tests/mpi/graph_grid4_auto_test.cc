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
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;

// Every rank sends to every other rank; Info cartplan_auto_candidates=grid (linear and the
// grids) and, if given, cartplan_grid_dims.
MPI_Comm complete_graph(Harness& h, const char* grid_dims) {
  std::vector<int> peers;
  for (int r = 0; r < h.size; ++r)
    if (r != h.rank) peers.push_back(r);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_auto_candidates", "grid");
  if (grid_dims) MPI_Info_set(info, "cartplan_grid_dims", grid_dims);
  MPI_Comm g = MPI_COMM_NULL;
  const int n = static_cast<int>(peers.size());
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, n, peers.data(), MPI_UNWEIGHTED, n, peers.data(), MPI_UNWEIGHTED, info, 0, &g);
  MPI_Info_free(&info);
  MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
  return g;
}

struct Outcome {
  int rc = MPI_SUCCESS, algorithm = -1, grid_dims = -1;
  bool delivered = false;
  std::string message;
};

// A persistent auto init of `op` ("allgather" or "alltoall", 2 ints per block, rank- and
// peer-dependent), its pick, and whether two runs deliver MPI's result.
Outcome run(Harness& h, MPI_Comm g, const std::string& op) {
  const bool a2a = op == "alltoall";
  const int n = h.size - 1, ints = 2;
  std::vector<int> send(static_cast<std::size_t>((a2a ? n : 1) * ints)), recv(static_cast<std::size_t>(n * ints)), ref(recv.size(), -2);
  for (std::size_t i = 0; i < send.size(); ++i) send[i] = h.rank * 1000 + static_cast<int>(i) * 7 + 1;
  Outcome o;
  Cart_Request req = CART_REQUEST_NULL;
  o.rc = a2a ? Cart_graph_neighbor_alltoall_init(send.data(), ints, MPI_INT, recv.data(), ints, MPI_INT, g, MPI_INFO_NULL, &req)
             : Cart_graph_neighbor_allgather_init(send.data(), ints, MPI_INT, recv.data(), ints, MPI_INT, g, MPI_INFO_NULL, &req);
  o.message = Cart_error_message();
  if (o.rc != MPI_SUCCESS) return o;
  Cart_graph_request_algorithm(req, &o.algorithm);
  Cart_graph_request_grid_dims(req, &o.grid_dims);
  if (a2a) MPI_Neighbor_alltoall(send.data(), ints, MPI_INT, ref.data(), ints, MPI_INT, g);
  else MPI_Neighbor_allgather(send.data(), ints, MPI_INT, ref.data(), ints, MPI_INT, g);
  o.delivered = true;
  for (int call = 0; call < 2; ++call) {
    std::fill(recv.begin(), recv.end(), -1);
    o.delivered = o.delivered && Cart_start(&req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS && recv == ref;
  }
  Cart_request_free(&req);
  return o;
}

void expect(Harness& h, const Outcome& o, int grid_dims, const std::string& what) {
  h.check(o.rc == MPI_SUCCESS && o.delivered, what + ": delivers MPI's result (" + o.message + ")");
  h.check(o.algorithm == CART_GRAPH_GRID && o.grid_dims == grid_dims,
          what + ": picks the " + std::to_string(grid_dims) + "-D grid, got algorithm " + std::to_string(o.algorithm) + " with " +
              std::to_string(o.grid_dims) + " dimensions");
}

bool failed_with(const Outcome& o, const char* step) {
  int cls = MPI_SUCCESS;
  if (o.rc != MPI_SUCCESS) MPI_Error_class(o.rc, &cls);
  return cls == MPI_ERR_OTHER && o.message.find(step) != std::string::npos;
}

// One communicator: allgather, alltoall after it, allgather again; then Info cartplan_grid_dims.
void picks(Harness& h) {
  MPI_Comm g = complete_graph(h, nullptr);
  expect(h, run(h, g, "allgather"), 4, "allgather auto (the 4-D grid is auto's for allgather too)");
  expect(h, run(h, g, "alltoall"), 4, "alltoall auto after an allgather init (the same table)");
  expect(h, run(h, g, "allgather"), 4, "allgather auto after an alltoall init");
  MPI_Comm_free(&g);
  g = complete_graph(h, "3");
  expect(h, run(h, g, "allgather"), 3, "allgather auto with Info cartplan_grid_dims=3");
  expect(h, run(h, g, "alltoall"), 3, "alltoall auto with Info cartplan_grid_dims=3");
  MPI_Comm_free(&g);
  g = complete_graph(h, "4");
  expect(h, run(h, g, "allgather"), 4, "allgather auto with Info cartplan_grid_dims=4");
  MPI_Comm_free(&g);
}

// What each init constructs: failing the 4-D grid's construction fails the inits that construct
// it (auto's allgather and alltoall by default, and with cartplan_grid_dims=4), not those whose
// Info names the 3-D grid.
void constructions(Harness& h) {
  setenv("CARTPLAN_TEST_FAIL", "pattern-grid4", 1);
  for (const char* op : {"allgather", "alltoall"}) {
    MPI_Comm g = complete_graph(h, nullptr);
    const Outcome o = run(h, g, op);
    h.check(failed_with(o, "CARTPLAN_TEST_FAIL=pattern-grid4"), std::string(op) + " auto constructs the 4-D grid (" + o.message + ")");
    MPI_Comm_free(&g);
  }
  MPI_Comm g = complete_graph(h, "3");
  expect(h, run(h, g, "allgather"), 3, "allgather auto with Info cartplan_grid_dims=3, the 4-D grid's construction failing: not constructed");
  expect(h, run(h, g, "alltoall"), 3, "alltoall auto with Info cartplan_grid_dims=3, the 4-D grid's construction failing: not constructed");
  MPI_Comm_free(&g);
  g = complete_graph(h, "4");
  const Outcome asked = run(h, g, "allgather");
  h.check(failed_with(asked, "CARTPLAN_TEST_FAIL=pattern-grid4"),
          "allgather auto with Info cartplan_grid_dims=4 constructs the 4-D grid (" + asked.message + ")");
  MPI_Comm_free(&g);
  unsetenv("CARTPLAN_TEST_FAIL");
}

// A model where a message costs 10 us and a byte next to nothing: on the complete graph of 16
// ranks the grids cost 6, 5 and 4 messages per rank (2-D, 3-D, 4-D) against linear's 15.
void use_message_model(Harness& h) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir && *dir ? dir : "/tmp") + "/grid4_auto_model_" + std::to_string(h.rank) + ".json";
  FILE* f = std::fopen(path.c_str(), "w");
  h.check(f != nullptr, "writes the cost model " + path);
  if (!f) return;
  std::fputs("{\"schema\": \"cartplan.cost_model/1\", \"alpha_us\": 10.0, \"beta_us_per_byte\": 0.000001}\n", f);
  std::fclose(f);
  setenv("CARTPLAN_COST_MODEL", path.c_str(), 1);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  h.check(cartplan::mpitest::has_4d_grid(h.size), "run at a size with a 4-D grid (16)");
  if (cartplan::mpitest::has_4d_grid(h.size) && cartplan::mpitest::has_3d_grid(h.size)) {
    use_message_model(h);
    picks(h);
    constructions(h);
  }
  return h.finish("graph_grid4_auto_test");
}
