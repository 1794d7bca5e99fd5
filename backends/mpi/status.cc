// Turns return codes of MPI calls made inside cartplan into MpiStatus values with a message.
#include "backends/mpi/status.h"

namespace cartplan::mpi {

MpiStatus from_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return {};
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) len = 0;
  int cls = rc;
  MPI_Error_class(rc, &cls);
  return MpiStatus{cls, std::string(what) + " failed: " + std::string(text, len)};
}

}  // namespace cartplan::mpi
