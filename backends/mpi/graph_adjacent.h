// Cart_graph_comm_create_adjacent's two ways to a communicator the graph collectives accept:
// MPI_Dist_graph_create_adjacent where MPI implements it, or (SimGrid's SMPI 3.32 declares it
// but aborts in it) a duplicate of the communicator that carries the edge lists and the Info as
// an attribute, which graph_comm.cc reads before asking MPI for a distributed-graph topology.
//
//   MPI_Comm g;
//   MpiStatus s = create_adjacent(MPI_COMM_WORLD, 2, src, 2, dst, MPI_INFO_NULL, &g);
//   const AdjacentLists* lists = adjacent_lists(g);  // nullptr on an MPI distributed graph
#pragma once

#include <mpi.h>

#include "backends/mpi/status.h"
#include "ir/graph/topology.h"

namespace cartplan::mpi {

// What the attribute path attaches to its communicator: this rank's lists in the caller's order,
// and a duplicate of the Info given at creation (MPI_INFO_NULL if none), read as
// MPI_Comm_get_info is read on an MPI distributed graph. MPI_Comm_dup copies both (as MPI
// copies a topology); MPI_Comm_free frees them.
struct AdjacentLists {
  ir::graph::RankEdges edges;
  MPI_Info info = MPI_INFO_NULL;
};

// Info key cartplan_graph_comm: auto (default: MPI's distributed graph where the MPI library
// has one, the attribute under SMPI), dist_graph (MPI's; MPI_ERR_UNSUPPORTED_OPERATION under
// SMPI) or attribute (the attribute everywhere; MPI_Neighbor_* then cannot use the result).
//
// Collective over comm. Checks, before anything is created, with one MPI_Allreduce so that every
// rank returns the same class (MPI_Iallreduce, whose wait advances the process's pending requests:
// progressing_wait.h): degrees >= 0 and arrays present (MPI_ERR_ARG), every listed rank
// in [0, size) (MPI_ERR_RANK; MPI_PROC_NULL is no rank of a distributed graph), an Info value
// (MPI_ERR_INFO_VALUE), and that the lists of all ranks describe one graph: every edge a -> b
// appears as often among a's destinations as among b's sources (MPI_ERR_TOPOLOGY; compared as a
// 64-bit hash sum of the edge multisets, so a mismatch is missed with probability about 2^-64).
// The message of a rank whose own arguments are fine names the first rank that was not.
MpiStatus create_adjacent(MPI_Comm comm, int indegree, const int sources[], int outdegree, const int destinations[],
                          MPI_Info info, MPI_Comm* graphcomm);

// The lists attached by the attribute path (also on duplicates of such a communicator), or nullptr.
const AdjacentLists* adjacent_lists(MPI_Comm comm);

}  // namespace cartplan::mpi
