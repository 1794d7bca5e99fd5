// Plan dumps (CARTPLAN_DUMP_PLANS=DIR): each distinct plan the MPI backend runs is written to
// DIR once per process, under a name derived from its content, so that a user can inspect
// what a production run did. MPI-free: only files and the canonical JSON printer.
//
//   std::string written = dump_plan_if_requested(plan);  // "" when nothing was written
#pragma once

#include <cstdint>
#include <string>

#include "ir/plan.h"
#include "ir/result.h"

namespace cartplan::mpi {

// FNV-1a (64 bit) of the canonical JSON text: equal plans have equal fingerprints.
std::uint64_t plan_fingerprint(const std::string& canonical_json);

// The file name of a plan in the dump directory: cartplan-OP-ALGORITHM-FINGERPRINT.json,
// e.g. "cartplan-alltoall-combining-8c2f0e5d1a7b3c94.json". Deterministic across runs and ranks.
std::string dump_file_name(const ir::Plan& plan, const std::string& canonical_json);

// Writes `plan` to `dir` unless this process already wrote the same plan there. The file is
// written under a temporary name and renamed, so ranks that dump the same plan at once never
// leave a torn file. Returns the path written, "" if it was written before, or an error naming
// the directory (missing, not writable).
Result<std::string> dump_plan(const std::string& dir, const ir::Plan& plan);

// dump_plan into $CARTPLAN_DUMP_PLANS when that variable is set and not empty. A dump is a
// debugging aid local to this process, so a failure never reaches the caller: what a rank does
// collectively must not depend on its file system (a call that failed, or a drop-in verdict that
// passed through, on one rank only would leave its peers waiting). The first failure of the
// process is reported on stderr, once; later ones silently. Returns the path written, or "".
std::string dump_plan_if_requested(const ir::Plan& plan);

}  // namespace cartplan::mpi
