// The simulator backend: runs a plan for all p ranks of a grid in one process with real bytes
// (the way planners are tested without MPI). Send blocks hold rank- and block-dependent bytes,
// recv blocks start as a sentinel; afterwards every recv block is checked against the data of
// the process at -offset[i], or against the sentinel where that process is outside the mesh.
//
// Reductions: blocks are vectors of 8-byte elements (block bytes must be a multiple of 8) and
// the op is a sum. With Values::kInt64 every element is a rank-, block- and element-dependent
// integer and the result must be exact, so a contribution counted twice, missing, or from the
// wrong process shows up; the simulator also carries the multiset of contributions (rank,
// block) and names the one that is wrong. With Values::kDouble the result is compared with a
// relative tolerance: a combining plan adds in another order than a sequential loop over
// the neighbours, and floating-point addition is not associative, so the last bits may differ.
// A process none of whose sources exists (mesh) keeps its recv block untouched.
//
// Rooted ops need `root` (a rank); only the blocks significant on a rank are checked (the
// root's for gather/reduce, blocks whose source is the root for bcast/scatter); blocks a rank
// only forwards through (BoundPlan::recv_scratch) are an executor's scratch.
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
  int root = -1;         // rooted ops: the root's rank
  enum class Values { kInt64, kDouble };
  Values values = Values::kInt64;  // element type of reductions (the op is a sum)
  double tolerance = 1e-9;         // relative, for Values::kDouble

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
// a missing or bad root, a plan that does not verify.
Result<SimReport> simulate(const ir::Plan& plan, const engine::Grid& grid, const SimOptions& options);

}  // namespace cartplan::sim
