// MpiStatus: an MPI error code plus a message naming what is wrong (the MPI backend's error type).
//
//   MpiStatus s = check_something();
//   if (!s.ok()) return s;            // s.code is an MPI error class, e.g. MPI_ERR_ARG
#pragma once

#include <mpi.h>

#include <string>

namespace cartplan::mpi {

struct MpiStatus {
  int code = MPI_SUCCESS;
  std::string message;
  // The failure is the result of an agreement among the communicator's ranks (every rank
  // returns it alike), not one rank's alone.
  bool agreed = false;
  bool ok() const { return code == MPI_SUCCESS; }
};

inline MpiStatus agreed_status(MpiStatus s) {
  s.agreed = true;
  return s;
}

inline MpiStatus mpi_error(int code, std::string message) { return MpiStatus{code, std::move(message)}; }

// Wraps the return code of an MPI call made by cartplan itself.
MpiStatus from_mpi(int rc, const char* what);

#define CARTPLAN_MPI_CALL(call)                                        \
  do {                                                                 \
    ::cartplan::mpi::MpiStatus cartplan_s_ = ::cartplan::mpi::from_mpi((call), #call); \
    if (!cartplan_s_.ok()) return cartplan_s_;                         \
  } while (0)

}  // namespace cartplan::mpi
