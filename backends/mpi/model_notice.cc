// The CARTPLAN_VERBOSE notice of the cost model found (model_notice.h).
#include "backends/mpi/model_notice.h"

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <string>

namespace cartplan::mpi {

namespace {

// Whether this call says the notice: CARTPLAN_VERBOSE=1, the process's first notice, rank 0 of
// `comm` (every rank counts its first, so that no later communicator's rank 0 says another).
// Once per process, not per job: where processes' first communicators differ (sub-communicators
// after a split), each one's rank 0 says it. Atomic: under MPI_THREAD_MULTIPLE two threads may
// create their first communicators at once.
bool say_notice(MPI_Comm comm) {
  static std::atomic<bool> said{false};
  const char* v = std::getenv("CARTPLAN_VERBOSE");
  if (!v || std::string(v) != "1" || said.exchange(true)) return false;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank == 0;
}

}  // namespace

void verbose_model_lookup_failed(const std::string& why, MPI_Comm comm) {
  if (say_notice(comm)) std::cerr << "cartplan: cost model lookup failed (" << why << "); using the built-in defaults.\n";
}

void verbose_model_notice(const engine::LocatedModel& m, MPI_Comm comm, int np) {
  if (!say_notice(comm)) return;
  if (m.source != engine::ModelSource::kBuiltIn) {
    std::cerr << "cartplan: cost model from " << engine::describe(m) << "\n";
    return;
  }
  std::string where;
  for (const std::string& p : engine::default_cost_model_paths(np, std::getenv)) where += (where.empty() ? "" : " or ") + p;
  std::cerr << "cartplan: no calibrated cost model (CARTPLAN_COST_MODEL is unset and there is none at "
            << (where.empty() ? std::string("the default location: neither $XDG_CONFIG_HOME nor $HOME is set") : where)
            << "); using the built-in defaults. cartplan-calibrate (bench/calibrate in the repository) measures one.\n";
}

}  // namespace cartplan::mpi
