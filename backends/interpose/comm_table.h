// The table of accelerated communicators: for each distributed-graph communicator that
// detection accepted, cartplan's neighbourhood state (with its private internal communicator)
// and the block orders that map the program's list positions to the neighbourhood. Kept up to
// date by the interposed MPI_Dist_graph_create[_adjacent], MPI_Comm_dup[_with_info],
// MPI_Comm_free and MPI_Finalize.
//
//   on_graph_created(graph, info);            // collective: detection, then maybe an entry
//   if (AcceleratedComm* a = find_comm(graph)) ... a->nc, a->order
#pragma once

#include <mpi.h>

#include <memory>
#include <string>

#include "backends/mpi/exchange.h"
#include "backends/mpi/neighborhood_comm.h"
#include "engine/edge_match.h"

namespace cartplan::interpose {

struct AcceleratedComm {
  std::unique_ptr<mpi::NeighborhoodComm> nc;
  engine::EdgeOrder order;  // user position -> neighbourhood index
  int indegree = 0, outdegree = 0;
  mpi::ExchangeSpec scratch;  // reused by blocking calls (no allocation per call)
};

// Collective over `graph` (just created). Registers the communicator if detection accepts it;
// with CARTPLAN_VERBOSE=1, rank 0 prints one line either way.
void on_graph_created(MPI_Comm graph, MPI_Info info);
// Collective (inside MPI_Comm_dup): the duplicate of an accelerated communicator is accelerated
// too, with its own internal communicator.
void on_comm_dup(MPI_Comm old_comm, MPI_Comm new_comm);
// Before PMPI_Comm_free: releases the entry (pending exchanges finish first).
void on_comm_free(MPI_Comm comm);
// Before PMPI_Finalize: releases every entry.
void clear_comms();

// nullptr when `comm` is not accelerated. Cheap (one hash lookup; nothing when the table is empty).
AcceleratedComm* find_comm(MPI_Comm comm);
std::size_t accelerated_count();

}  // namespace cartplan::interpose
