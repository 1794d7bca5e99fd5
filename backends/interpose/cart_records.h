// CartRecords: the grids of the Cartesian communicators the program created (MPI_Cart_create),
// kept so that a distributed graph built later over the same group can be read on that grid.
// Programs commonly compute neighbours with MPI_Cart_rank and then build the graph on
// MPI_COMM_WORLD. The list is bounded (the most recent few), so create/free loops do not grow it.
//
//   record_cart(cart);                                  // after PMPI_Cart_create
//   std::optional<CartGrid> g = find_cart(graph_comm);  // same processes, any order
#pragma once

#include <mpi.h>

#include <optional>
#include <vector>

namespace cartplan::interpose {

struct CartGrid {
  std::vector<int> dims, periods;
  // Graph-communicator rank -> rank in the Cartesian communicator (row-major grid rank).
  std::vector<int> grid_rank;
};

void record_cart(MPI_Comm cart);
// The most recent recorded grid whose group has exactly the processes of `comm`.
std::optional<CartGrid> find_cart(MPI_Comm comm);
// Releases the groups (MPI_Finalize).
void clear_carts();

}  // namespace cartplan::interpose
