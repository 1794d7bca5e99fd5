// The do-no-harm verdicts of one accelerated communicator, per call shape (op, form, block
// size): policy.h's rule, computed the first time a shape is seen and remembered, so a repeated
// call pays one short scan. With CARTPLAN_VERBOSE=1 rank 0 prints each new verdict and why:
//   cartplan_interpose: communicator 1 alltoall non-blocking 4-byte blocks: passed through
//   (cartplan's pick is its direct plan: Open MPI's algorithm plus cartplan's overhead)
//
//   if (!accelerated(*a, ir::Op::kAlltoall, Form::kBlocking, 8)) ... PMPI_Neighbor_alltoall
#pragma once

#include <cstdint>
#include <vector>

#include "backends/interpose/comm_table.h"
#include "ir/plan.h"

namespace cartplan::interpose {

// Uniform calls (alltoall, allgather: one block size, the same on every rank).
bool accelerated(AcceleratedComm& a, ir::Op op, Form form, std::int64_t bytes);

// A verdict on a plan that was agreed elsewhere (persistent init, possibly with per-block
// sizes): judged, remembered under the mean block size for the report, and returned.
bool accept_agreed(AcceleratedComm& a, const ir::Plan& plan, const std::vector<std::int64_t>& block_bytes, Form form);

}  // namespace cartplan::interpose
