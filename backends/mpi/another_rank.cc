// The wording of another rank's failure learned from an agreement (another_rank.h).
#include "backends/mpi/another_rank.h"

#include <mpi.h>

namespace cartplan::mpi {

std::string another_rank_failed(int cls, std::string_view where) {
  const char* what = cls == MPI_ERR_NO_MEM                                                  ? "ran out of memory in "
                     : cls == MPI_ERR_INTERN || cls == MPI_ERR_OTHER || cls == MPI_ERR_UNKNOWN ? "failed in "
                                                                                                : "passed invalid arguments to ";
  return std::string("another rank ") + what + std::string(where) + " (error class " + std::to_string(cls) + " there)";
}

}  // namespace cartplan::mpi
