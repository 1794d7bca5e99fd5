// Which of a communicator's processes share a node, for the cost model's placement terms
// (engine/placement.h): block placement, R consecutive ranks per node. Learned once at
// creation from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) (SimGrid's SMPI splits by simulated
// host) and agreed by one MAX reduction. Cart_neighborhood_create runs both on its Cartesian
// communicator after MPI_Cart_create (reordering may renumber), and only where the model prices
// placement; nothing runs per call.
//
//   NodeBlockFlags mine;
//   int rc = node_block_flags(comm, &mine);                 // collective over comm (the split)
//   int all[kNodeBlockWords];  MPI_Allreduce(mine.words, all, kNodeBlockWords, MPI_INT, MPI_MAX, comm);
//   int ranks_per_node = agreed_ranks_per_node(all, size);  // 0: not block placement, or one node
//   rc = ranks_per_node(comm, &ranks_per_node);             // the same in one call
#pragma once

#include <mpi.h>

namespace cartplan::mpi {

// The words a rank contributes to the MAX reduction: its node's size; minus its node's size,
// or INT_MIN on the node that holds the communicator's last rank (so the MAX is minus the
// smallest full node); 1 if its node's ranks are not consecutive in the communicator, else 0.
inline constexpr int kNodeBlockWords = 3;
struct NodeBlockFlags {
  int words[kNodeBlockWords] = {1, -1, 0};
};

// Fills `*mine` (collective over comm: one MPI_Comm_split_type and MPI_Comm_free, through PMPI
// so that the drop-in can call it); returns an MPI error code. On failure `*mine` says "not
// block placement", so a caller that still takes part in the reduction agrees on 0 everywhere.
int node_block_flags(MPI_Comm comm, NodeBlockFlags* mine);

// R when every node holds R consecutive ranks (the last node at most R), from the reduced
// words; 0 when placement is not by blocks or one node holds all `size` ranks.
int agreed_ranks_per_node(const int reduced[kNodeBlockWords], int size);

// Both steps and their MAX reduction, for programs that print the model's predictions beside
// measured times (tools/halo, bench/), and for Cart_neighborhood_create on its Cartesian
// communicator: collective over comm; *ranks_per_node as creation agrees on it (0 where a rank
// could not learn its node). Returns the reduction's MPI error code.
int ranks_per_node(MPI_Comm comm, int* ranks_per_node);

}  // namespace cartplan::mpi
