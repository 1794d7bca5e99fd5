// verify() for halo plans, in two layers like ir::verify (docs/halo.md):
//  1. structure: a valid array shape; the neighbourhood is distinct non-zero sign vectors in
//     increasing order whose ghost regions fit (no ghost side wider than the interior it is
//     filled from); dim_order is a permutation; shifts are non-zero sign vectors (along the
//     phase's dimension where it names one); tags are unique; every part has a positive extent,
//     lies inside its buffers and writes no interior cell; in every phase no cell is written
//     twice, or read and written; the stats are the plan's (derived_stats).
//  2. element-level symbolic execution for one process among identical neighbours (trace.h):
//     every cell read holds a value by then (ghost cells are written once, so it is final), the
//     cells of a part come from one process, every array cell written is a required ghost cell
//     (its sign vector is in the neighbourhood) written once with the right value (cell
//     x - t * interior of the process at self + t), and every required ghost cell is written.
// Errors name phase, message and part, and a cell:
// "phase 1, message 0 (shift (0,1), tag 2), part 1: writes array cell (-1,64), which no ghost
//  region of the neighbourhood holds (its sign vector (-1,1) is not an offset)".
//
//   std::vector<std::string> errors = ir::halo::verify(plan);
//   for (const std::string& e : errors) std::cerr << e << "\n";
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "ir/halo/plan.h"

namespace cartplan::ir::halo {

// At most max_errors messages, then "... and N more errors". Empty iff correct.
std::vector<std::string> verify(const HaloPlan& plan, std::size_t max_errors = 50);

// Only the first layer.
std::vector<std::string> verify_structure(const HaloPlan& plan, std::size_t max_errors = 50);

// The neighbourhood checks of the first layer (also used by engine/halo's description): a
// message or nullopt.
std::optional<std::string> neighborhood_error(const ArrayShape& array, const std::vector<Offset>& neighborhood);

// "phase 1, message 0 (shift (0,1), tag 2)"
std::string message_where(int phase, int message, const Message& m);

}  // namespace cartplan::ir::halo
