// The grid graph tests' runs (graph_grid4_auto_test, graph_gridmost_auto_test): a complete graph
// with Info for auto or a forced grid, a persistent allgather or alltoall init checked against
// MPI's own neighbourhood collective twice, and which algorithm and grid it ran.
//
//   MPI_Comm g = complete_graph(h, "auto", "4");        // auto, linear and the grids, 4-D at most
//   expect(h, run(h, g, "allgather"), 4, "allgather auto with cartplan_grid_dims=4");
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/harness.h"

namespace cartplan::mpitest {

// Every rank sends to every other rank; Info cartplan_algorithm (auto: with
// cartplan_auto_candidates=grid, linear and the grids) and, if given, cartplan_grid_dims.
inline MPI_Comm complete_graph(Harness& h, const char* algorithm, const char* grid_dims) {
  std::vector<int> peers;
  for (int r = 0; r < h.size; ++r)
    if (r != h.rank) peers.push_back(r);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", algorithm);
  if (std::string(algorithm) == "auto") MPI_Info_set(info, "cartplan_auto_candidates", "grid");
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

// A persistent init of `op` ("allgather" or "alltoall", 2 ints per block, rank- and
// peer-dependent), its algorithm, and whether two runs deliver MPI's result. `degree`: the
// rank's number of sources (and, for alltoall, destinations); -1: a complete graph's p - 1.
inline Outcome run(Harness& h, MPI_Comm g, const std::string& op, int degree = -1) {
  const bool a2a = op == "alltoall";
  const int n = degree < 0 ? h.size - 1 : degree, ints = 2;
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

inline void expect(Harness& h, const Outcome& o, int grid_dims, const std::string& what) {
  h.check(o.rc == MPI_SUCCESS && o.delivered, what + ": delivers MPI's result (" + o.message + ")");
  h.check(o.algorithm == CART_GRAPH_GRID && o.grid_dims == grid_dims,
          what + ": runs the " + std::to_string(grid_dims) + "-D grid, got algorithm " + std::to_string(o.algorithm) + " with " +
              std::to_string(o.grid_dims) + " dimensions");
}

inline bool failed_with(const Outcome& o, const char* step) {
  int cls = MPI_SUCCESS;
  if (o.rc != MPI_SUCCESS) MPI_Error_class(o.rc, &cls);
  return cls == MPI_ERR_OTHER && o.message.find(step) != std::string::npos;
}

// A model where a message costs 10 us and a byte next to nothing (harness.h's write_cost_model,
// one file per rank under `stem`), set as CARTPLAN_COST_MODEL: on a complete graph the grid with
// the fewest messages per rank is the cheapest candidate.
inline void use_message_model(Harness& h, const std::string& stem) {
  const std::string path = write_cost_model(h.rank, stem, 10.0, 0.000001);
  std::FILE* f = std::fopen(path.c_str(), "r");
  h.check(f != nullptr, "writes the cost model " + path);
  if (!f) return;
  std::fclose(f);
  setenv("CARTPLAN_COST_MODEL", path.c_str(), 1);
}

}  // namespace cartplan::mpitest
