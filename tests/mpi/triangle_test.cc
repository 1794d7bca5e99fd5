// MPI test of Cart_type_create_triangle: every kind, order and leading dimension against a hand-built one-element-per-block MPI_Type_indexed (size, bounds, packed bytes, a rank-to-rank transfer), plus its argument errors.
#include <mpi.h>

#include <climits>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;

// The reference predicate, written from the definitions in cartplan_mpi.h, cell by cell.
bool in_triangle(int kind, int order, int i, int j) {
  switch (kind) {
    case CART_TRIANGLE_LOWER: return j <= i;
    case CART_TRIANGLE_UPPER: return j >= i;
    case CART_TRIANGLE_LOWER_ANTI: return i + j >= order - 1;
    case CART_TRIANGLE_UPPER_ANTI: return i + j <= order - 1;
  }
  return false;
}

const char* kind_name(int kind) {
  switch (kind) {
    case CART_TRIANGLE_LOWER: return "lower";
    case CART_TRIANGLE_UPPER: return "upper";
    case CART_TRIANGLE_LOWER_ANTI: return "lower_anti";
    case CART_TRIANGLE_UPPER_ANTI: return "upper_anti";
  }
  return "?";
}

// One block of length 1 per selected element, in row-major order.
MPI_Datatype hand_built(int kind, int order, int ld, MPI_Datatype old) {
  std::vector<int> lengths, displs;
  for (int i = 0; i < order; ++i)
    for (int j = 0; j < order; ++j)
      if (in_triangle(kind, order, i, j)) {
        lengths.push_back(1);
        displs.push_back(i * ld + j);
      }
  lengths.push_back(0);  // keeps .data() valid for order 0; count excludes it
  displs.push_back(0);
  MPI_Datatype t;
  MPI_Type_indexed(static_cast<int>(lengths.size()) - 1, lengths.data(), displs.data(), old, &t);
  MPI_Type_commit(&t);
  return t;
}

// Distinct values per rank, row and column, so a misplaced or missing element shows.
int value(int rank, int i, int j) { return 1000000 * (rank + 1) + 1000 * i + j; }

void check_kind(Harness& h, int kind, int order, int ld) {
  const std::string what = std::string(kind_name(kind)) + " order " + std::to_string(order) + " ld " + std::to_string(ld);
  MPI_Datatype tri = MPI_DATATYPE_NULL;
  const int rc = Cart_type_create_triangle(order, ld, kind, MPI_INT, &tri);
  h.check(rc == MPI_SUCCESS, what + ": create");
  if (rc != MPI_SUCCESS) return;
  MPI_Type_commit(&tri);
  MPI_Datatype ref = hand_built(kind, order, ld, MPI_INT);

  int size_tri = -1, size_ref = -2;
  MPI_Type_size(tri, &size_tri);
  MPI_Type_size(ref, &size_ref);
  h.check(size_tri == size_ref && size_tri == static_cast<int>(sizeof(int)) * order * (order + 1) / 2, what + ": size");
  MPI_Aint lb_tri, ext_tri, lb_ref, ext_ref;
  MPI_Type_get_extent(tri, &lb_tri, &ext_tri);
  MPI_Type_get_extent(ref, &lb_ref, &ext_ref);
  h.check(lb_tri == lb_ref && ext_tri == ext_ref, what + ": lower bound and extent");

  // Pack this rank's matrix with both types: same bytes, and the selected values in row-major order.
  const int rows = order > 0 ? order : 1;
  std::vector<int> matrix(static_cast<std::size_t>(rows) * ld + 1);
  for (int i = 0; i < order; ++i)
    for (int j = 0; j < ld; ++j) matrix[i * ld + j] = value(h.rank, i, j);
  std::vector<int> want;
  for (int i = 0; i < order; ++i)
    for (int j = 0; j < order; ++j)
      if (in_triangle(kind, order, i, j)) want.push_back(value(h.rank, i, j));
  int bytes = 0;
  MPI_Pack_size(1, tri, MPI_COMM_WORLD, &bytes);
  std::vector<char> packed_tri(bytes + 1), packed_ref(bytes + 1);
  int pos_tri = 0, pos_ref = 0;
  MPI_Pack(matrix.data(), 1, tri, packed_tri.data(), bytes, &pos_tri, MPI_COMM_WORLD);
  MPI_Pack(matrix.data(), 1, ref, packed_ref.data(), bytes, &pos_ref, MPI_COMM_WORLD);
  h.check(pos_tri == pos_ref && packed_tri == packed_ref, what + ": packed bytes equal the hand-built type's");
  std::vector<int> unpacked(want.size() + 1, -1);
  int pos = 0;
  MPI_Unpack(packed_tri.data(), bytes, &pos, unpacked.data(), static_cast<int>(want.size()), MPI_INT, MPI_COMM_WORLD);
  unpacked.pop_back();
  h.check(unpacked == want, what + ": packed values in row-major triangle order");

  // Send the triangle to the next rank, received with the hand-built type into a sentinel matrix:
  // exactly the triangle's cells hold the previous rank's values.
  const int next = (h.rank + 1) % h.size, prev = (h.rank + h.size - 1) % h.size;
  std::vector<int> got(matrix.size(), -7);
  MPI_Sendrecv(matrix.data(), 1, tri, next, 0, got.data(), 1, ref, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  bool ok = true;
  for (int i = 0; i < order; ++i)
    for (int j = 0; j < ld; ++j) {
      const int expect = j < order && in_triangle(kind, order, i, j) ? value(prev, i, j) : -7;
      ok = ok && got[i * ld + j] == expect;
    }
  h.check(ok && got.back() == -7, what + ": transfer to the next rank");

  MPI_Type_free(&tri);
  MPI_Type_free(&ref);
}

// The corner blocks of the 5-point stencil with halo depth k are triangles of order k-1 with
// k(k-1)/2 cells, on a row of a double array; check that with a derived old type too.
void check_halo_corner(Harness& h, int k, int n) {
  const int ld = n + 2 * k;
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_DOUBLE, &pair);
  MPI_Datatype tri;
  const int rc = Cart_type_create_triangle(k - 1, ld, CART_TRIANGLE_LOWER_ANTI, MPI_DOUBLE, &tri);
  h.check(rc == MPI_SUCCESS, "halo corner create");
  if (rc == MPI_SUCCESS) {
    int size = 0;
    MPI_Type_size(tri, &size);
    h.check(size == static_cast<int>(sizeof(double)) * k * (k - 1) / 2, "halo corner has k(k-1)/2 cells, k=" + std::to_string(k));
    MPI_Type_free(&tri);
  }
  MPI_Datatype tri2;
  h.check(Cart_type_create_triangle(3, 5, CART_TRIANGLE_UPPER, pair, &tri2) == MPI_SUCCESS, "derived old type");
  int size2 = 0;
  MPI_Type_size(tri2, &size2);
  h.check(size2 == 6 * 2 * static_cast<int>(sizeof(double)), "derived old type: size 6 pairs");
  MPI_Type_free(&tri2);
  MPI_Type_free(&pair);
}

