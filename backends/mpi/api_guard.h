// How every C entry point reports: it returns an MPI error class and calls the error handler of
// the communicator it concerns (MPI_ERRORS_ARE_FATAL aborts, MPI_ERRORS_RETURN returns), as MPI
// functions do; Cart_error_message() keeps the text per thread. No C++ exception of cartplan's crosses
// the C API (SimGrid's, which unwinds a rank it kills under SMPI, passes: actor_kill.h). Shared by
// c_api.cc and halo_api.cc.
//
//   return guarded(comm, [&]() -> MpiStatus { ...; return {}; });
#pragma once

#include <mpi.h>

#include <new>
#include <stdexcept>
#include <string>

#include "backends/mpi/actor_kill.h"
#include "backends/mpi/status.h"

namespace cartplan::mpi {

// The text of the last error returned on this thread (empty after a success). Defined in
// api_guard.cc: an inline function's thread_local would be a unique symbol the shared library
// must export.
std::string& last_error_message();

// Calls comm's error handler with `code` (MPI_Comm_call_errhandler). Under SMPI 3.32 that call
// jumps to a null function for the predefined handlers (a segmentation fault, no message), so
// there MPI_ERRORS_RETURN returns and MPI_ERRORS_ARE_FATAL prints `message`, kills the other
// simulated ranks (smpi_kill.h) and calls MPI_Abort; handlers of the user's are called as MPI
// does. Defined in api_guard.cc.
void call_error_handler(MPI_Comm comm, int code, const std::string& message);

inline int report(const MpiStatus& s, MPI_Comm comm) {
  last_error_message() = s.message;
  if (!s.ok()) call_error_handler(comm == MPI_COMM_NULL ? MPI_COMM_SELF : comm, s.code, s.message);
  return s.code;
}

template <class Body>
int guarded(MPI_Comm comm, Body&& body) {
  MpiStatus s;
  try {
    s = body();
  } catch (const ActorKill&) {  // SMPI: MPI_Abort on another rank is ending this one
    throw;
  } catch (const std::bad_alloc&) {
    s = mpi_error(MPI_ERR_NO_MEM, "out of memory");
  } catch (const std::exception& e) {
    s = mpi_error(MPI_ERR_INTERN, std::string("internal error: ") + e.what());
  } catch (...) {
    s = mpi_error(MPI_ERR_INTERN, "internal error: unknown exception");
  }
  return report(s, comm);
}

}  // namespace cartplan::mpi
