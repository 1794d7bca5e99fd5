// Process-wide progress of pending graph exchanges: the registry every start adds to, starting,
// testing and waiting, and the callback the MPI library's progress engine runs (progress_hook.h).
// The reasoning is exchange_progress.cc's: a later phase can only be posted by cartplan code,
// so every cartplan call advances every pending exchange (graph and Cartesian alike: the
// Cartesian registry calls this one through Exchange::set_other_progress), and
// while some graph exchange still has a phase to post, the hook runs poll() inside every MPI
// call that waits or tests. poll() never re-enters (the MPI calls it makes run the progress
// engine again) and under MPI_THREAD_MULTIPLE only try-locks the registry.
#include <atomic>
#include <cassert>
#include <mutex>
#include <vector>

#include "backends/mpi/graph_exchange.h"
#include "backends/mpi/hot_tls.h"
#include "backends/mpi/pending_requests.h"
#include "backends/mpi/progress_hook.h"

namespace cartplan::mpi {
namespace {

// The pending graph exchanges and their demand on the hook (pending_requests.h), and the lock.
// poll() is registered while some exchange demands it and a while after, like the Cartesian
// registry's: a graph request per iteration registers it once, not once per request.
struct Registry : PendingRequests<GraphExchange> {
  constexpr Registry() : PendingRequests(&GraphExchange::progress_poll) {}
  std::mutex mu;
  // pending.size(), readable without holding the registry: the Cartesian registry asks it on
  // every blocking call's completion, where taking the hold costs more than the question.
  std::atomic<std::size_t> pending_count{0};
};

// Constant-initialized, as the Cartesian registry (exchange_progress.cc).
constinit Registry the_registry;
thread_local int held CARTPLAN_HOT_TLS = 0;  // this thread's depth inside the registry (hot_tls.h)
thread_local std::vector<GraphExchange*> snapshot CARTPLAN_HOT_TLS;  // step_all's copy of the list

// Holds the registry: the mutex under MPI_THREAD_MULTIPLE, reentrant on one thread. The
// depth shared with the Cartesian registry (Exchange::enter_hold) keeps finish callbacks from
// running while either is held; the last release runs them.
class Hold {
 public:
  Hold() : multiple_(thread_multiple()) {
    Exchange::enter_hold();
    if (held++ == 0 && multiple_) the_registry.mu.lock();
  }
  ~Hold() {
    if (--held == 0 && multiple_) the_registry.mu.unlock();
    Exchange::leave_hold();  // finish callbacks run outside both registries
  }
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;

 private:
  const bool multiple_;
};

void step_graph_exchanges() {
  Hold hold;
  GraphExchange::step_all_pending();
}

// Cartesian calls (Cart_wait on a Cartesian request, ...) advance graph exchanges too, and
// block alone in MPI only when none is pending.
const bool registered = [] {
  Exchange::set_other_progress(Exchange::OtherProgress{&the_registry.pending_count, &step_graph_exchanges});
  return true;
}();

}  // namespace

int GraphExchange::progress_poll() {
  Registry& r = the_registry;
  if (held > 0) return 0;
  if (r.hook_demand.load(std::memory_order_relaxed) == 0) {
    r.hook.idle_round(thread_multiple());
    return 0;
  }
  const bool multiple = thread_multiple();
  if (multiple && !r.mu.try_lock()) return 0;
  ++held;
  Exchange::enter_hold();
  const int events = step_all();
  --held;
  if (multiple) r.mu.unlock();
  Exchange::leave_hold();
  return events;
}

int GraphExchange::step_all() {
  std::vector<GraphExchange*> list;
  list.swap(snapshot);  // a step may finish one and take it off the registry: walk a copy
  list.assign(the_registry.pending.begin(), the_registry.pending.end());
  int events = 0;
  for (GraphExchange* e : list) {
    if (!e->pending_) continue;
    const std::size_t phase = e->phase_;
    e->step(false);
    events += !e->pending_ || e->phase_ != phase ? 1 : 0;
  }
  list.swap(snapshot);  // keeps its capacity: no allocation per progress round
  return events;
}

void GraphExchange::set_pending(bool pending) {
  assert(held > 0 && "the registry is held");
  Registry& r = the_registry;
  if (r.set_pending(this, pending_, pending, &hooked_) && finish_fn_) Exchange::defer_finish(finish_fn_, finish_ctx_);
  pending_ = pending;
  r.pending_count.store(r.pending.size(), std::memory_order_release);
}

// An exchange with a later phase still to post, or whose owner must hear of its end (the
// drop-in's MPI requests), asks for the hook once its first phase is posted.
void GraphExchange::request_hook() { the_registry.demand_hook(pending_, finish_fn_ || (hook_phases_ && messaging_phases_ >= 2), &hooked_); }

MpiStatus GraphExchange::start() {
  if (active_) return mpi_error(MPI_ERR_REQUEST, "the request is already active (start it again only after wait or test completes it)");
  Hold hold;
  active_ = true;
  error_ = build_error_;
  phase_ = 0;
  phase_started_ = false;
  set_pending(true);
  step(false, true);
  request_hook();
  return {};
}

MpiStatus GraphExchange::run_once() {
  MpiStatus s = start();
  if (!s.ok()) return s;
  return wait();
}

MpiStatus GraphExchange::test(bool* done) {
  *done = true;
  if (!active_) return {};
  if (pending_) Exchange::progress_all();  // Cartesian exchanges, then the graph ones
  Hold hold;
  *done = !pending_;
  if (*done) active_ = false;
  return *done ? error_ : MpiStatus{};
}

MpiStatus GraphExchange::wait() {
  if (!active_) return {};
  if (pending_) drive(this);
  active_ = false;
  return error_;
}

void GraphExchange::progress_all() { Exchange::progress_all(); }

void GraphExchange::step_all_pending() { step_all(); }

// Until x's communication is done: alone and single-threaded it blocks in MPI_Waitsome phase by
// phase; otherwise it advances every pending exchange, graph and Cartesian, in turn.
void GraphExchange::drive(GraphExchange* x) {
  for (;;) {
    {
      Hold hold;
      if (!x->pending_) return;
      if (!thread_multiple() && the_registry.pending.size() == 1 && Exchange::pending_count() == 0) {
        x->step(true);
        if (!x->pending_) return;
      }
    }
    Exchange::progress_all();  // Cartesian exchanges, then the graph ones
  }
}

}  // namespace cartplan::mpi
