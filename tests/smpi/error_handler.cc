// Cartplan's errors reach the communicator's error handler under SMPI too (run by tests/smpi/run.sh):
//   error_handler return       MPI_ERRORS_RETURN: the class comes back with its message; a user's handler is called
//   error_handler fatal        MPI_ERRORS_ARE_FATAL (the default): a bad argument (t = 0) aborts with cartplan's message
//   error_handler fatal-one    the same, the bad argument on rank 1 only (the others wait in creation's agreement)
//   error_handler fatal-halo   Cart_halo_create with d = 3 on a 2-D grid
//   error_handler fatal-model  Cart_neighborhood_create with Info cartplan_cost_model naming no file
//   error_handler halo         a good Cart_halo_create on a plain MPI_Cart_create communicator (run.sh: with
//                              CARTPLAN_COST_MODEL naming no file it aborts; with CARTPLAN_VERBOSE=1 it names its model)
//   error_handler truncate     Cart_alltoall/Cart_ialltoall on a ring of 4, rank 0's blocks 2 MPI_DOUBLE, the
//                              others' 2 MPI_INT, MPI_ERRORS_RETURN on the communicator only: MPI_ERR_TRUNCATE
//                              on ranks 0, 1 and 3, MPI_SUCCESS on rank 2 (no block from rank 0)
// SMPI 3.32 jumps to a null function in MPI_Comm_call_errhandler for the predefined handlers
// (backends/mpi/api_guard.cc): without the workaround return and fatal died of a segmentation fault.
// In the fatal modes MPI_Abort on one rank kills the others inside MPI calls; the exception SimGrid
// unwinds them with was caught as "internal error: unknown exception" (backends/mpi/actor_kill.h),
// and the run ended in "Deadlock detected". In truncate, SMPI's MPI_Waitall handed the truncation to
// MPI_COMM_WORLD's handler and aborted (backends/mpi/completion.h).
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

// Cart_halo_create on a 2-D periodic grid of all ranks with d = 2 (good) or 3 (MPI_ERR_ARG).
int halo_create(int d) {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int dims[2] = {0, 0}, periods[2] = {1, 1};
  MPI_Dims_create(size, 2, dims);
  MPI_Comm cart = MPI_COMM_NULL;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  const int interior[3] = {8, 8, 8}, ghost[3] = {1, 1, 1};
  Cart_Halo halo = CART_HALO_NULL;
  const int rc = Cart_halo_create(cart, d, interior, ghost, ghost, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL, &halo);
  if (rc == MPI_SUCCESS) Cart_halo_free(&halo);
  MPI_Comm_free(&cart);
  return rc;
}

// A ring neighbourhood (+1, -1) whose Info names a cost model file that does not exist.
int create_with_missing_model() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int dims[1] = {size}, periods[1] = {1}, offsets[2] = {1, -1};
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_cost_model", "/nonexistent/cartplan_model.json");
  MPI_Comm ring = MPI_COMM_NULL;
  const int rc = Cart_neighborhood_create(MPI_COMM_WORLD, 1, dims, periods, 2, offsets, MPI_UNWEIGHTED, info, 0, &ring);
  MPI_Info_free(&info);
  if (rc == MPI_SUCCESS) MPI_Comm_free(&ring);
  return rc;
}

// The fatal modes: the call must not return (MPI_Abort ends the run).
int run_fatal_mode(const std::string& mode, int rank) {
  int rc = MPI_SUCCESS;
  if (mode == "fatal") rc = bad_create(MPI_COMM_WORLD);
  if (mode == "fatal-one") {
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int dims[1] = {size}, periods[1] = {1}, offsets[1] = {1};
    MPI_Comm ring = MPI_COMM_NULL;
    rc = Cart_neighborhood_create(MPI_COMM_WORLD, 1, dims, periods, rank == 1 ? 0 : 1, offsets, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &ring);
  }
  if (mode == "fatal-halo") rc = halo_create(3);
  if (mode == "fatal-model") rc = create_with_missing_model();
  std::printf("rank %d: MPI_ERRORS_ARE_FATAL: %s returned %d instead of aborting\n", rank, mode.c_str(), rc);
  return 1;
}

// Blocks of another size from rank 0 (2 doubles against 2 ints) on a ring: every rank that
// receives one gets MPI_ERR_TRUNCATE, blocking and non-blocking, with MPI_ERRORS_RETURN on the
// ring only (MPI_COMM_WORLD keeps MPI_ERRORS_ARE_FATAL).
int run_truncate_mode(int rank) {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int dims[1] = {size}, periods[1] = {1}, offsets[2] = {1, -1};
  MPI_Comm ring = MPI_COMM_NULL;
  Cart_neighborhood_create(MPI_COMM_WORLD, 1, dims, periods, 2, offsets, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &ring);
  MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN);
  double send[4] = {1, 2, 3, 4}, recv[4] = {0, 0, 0, 0};
  const MPI_Datatype type = rank == 0 ? MPI_DOUBLE : MPI_INT;
  const bool gets_other_size = rank == 0 || rank == 1 || rank == size - 1;
  const int want = gets_other_size ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
  int failures = 0;
  for (const bool blocking : {true, false}) {
    int rc = MPI_SUCCESS;
    if (blocking) {
      rc = Cart_alltoall(send, 2, type, recv, 2, type, ring);
    } else {
      Cart_Request request = CART_REQUEST_NULL;
      rc = Cart_ialltoall(send, 2, type, recv, 2, type, ring, &request);
      if (rc == MPI_SUCCESS) rc = Cart_wait(&request);
    }
    int cls = rc;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    const std::string message = Cart_error_message();
    if (cls != want || (want == MPI_ERR_TRUNCATE && message.find("than expected") == std::string::npos)) {
      std::printf("rank %d: %s mismatch: class %d, message '%s' (expected %d)\n", rank, blocking ? "Cart_alltoall" : "Cart_ialltoall",
                  cls, message.c_str(), want);
      ++failures;
    }
  }
  MPI_Comm_free(&ring);
  return failures;
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
  } else if (mode.rfind("fatal", 0) == 0) {
    failures = run_fatal_mode(mode, rank);
  } else if (mode == "halo") {
    failures = halo_create(2) == MPI_SUCCESS ? 0 : 1;
  } else if (mode == "truncate") {
    failures = run_truncate_mode(rank);
  } else {
    std::fprintf(stderr, "usage: error_handler return|fatal|fatal-one|fatal-halo|fatal-model|halo|truncate\n");
    failures = 1;
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("error_handler %s: %s\n", mode.c_str(), total == 0 ? "OK" : "FAILED");
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
