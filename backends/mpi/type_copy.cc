// communication_copy (type_copy.h).
#include "backends/mpi/type_copy.h"

namespace cartplan::mpi {

MpiStatus communication_copy(MPI_Datatype type, MPI_Datatype* out) {
  *out = MPI_DATATYPE_NULL;
  MPI_Aint lb = 0, extent = 0;
  CARTPLAN_MPI_CALL(MPI_Type_get_extent(type, &lb, &extent));
  CARTPLAN_MPI_CALL(MPI_Type_create_resized(type, lb, extent, out));
  const int rc = MPI_Type_commit(out);
  if (rc == MPI_SUCCESS) return {};
  MPI_Type_free(out);
  return from_mpi(rc, "MPI_Type_commit");
}

}  // namespace cartplan::mpi
