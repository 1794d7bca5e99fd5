// The simulator backend: runs a plan for all p ranks of a grid in one process with real bytes
// (the way planners are tested without MPI). Send blocks hold rank- and block-dependent bytes,
// recv blocks start as a sentinel; afterwards every recv block is checked against the data of
// the process at -offset[i], or against the sentinel where that process is outside the mesh.
//
//   SimOptions o;  o.block_bytes = {8};
//   Result<SimReport> r = simulate(plan, grid, o);
//   if (r && !r->ok) for (auto& e : r->errors) std::cerr << e << "\n";
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/cost_model.h"
#include "engine/grid.h"
#include "ir/plan.h"
#include "ir/result.h"

namespace cartplan::sim {

struct SimOptions {
  std::vector<std::int64_t> block_bytes = {8};  // one for all blocks, or one per block (alltoall)
  engine::CostModel model;
  int max_errors = 100;  // errors listed in full; the rest are counted

  // Faults injected on purpose so tests can show that the checker catches them.
  enum class Fault {
    kNone,
    kCorruptByte,        // flip the first byte of the first non-empty message
    kDropMessage,        // lose the first message
    kWriteOutsideMesh,   // write into the first recv block whose source is outside the mesh
  };
  Fault fault = Fault::kNone;
};

struct SimReport {
  bool ok = false;
  std::vector<std::string> errors;  // wrong/missing blocks (rank, block, expected origin), writes outside the mesh
  std::int64_t error_count = 0;     // including those not listed
  std::int64_t messages = 0;        // point-to-point messages over all ranks (local copies excluded)
  std::int64_t bytes = 0;           // bytes in those messages
  std::int64_t copies = 0;          // local copies over all ranks
  double model_time_us = 0;         // max over ranks of sum over rounds of alpha + beta*bytes
  int ranks = 0;
};

// Error (not a report) for invalid arguments: plan and grid of different dimension, bad sizes,
// a plan that does not verify.
Result<SimReport> simulate(const ir::Plan& plan, const engine::Grid& grid, const SimOptions& options);

}  // namespace cartplan::sim
