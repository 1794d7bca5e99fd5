// HaloDescription: what a halo exchange is about (docs/halo.md, issue 33): the local array
// (interior extents, ghost widths per side, element size, C or Fortran order), the stencil and,
// when known, the process grid (dims, periods). A ghost cell is filled iff the sign vector of
// its position outside the interior is an offset of the stencil and its source cell exists
// (periodic wrap, or inside the mesh); no other cell is ever written.
//
// Stencils are sign vectors: coordinates -1, 0 and 1 name the ghost regions (faces, edges,
// corners). Deep halos are wide ghosts (ghost width 3 with a Moore stencil of radius 1 fills
// the 3-deep shell), not offsets of 2 or 3, which are refused. The zero offset and duplicates
// are dropped (the stencil is a set). A ghost side may be at most as wide as the interior: its
// cells come from the neighbour's interior.
//
//   Result<HaloDescription> h = describe_halo(array, {{1, 0}, {-1, 0}, {0, 1}, {0, -1}}, grid);
//   if (!h) std::cerr << h.error();  // e.g. "offset (2,0) is not a sign vector: ..."
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "engine/grid.h"
#include "ir/halo/array.h"
#include "ir/result.h"

namespace cartplan::engine::halo {

struct HaloDescription {
  ir::halo::ArrayShape array;
  // Distinct non-zero sign vectors in increasing lexicographic order (a halo plan's neighborhood).
  std::vector<ir::Offset> neighborhood;
  std::optional<Grid> grid;
};

// Errors name the bad part: the array shape, an offset, a ghost side wider than the interior,
// a grid of another dimension.
Result<HaloDescription> describe_halo(ir::halo::ArrayShape array, const std::vector<ir::Offset>& offsets, std::optional<Grid> grid);

// The same with the stencil given as a SPEC (engine/spec.h: moore:d=2,r=1, box:d=3,n=3,f=-1,
// vonneumann:d=3,r=1, offsets:1,0;-1,0, @file.json).
Result<HaloDescription> describe_halo(ir::halo::ArrayShape array, std::string_view spec, std::optional<Grid> grid);

// The stencil offsets whose ghost regions hold cells (ghost widths of 0 leave some empty).
std::vector<ir::Offset> nonempty_regions(const HaloDescription& h);

}  // namespace cartplan::engine::halo
