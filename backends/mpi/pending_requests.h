// The list of pending requests that each progress registry keeps (the Cartesian one in
// exchange_progress.cc, the graph one in graph_progress.cc), and the demand on the progress hook
// that their requests make: one bookkeeping for both kinds of exchange.
//
// A request is pending while its communication is under way: it enters the list when it starts
// and leaves it when it finishes. While pending it may demand the hook (progress_hook.h), so that
// its later phases are posted inside any MPI call; the hook is registered while some request
// demands it (and lingers a while after: LingeringHook).
//
// Every member function runs with the registry held (its Hold, under MPI_THREAD_MULTIPLE its
// mutex), so `pending` and the requests' `*hooked` flags need no lock of their own. hook_demand
// alone is atomic: the registry's poll() reads it without the hold, to return at once when
// nothing demands it.
//
//   struct Registry : PendingRequests<Exchange> { ... };  // PendingRequests(&Exchange::progress_poll)
//   if (registry.set_pending(this, pending_, pending, &hooked_)) { /* it left: finished */ }
//   registry.demand_hook(pending_, wants, &hooked_);
#pragma once

#include <algorithm>
#include <atomic>
#include <vector>

#include "backends/mpi/progress_hook.h"

namespace cartplan::mpi {

template <class Request>
struct PendingRequests {
  constexpr explicit PendingRequests(ProgressCallback poll) : hook(poll) {}

  // `request` goes from pending `was` to `now`: it enters the list or leaves it; leaving gives
  // back its demand on the hook (*hooked). True when it left (its communication finished).
  bool set_pending(Request* request, bool was, bool now, bool* hooked) {
    if (now && !was) pending.push_back(request);
    if (now || !was) return false;
    pending.erase(std::find(pending.begin(), pending.end(), request));
    if (*hooked) {
      *hooked = false;
      hook_demand.fetch_sub(1, std::memory_order_relaxed);  // poll() lingers (LingeringHook)
    }
    return true;
  }

  // A pending request that `wants` the hook (later phases to post inside other MPI calls, or an
  // owner that must hear of its end) and has not demanded it yet: the first demand registers the
  // hook. Nothing where the MPI library has none.
  void demand_hook(bool pending_now, bool wants, bool* hooked) {
    if (!pending_now || *hooked || !wants || !progress_hook_available()) return;
    *hooked = true;
    if (hook_demand.fetch_add(1, std::memory_order_relaxed) == 0) hook.want();
  }

  std::vector<Request*> pending;    // in the order they were started
  std::atomic<int> hook_demand{0};  // pending requests that demand the hook (poll() reads it unheld)
  LingeringHook hook;               // poll(), registered while demanded and a while after
};

}  // namespace cartplan::mpi
