// Failure injection for tests (CARTPLAN_TEST_FAIL).
#include "backends/mpi/test_failure.h"

#include <cstdlib>
#include <new>
#include <string>

namespace cartplan::mpi {

bool test_failure(std::string_view step) {
  const char* v = std::getenv("CARTPLAN_TEST_FAIL");
  if (!v) return false;
  std::string_view list(v);
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    if (list.substr(0, comma) == step) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

MpiStatus injected_failure(std::string_view step) {
  return mpi_error(MPI_ERR_OTHER, "failure injected by CARTPLAN_TEST_FAIL=" + std::string(step) + " (tests only)");
}

void inject_out_of_memory(std::string_view step) {
  if (test_failure(step)) throw std::bad_alloc();
}

}  // namespace cartplan::mpi
