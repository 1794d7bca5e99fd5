// Human views of a plan: a per-phase, per-round table (like Halide's print_loop_nest) and a
// Graphviz DOT graph (positions relative to the origin; transfers as edges labelled by round;
// for allgather this is the routing tree).
//
//   std::cout << ir::to_text(plan);   // or ir::to_dot(plan) | dot -Tpng
#pragma once

#include <string>

#include "ir/plan.h"

namespace cartplan::ir {

std::string to_text(const Plan& plan);
std::string to_dot(const Plan& plan);

}  // namespace cartplan::ir
