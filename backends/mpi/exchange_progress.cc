// Process-wide progress of pending exchanges: the registry every start adds to, the lock that
// guards it under MPI_THREAD_MULTIPLE, starting, testing and waiting, and the callback that
// the MPI library's progress engine runs inside every MPI call (progress_hook.h).
//
// Why a pending exchange can never be left waiting for a rank that sits in another MPI call:
// a phase of a plan starts when the previous phase's messages have completed on this rank, and
// only cartplan code can post it. Three places run that code:
//  1. every cartplan call (start, test, wait, the blocking collectives and the *all forms)
//     advances every pending exchange of the process, not only its own;
//  2. the progress hook: while some pending exchange still has a phase to post (or, for the
//     drop-in, a request to complete), poll() is registered with Open MPI's progress engine,
//     which runs it inside every MPI call that waits or tests, whatever the call (MPI_Recv,
//     MPI_Probe, MPI_Ssend, collectives, MPI_Wait* on the program's own requests, one-sided
//     synchronization, file I/O, MPI_Finalize). A rank blocked anywhere in MPI therefore posts
//     its later phases as their inputs arrive, exactly as Open MPI's libnbc does for its own
//     schedules. This is not "finish cartplan's work before a blocking call", which is unsafe
//     (a peer may start its collective only after that blocking call returns): phases are
//     posted as soon as they can be, and never waited for outside the program's own waits;
//  3. without the hook (an MPI that lacks it, or CARTPLAN_PROGRESS=cartplan / Info
//     cartplan_progress=cartplan), only 1 remains: a rank blocked in another MPI call does not
//     advance its exchanges (the documented fallback).
// poll() must not re-enter: the MPI calls cartplan makes while it holds the registry (the
// MPI_Testall of a phase) run the progress engine, hence poll(), again; a thread-local depth
// turns those nested calls into no-ops. Under MPI_THREAD_MULTIPLE poll() only try-locks the
// registry: the thread that holds it is already progressing everything, and a blocking lock
// inside Open MPI's progress engine could deadlock against Open MPI's own locks.
#include <atomic>
#include <cassert>
#include <mutex>
#include <utility>

#include "backends/mpi/actor_kill.h"
#include "backends/mpi/completion.h"
#include "backends/mpi/exchange.h"
#include "backends/mpi/hot_tls.h"
#include "backends/mpi/pending_requests.h"
#include "backends/mpi/progress_hook.h"

namespace cartplan::mpi {
namespace {

// The pending exchanges and their demand on the hook (pending_requests.h), and the lock.
struct Registry : PendingRequests<Exchange> {
  constexpr Registry() : PendingRequests(&Exchange::progress_poll) {}
  std::mutex mu;
};

// One per process, constant-initialized (constinit: a member without a constexpr constructor
// does not compile), so it is ready before any static constructor runs and has no guard on use.
constinit Registry the_registry;
Registry& registry() { return the_registry; }

// The graph exchanges' progress (set once at load time, before any MPI call).
Exchange::OtherProgress other_progress;

// Exchange::set_phase_probe's (set once, before any exchange starts).
Exchange::PhaseProbe phase_probe = nullptr;

bool others_pending() { return other_progress.pending && other_progress.pending->load(std::memory_order_acquire) > 0; }

// This thread's part: how deep it is inside this registry (held), holds of either registry
// (this one and graph_progress.cc's: finish notifications run only at 0, never while some
// registry is held), whether finish notifications wait; the lists behind them are looked up
// only when they are needed (mine()). One plain struct (no construction guard) in the hot TLS
// model (hot_tls.h): reading it is a load, not a call.
struct Depths {
  int held = 0;
  int depth = 0;
  bool notes_waiting = false;
  bool in_poll = false;  // inside progress_poll's step_all (the probe may be consulted)
};
thread_local Depths here CARTPLAN_HOT_TLS;

struct ThreadState {
  bool draining = false;
  std::vector<std::pair<Exchange::FinishFn, void*>> finished;
  std::vector<Exchange*> snapshot;
};

ThreadState& mine() {
  thread_local ThreadState state CARTPLAN_HOT_TLS;
  return state;
}

// Runs the notifications in order; one that finishes more exchanges (it may call MPI, hence the
// hook) appends to the list, and the loop reaches those too. The list keeps its capacity: no
// allocation per call.
void run_finished() {
  ThreadState& ts = mine();
  if (ts.draining) return;
  ts.draining = true;
  for (std::size_t i = 0; i < ts.finished.size(); ++i) {
    const auto [fn, ctx] = ts.finished[i];
    fn(ctx);
  }
  ts.finished.clear();
  here.notes_waiting = false;
  ts.draining = false;
}

// Holds the registry: the mutex under MPI_THREAD_MULTIPLE (otherwise MPI is called from one
// thread at a time), reentrant on one thread. Releasing it runs the finish notifications of the
// exchanges that finished meanwhile, outside the lock.
class Hold {
 public:
  Hold() : multiple_(thread_multiple()) {
    Depths& d = here;
    ++d.depth;
    if (d.held++ == 0 && multiple_) registry().mu.lock();
  }
  ~Hold() {
    Depths& d = here;
    if (--d.held == 0 && multiple_) registry().mu.unlock();
    if (--d.depth == 0 && d.notes_waiting) run_finished();  // Exchange::leave_hold
  }
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;

