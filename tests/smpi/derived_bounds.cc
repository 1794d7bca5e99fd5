// Derived datatypes whose bounds SimGrid SMPI 3.32 misreports, in the places where cartplan sizes
// its own memory from them (run by tests/smpi/run.sh on 4 ranks, a 2x2 torus, Moore stencil):
//   derived_bounds reductions   Cart_allreduce (blocking; persistent with combining and direct
//                               plans) and Cart_bcast with a one-cell subarray of doubles at the
//                               end of a 40x40 array must return MPI_ERR_TYPE naming SMPI, on
//                               every rank, writing nothing; with MPI_DOUBLE the same calls give the
//                               sums. Before: the persistent calls crashed (segmentation fault with
//                               combining, bus error with direct: scratch blocks sized from SMPI's
//                               8-byte extent, written 12792 bytes in), and the blocking one aborted
//                               in SMPI's MPI_Reduce_local (MPI_ERR_OP: no predefined op on a
//                               derived type).
// Prints "derived_bounds MODE: OK" on rank 0 when every rank passed.
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"

namespace {

constexpr int kN = 40;  // the subarray's enclosing array is kN x kN doubles

int g_failures = 0;

void expect(bool ok, int rank, const std::string& what) {
  if (ok) return;
  std::printf("rank %d: %s\n", rank, what.c_str());
  ++g_failures;
}

MPI_Comm moore_torus() {
  int dims[2] = {2, 2}, periods[2] = {1, 1}, offsets[16], t = 0;
  for (int a = -1; a <= 1; ++a)
    for (int b = -1; b <= 1; ++b)
      if (a != 0 || b != 0) {
        offsets[2 * t] = a;
        offsets[2 * t + 1] = b;
        ++t;
      }
  MPI_Comm cart = MPI_COMM_NULL;
  Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, t, offsets, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &cart);
  MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
  return cart;
}

// The sum over this rank's 8 sources (rank - offset) of (source + 1), from the communicator.
double want_sum(MPI_Comm cart, int rank) {
  int c[2];
  MPI_Cart_coords(cart, rank, 2, c);
  double sum = 0;
  for (int a = -1; a <= 1; ++a)
    for (int b = -1; b <= 1; ++b) {
      if (a == 0 && b == 0) continue;
      int s[2] = {((c[0] - a) % 2 + 2) % 2, ((c[1] - b) % 2 + 2) % 2}, r = 0;
      MPI_Cart_rank(cart, s, &r);
      sum += r + 1;
    }
  return sum;
}

// One call with the subarray type must be refused under SMPI: MPI_ERR_TYPE naming SMPI.
void expect_refused(int rc, int rank, const std::string& what) {
  const std::string message = Cart_error_message();
  expect(rc == MPI_ERR_TYPE && message.find("SMPI") != std::string::npos, rank,
         what + ": class " + std::to_string(rc) + ", message '" + message + "' (expected MPI_ERR_TYPE naming SMPI)");
}

void persistent_allreduce(MPI_Comm cart, int rank, const char* algorithm, MPI_Datatype sub) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", algorithm);
  std::vector<double> send(kN * kN, -1.0), recv(kN * kN, -2.0);
  send[kN * kN - 1] = rank + 1;
  Cart_Request req;
  expect_refused(Cart_allreduce_init(send.data(), recv.data(), 1, sub, MPI_SUM, cart, info, &req), rank,
                 std::string("Cart_allreduce_init (") + algorithm + ", subarray)");
  // The same with MPI_DOUBLE: the plan runs and sums.
  double one = rank + 1, sum = -2.0;
  int rc = Cart_allreduce_init(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, cart, info, &req);
  if (rc == MPI_SUCCESS) rc = Cart_start(&req);
  if (rc == MPI_SUCCESS) rc = Cart_wait(&req);
  if (rc == MPI_SUCCESS) rc = Cart_request_free(&req);
  expect(rc == MPI_SUCCESS && sum == want_sum(cart, rank), rank,
         std::string("Cart_allreduce_init (") + algorithm + ", MPI_DOUBLE): rc " + std::to_string(rc) + ", sum " +
             std::to_string(sum) + " want " + std::to_string(want_sum(cart, rank)));
  MPI_Info_free(&info);
}

void reductions(MPI_Comm cart, int rank) {
  int sizes[2] = {kN, kN}, one[2] = {1, 1}, last[2] = {kN - 1, kN - 1};
  MPI_Datatype sub;
  MPI_Type_create_subarray(2, sizes, one, last, MPI_ORDER_C, MPI_DOUBLE, &sub);
  MPI_Type_commit(&sub);
  std::vector<double> send(kN * kN, -1.0), recv(kN * kN, -2.0);
  send[kN * kN - 1] = rank + 1;
  expect_refused(Cart_allreduce(send.data(), recv.data(), 1, sub, MPI_SUM, cart), rank, "Cart_allreduce (subarray)");
  expect_refused(Cart_bcast(send.data(), 1, sub, 0, cart), rank, "Cart_bcast (subarray)");
  persistent_allreduce(cart, rank, "combining", sub);
  persistent_allreduce(cart, rank, "direct", sub);
  bool untouched = true;
  for (double v : recv) untouched = untouched && v == -2.0;
  expect(untouched, rank, "a refused call wrote recvbuf");
  MPI_Type_free(&sub);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string mode = argc > 1 ? argv[1] : "";
  MPI_Comm cart = moore_torus();
  if (mode == "reductions") {
    reductions(cart, rank);
  } else {
    expect(false, rank, "usage: derived_bounds reductions");
  }
  int failures = 0;
  MPI_Allreduce(&g_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("derived_bounds %s: %s\n", mode.c_str(), failures == 0 ? "OK" : "FAILED");
  MPI_Comm_free(&cart);
  MPI_Finalize();
  return 0;
}
