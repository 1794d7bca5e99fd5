// Boxes of cells: the unit every halo plan moves (docs/halo.md). A box is a corner `lo` and an
// `extent` per dimension, the cells lo[k] <= x[k] < lo[k] + extent[k]; coordinates are those of
// the buffer the box lies in (the array's interior coordinates, or a temp's [0, extent)).
//
//   Box a{{0, 0}, {2, 64}};
//   Box b = translated(a, {64, 0});            // [64,66) x [0,64)
//   bool o = overlaps(a, intersect(a, b));     // false: they share no cell
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/plan.h"

namespace cartplan::ir::halo {

using ir::Offset;
// "(1,0,-1)" for offsets (ir/plan.h); the overloads below would hide it.
using ir::to_string;
// Cell coordinates (one per dimension).
using Cell = std::vector<int>;

struct Box {
  std::vector<int> lo;
  std::vector<int> extent;
  int ndims() const { return static_cast<int>(lo.size()); }
  int hi(int k) const { return lo[k] + extent[k]; }
  bool empty() const;
  std::int64_t cells() const;  // 0 if empty
  bool contains(const Cell& x) const;
  friend bool operator==(const Box&, const Box&) = default;
};

// The common cells (an empty box of zero extents when there are none).
Box intersect(const Box& a, const Box& b);
bool overlaps(const Box& a, const Box& b);
// Every cell of `inner` lies in `outer` (an empty inner box lies anywhere).
bool contains(const Box& outer, const Box& inner);
Box translated(const Box& b, const std::vector<int>& delta);
// The box a and b form together when they touch along one dimension and agree in all others
// (nullopt otherwise): [0,2)x[0,4) and [2,5)x[0,4) join into [0,5)x[0,4).
std::optional<Box> join(const Box& a, const Box& b);
// "[0,2)x[62,64)"
std::string to_string(const Box& b);
// "(0,-1)"
std::string cell_string(const Cell& x);

}  // namespace cartplan::ir::halo
