// Element-level symbolic execution of a halo plan (the second layer of verify.h) for one
// process among identical neighbours: every process runs the same plan, so what process P
// receives in a message of shift h is what P - h sent. Cells are tracked in classes
// (cell_classes.h): a class holds nothing yet, or the value of cell x + delta of the process at
// P + origin (for every cell x of the class).
//
// Besides the errors, the trace gives bind() what it needs on meshes: per part the process
// its cells come from and the processes where they end in a required ghost cell (relative to
// the sender). A part travels on a mesh iff its origin and one of its final holders exist.
//
//   TraceResult t = trace_halo(plan);
//   if (t.errors.empty()) use(t.parts[phase][message][part].origin);
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ir/halo/plan.h"

namespace cartplan::ir::halo {

struct PartTrace {
  Offset origin;                // relative to the sender
  std::vector<Offset> holders;  // relative to the sender, sorted, distinct
  friend bool operator==(const PartTrace&, const PartTrace&) = default;
};

struct TraceResult {
  std::vector<std::string> errors;                    // empty iff the plan passes
  std::vector<std::vector<std::vector<PartTrace>>> parts;  // [phase][message][part], when it passes
};

// `plan` must pass verify_structure().
TraceResult trace_halo(const HaloPlan& plan, std::size_t max_errors = 50);

}  // namespace cartplan::ir::halo
