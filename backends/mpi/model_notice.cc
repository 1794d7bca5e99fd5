// The CARTPLAN_VERBOSE notice of the cost model found (model_notice.h).
#include "backends/mpi/model_notice.h"

#include <cstdlib>
#include <iostream>
#include <string>

namespace cartplan::mpi {

void verbose_model_notice(const engine::LocatedModel& m, MPI_Comm comm, int np) {
  static bool said = false;
  const char* v = std::getenv("CARTPLAN_VERBOSE");
  if (said || !v || std::string(v) != "1") return;
  said = true;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank != 0) return;
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
