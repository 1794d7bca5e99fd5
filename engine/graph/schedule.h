// Graph schedules from patterns (seed 003's Alg. 3, for allgather and alltoall) and the linear
// schedule, as rank-dependent plans (ir/graph/plan.h). Each rank's schedule is built from its
// own pattern and edge lists only, as the MPI backend will build it at request creation.
//
//   GraphPlan linear = linear_plan(GraphOp::kAlltoall, topology);
//   Result<SetupRun> run = run_setup(topology, options);
//   GraphPlan combined = plan_from_patterns(GraphOp::kAllgather, topology, run->patterns, options);
#pragma once

#include <map>
#include <vector>

#include "engine/graph/pattern.h"
#include "ir/graph/plan.h"

namespace cartplan::engine::graph {

// One message per edge (duplicates: one message each, as MPI libraries send them), all in
// phase 0; self edges are copies.
ir::graph::GraphPlan linear_plan(ir::graph::GraphOp op, const ir::graph::Topology& topology);
// Rank r's part of it, from its own edge lists (what the MPI backend builds).
ir::graph::RankSchedule linear_schedule(ir::graph::GraphOp op, const ir::graph::RankEdges& edges, int rank);

// Rank r's schedule from its pattern: per stage an exchange with the partner (forwarded blocks
// land in temp slots), then per pattern send one message with all its items (parallel edges
// travel in one message), per pattern receive one message into the recv blocks (allgather: the
// first recv block from an origin, then copies into the others); self edges are copies.
ir::graph::RankSchedule schedule_from_pattern(ir::graph::GraphOp op, const ir::graph::Topology& topology, int rank,
                                              const RankPattern& pattern);
// The same from the rank's own edge lists: it needs nothing of other ranks.
ir::graph::RankSchedule schedule_from_pattern(ir::graph::GraphOp op, const ir::graph::RankEdges& edges, int rank,
                                              const RankPattern& pattern);

// Where a rank's send blocks are (send block k holds send_blocks_of(...)[k]): the start of
// every schedule builder's map from block to location.
std::map<ir::graph::BlockId, ir::graph::Loc> send_locations(ir::graph::GraphOp op, const ir::graph::RankEdges& edges, int rank);
// Phase f of a schedule, added (with the phases before it) if it does not exist yet.
ir::graph::GraphPhase& phase_at(ir::graph::RankSchedule& schedule, int f);

// Self edges: the send block straight into the recv block the k-th edge rule pairs it with
// (every combining schedule does them in phase 0, as copies).
std::vector<ir::graph::Copy> self_edge_copies(ir::graph::GraphOp op, const ir::graph::RankEdges& edges, int rank);

ir::graph::GraphPlan plan_from_patterns(ir::graph::GraphOp op, const ir::graph::Topology& topology,
                                        const std::vector<RankPattern>& patterns, const PairingOptions& options);

}  // namespace cartplan::engine::graph
