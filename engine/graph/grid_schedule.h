// Rank schedules from grid patterns (grid.h), for allgather and alltoall, as ordinary
// rank-dependent plans (ir/graph/plan.h): phase k of the schedule is dimension k of the grid.
// Each rank's schedule is built from its own pattern and edge lists only.
//
// A message carries its flows' blocks in flow order (allgather: each origin's block once,
// alltoall: the origin's blocks for the target, one per parallel edge). A received block lands
// in the recv block the k-th edge rule names when this rank is one of its targets (allgather:
// then copied into the recv blocks of the origin's other parallel edges), else in a new temp
// slot; a block is forwarded from wherever it landed. Self edges are copies in phase 0.
//
//   Result<GridSetupRun> run = run_grid_setup(topology, dims);
//   GraphPlan plan = grid_plan(GraphOp::kAlltoall, topology, dims, run->patterns);
#pragma once

#include <vector>

#include "engine/graph/grid.h"
#include "ir/graph/plan.h"

namespace cartplan::engine::graph {

ir::graph::RankSchedule grid_schedule(ir::graph::GraphOp op, const ir::graph::RankEdges& edges, int rank,
                                      const GridPattern& pattern);

ir::graph::GraphPlan grid_plan(ir::graph::GraphOp op, const ir::graph::Topology& topology, const std::vector<int>& dims,
                               const std::vector<GridPattern>& patterns);

}  // namespace cartplan::engine::graph
