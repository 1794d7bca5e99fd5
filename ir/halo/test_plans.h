// Hand-built halo plans for the tests of ir/halo (independent of the planners in engine/halo).
//
//   HaloPlan p = test_plans::moore2_dimwise();   // verifies; tests break copies of it
#pragma once

#include "ir/halo/plan.h"

namespace cartplan::ir::halo::test_plans {

// 1-D, interior 4, ghosts 1 and 2, neighbours -1 and +1: one phase of two messages.
HaloPlan line_direct();
// 2-D Moore stencil, interior 3x4, ghost_lo (1,2), ghost_hi (2,1), C order: dimension 0, then
// dimension 1 with faces extended over the ghost rows of phase 0 (three parts each, one per
// origin).
HaloPlan moore2_dimwise();
// The same array and stencil, with the (1,1) corner routed through a temp in dimension 0's
// phase instead of the ghost row (the shape of a split plan).
HaloPlan moore2_with_temp();

}  // namespace cartplan::ir::halo::test_plans
