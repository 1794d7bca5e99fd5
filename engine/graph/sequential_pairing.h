// The sequential form of seed 003's pattern construction (Alg. 1 and 2, pairing and cumulative),
// written over the whole graph at once: global sets instead of messages, all ranks stepped
// together. It is an independent implementation of what the per-rank state machines compute
// (setup_rank.h): the tests require identical patterns on every rank (tests/graph/), and
// `cartplan graph --construction sequential` uses it where the in-process run of every rank's
// messages is too slow (large random graphs, whose ranks are nearly all friends). It needs the
// whole graph, so it is a tool for planning offline and for tests, never for MPI ranks.
//
//   std::vector<RankPattern> ref = sequential_patterns(topology, PairingOptions{});
#pragma once

#include <vector>

#include "engine/graph/pattern.h"
#include "ir/graph/topology.h"

namespace cartplan::engine::graph {

std::vector<RankPattern> sequential_patterns(const ir::graph::Topology& topology, const PairingOptions& options);

}  // namespace cartplan::engine::graph
