// verify(): proves a plan correct for one symbolic process, in two layers like MLIR's verifier:
// structure (indices, lengths, shapes, per-phase hazards), then symbolic execution (every recv
// block ends with the right block from the right origin, written once with its final content).
//
//   std::vector<std::string> errors = ir::verify(plan);
//   if (!errors.empty()) for (auto& e : errors) std::cerr << e << "\n";
#pragma once

#include <string>
#include <vector>

#include "ir/plan.h"

namespace cartplan::ir {

// Empty iff the plan is correct. Each message names the phase, round and entry (or copy) at fault.
std::vector<std::string> verify(const Plan& plan);

// Only the structural layer (what trace() relies on).
std::vector<std::string> verify_structure(const Plan& plan);

}  // namespace cartplan::ir
