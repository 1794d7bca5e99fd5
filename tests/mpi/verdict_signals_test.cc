// Process-directed signals during the drop-in's verdict planning (backends/interpose/verdicts.cc):
// the helper thread that plans blocks every signal, so a SIGPROF of a profiling timer that fires
// while it plans is not handled on it. Each rank runs MPI_Neighbor_alltoall with 400 block sizes
// (a verdict each, planned on the helper) under ITIMER_PROF every 100 us of CPU time, and its
// handler records the threads it ran on: none may be one created after the communicator (the
// program's thread and Open MPI's threads exist before).
#include <dirent.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <set>
#include <string>
#include <vector>

#include "tests/mpi/harness.h"

namespace {

constexpr int kMaxTids = 64;
std::atomic<int> seen_count{0};
std::atomic<long> seen[kMaxTids];

void on_prof(int) {
  const long tid = syscall(SYS_gettid);
  const int n = seen_count.load();
  for (int i = 0; i < n && i < kMaxTids; ++i)
    if (seen[i].load() == tid) return;
  const int at = seen_count.fetch_add(1);
  if (at < kMaxTids) seen[at].store(tid);
}

// The threads of this process now.
std::set<long> threads() {
  std::set<long> s;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') s.insert(std::atol(e->d_name));
    closedir(d);
  }
  return s;
}

std::set<long> tids() {
  std::set<long> s;
  for (int i = 0; i < seen_count.load() && i < kMaxTids; ++i) s.insert(seen[i].load());
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  cartplan::mpitest::Harness h(&argc, &argv);
  struct sigaction sa = {};
  sa.sa_handler = on_prof;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGPROF, &sa, nullptr);
  itimerval every = {{0, 100}, {0, 100}}, off = {};
  setitimer(ITIMER_PROF, &every, nullptr);
  std::vector<int> sources;
  MPI_Comm graph = cartplan::mpitest::open_moore_graph(h.rank, h.size, &sources);
  // Threads that exist now (the program's, Open MPI's) may take the signal: not the helper's.
  const std::set<long> before = threads();
  std::vector<int> send(8 * 400), recv(8 * 400);
  for (int c = 1; c <= 400; ++c) MPI_Neighbor_alltoall(send.data(), c, MPI_INT, recv.data(), c, MPI_INT, graph);
  setitimer(ITIMER_PROF, &off, nullptr);
  std::set<long> others = tids();
  for (long t : before) others.erase(t);
  h.check(others.empty(), "SIGPROF was handled on " + std::to_string(others.size()) + " short-lived thread(s)");
  std::printf("rank %d: SIGPROF handled on %zu thread(s), %zu of them created after MPI_Init\n", h.rank, tids().size(), others.size());
  MPI_Comm_free(&graph);
  return h.finish("verdict_signals_test");
}