 private:
  const bool multiple_;
};

}  // namespace

// Two threads asking at once compute the same answer.
bool query_thread_multiple() {
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  const int m = level == MPI_THREAD_MULTIPLE ? 1 : 0;
  thread_multiple_state.store(m, std::memory_order_relaxed);
  return m == 1;
}

int Exchange::progress_poll() {
  Registry& r = registry();
  if (r.hook_demand.load(std::memory_order_relaxed) == 0) {
    if (here.held == 0) r.hook.idle_round(thread_multiple());  // not inside a hold: the registry may be changing
    return 0;
  }
  Depths& d = here;
  if (d.held > 0) return 0;
  const bool multiple = thread_multiple();
  if (multiple && !r.mu.try_lock()) return 0;
  ++d.held;
  ++d.depth;
  d.in_poll = true;
  const int events = step_all();
  d.in_poll = false;
  --d.held;
  if (multiple) r.mu.unlock();
  leave_hold();
  return events;
}

// Steps every pending exchange once; the number that moved on (a phase posted or finished).
int Exchange::step_all() {
  ThreadState& ts = mine();
  std::vector<Exchange*> list;
  list.swap(ts.snapshot);  // a step may finish an exchange and take it off the registry: walk a copy
  list.assign(registry().pending.begin(), registry().pending.end());
  int events = 0;
  for (Exchange* e : list) {
    if (!e->pending_) continue;
    const std::size_t phase = e->phase_;
    const bool started = e->phase_started_;
    e->step(false);
    events += !e->pending_ || e->phase_ != phase || e->phase_started_ != started ? 1 : 0;
  }
  list.swap(ts.snapshot);
  return events;
}

void Exchange::set_phase_probe(PhaseProbe probe) { phase_probe = probe; }

bool Exchange::surely_incomplete(int n, const MPI_Request* requests) {
  return here.in_poll && phase_probe && !phase_probe(n, requests);
}

void Exchange::on_finish(FinishFn fn, void* ctx) {
  finish_fn_ = fn;
  finish_ctx_ = ctx;
}

void Exchange::defer_finish(FinishFn fn, void* ctx) {
  mine().finished.emplace_back(fn, ctx);
  here.notes_waiting = true;
}

void Exchange::run_deferred_finishes() {
  const Depths& d = here;
  if (d.notes_waiting && d.depth == 0) run_finished();
}

void Exchange::enter_hold() { ++here.depth; }

void Exchange::leave_hold() {
  Depths& d = here;
  if (--d.depth == 0 && d.notes_waiting) run_finished();
}

void Exchange::set_pending(bool pending) {
  if (pending == pending_) return;  // run_alone's exchange ends here: it was never registered
  assert(here.held > 0 && "the registry is held");
  if (registry().set_pending(this, pending_, pending, &hooked_) && finish_fn_) defer_finish(finish_fn_, finish_ctx_);
  pending_ = pending;
}

// After the first phase is posted: an exchange that still has phases to post, or whose owner
// must hear of its end (the drop-in's MPI requests), asks for the hook.
void Exchange::request_hook() { registry().demand_hook(pending_, finish_fn_ || (hook_phases_ && messaging_phases_ > 1), &hooked_); }

void Exchange::begin_run() {
  active_ = true;
  error_ = {};
  phase_ = 0;
  phase_started_ = false;
  set_pending(true);
}

MpiStatus Exchange::start() {
  if (active_) return mpi_error(MPI_ERR_REQUEST, "the request is already active (start it again only after wait or test completes it)");
  Hold hold;
  begin_run();
  // Start the schedule: local phases run and the first phase with messages is posted, without
  // polling for its completion (a poll right after posting rarely finds anything and costs a
  // round of Open MPI's progress engine; wait and test poll). The request stays active until
  // wait or test reports completion, as MPI persistent requests do.
  step(false, true);
  request_hook();
  return {};
}

// Alone and single-threaded, as drive() would find it (no other exchange of the process is
// pending, Cartesian or graph, so none can need this thread's progress meanwhile): the whole
// schedule here, blocking in MPI_Waitall phase by phase. The exchange is not entered in the
// registry's list (nothing else could step it; set_pending(false) at its end is then a no-op),
// but the registry is held, so that the progress callback, if Open MPI runs it inside
// MPI_Waitall, returns at once.
bool Exchange::run_alone() {
  if (thread_multiple() || !registry().pending.empty() || others_pending()) return false;
  Depths& d = here;
  ++d.held;
  ++d.depth;
  if (!error_.ok()) clear_error();
  phase_ = 0;
  phase_started_ = false;
  if (one_phase_)
    run_one_phase();
  else
    step(true);
  --d.held;
  if (--d.depth == 0 && d.notes_waiting) run_finished();
  return true;
}

MpiStatus Exchange::run_once() {
  if (active_) return mpi_error(MPI_ERR_REQUEST, "the request is already active");
  if (run_alone()) return error_;
  {
    Hold hold;
    begin_run();
  }
  return wait();
}

MpiStatus Exchange::test(bool* done) {
  *done = true;
  if (!active_) return {};
  if (pending_) progress_all();
  Hold hold;
  *done = !pending_;
  if (*done) active_ = false;
  return *done ? error_ : MpiStatus{};
}

MpiStatus Exchange::wait() {
  if (!active_) return {};
  if (pending_) drive(this);
  active_ = false;
  return error_;
}

void Exchange::progress_all() {
  {
    Hold hold;
    step_all();
  }
  if (other_progress.progress) other_progress.progress();
}

void Exchange::set_other_progress(OtherProgress other) { other_progress = other; }

int Exchange::agree_allreduce(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  // Non-blocking on every rank: MPI matches a blocking collective only with blocking ones, and
  // whether a rank has pending exchanges differs between ranks.
  MPI_Request r = MPI_REQUEST_NULL;
  if (int rc = MPI_Iallreduce(in, out, count, type, op, comm, &r); rc != MPI_SUCCESS) return rc;
  for (int done = 0;;) {
    bool idle = false;
    if (!thread_multiple()) {  // another thread may start an exchange meanwhile: keep testing
      Hold hold;
      idle = registry().pending.empty() && !others_pending();
    }
    if (idle) return completion::wait(&r, MPI_STATUS_IGNORE);  // nothing of ours to advance: block in MPI
    if (int rc = completion::test(&r, &done, MPI_STATUS_IGNORE); rc != MPI_SUCCESS || done) return rc;
    try {
      progress_all();
    } catch (const ActorKill&) {  // SMPI: this rank is being killed, no more MPI calls
      throw;
    } catch (...) {  // the reduction still writes into the caller's buffers: let it finish first
      completion::wait(&r, MPI_STATUS_IGNORE);
      throw;
    }
  }
}

std::size_t Exchange::pending_count() {
  Hold hold;
  return registry().pending.size();
}

void Exchange::drive(Exchange* x) {
  for (;;) {
    {
      Hold hold;
      if (!x->pending_) return;
      // Alone and single-threaded: block in MPI_Waitall phase by phase (no other exchange of
      // this process can need progress meanwhile).
      if (!thread_multiple() && registry().pending.size() == 1 && !others_pending()) {
        x->step(true);
        return;
      }
    }
    progress_all();
  }
}

}  // namespace cartplan::mpi
