// Running out of memory in a local step before an agreement (a build, its scratch) as this
// rank's MPI_ERR_NO_MEM, for the agreement to carry to every rank: an exception would pass the
// agreement on this rank only and leave the others waiting in it.
//
//   MpiStatus built = out_of_memory_as_error("building the trials", [&] { return build(...); });
//   s = agree_to_measure(comm, built, too_big, &skip);  // every rank gets here
#pragma once

#include <new>
#include <stdexcept>
#include <string>

#include "backends/mpi/status.h"

namespace cartplan::mpi {

// step()'s status, or MPI_ERR_NO_MEM "out of memory <what>" when it throws std::bad_alloc or
// std::length_error (a size larger than a container can hold). Costs nothing on the way that
// does not throw (`what` becomes a string only then), so per-call paths may use it.
template <class Step>
MpiStatus out_of_memory_as_error(const char* what, Step&& step) {
  try {
    return step();
  } catch (const std::bad_alloc&) {
    return mpi_error(MPI_ERR_NO_MEM, std::string("out of memory ") + what);
  } catch (const std::length_error&) {
    return mpi_error(MPI_ERR_NO_MEM, std::string("out of memory ") + what + " (a size larger than memory can hold)");
  }
}

}  // namespace cartplan::mpi
