// How the C++ API (cartplan.hpp) reports an error of cartplan's MPI core: an MpiStatus that is
// not ok is thrown as MpiError with its class and message. Shared by cpp_api.cc, cpp_halo.cc
// and cpp_graph.cc.
//
//   throw_on_error(make_exchange(...));   // MpiError(s.code, s.message) unless s.ok()
#pragma once

#include "backends/mpi/cartplan.hpp"
#include "backends/mpi/status.h"

namespace cartplan::mpi {

inline void throw_on_error(const MpiStatus& s) {
  if (!s.ok()) throw MpiError(s.code, s.message);
}

}  // namespace cartplan::mpi
