// Spare private communicators for an accelerated communicator's next MPI_Comm_idup: made while
// every rank is in a blocking collective call (graph creation, MPI_Comm_dup), so that
// MPI_Comm_idup can give its duplicate a complete state without any communication or waiting
// (comm_table.cc, idup_graph_entry, says why nothing may wait there or later). A stencil needs
// one (its internal communicator), a graph that is not a stencil two (mpi::GraphComm's).
//
//   SpareComms spare;
//   mpi::MpiStatus s = make_spare(graph, SpareFor::kGraph, &spare);  // collective: two MPI_Comm_dup
//   if (spare.ready()) { MPI_Comm exec = spare.exec, setup = spare.setup; spare.release(); ... }
#pragma once

#include <mpi.h>

#include "backends/mpi/status.h"

namespace cartplan::interpose {

// Duplicates of an accelerated communicator (a stencil's internal one, or a graph's), freed with
// their owner unless release()d: `exec` for the duplicate's own traffic (a stencil's internal
// communicator, a graph's collectives), `setup` for a graph's set-up messages (MPI_COMM_NULL for
// a stencil), as mpi::NeighborhoodComm and mpi::GraphComm have them.
struct SpareComms {
  MPI_Comm exec = MPI_COMM_NULL, setup = MPI_COMM_NULL;
  SpareComms() = default;
  SpareComms(const SpareComms&) = delete;
  SpareComms& operator=(const SpareComms&) = delete;
  ~SpareComms();
  bool ready() const { return exec != MPI_COMM_NULL; }  // make_spare made all it was asked for, or none
  void release() { exec = setup = MPI_COMM_NULL; }      // now owned elsewhere
};

enum class SpareFor { kStencil, kGraph };  // one duplicate (exec), or two (exec, setup)

// Collective over `comm` (every rank at the same blocking call): *out gets the duplicates, with
// MPI_ERRORS_RETURN; on an error it holds none. The caller agrees on the outcome (a graph) or,
// like the stencil's own internal duplicate, relies on MPI_Comm_dup failing on every rank alike.
mpi::MpiStatus make_spare(MPI_Comm comm, SpareFor use, SpareComms* out);

}  // namespace cartplan::interpose
