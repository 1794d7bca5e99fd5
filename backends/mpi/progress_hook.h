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
inline std::atomic<int> progress_hook_state __attribute__((visibility("hidden"))){-1};  // -1 not looked up yet, else 0 / 1 (hidden: no GOT load)
inline bool progress_hook_available() {
  const int s = progress_hook_state.load(std::memory_order_relaxed);
  return s < 0 ? progress_hook_lookup() : s == 1;
}
// Registers `cb` (false when the hook is unavailable or registration failed). Not idempotent:
// the caller keeps track of whether it is registered.
bool progress_hook_register(ProgressCallback cb);
void progress_hook_unregister(ProgressCallback cb);

// A callback kept registered while it is wanted and for kLingerRounds progress rounds after
// the last want ended, so that a program that starts a request again soon after the last one
// completed (a persistent request in a loop, a non-blocking call per iteration) pays neither a
// registration nor an unregistration per request (they walk and reshape Open MPI's callback
// array: about 230 instructions a start), and one that stops pays kLingerRounds calls of a few
// instructions. The Cartesian and the graph registries (exchange_progress.cc,
// graph_progress.cc) each own one; its members run with that registry held, or from its
// callback outside any hold.
//
//   LingeringHook hook{&poll};
//   hook.want();                   // demand went from 0 to 1: registered (if not still lingering)
//   // in poll(), while nothing demands it:
//   hook.idle_round(multiple);     // unregisters after kLingerRounds such rounds
class LingeringHook {
 public:
  static constexpr int kLingerRounds = 64;
  explicit constexpr LingeringHook(ProgressCallback cb) : cb_(cb) {}
  void want();
  // Under MPI_THREAD_MULTIPLE (`multiple`) the callback stays registered once it was:
  // unregistering can make Open MPI reshape its callback array while another thread walks it.
  // It then costs one load per progress round while nothing is pending.
  void idle_round(bool multiple);

 private:
  ProgressCallback cb_;
  bool hooked_ = false;
  int idle_rounds_ = 0;  // rounds without demand since it was last wanted
};

}  // namespace cartplan::mpi