void check_errors(Harness& h) {
  // Errors go to MPI_COMM_SELF's handler (no communicator is involved); return them here.
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_Datatype t = MPI_DATATYPE_NULL;
  h.check(Cart_type_create_triangle(-1, 4, CART_TRIANGLE_LOWER, MPI_INT, &t) == MPI_ERR_ARG, "negative order");
  h.check(Cart_type_create_triangle(4, 3, CART_TRIANGLE_LOWER, MPI_INT, &t) == MPI_ERR_ARG, "ld < order");
  h.check(Cart_type_create_triangle(4, 4, 0, MPI_INT, &t) == MPI_ERR_ARG, "kind 0");
  h.check(Cart_type_create_triangle(4, 4, 5, MPI_INT, &t) == MPI_ERR_ARG, "kind 5");
  h.check(Cart_type_create_triangle(4, 4, CART_TRIANGLE_UPPER, MPI_INT, nullptr) == MPI_ERR_ARG, "newtype NULL");
  h.check(Cart_type_create_triangle(4, 4, CART_TRIANGLE_UPPER, MPI_DATATYPE_NULL, &t) == MPI_ERR_TYPE, "oldtype null");
  h.check(Cart_type_create_triangle(50000, 50000, CART_TRIANGLE_UPPER, MPI_INT, &t) == MPI_ERR_ARG, "displacement overflow");
  h.check(t == MPI_DATATYPE_NULL, "no type is created on error");
  Cart_type_create_triangle(4, 4, 9, MPI_INT, &t);
  h.check(std::string(Cart_error_message()).find("kind = 9") != std::string::npos, "the message names the bad kind");
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  for (int kind : {CART_TRIANGLE_LOWER, CART_TRIANGLE_UPPER, CART_TRIANGLE_LOWER_ANTI, CART_TRIANGLE_UPPER_ANTI})
    for (int order = 0; order <= 7; ++order)
      for (int extra : {0, 3}) check_kind(h, kind, order, order + extra);
  for (int k = 2; k <= 5; ++k) check_halo_corner(h, k, 8);
  check_errors(h);
  return h.finish("triangle_test");
}
