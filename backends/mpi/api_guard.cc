// The per-thread text of the C API's last error, and how it reaches the error handler (api_guard.h).
#include "backends/mpi/api_guard.h"

#include <cstdio>

#ifdef CARTPLAN_SMPI
#include "backends/mpi/smpi_kill.h"
#endif

namespace cartplan::mpi {

std::string& last_error_message() {
  thread_local std::string text;
  return text;
}

void call_error_handler(MPI_Comm comm, int code, const std::string& message) {
#ifdef CARTPLAN_SMPI
  // SMPI 3.32's MPI_Comm_call_errhandler has no function behind its predefined handlers.
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  if (MPI_Comm_get_errhandler(comm, &handler) == MPI_SUCCESS) {
    const bool returns = handler == MPI_ERRORS_RETURN, fatal = handler == MPI_ERRORS_ARE_FATAL;
    MPI_Errhandler_free(&handler);
    if (returns) return;
    if (fatal) {
      int rank = -1;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      std::fprintf(stderr, "cartplan: rank %d: %s (MPI error class %d; the communicator's error handler is MPI_ERRORS_ARE_FATAL)\n",
                   rank, message.c_str(), code);
      std::fflush(stderr);
      kill_other_ranks();  // SMPI's MPI_Abort leaves ranks blocked in a communication hanging (smpi_kill.h)
      MPI_Abort(comm, code);
      return;
    }
  }
#else
  (void)message;
#endif
  MPI_Comm_call_errhandler(comm, code);
}

}  // namespace cartplan::mpi
