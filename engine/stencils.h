// Neighbourhood generators of the papers, all in lexicographic order (first coordinate slowest):
//  - moore(d, r):      Chebyshev ball of radius r, zero included ((2r+1)^d offsets)
//  - vonneumann(d, r): Manhattan (L1) ball of radius r, zero included
//  - box(d, n, f):     every coordinate in {f, ..., f+n-1} (seed 000's test neighbourhoods)
//  - chebyshev / manhattan(d, depth, shadow): shadow <= distance <= depth (seed 001, Listing 6)
//
//   Result<Neighborhood> n = stencils::box(3, 3, -1);   // 27 offsets, t = 26
#pragma once

#include "engine/neighborhood.h"
#include "ir/result.h"

namespace cartplan::engine::stencils {

Result<Neighborhood> moore(int d, int r);
Result<Neighborhood> vonneumann(int d, int r);
Result<Neighborhood> box(int d, int n, int f);
Result<Neighborhood> chebyshev(int d, int depth, int shadow);
Result<Neighborhood> manhattan(int d, int depth, int shadow);

}  // namespace cartplan::engine::stencils
