// ActorKill: the exception SimGrid throws to unwind a simulated rank it kills (MPI_Abort on any
// rank kills every rank of MPI_COMM_WORLD under SMPI); it must pass every catch of ours.
//
//   try { ... } catch (const ActorKill&) { throw; } catch (...) { /* our own errors */ }
//
// SimGrid's rule (simgrid/Exception.hpp, ForcefulKillException): an actor must never survive it.
// Swallowed by a catch (...), the killed rank went on, reported "internal error: unknown exception"
// and called MPI_Abort itself, and SimGrid ended the run with "Deadlock detected". In the Open MPI
// build ActorKill is a type nothing throws, so such a catch clause changes nothing there.
#pragma once

#ifdef CARTPLAN_SMPI
#include <simgrid/Exception.hpp>
#endif

namespace cartplan::mpi {

#ifdef CARTPLAN_SMPI
using ActorKill = simgrid::ForcefulKillException;
#else
struct ActorKill {};
#endif

}  // namespace cartplan::mpi
