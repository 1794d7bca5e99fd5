// The local array of a halo exchange and its geometry (docs/halo.md): interior extents, ghost
// widths per side, element size and memory order, and the sign-vector regions every halo plan
// is built from. Cells are named in interior coordinates: interior cell (0,..,0) is the first
// interior cell, ghost cells have a coordinate below 0 or at least the interior extent. A plan
// is of one shape; ranks of an uneven decomposition plan their own (engine/halo/uneven.h).
// Dimension k of the array is dimension k of the process grid.
//
// A ghost cell x has the sign vector s with s_k = -1 if x_k < 0, +1 if x_k >= interior_k, else
// 0. The ghost region of a sign vector t is the box of cells whose sign vector is t; it is
// filled from the process at self + t, from the cells x - t * interior of that process's
// interior (source_region). ghost_lo[k] and ghost_hi[k] are the widths on the low and high side.
//
//   ArrayShape a{2, {64, 64}, {2, 2}, {2, 2}, 8, Order::kC};
//   Box corner = ghost_region(a, {1, -1});   // [64,66) x [-2,0)
//   Box from = source_region(a, {1, -1});    // [0,2) x [62,64) of the process at self + (1,-1)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/halo/box.h"

namespace cartplan::ir::halo {

// The most dimensions a halo array has (a plan has up to 3^d regions; beyond 8 that is no
// longer a stencil anyone exchanges).
inline constexpr int kMaxHaloDims = 8;
// The largest interior extent and ghost width (MPI counts subarray sizes in int).
inline constexpr int kMaxHaloExtent = 1 << 28;

// C: the last dimension varies fastest in memory (MPI_ORDER_C); Fortran: the first
// (MPI_ORDER_FORTRAN).
enum class Order { kC, kFortran };
const char* to_string(Order order);  // "C", "Fortran"

struct ArrayShape {
  int ndims = 0;
  std::vector<int> interior;  // >= 1 each
  std::vector<int> ghost_lo;  // >= 0 each
  std::vector<int> ghost_hi;  // >= 0 each
  std::int64_t elem_bytes = 8;
  Order order = Order::kC;

  int lo(int k) const { return -ghost_lo[k]; }                   // first cell of dimension k
  int hi(int k) const { return interior[k] + ghost_hi[k]; }      // one past the last
  int extent(int k) const { return ghost_lo[k] + interior[k] + ghost_hi[k]; }
  Box whole() const;                                             // every cell, ghosts included
  Box interior_box() const;
  std::int64_t cells() const { return whole().cells(); }
  friend bool operator==(const ArrayShape&, const ArrayShape&) = default;
};

// A message naming what is wrong with a shape (dimensions out of [1, kMaxHaloDims], extents or
// widths out of range, element size below 1, more bytes than 2^62), or nullopt.
std::optional<std::string> shape_error(const ArrayShape& shape);

// True iff every coordinate is -1, 0 or 1.
bool is_sign_vector(const Offset& offset);
// The sign vector of cell x (all zeros inside the interior).
Offset sign_of(const ArrayShape& shape, const Cell& x);

// The cells of side s (-1, 0, +1) of dimension k: [lo, hi).
std::pair<int, int> side_interval(const ArrayShape& shape, int k, int s);
// The interior cells of dimension k that fill a neighbour's side s: +1 -> [0, ghost_hi),
// -1 -> [interior - ghost_lo, interior), 0 -> the whole interior.
std::pair<int, int> source_interval(const ArrayShape& shape, int k, int s);
// The ghost region of sign vector t (the interior for t = 0); empty where a width is 0.
Box ghost_region(const ArrayShape& shape, const Offset& t);
// The cells of the process at self + t that fill ghost region t: ghost_region(t) - t * interior.
Box source_region(const ArrayShape& shape, const Offset& t);

}  // namespace cartplan::ir::halo
