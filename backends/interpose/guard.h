// When an interposed MPI function forwards straight to PMPI: when the layer is disabled
// (CARTPLAN_INTERPOSE=0), and when the call comes from cartplan itself (the MPI backend calls
// MPI_Startall, MPI_Waitall, MPI_Comm_dup... and those resolve to this library's wrappers).
//
//   int MPI_Wait(MPI_Request* r, MPI_Status* s) {
//     if (interpose::forward()) return PMPI_Wait(r, s);
//     interpose::Inside inside;   // cartplan's own MPI calls below go straight to PMPI
//     ...
//   }
#pragma once

namespace cartplan::interpose {

// CARTPLAN_INTERPOSE=0 in the environment disables everything (read at the first interposed
// call; every interposed call tests it, so the answer is a plain global).
// Hidden: the wrappers read it directly, not through the GOT (the library's own copy).
int read_enabled();
inline int enabled_state __attribute__((visibility("hidden"))) = -1;  // -1 not read yet, else 0 / 1
inline bool enabled() { return (enabled_state < 0 ? read_enabled() : enabled_state) != 0; }

// Depth of cartplan code on this thread's stack. Read by every interposed call, so it uses the
// initial-exec TLS model (a plain load instead of a call to __tls_get_addr): right for a library
// that is preloaded or linked into the program, which is how this one is used.
inline thread_local int inside_depth __attribute__((tls_model("initial-exec"))) = 0;

class Inside {
 public:
  Inside() { ++inside_depth; }
  ~Inside() { --inside_depth; }
  Inside(const Inside&) = delete;
  Inside& operator=(const Inside&) = delete;
};

// Whether an interposed call goes straight to PMPI.
inline bool forward() { return inside_depth > 0 || !enabled(); }

// The wrappers' pass-through test without any call (a wrapper whose pass-through calls nothing
// but PMPI sets up no frame, and jumps to PMPI): true when the call certainly goes straight to
// PMPI, because it comes from cartplan, the layer is off, or the layer is on and
// `nothing_of_ours()` (loads only). False when it cannot tell (CARTPLAN_INTERPOSE not read yet):
// then the wrapper's out-of-line part asks forward() and the rest again.
//
//   if (passes_known([&] { return !ours_alive(); })) return PMPI_Wait(r, s);
//   return wait_ours(r, s);   // starts with: if (forward() || !ours_alive()) return PMPI_Wait(r, s);
template <class NothingOfOurs>
__attribute__((always_inline)) inline bool passes_known(const NothingOfOurs& nothing_of_ours) {
  if (inside_depth > 0) return true;
  const int e = enabled_state;
  return e == 0 || (e > 0 && nothing_of_ours());
}

// CARTPLAN_VERBOSE=1: one line per communicator on rank 0.
bool verbose();

}  // namespace cartplan::interpose
