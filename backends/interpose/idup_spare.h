// Spare private communicators for an accelerated communicator's next MPI_Comm_idup: made while
// every rank is in a blocking collective call (graph creation, MPI_Comm_dup), so that
// MPI_Comm_idup can give its duplicate a complete state without any communication or waiting
// (comm_table.cc, idup_graph_entry, says why nothing may wait there or later). A stencil needs
// one (its internal communicator), a graph that is not a stencil one too (mpi::GraphComm's
// private communicator).
//
//   SpareComms spare;
//   mpi::MpiStatus s = make_spare(graph, &spare);  // collective: one MPI_Comm_dup
//   if (spare.ready()) { MPI_Comm exec = spare.exec; spare.release(); ... }
#pragma once

#include <mpi.h>

#include "backends/mpi/status.h"

namespace cartplan::interpose {

// A duplicate of an accelerated communicator (a stencil's internal one, or a graph's), freed with
// its owner unless release()d: `exec` for the duplicate's own traffic (a stencil's internal
// communicator, a graph's private one), as mpi::NeighborhoodComm and mpi::GraphComm have it.
struct SpareComms {
  MPI_Comm exec = MPI_COMM_NULL;
  SpareComms() = default;
  SpareComms(const SpareComms&) = delete;
  SpareComms& operator=(const SpareComms&) = delete;
  ~SpareComms();
  bool ready() const { return exec != MPI_COMM_NULL; }  // make_spare made it
  void release() { exec = MPI_COMM_NULL; }              // now owned elsewhere
};

// Collective over `comm` (every rank at the same blocking call): *out gets the duplicate, with
// MPI_ERRORS_RETURN; on an error it holds none. The caller agrees on the outcome (a graph) or,
// like the stencil's own internal duplicate, relies on MPI_Comm_dup failing on every rank alike.
mpi::MpiStatus make_spare(MPI_Comm comm, SpareComms* out);

}  // namespace cartplan::interpose
