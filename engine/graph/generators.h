// Graph generators for planning and tests, all deterministic for a given seed:
//  - erdos_renyi: each ordered pair (a, b), a != b, is an edge with probability q (seed 003's
//    random sparse graphs, Sect. VI-A);
//  - moore: ranks on a grid, each sending to every cell within Chebyshev distance r (seed 003,
//    Sect. VI-B), optionally with a fraction of cells removed at random ("holes"; the remaining
//    cells are the ranks, numbered in row-major order). On a periodic grid shorter than 2r + 1
//    offsets wrap, giving duplicate edges and self edges, as MPI allows;
//  - osu: OSU OMB's graph-mode neighbourhood: a periodic grid from MPI_Dims_create-like
//    balanced factors of p, every offset in [-r, r]^d in lexicographic order (last dimension
//    fastest), edges that wrap onto the rank itself dropped, destinations = sources;
//  - mesh_partition: a 2-D or 3-D structured mesh of cells cut into `parts` boxes by recursive
//    coordinate bisection; part a sends to part b if a cell of a touches a cell of b under the
//    stencil (5 or 9 points in 2-D, 7 or 27 in 3-D): the halo graph of a partitioned mesh or of
//    a sparse matrix with that stencil.
// Out-lists are in increasing target order (moore, osu: offset order), in-lists in increasing
// source order.
//
//   Topology g = erdos_renyi(256, 0.05, /*seed=*/1);
//   Result<Topology> m = moore({16, 16}, 2, /*periodic=*/true, /*holes=*/0.1, /*seed=*/1);
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph/topology.h"
#include "ir/result.h"

namespace cartplan::engine::graph {

Result<ir::graph::Topology> erdos_renyi(int p, double q, std::uint64_t seed);
Result<ir::graph::Topology> moore(const std::vector<int>& dims, int r, bool periodic, double holes, std::uint64_t seed);
Result<ir::graph::Topology> osu_neighborhood(int p, int d, int r);
Result<ir::graph::Topology> mesh_partition(const std::vector<int>& cells, int parts, int stencil);

// Balanced factors of p in non-increasing order (what MPI_Dims_create returns for free dims).
std::vector<int> balanced_dims(int p, int d);

// In-lists (sources in increasing order) from out-lists; the edges are those of the out-lists.
ir::graph::Topology from_out_lists(std::vector<std::vector<int>> out);

}  // namespace cartplan::engine::graph
