// Cart_type_create_triangle: triangular submatrix datatypes (seed 002, Sect. 8), one indexed block per row.
#include "backends/mpi/triangle.h"

#include <climits>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"

namespace {

// Columns [first, last] of row i of the triangle `kind` in an order x order submatrix.
bool row_range(int kind, int order, int i, int* first, int* last) {
  switch (kind) {
    case CART_TRIANGLE_LOWER:
      *first = 0;
      *last = i;
      return true;
    case CART_TRIANGLE_UPPER:
      *first = i;
      *last = order - 1;
      return true;
    case CART_TRIANGLE_LOWER_ANTI:
      *first = order - 1 - i;
      *last = order - 1;
      return true;
    case CART_TRIANGLE_UPPER_ANTI:
      *first = 0;
      *last = order - 1 - i;
      return true;
    default:
      return false;
  }
}

}  // namespace

namespace cartplan::mpi {

MpiStatus create_triangle(int order, int ld, int kind, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  if (newtype == nullptr) return mpi_error(MPI_ERR_ARG, "newtype is NULL");
  if (oldtype == MPI_DATATYPE_NULL) return mpi_error(MPI_ERR_TYPE, "oldtype is MPI_DATATYPE_NULL");
  if (order < 0 || ld < order)
    return mpi_error(MPI_ERR_ARG, "order = " + std::to_string(order) + ", ld = " + std::to_string(ld) + " (expected 0 <= order <= ld)");
  int first = 0, last = 0;
  if (!row_range(kind, 0, 0, &first, &last))
    return mpi_error(MPI_ERR_ARG, "kind = " + std::to_string(kind) + " (expected one of the CART_TRIANGLE_* values)");
  // The largest displacement is that of the last element of the last row: (order-1)*ld + order-1.
  if (order > 0 && static_cast<long long>(order - 1) * ld + (order - 1) > INT_MAX)
    return mpi_error(MPI_ERR_ARG, "the triangle's last element lies beyond INT_MAX elements from its first");
  std::vector<int> lengths(order > 0 ? order : 1), displs(order > 0 ? order : 1);
  for (int i = 0; i < order; ++i) {
    row_range(kind, order, i, &first, &last);
    lengths[i] = last - first + 1;
    displs[i] = i * ld + first;
  }
  return from_mpi(MPI_Type_indexed(order, lengths.data(), displs.data(), oldtype, newtype), "MPI_Type_indexed");
}

}  // namespace cartplan::mpi
