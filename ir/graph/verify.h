// verify() for graph plans, in two layers like ir::verify:
//  1. structure: every message has a peer other than the rank itself and at least one part;
//     receives and copies write only recv blocks and temp slots; a temp slot is used for the
//     block it was declared with; in every phase the k-th message rank a sends to rank b
//     matches the k-th message b receives from a, part by part (same blocks, same order); no
//     location is written twice in one phase, or read by a send and written in the same phase;
//  2. symbolic execution of every rank: a send names the block its location holds at that point
//     (nothing is read before it is written), every recv block and temp slot is written at most
//     once, and at the end recv block j of every rank holds exactly the block MPI delivers there
//     (allgather: the send block of in[j]; alltoall: the block of the edge in[j] -> rank that
//     the k-th edge rule pairs with j). Together: every block reaches every target exactly once,
//     duplicate edges counted, and nothing else is written.
// Errors name the phase, rank, message and part (or copy) at fault, e.g.
// "phase 1, rank 4, recv 0 (from 2), part 1: block (7) does not match the sender's (8)".
//
//   std::vector<std::string> errors = ir::graph::verify(plan);
//   for (const std::string& e : errors) std::cerr << e << "\n";
#pragma once

#include <string>
#include <vector>

#include "ir/graph/plan.h"

namespace cartplan::ir::graph {

// At most max_errors messages, then one line "... and N more errors". Empty iff correct.
std::vector<std::string> verify(const GraphPlan& plan, std::size_t max_errors = 50);

// Only the first layer (what the simulator needs before it moves bytes).
std::vector<std::string> verify_structure(const GraphPlan& plan, std::size_t max_errors = 50);

}  // namespace cartplan::ir::graph
