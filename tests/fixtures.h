// Test helpers: neighbourhoods from literals (asserting they are valid) and hand-made plans.
#pragma once

#include <string>
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

// True iff some message in `errors` contains `text`.
bool has_error(const std::vector<std::string>& errors, const std::string& text);

// Seed 000, Prop. 3.3 counted independently of the planner: the allgather tree's non-zero
// edges are the distinct prefixes (in routing order) whose last routed coordinate is non-zero.
int tree_edges(const engine::Neighborhood& n, const std::vector<int>& order);

}  // namespace cartplan::testing
