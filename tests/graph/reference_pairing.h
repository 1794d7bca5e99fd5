// A sequential reference implementation of seed 003's pattern construction (Alg. 1 and 2, pairing
// and cumulative), written over the whole graph at once: global sets instead of messages, all
// ranks stepped together. It must give exactly the patterns of the distributed construction
// (engine/graph/setup_run.h); tests/graph/distributed_test.cc compares them.
//
//   std::vector<RankPattern> ref = reference_patterns(topology, PairingOptions{});
#pragma once

#include <vector>

#include "engine/graph/pattern.h"
#include "ir/graph/topology.h"

namespace cartplan::engine::graph {

std::vector<RankPattern> reference_patterns(const ir::graph::Topology& topology, const PairingOptions& options);

}  // namespace cartplan::engine::graph
