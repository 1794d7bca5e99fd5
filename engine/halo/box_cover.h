// A union of boxes cut into disjoint boxes, each labelled with the input boxes that contain it
// and joined into as few boxes as the labels allow. The split planner uses it for the cells a
// temp must hold: the union of the slabs later phases forward, each piece labelled by the
// regions that need it (so that a part's cells share their final holders).
//
//   std::vector<CoverPiece> c = disjoint_cover({Box{{0, 0}, {2, 4}}, Box{{0, 2}, {2, 4}}});
//   // [0,2)x[0,2) by {0}, [0,2)x[2,4) by {0,1}, [0,2)x[4,6) by {1}
#pragma once

#include <vector>

#include "ir/halo/box.h"

namespace cartplan::engine::halo {

struct CoverPiece {
  ir::halo::Box box;
  std::vector<int> covered_by;  // indices of the input boxes, increasing
};

// Pieces in lexicographic order of their corners; empty input boxes are ignored.
std::vector<CoverPiece> disjoint_cover(const std::vector<ir::halo::Box>& boxes);

}  // namespace cartplan::engine::halo
