// Symbolic execution of a plan for one process: which block, from which origin, every
// transfer carries, and which final recv blocks it feeds (used by verify, the DOT view and bind).
//
//   ir::Trace tr = ir::trace(plan);
//   if (!tr.errors.empty()) report(tr.errors);
//   for (const ir::Transfer& x : tr.transfers) use(x.content.origin, x.targets);
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/plan.h"

namespace cartplan::ir {

// "Block `block` of the process at offset `origin` from the holder."
struct Content {
  int block = 0;
  Offset origin;
  friend bool operator==(const Content&, const Content&) = default;
};

// One entry of one round, as seen by a symbolic process.
struct Transfer {
  int phase = 0;
  int round = 0;
  int entry = 0;
  Content content;           // what the sender holds in its send entry
  std::vector<int> targets;  // recv blocks whose final content passes through this transfer
};

struct Trace {
  std::vector<Transfer> transfers;          // in plan order: phase, round, entry
  std::vector<std::vector<int>> round_start;  // [phase][round] -> index of its first transfer
  std::vector<std::optional<Content>> copy_content;  // what each copy moves (nullopt: undefined)
  std::vector<std::optional<Content>> final_recv;    // content of each recv block at the end
  std::vector<std::string> errors;  // reads of undefined data, double writes, index errors
};

// Requires a plan whose indices are in range and whose send/recv lists match in length
// (verify's structural layer); reports anything else as errors instead of asserting.
Trace trace(const Plan& plan);

}  // namespace cartplan::ir
