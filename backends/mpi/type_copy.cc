// communication_copy (type_copy.h).
#include "backends/mpi/type_copy.h"

namespace cartplan::mpi {

MpiStatus communication_copy(MPI_Datatype type, MPI_Datatype* out) {
  *out = MPI_DATATYPE_NULL;
  CARTPLAN_MPI_CALL(MPI_Type_contiguous(1, type, out));
  const int rc = MPI_Type_commit(out);
  if (rc == MPI_SUCCESS) return {};
  MPI_Type_free(out);
  return from_mpi(rc, "MPI_Type_commit");
}

}  // namespace cartplan::mpi
