// The datatype constructors cartplan calls when it builds an exchange, defined by the test
// program itself (the MPI profiling interface): MPI_Type_create_resized (a collective's
// exchange owns a private copy of each derived datatype it is built with,
// backends/mpi/type_copy.h), MPI_Type_dup (which cartplan must not call: it would run the
// program's attribute copy callbacks) and MPI_Type_create_subarray (a halo exchange's
// messages), counted and forwarded to PMPI_*. Include it in exactly one file of a test program.
//
//   const long before = type_copies;  Cart_alltoallw(...);  check(type_copies - before == 2);
#pragma once

#include <mpi.h>

inline long type_copies = 0;     // MPI_Type_create_resized calls, the library's and the program's
inline long type_dups = 0;       // MPI_Type_dup calls, the library's and the program's
inline long type_subarrays = 0;  // MPI_Type_create_subarray calls

extern "C" {
int MPI_Type_create_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype* out) {
  ++type_copies;
  return PMPI_Type_create_resized(old, lb, extent, out);
}
int MPI_Type_dup(MPI_Datatype type, MPI_Datatype* out) {
  ++type_dups;
  return PMPI_Type_dup(type, out);
}
int MPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[], int order, MPI_Datatype old,
                             MPI_Datatype* out) {
  ++type_subarrays;
  return PMPI_Type_create_subarray(ndims, sizes, subsizes, starts, order, old, out);
}
}
