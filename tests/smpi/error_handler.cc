// Cartplan's errors reach the communicator's error handler under SMPI too (run by tests/smpi/run.sh):
//   error_handler return   MPI_ERRORS_RETURN: the class comes back with its message; a user's handler is called
//   error_handler fatal    MPI_ERRORS_ARE_FATAL (the default): a bad argument aborts with cartplan's message
// SMPI 3.32 jumps to a null function in MPI_Comm_call_errhandler for the predefined handlers
// (backends/mpi/api_guard.cc): without the workaround both modes died of a segmentation fault.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "backends/mpi/cartplan_mpi.h"

namespace {

int g_handler_calls = 0;
int g_handler_code = MPI_SUCCESS;

void count_errors(MPI_Comm*, int* code, ...) {
  ++g_handler_calls;
  g_handler_code = *code;
}

// A neighbourhood without offsets: MPI_ERR_ARG on every rank, before any communication.
int bad_create(MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  int dims[1] = {size}, periods[1] = {1}, offsets[1] = {1};
  MPI_Comm cart = MPI_COMM_NULL;
  return Cart_neighborhood_create(comm, 1, dims, periods, 0, offsets, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &cart);
}

int run_return_mode(int rank) {
  int failures = 0;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int rc = bad_create(MPI_COMM_WORLD);
  const std::string message = Cart_error_message();
  if (rc != MPI_ERR_ARG || message.find("t = 0") == std::string::npos) {
    std::printf("rank %d: MPI_ERRORS_RETURN: class %d, message '%s' (expected %d, 't = 0 ...')\n", rank, rc, message.c_str(), MPI_ERR_ARG);
    ++failures;
  }
  // A handler of the user's: called once with the class the function returns.
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Errhandler mine;
  MPI_Comm_create_errhandler(count_errors, &mine);
  MPI_Comm_set_errhandler(dup, mine);
  int out = 0, in = 0;
  const int rc2 = Cart_alltoall(&out, 1, MPI_INT, &in, 1, MPI_INT, dup);  // not a cartplan communicator
  if (rc2 != MPI_ERR_TOPOLOGY || g_handler_calls != 1 || g_handler_code != MPI_ERR_TOPOLOGY) {
    std::printf("rank %d: user handler: class %d, %d calls with %d (expected %d, 1 call)\n", rank, rc2, g_handler_calls,
                g_handler_code, MPI_ERR_TOPOLOGY);
    ++failures;
  }
  MPI_Errhandler_free(&mine);
  MPI_Comm_free(&dup);
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string mode = argc > 1 ? argv[1] : "";
  int failures = 0;
  if (mode == "return") {
    failures = run_return_mode(rank);
  } else if (mode == "fatal") {
    const int rc = bad_create(MPI_COMM_WORLD);  // must not return
    std::printf("rank %d: MPI_ERRORS_ARE_FATAL: returned %d instead of aborting\n", rank, rc);
    failures = 1;
  } else {
    std::fprintf(stderr, "usage: error_handler return|fatal\n");
    failures = 1;
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("error_handler %s: %s\n", mode.c_str(), total == 0 ? "OK" : "FAILED");
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
