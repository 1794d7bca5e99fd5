// The program simulator: lowers a plan for every rank of a grid (engine::lower, the Programs
// the MPI backend executes) and runs those programs in one process with real bytes. Each rank
// has its send blocks (rank- and block-dependent data, expected.h), recv blocks and scratch
// blocks (sentinel bytes) and a staging arena. Phase by phase, every rank runs its `before`
// steps, then every send is matched with the receive its peer posts (same phase, tag and
// byte count; a message is its parts' bytes concatenated in order), then every rank runs its
// `after` steps; last the final steps. Combining steps add int64 elements (the op is a sum).
// Afterwards every significant recv block is compared with what the collective must deliver,
// exactly as in the plan simulator (simulator.h); recv blocks that are not significant on a
// rank (rooted ops) must not be touched.
//
// The run also catches what only a program can get wrong: a message without a partner or
// with another size, a part or step outside its location, a step between locations of
// different sizes, reads of staging bytes or scratch blocks never written in this run, and a
// phase that receives into bytes it also sends from or receives twice.
//
//   ProgramSimOptions o;  o.block_bytes = {16};
//   Result<ProgramSimReport> r = simulate_programs(plan, grid, o);
//   if (r && !r->ok) for (auto& e : r->errors) std::cerr << e << "\n";
//
//   Result<LoweredGrid> g = lower_grid(plan, grid, o);   // or: lower, change, then run
//   g->programs[3].phases[0].after.clear();
//   Result<ProgramSimReport> bad = run_programs(plan, grid, *g, o);   // bad->ok == false
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/bind.h"
#include "engine/grid.h"
#include "engine/lower.h"
#include "engine/program.h"
#include "ir/plan.h"
#include "ir/result.h"

namespace cartplan::sim {

struct ProgramSimOptions {
  // One size for all blocks, or one per block (alltoall, scatter); reductions: multiples of 8.
  std::vector<std::int64_t> block_bytes = {8};
  int root = -1;         // rooted ops: the root's rank
  int max_errors = 100;  // errors listed in full; the rest are counted
  // The lowering's choice between packing and struct datatypes (engine::LowerOptions); 0 sends
  // every message of several parts by struct datatype, whatever the block size.
  std::int64_t struct_min_bytes = engine::LowerOptions::kDefaultStructMinBytes;
  // engine::LowerOptions::home_max_message_bytes (-1: blocks go home in every message).
  std::int64_t home_max_message_bytes = -1;
  // engine::LowerOptions::trailer_min_bytes (-1: no trailers; 0: on every message).
  std::int64_t trailer_min_bytes = -1;
};

struct ProgramSimReport {
  bool ok = false;
  std::vector<std::string> errors;  // naming rank, phase and round (messages) or block (results)
  std::int64_t error_count = 0;     // including those not listed
  std::int64_t messages = 0;        // sends over all ranks (rounds to the rank itself are steps)
  std::int64_t bytes = 0;           // bytes in those sends
  std::int64_t copied_bytes = 0;    // bytes moved by non-combining steps, over all ranks
  std::int64_t combined_bytes = 0;  // bytes reduced by combining steps, over all ranks
  std::int64_t steps = 0;           // local steps run, over all ranks
  std::int64_t max_staging_bytes = 0;  // the largest staging arena of any rank
  int ranks = 0;
};

// Every rank's bound plan and its program (lowered with engine::contiguous_layout).
struct LoweredGrid {
  std::vector<engine::BoundPlan> bound;
  std::vector<engine::Program> programs;
};

// Errors (not reports) for invalid arguments: plan and grid of different dimension, bad block
// sizes (reductions: not a multiple of 8), a missing or bad root, a plan that does not verify.
Result<LoweredGrid> lower_grid(const ir::Plan& plan, const engine::Grid& grid, const ProgramSimOptions& options);

// Runs `lowered` (from lower_grid with the same plan, grid and options; its programs may have
// been changed since, which is how tests show that the checker catches broken programs).
Result<ProgramSimReport> run_programs(const ir::Plan& plan, const engine::Grid& grid, const LoweredGrid& lowered,
                                      const ProgramSimOptions& options);

// lower_grid, then run_programs.
Result<ProgramSimReport> simulate_programs(const ir::Plan& plan, const engine::Grid& grid,
                                           const ProgramSimOptions& options);

}  // namespace cartplan::sim
