// Recognises Open MPI's Fortran MPI_BOTTOM and MPI_IN_PLACE by address (fortran_sentinels.h).
#include "backends/mpi/fortran_sentinels.h"

#include <mpi.h>

// Open MPI specific. Its Fortran MPI_BOTTOM and MPI_IN_PLACE (mpif.h's common blocks, mpi_f08's
// bind(C) variables: mpif-sentinels.h, mpi_f08_types) are the C symbols mpi_fortran_bottom_ and
// mpi_fortran_in_place_, defined in libmpi.so and again in its Fortran libraries; the dynamic
// linker binds every reference in the process to one of them, so a Fortran program's MPI_BOTTOM
// has the address seen here, as Open MPI's own bindings assume (OMPI_IS_FORTRAN_BOTTOM and
// OMPI_IS_FORTRAN_IN_PLACE in its installed mpif-c-constants-decl.h). Weak references: linked
// against an MPI without these symbols (MPICH, SMPI), their addresses are NULL and c_buffer
// translates nothing, so that MPI's Fortran sentinels arrive as ordinary buffers.
extern "C" {
extern int mpi_fortran_bottom_ __attribute__((weak));
extern int mpi_fortran_in_place_ __attribute__((weak));
}

namespace cartplan::mpi {

const void* c_buffer(const void* buf) {
  if (buf == nullptr) return buf;  // also where a weak sentinel is absent (address NULL)
  if (buf == &mpi_fortran_bottom_) return MPI_BOTTOM;
  if (buf == &mpi_fortran_in_place_) return MPI_IN_PLACE;
  return buf;
}

void* c_buffer(void* buf) { return const_cast<void*>(c_buffer(static_cast<const void*>(buf))); }

}  // namespace cartplan::mpi
