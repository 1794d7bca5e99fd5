// Remembering and reporting the do-no-harm verdicts per call shape.
#include "backends/interpose/verdicts.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <functional>
#include <system_error>
#include <thread>

namespace cartplan::interpose {
namespace {

constexpr std::size_t kRemembered = 32;

// Runs a verdict's planning (make_plan, binding, the rule's predictions: thousands of small
// allocations, some kept in the plan cache) on a short-lived helper thread and waits for it.
// glibc's malloc gives each thread an arena of its own, so planning leaves no holes between
// long-lived chunks in the program's heap; in such holes Open MPI's libnbc, which grows each
// call's schedule with realloc, has to copy instead of growing in place, and a passed-through
// MPI_Ineighbor_* became slower than without the library (docs/dropin.md, "Do no harm").
// The thread makes no MPI call (Open MPI runs threads of its own in every process, whatever the
// thread level); where no thread can be created, planning runs here. An exception thrown by the
// planning (bad_alloc) reaches the caller as it would without the thread.
//
// The helper blocks every signal: a process-directed signal (SIGINT, SIGTERM, SIGALRM, a
// profiler's SIGPROF, a checkpointer's SIGUSR1) goes to any thread that does not block it, and
// the program's handlers expect to run on the program's own threads (a handler that reads
// thread-local state, a sigwait thread that never sees its signal, a handler that longjmps).
// A new thread inherits its creator's mask, so the mask is set around the creation only and
// the program's thread gets its own back at once.
// Blocks every signal while it lives and restores the creator's mask when it goes, on every
// path out (a thread that cannot be created, a bad_alloc from std::thread's constructor).
class SignalsBlocked {
 public:
  SignalsBlocked() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &program_);
  }
  ~SignalsBlocked() { pthread_sigmask(SIG_SETMASK, &program_, nullptr); }
  SignalsBlocked(const SignalsBlocked&) = delete;
  SignalsBlocked& operator=(const SignalsBlocked&) = delete;

 private:
  sigset_t program_;
};

void away_from_program_heap(const std::function<void()>& f) {
  std::exception_ptr thrown;
  std::thread helper;
  try {
    SignalsBlocked during_creation;
    helper = std::thread([&] {
      try {
        f();
      } catch (...) {
        thrown = std::current_exception();
      }
    });
  } catch (const std::system_error&) {
    f();
    return;
  }
  helper.join();
  if (thrown) std::rethrow_exception(thrown);
}

std::string shape(ir::Op op, Form form, const std::vector<std::int64_t>& block_bytes) {
  std::string s = std::string(ir::to_string(op)) + " " + form_name(form) + " ";
  if (block_bytes.size() == 1) return s + std::to_string(block_bytes[0]) + "-byte blocks";
  return s + "blocks of " + std::to_string(block_bytes.size()) + " agreed sizes";
}

bool remember(AcceleratedComm& a, ir::Op op, Form form, const std::vector<std::int64_t>& block_bytes, const Verdict& v) {
  std::int64_t key = 0;
  for (std::int64_t b : block_bytes) key += b;
  key /= static_cast<std::int64_t>(block_bytes.size());
  if (a.decisions.size() >= kRemembered) a.decisions.erase(a.decisions.begin());
  a.decisions.push_back({op, form, key, v.accelerate});
  if (a.reporter)
    std::fprintf(stderr, "cartplan_interpose: communicator %d %s: %s (%s)\n", a.serial, shape(op, form, block_bytes).c_str(),
                 v.accelerate ? "accelerated" : "passed through", v.why.c_str());
  return v.accelerate;
}

}  // namespace

bool accelerated(AcceleratedComm& a, ir::Op op, Form form, std::int64_t bytes) {
  for (auto it = a.decisions.rbegin(); it != a.decisions.rend(); ++it)
    if (it->op == op && it->form == form && it->bytes == bytes) return it->accelerate;
  Verdict v;
  away_from_program_heap([&] {
    std::shared_ptr<const mpi::BoundPlanEntry> entry;
    const mpi::MpiStatus s = a.nc->plan_for(op, a.nc->options(), bytes, &entry);
    // No plan (an error the call would report): Open MPI reports its own errors instead.
    v = s.ok() ? judge(*a.nc, entry->plan, {bytes}, form, a.per_core) : Verdict{false, "no plan: " + s.message};
  });
  return remember(a, op, form, {bytes}, v);
}

bool accept_agreed(AcceleratedComm& a, const ir::Plan& plan, const std::vector<std::int64_t>& block_bytes, Form form) {
  std::vector<std::int64_t> sizes;  // a block no rank uses (-1) costs nothing
  for (std::int64_t b : block_bytes) sizes.push_back(std::max<std::int64_t>(b, 0));
  Verdict v;
  away_from_program_heap([&] { v = judge(*a.nc, plan, sizes, form, a.per_core); });
  return remember(a, plan.op(), form, sizes, v);
}

}  // namespace cartplan::interpose
