// The hook into the MPI library's own progress engine: a callback that the library calls from
// inside every MPI call that waits or tests, so that cartplan's pending exchanges advance while
// the program sits in MPI_Recv, MPI_Barrier or any other blocking call.
//
// Open MPI (4.1) has one: every call that waits or tests (point-to-point, probe, every
// collective, MPI_Wait*/MPI_Test*, one-sided synchronization, file I/O, MPI_Finalize) loops on
// opal_progress(), and opal_progress() calls each function registered with
// opal_progress_register(int (*)(void)) (the callback returns how many events it handled). That
// is how Open MPI's libnbc progresses its non-blocking collective schedules. These functions are
// internal to Open MPI (libopen-pal), not part of the MPI standard, so they are looked up at run
// time (dlsym) instead of being linked: cartplan loads and runs with any MPI (SimGrid's SMPI, an
// MPI without them), and there progress_hook_available() is false and pending exchanges advance
// only inside cartplan's own calls (the documented fallback).
//
//   if (progress_hook_register(&poll)) { ... }   // poll() now runs inside every MPI call
//   progress_hook_unregister(&poll);
#pragma once

#include <atomic>

namespace cartplan::mpi {

using ProgressCallback = int (*)();

// Whether the running MPI library offers the hook (looked up once; inline, as every start and
// every interposed completion call asks). CARTPLAN_PROGRESS=cartplan in the environment turns
// it off (progress only inside cartplan's calls, as before the hook).
bool progress_hook_lookup();  // looks up, remembers in progress_hook_state, returns it
inline std::atomic<int> progress_hook_state{-1};  // -1 not looked up yet, else 0 / 1
inline bool progress_hook_available() {
  const int s = progress_hook_state.load(std::memory_order_relaxed);
  return s < 0 ? progress_hook_lookup() : s == 1;
}
// Registers `cb` (false when the hook is unavailable or registration failed). Not idempotent:
// the caller keeps track of whether it is registered.
bool progress_hook_register(ProgressCallback cb);
void progress_hook_unregister(ProgressCallback cb);

}  // namespace cartplan::mpi
