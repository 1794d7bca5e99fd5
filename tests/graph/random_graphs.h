// Random multigraphs for property tests: parallel edges, self edges, and edge lists in random
// order (so the k-th edge rule pairs edges that are not in the same list position).
//
//   ir::graph::Topology t = random_multigraph(8, 0.3, /*seed=*/42);
#pragma once

#include <cstdint>

#include "ir/graph/topology.h"

namespace cartplan::engine::graph {

// Each ordered pair (a, b), a == b included, gets an edge with probability q and, when it has
// one, a second parallel edge with probability 1/4; every list is then shuffled.
ir::graph::Topology random_multigraph(int p, double q, std::uint64_t seed);

}  // namespace cartplan::engine::graph
