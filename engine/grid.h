// Grid: a d-dimensional torus/mesh of processes with MPI_Cart_create's row-major rank order
// (the last dimension varies fastest), and relative addressing (seed 000, Listing 2).
// Outside a non-periodic dimension there is no neighbour: kNoRank (cf. MPI_PROC_NULL).
//
//   Result<Grid> g = Grid::create({4, 3}, {true, false});
//   int right = g->relative_rank(g->coords(5), {0, 1});   // kNoRank at the mesh edge
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/plan.h"
#include "ir/result.h"

namespace cartplan::engine {

using ir::Offset;
using Coords = std::vector<int>;

inline constexpr int kNoRank = -1;

class Grid {
 public:
  // dims >= 1 each, periods.size() == dims.size(), product fits in int.
  static Result<Grid> create(std::vector<int> dims, std::vector<bool> periods);

  int ndims() const { return static_cast<int>(dims_.size()); }
  int size() const { return size_; }
  const std::vector<int>& dims() const { return dims_; }
  const std::vector<bool>& periods() const { return periods_; }

  Coords coords(int rank) const;           // rank in [0, size)
  int rank(const Coords& coords) const;    // coords in range

  // coords + offset, wrapped on periodic dimensions; nullopt if it leaves the mesh.
  std::optional<Coords> relative_coord(const Coords& coords, const Offset& offset) const;
  // Rank at coords + offset, or kNoRank.
  int relative_rank(const Coords& coords, const Offset& offset) const;
  bool contains(const Coords& coords, const Offset& offset) const {
    return relative_coord(coords, offset).has_value();
  }

  // Seed 000's Cart_relative_shift: dest = coords + offset, source = coords - offset.
  struct Shift {
    int source = kNoRank;
    int dest = kNoRank;
  };
  Shift relative_shift(const Coords& coords, const Offset& offset) const;
  // Whether coords + sign * offset is on the grid (relative_shift's dest for +1, source for -1
  // is not kNoRank), allocating nothing.
  bool shift_exists(const Coords& coords, const Offset& offset, int sign) const noexcept;

 private:
  Grid(std::vector<int> dims, std::vector<bool> periods, int size)
      : dims_(std::move(dims)), periods_(std::move(periods)), size_(size) {}
  std::vector<int> dims_;
  std::vector<bool> periods_;
  int size_ = 0;
};

// True iff `shift` leads every process of `grid` back to itself (a multiple of a periodic
// dimension, e.g. any shift along a dimension of size 1): such a round is a local copy.
bool wraps_to_self(const Offset& shift, const Grid& grid);

// The share of `grid`'s processes that have a peer at +shift: 1 on a torus; on a mesh
// (n-|s|)/n per non-periodic dimension (a 2x2 mesh has 3 of 8 direct peers per process).
double peer_share(const Offset& shift, const Grid& grid);

}  // namespace cartplan::engine
