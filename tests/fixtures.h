// Test helpers: neighbourhoods from literals (asserting they are valid) and hand-made plans.
#pragma once

#include <vector>

#include "engine/neighborhood.h"
#include "ir/plan.h"

namespace cartplan::testing {

// A neighbourhood that the test knows to be valid (aborts the test binary otherwise).
engine::Neighborhood nbh(int ndims, std::vector<ir::Offset> offsets);

// The 2-d example used across unit tests: 9-point Moore neighbourhood, zero included.
engine::Neighborhood moore9();

ir::BufRef send(int block);
ir::BufRef recv(int block);
ir::BufRef temp(int slot);

}  // namespace cartplan::testing
