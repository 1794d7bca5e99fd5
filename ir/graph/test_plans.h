// Small graph plans for tests, built by hand (independent of engine/graph's planners).
//
//   ir::graph::Topology t = tiny_topology();          // 3 ranks, a duplicate and a self edge
//   ir::graph::GraphPlan p = naive_linear(GraphOp::kAlltoall, t);   // verifies
#pragma once

#include "ir/graph/plan.h"

namespace cartplan::ir::graph {

// 0 -> {1, 1, 2}, 1 -> {0, 1}, 2 -> {0}: a duplicate edge 0 -> 1 and a self edge 1 -> 1.
Topology tiny_topology();

// One message per edge, all in phase 0; self edges as copies.
GraphPlan naive_linear(GraphOp op, const Topology& topology);

}  // namespace cartplan::ir::graph
