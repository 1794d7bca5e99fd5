// Derived datatypes whose bounds SimGrid SMPI 3.32 misreports, in the places where cartplan sizes
// its own memory from them (run by tests/smpi/run.sh on 4 ranks, a 2x2 torus, Moore stencil):
//   derived_bounds halo         a halo whose element type's data lies below its SMPI bounds (a
//                               double at -8 resized to lb 0, extent 8) must fill every ghost cell,
//                               with a combining plan (temps) and in measuring mode (scratch
//                               arrays). Before: temps and scratch were addressed from SMPI's true
//                               lb 0 and written 8 bytes before their memory (free(): invalid
//                               next size, exit 134; valgrind: invalid writes in schedule_for's temps).
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


// Cell value of global cell (x, y) of the 8x8 torus (4x4 interior per rank).
double cell(int x, int y) { return 1000.0 + ((x + 8) % 8) * 8 + (y + 8) % 8; }

// A 2-D halo (interior 4x4, ghost width 1, Moore regions) of one element type, exchanged twice
// with a combining plan, whose corners travel through temps (blocking), or by a persistent
// request made in measuring mode (its trials run on scratch arrays of the element's layout);
// every cell checked. Cell k of the array (C order, 6x6) is the double at a[k]; the array passed
// starts `base` doubles in.
void halo_case(MPI_Comm cart, int rank, MPI_Datatype elem, int base, bool measure, const std::string& name) {
  int interior[2] = {4, 4}, ghost[2] = {1, 1}, c[2];
  MPI_Cart_coords(cart, rank, 2, c);
  MPI_Info info;
  MPI_Info_create(&info);
  if (measure) MPI_Info_set(info, "cartplan_tune", "measure");
  else MPI_Info_set(info, "cartplan_algorithm", "combining");
  Cart_Halo halo = CART_HALO_NULL;
  int rc = Cart_halo_create(cart, 2, interior, ghost, ghost, elem, MPI_ORDER_C, info, &halo);
  MPI_Info_free(&info);
  std::vector<double> a(36 + base, -1.0);
  auto at = [&](int i, int j) -> double& { return a[(i + 1) * 6 + j + 1]; };
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) at(i, j) = cell(c[0] * 4 + i, c[1] * 4 + j);
  Cart_Request req;
  if (measure && rc == MPI_SUCCESS) rc = Cart_halo_exchange_init(a.data() + base, halo, MPI_INFO_NULL, &req);
  for (int it = 0; it < 2 && rc == MPI_SUCCESS; ++it) {
    if (!measure) {
      rc = Cart_halo_exchange(a.data() + base, halo);
    } else if ((rc = Cart_start(&req)) == MPI_SUCCESS) {
      rc = Cart_wait(&req);
    }
  }
  if (measure && rc == MPI_SUCCESS) rc = Cart_request_free(&req);
  expect(rc == MPI_SUCCESS, rank, name + ": halo rc " + std::to_string(rc) + " " + Cart_error_message());
  int wrong = 0;
  for (int i = -1; i <= 4; ++i)
    for (int j = -1; j <= 4; ++j) wrong += at(i, j) != cell(c[0] * 4 + i, c[1] * 4 + j);
  expect(wrong == 0, rank, name + ": " + std::to_string(wrong) + " of 36 cells wrong");
  if (halo != CART_HALO_NULL) Cart_halo_free(&halo);
}

void halos(MPI_Comm cart, int rank) {
  halo_case(cart, rank, MPI_DOUBLE, 0, false, "MPI_DOUBLE");
  // A double 8 bytes below the element's address, resized to lb 0, extent 8: SMPI's true bounds
  // are 0 and 8 (the data is at -8; Open MPI: true lb -8), so temps addressed from them were
  // written 8 bytes before their memory.
  MPI_Datatype below, elem;
  int len = 1;
  MPI_Aint disp = -8;
  MPI_Datatype dbl = MPI_DOUBLE;
  MPI_Type_create_struct(1, &len, &disp, &dbl, &below);
  MPI_Type_create_resized(below, 0, 8, &elem);
  MPI_Type_commit(&elem);
  halo_case(cart, rank, elem, 1, false, "a double at -8 resized to lb 0, extent 8 (combining)");
  halo_case(cart, rank, elem, 1, true, "a double at -8 resized to lb 0, extent 8 (measuring)");
  MPI_Type_free(&elem);
  MPI_Type_free(&below);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string mode = argc > 1 ? argv[1] : "";
  MPI_Comm cart = moore_torus();
  if (mode == "halo") {
    halos(cart, rank);
  } else if (mode == "reductions") {
    reductions(cart, rank);
  } else {
    expect(false, rank, "usage: derived_bounds reductions|halo");
  }
  int failures = 0;
  MPI_Allreduce(&g_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("derived_bounds %s: %s\n", mode.c_str(), failures == 0 ? "OK" : "FAILED");
  MPI_Comm_free(&cart);
  MPI_Finalize();
  return 0;
}
