// predefined_type (predefined.h): a predefined type's envelope has the combiner MPI_COMBINER_NAMED.
#include "backends/mpi/predefined.h"

namespace cartplan::mpi {

bool predefined_type(MPI_Datatype type) {
  int ni = 0, na = 0, nd = 0, combiner = 0;
  return type != MPI_DATATYPE_NULL && MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) == MPI_SUCCESS &&
         combiner == MPI_COMBINER_NAMED;
}

}  // namespace cartplan::mpi
