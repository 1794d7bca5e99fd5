// GRAPH specs of the `cartplan graph` commands (docs/graphs.md):
//
//   random:p=256,q=0.05[,seed=1]                 Erdos-Renyi (generators.h)
//   moore:dims=16x16,r=2[,holes=0.1][,seed=1][,periodic=1]
//   osu:p=64,d=2,r=1                             OSU OMB's graph-mode neighbourhood
//   mesh:cells=256x256,parts=64[,stencil=5]      a partitioned mesh (2-D: 5 or 9, 3-D: 7 or 27)
//   file:PATH                                    an edge-list file (edge_list.h)
//
//   Result<Topology> t = parse_graph_spec("random:p=64,q=0.1,seed=3");
#pragma once

#include <string_view>

#include "ir/graph/topology.h"
#include "ir/result.h"

namespace cartplan::engine::graph {

Result<ir::graph::Topology> parse_graph_spec(std::string_view spec);

}  // namespace cartplan::engine::graph
