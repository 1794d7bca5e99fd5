// The per-thread text of the C API's last error (api_guard.h).
#include "backends/mpi/api_guard.h"

namespace cartplan::mpi {

std::string& last_error_message() {
  thread_local std::string text;
  return text;
}

}  // namespace cartplan::mpi
