// Spare private communicators for a graph communicator's next MPI_Comm_idup: made while every
// rank is in a blocking collective call (graph creation, MPI_Comm_dup), so that MPI_Comm_idup can
// give its duplicate a complete graph state without any communication or waiting (comm_table.cc,
// on_comm_idup, says why nothing may wait there or later).
//
//   SpareComms spare;
//   mpi::MpiStatus s = make_spare(graph, &spare);      // collective: two MPI_Comm_dup
//   if (spare.ready()) { MPI_Comm exec = spare.exec, setup = spare.setup; spare.release(); ... }
#pragma once

#include <mpi.h>

#include "backends/mpi/status.h"

namespace cartplan::interpose {

// Two duplicates of a graph communicator (for the duplicate's collectives and its set-up
// messages, as mpi::GraphComm has them), freed with their owner unless release()d.
struct SpareComms {
  MPI_Comm exec = MPI_COMM_NULL, setup = MPI_COMM_NULL;
  SpareComms() = default;
  SpareComms(const SpareComms&) = delete;
  SpareComms& operator=(const SpareComms&) = delete;
  ~SpareComms();
  bool ready() const { return exec != MPI_COMM_NULL && setup != MPI_COMM_NULL; }
  void release() { exec = setup = MPI_COMM_NULL; }  // now owned elsewhere
};

// Collective over `comm` (every rank at the same blocking call): *out gets both duplicates, with
// MPI_ERRORS_RETURN; on an error it holds none. The caller agrees on the outcome.
mpi::MpiStatus make_spare(MPI_Comm comm, SpareComms* out);

}  // namespace cartplan::interpose
