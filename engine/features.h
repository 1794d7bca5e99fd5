// Counting what the cost model prices (Features, cost_model.h), read off the program one process
// runs (lower.h). predict.h prices these counts; bench/calibrate fits prices against them.
// Nothing here decides a layout: the program already holds every lowering rule's outcome
// (packing, struct datatypes, homes, trailers, self rounds, aliases), so a new rule is counted
// as soon as lower() applies it.
//
// Meshes: `weights` gives, per phase and round of the plan, the share of processes that send
// its message (peer_share in grid.h: 1 on a torus). The program is the representative
// process's (bind_representative in bind.h: every entry travels), and each message, and each
// packing or unpacking step of its staging region (or combine of the scratch block it filled),
// counts with its round's weight: the mean over ranks, the same on every rank.
//
//   Result<BoundPlan> rep = bind_representative(plan, grid, sizes);
//   Result<Program> prog = lower(plan, *rep, contiguous_layout(plan, *rep), options);
//   Features f = count_features(*prog, round_weights(plan, grid), model.eager_limit_bytes,
//                               round_traffic(plan, grid, placement));
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/cost_model.h"
#include "engine/grid.h"
#include "engine/placement.h"
#include "engine/program.h"
#include "ir/plan.h"

namespace cartplan::engine {

// Per phase and round of `plan`: the share of `grid`'s processes that have the round's peer
// (1 everywhere without a grid, or with one of another dimension).
std::vector<std::vector<double>> round_weights(const ir::Plan& plan, const std::optional<Grid>& grid);

// The counts of `program` (the representative process's) with its rounds' `weights`. With
// `traffic` (placement.h: per phase and round; empty: every process on one node), also the
// placement counts: a message counts off-node with its shift's off_share (instead of its
// weight), and per phase the busiest node's link carries sum over its rounds of message bytes x
// that node's off-node processes (the larger of out and in).
Features count_features(const Program& program, const std::vector<std::vector<double>>& weights,
                        std::int64_t eager_limit_bytes, const RoundTraffic& traffic = {});

// The counts of send `m` alone (weight 1): one message, its wire bytes and, above the eager
// limit, its step (rendezvous and single copy if it and `other`, the receive of the same round,
// are one run of memory; else pipelined).
Features message_counts(const Message& m, const Message* other, std::int64_t eager_limit_bytes);

// Whether a message's parts lie as one run of memory. Several parts are one run when they follow
// each other: staging regions end to end, or the caller's blocks in consecutive indices, which lie
// back to back in Cart_alltoall's and Cart_allgather's buffers (and with the usual prefix-sum
// displacements of the v forms); an MPI library merges adjacent segments of a datatype.
bool one_run(const std::vector<Loc>& parts);

}  // namespace cartplan::engine
