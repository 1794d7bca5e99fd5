// Under SMPI: ending every other simulated rank before MPI_Abort, so that the run ends cleanly.
//
//   kill_other_ranks();          // every other actor of the simulation is killed and unwound
//   MPI_Abort(comm, code);       // SMPI's own message, then this rank
//
// SMPI 3.32's MPI_Abort marks the other ranks dead (ActorImpl::exit) but does not schedule them:
// a rank blocked in a communication at that moment (waiting in MPI_Allreduce, MPI_Recv, MPI_Wait
// for the aborting rank) never runs again, and SimGrid ends the run with "Oops! Deadlock detected
// ... N actors are still running" (reproduced with a plain C program: MPI_Allreduce, then
// MPI_Abort on rank 0). s4u's Actor::kill schedules the killed actor, which then unwinds
// (actor_kill.h) and ends. Kills every actor but the caller (as real MPIs end the whole job on
// MPI_Abort, whatever the communicator): a simulation that runs other actors beside this MPI
// program loses them too. Defined only in the SMPI build (smpi_kill.cc).
#pragma once

namespace cartplan::mpi {

void kill_other_ranks();

}  // namespace cartplan::mpi
