// The edge-list file format of `cartplan graph --graph file:PATH` (docs/graphs.md):
//
//   # comment lines and blank lines are ignored
//   ranks 4          <- required, before any edge: the number of ranks
//   0 1              <- one edge per line: source and destination rank,
//   0,2                 separated by blanks or one comma (OSU OMB's graph files are "src,dst")
//
// A rank's destinations are its edges in file order; a rank's sources are the edges into it
// in file order (so a file is one MPI_Dist_graph_create_adjacent call). Duplicate edges and
// self edges are kept. Strict: anything else is an error naming the line.
//
//   Result<Topology> t = parse_edge_list(text);   // "line 3: 'x' is not an integer"
#pragma once

#include <string_view>

#include "ir/graph/topology.h"
#include "ir/result.h"

namespace cartplan::engine::graph {

// At most kMaxGraphRanks ranks and 2^26 edges.
Result<ir::graph::Topology> parse_edge_list(std::string_view text);

}  // namespace cartplan::engine::graph
