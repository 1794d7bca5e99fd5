// The hand-written halo exchange of tools/halo: what stencil codes write today without cartplan,
// dimension by dimension with faces extended over the ghost layers earlier dimensions filled.
//
// Dimension j in turn (in `order`, 0,1,.. by default): the k-deep interior slab at each side of dimension j goes to the
// neighbour on that side (MPI_Irecv of both ghost slabs, MPI_Isend of both faces, MPI_Waitall),
// one MPI_Type_create_subarray per face. A face spans the whole array (ghost cells included)
// in the dimensions before j (in the order) and the interior in those after j, so edges and corners travel
// inside later faces: 2d messages in d phases, every ghost cell sent once. Neighbours outside a
// mesh are MPI_PROC_NULL (nothing sent or received). It fills every ghost region (a box / Moore
// stencil); on a mesh it also writes the corner and edge ghost cells that lie outside the
// domain, with the neighbour's copy of them (the API leaves those alone).
//
//   HandWritten h(cart, {16, 16, 15}, 1, {0, 1, 2});  // this rank's interior, ghost width k, order;
//                                                     // doubles, C order
//   h.exchange(array);                    // array: (16 + 2k) x (16 + 2k) x (15 + 2k) doubles
//   long long b = h.bytes_sent();         // bytes this rank sends to other ranks per exchange
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <vector>

namespace halo_tool {

class HandWritten {
 public:
  // Collective only in the sense that every rank must build one; no communication here. The
  // neighbours come from Cart_relative_shift on `cart` (a cartplan communicator).
  // m: this rank's interior (d extents; ranks' interiors may differ as a block decomposition's
  // do). order: a permutation of 0..d-1 (checked by the caller).
  HandWritten(MPI_Comm cart, const std::vector<int>& m, int k, const std::vector<int>& order);
  ~HandWritten();
  HandWritten(const HandWritten&) = delete;
  HandWritten& operator=(const HandWritten&) = delete;

  void exchange(double* array);
  std::int64_t bytes_sent() const { return bytes_; }

 private:
  struct Side {
    int peer = MPI_PROC_NULL;   // where the face goes
    int source = MPI_PROC_NULL; // where the ghost slab on the opposite side comes from
    MPI_Datatype face = MPI_DATATYPE_NULL, ghost = MPI_DATATYPE_NULL;
  };
  MPI_Comm comm_;
  int d_;
  std::vector<std::array<Side, 2>> sides_;  // per phase (dimension order[phase]): towards -1, towards +1
  std::int64_t bytes_ = 0;
};

}  // namespace halo_tool
