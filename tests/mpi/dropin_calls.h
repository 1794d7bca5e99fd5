// The drop-in's count of the collective calls it ran itself on a communicator, and whether it
// found a stencil or a graph it accelerates behind one, for test programs that run with or without
// it (preloaded, or linked with -rdynamic so that dlsym finds it).
//
//   if (dropin_accelerated_calls(comm) < expected) ...   // -2: no drop-in loaded
//   if (dropin_interposed(comm) != 1) ...                 // -2: no drop-in loaded
#pragma once

#include <dlfcn.h>
#include <mpi.h>

// CARTPLAN_Accelerated_calls(comm) (backends/interpose/wrappers.cc) if the drop-in is loaded,
// else -2.
inline long dropin_accelerated_calls(MPI_Comm comm) {
  using Count = long (*)(MPI_Comm);
  auto count = reinterpret_cast<Count>(dlsym(RTLD_DEFAULT, "CARTPLAN_Accelerated_calls"));
  return count ? count(comm) : -2;
}

// CARTPLAN_Interposed(comm) (1: the drop-in may accelerate calls on comm, 0: it passes them
// through) if the drop-in is loaded, else -2.
inline int dropin_interposed(MPI_Comm comm) {
  using Interposed = int (*)(MPI_Comm);
  auto interposed = reinterpret_cast<Interposed>(dlsym(RTLD_DEFAULT, "CARTPLAN_Interposed"));
  return interposed ? interposed(comm) : -2;
}
