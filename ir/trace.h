// Symbolic execution of a plan for one process: which contributions (block, origin) every
// transfer and local step carries, and which final recv blocks, held where, it feeds (used by
// verify, the DOT view and bind).
//
// Locations hold multisets of contributions: exactly one outside reductions, a partial sum in
// reduction plans (a reduce write adds the incoming multiset, an overwrite replaces). So
// verify can prove that each recv block ends with exactly the required contributions, each
// as often as required: no double counting, nothing missing.
//
//   ir::Trace tr = ir::trace(plan);
//   if (!tr.errors.empty()) report(tr.errors);
//   for (const ir::Transfer& x : tr.transfers) use(x.contents, x.targets, x.holders);
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/plan.h"

namespace cartplan::ir {

// One contribution: "block `block` of the process at offset `origin` from the holder".
struct Content {
  int block = 0;
  Offset origin;
  friend bool operator==(const Content&, const Content&) = default;
  friend auto operator<=>(const Content&, const Content&) = default;
};

// What a transfer or local step carries and where its data ends up.
struct Flow {
  Content content;                // the first contribution (the only one outside reductions);
                                  // empty origin when the data is undefined
  std::vector<Content> contents;  // the whole multiset, sorted
  std::vector<int> targets;       // recv blocks whose final content passes through here
  // Where those recv blocks are: the final holder's position relative to the process that
  // receives (transfer) or performs (local step) this, without repetitions.
  std::vector<Offset> holders;
};

// One entry of one round, as seen by a symbolic process.
struct Transfer : Flow {
  int phase = 0;
  int round = 0;
  int entry = 0;
};

// A local step: a copy of a phase (phase >= 0) or of the plan's final copies (phase = -1).
struct LocalStep : Flow {
  int phase = -1;
  int copy = 0;  // index in the phase's (or the plan's) copies
};

struct Trace {
  std::vector<Transfer> transfers;            // in plan order: phase, round, entry
  std::vector<std::vector<int>> round_start;  // [phase][round] -> index of its first transfer
  std::vector<LocalStep> locals;              // phase copies in phase order, then the plan's copies
  std::vector<int> phase_copy_start;          // [phase] -> index into locals of its first copy
  int final_copy_start = 0;                   // index into locals of the plan's first copy
  std::vector<std::optional<Content>> copy_content;  // what each final copy moves (first contribution)
  std::vector<std::optional<Content>> final_recv;    // first contribution of each recv block at the end
  std::vector<std::optional<std::vector<Content>>> final_contents;  // each recv block's multiset
  std::vector<std::string> errors;  // reads of undefined data, double writes, wrong or missing contributions
};

// The contributions recv block `block` must end with (nullopt: an offset beyond 2^30).
std::optional<std::vector<Content>> required_contents(const Plan& plan, int block);

// Requires a plan whose indices are in range and whose send/recv lists match in length
// (verify's structural layer); reports anything else as errors instead of asserting.
Trace trace(const Plan& plan);

}  // namespace cartplan::ir
