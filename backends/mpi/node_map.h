// Which of a communicator's processes share a node, for the cost model's placement terms
// (engine/placement.h): block placement (R consecutive ranks per node) or cyclic placement (rank
// r on node r mod N). Learned once at creation from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)
// (SimGrid's SMPI splits by simulated host) and agreed by one MAX reduction. Cart_neighborhood_create
// runs both on its Cartesian communicator after MPI_Cart_create (reordering may renumber), and
// only where the model prices placement; nothing runs per call.
//
//   NodeBlockFlags mine;
//   int rc = node_block_flags(comm, &mine);                 // collective over comm (the split)
//   int all[kNodeWords];  MPI_Allreduce(mine.words, all, kNodeWords, MPI_INT, MPI_MAX, comm);
//   engine::Placement p = agreed_placement(all, size);     // unknown: neither pattern, or one node
//   rc = node_placement(comm, &p);                          // the same in one call
#pragma once

#include <mpi.h>

#include <climits>
#include <vector>

#include "engine/placement.h"

namespace cartplan::mpi {

// The words a rank contributes to the MAX reduction. Block (the first kNodeBlockWords): its
// node's size; minus its node's size, or INT_MIN on the node that holds the communicator's last
// rank (so the MAX is minus the smallest full node); 1 if its node's ranks are not consecutive in
// the communicator, else 0. Cyclic (the next kNodeCyclicWords), with the node's ranks g_0 < g_1
// < ... < g_last: the stride g_1 - g_0 and minus it (0 and INT_MIN on a node of one rank, which
// has none); 1 if the node's ranks are not equally spaced, else 0; the least N for which the node
// is a whole class r mod N: max(g_0 + 1, size - g_last).
inline constexpr int kNodeBlockWords = 3;
inline constexpr int kNodeCyclicWords = 4;
inline constexpr int kNodeWords = kNodeBlockWords + kNodeCyclicWords;
struct NodeBlockFlags {
  int words[kNodeWords] = {1, -1, 0, 0, INT_MIN, 0, 0};
};

// The words of a node whose members are `members` (ranks of a communicator of `size`, ascending,
// at least one): what every rank of that node contributes. A pure function.
NodeBlockFlags node_words(const std::vector<int>& members, int size);

// Fills `*mine` (collective over comm: one MPI_Comm_split_type and MPI_Comm_free, through PMPI
// so that the drop-in can call it); returns an MPI error code. On failure `*mine` says "neither
// block nor cyclic", so a caller that still takes part in the reduction agrees on unknown
// everywhere.
int node_block_flags(MPI_Comm comm, NodeBlockFlags* mine);

// R when every node holds R consecutive ranks (the last node at most R), from the reduced
// block words; 0 when placement is not by blocks or one node holds all `size` ranks.
int agreed_ranks_per_node(const int reduced[kNodeBlockWords], int size);

// From all reduced words: block placement where agreed_ranks_per_node finds it; else cyclic over
// N >= 2 nodes when every node is the whole class r mod N of the same N; else unknown.
engine::Placement agreed_placement(const int reduced[kNodeWords], int size);

// Both steps and their MAX reduction, for programs that print the model's predictions beside
// measured times (tools/halo, bench/), and for Cart_neighborhood_create on its Cartesian
// communicator: collective over comm; *placement as creation agrees on it (unknown where a rank
// could not learn its node). Returns the reduction's MPI error code.
int node_placement(MPI_Comm comm, engine::Placement* placement);

}  // namespace cartplan::mpi
