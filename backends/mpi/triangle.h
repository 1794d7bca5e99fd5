// Triangular submatrix datatypes (seed 002, Sect. 8): the core of Cart_type_create_triangle,
// with errors that name the bad argument.
//
//   MPI_Datatype corner;
//   MpiStatus s = create_triangle(3, n + 2 * k, CART_TRIANGLE_LOWER, MPI_DOUBLE, &corner);
#pragma once

#include <mpi.h>

#include "backends/mpi/status.h"

namespace cartplan::mpi {

MpiStatus create_triangle(int order, int ld, int kind, MPI_Datatype oldtype, MPI_Datatype* newtype);

}  // namespace cartplan::mpi
