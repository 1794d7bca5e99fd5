// The wording of another rank's failure learned from an agreement (another_rank.h).
#include "backends/mpi/another_rank.h"

#include <mpi.h>

namespace cartplan::mpi {

// The classes the library returns for a caller's mistake (its mpi_error calls on arguments,
// Info values, requests, block sizes that differ between ranks); any other class (running out
// of memory, MPI's or our own failure, a tag space too small) is not the caller's doing.
bool argument_class(int cls) noexcept {
  switch (cls) {
    case MPI_ERR_ARG:
    case MPI_ERR_BUFFER:
    case MPI_ERR_COMM:
    case MPI_ERR_COUNT:
    case MPI_ERR_DIMS:
    case MPI_ERR_INFO:
    case MPI_ERR_INFO_KEY:
    case MPI_ERR_INFO_NOKEY:
    case MPI_ERR_INFO_VALUE:
    case MPI_ERR_OP:
    case MPI_ERR_RANK:
    case MPI_ERR_REQUEST:
    case MPI_ERR_ROOT:
    case MPI_ERR_TOPOLOGY:
    case MPI_ERR_TRUNCATE:
    case MPI_ERR_TYPE: return true;
    default: return false;
  }
}

const char* another_rank_did(int cls) noexcept {
  if (cls == MPI_ERR_NO_MEM) return "ran out of memory in ";
  return argument_class(cls) ? "passed invalid arguments to " : "failed in ";
}

std::string another_rank_failed(int cls, std::string_view where) {
  return std::string("another rank ") + another_rank_did(cls) + std::string(where) + " (error class " + std::to_string(cls) + " there)";
}

}  // namespace cartplan::mpi
