// Whether a datatype handle names a predefined MPI type: the blocking caches key calls by handle,
// and only a predefined handle is never freed and reused for another layout.
//
//   if (predefined_type(sendtype)) ... the call may reuse an exchange built for this handle
#pragma once

#include <mpi.h>

namespace cartplan::mpi {

// True for predefined types (MPI_INT, MPI_DOUBLE, ...); false for derived ones and
// MPI_DATATYPE_NULL.
bool predefined_type(MPI_Datatype type);

}  // namespace cartplan::mpi
