// The virtual-grid routing of general graphs (Selvitopi and Aykanat's virtual k-ary n-cube, SC19,
// with our Cartesian message combining; docs/graphs.md "grid"): the ranks are laid out row-major
// on a d-dimensional grid, and a block from s to t is forwarded dimension by dimension -- in
// phase k it moves in one hop to the rank whose coordinate k is t's (dimensions where the two
// already agree are skipped). Everything a rank forwards to one partner in a phase travels in
// one message; an allgather block with several targets crosses every (rank, phase, partner)
// edge of its route tree once. The pattern is op-independent, like seed 003's: flows name
// (origin, target, parallel edges); grid_schedule.h turns it into allgather or alltoall.
//
//   std::vector<int> dims = grid_dims(256, 2);                        // {16, 16}
//   std::vector<GridPattern> ref = sequential_grid_patterns(topology, dims);
//   for (const GridMessage& m : ref[r].sends) send(m.phase, m.peer, m.flows);
#pragma once

#include <vector>

#include "ir/graph/topology.h"

namespace cartplan::engine::graph {

// The data of `origin` for `target` (target != origin), carried over `edges` parallel edges.
struct GridFlow {
  int origin = 0;
  int target = 0;
  int edges = 0;
  friend bool operator==(const GridFlow&, const GridFlow&) = default;
  friend auto operator<=>(const GridFlow&, const GridFlow&) = default;
};

// One message of phase `phase` to (sends) or from (receives) `peer`; flows sorted.
struct GridMessage {
  int phase = 0;
  int peer = 0;
  std::vector<GridFlow> flows;
  friend bool operator==(const GridMessage&, const GridMessage&) = default;
};

struct GridPattern {
  int rank = 0;
  std::vector<GridMessage> sends;  // sorted by (phase, peer); never empty messages
  std::vector<GridMessage> recvs;  // sorted by (phase, source)
  friend bool operator==(const GridPattern&, const GridPattern&) = default;
};

// The virtual grid of p ranks with at most d dimensions: MPI_Dims_create's balanced factors in
// non-increasing order, with dimensions of extent 1 dropped (so a prime p gives {p}, and
// grid_dims(1, d) is empty). Deterministic: every rank computes the same from p.
std::vector<int> grid_dims(int p, int d);
// The largest d of grid_dims(p, d) worth asking for: p <= INT_MAX has at most 30 prime factors,
// so grid_dims(p, kMaxGridD) is p's factorization, the grid with the most dimensions (the binary
// hypercube for p = 2^k). Info cartplan_grid_dims accepts 2 .. kMaxGridD.
inline constexpr int kMaxGridD = 30;
// Whether auto (the MPI backend's table, graph_candidates) holds the most-D grid row (grid_dims(p, kMaxGridD), `most_ndims`
// dimensions): only where that grid has more than 4 dimensions (else it is the 2-D, 3-D or 4-D
// row), and either Info cartplan_grid_dims names it (`grid_d` 5 or more: the user's choice, kept)
// or is auto (`grid_d` 0) and `max_degree` > most_ndims. max_degree: the largest in- or
// out-degree of any rank (MPI's counts, parallel and self edges included), agreed over the
// ranks at creation, so every rank decides alike before any construction.
// Why the degree: combining routes a block one hop per dimension in which its source and target
// differ, one phase per dimension; on the most-D grid (the binary hypercube at p = 2^k) that is
// about half of them for a target far in rank order, so a rank relays in most of the phases and
// pays at least a message a phase, about most_ndims messages, while linear's busiest rank pays
// its degree. With no degree above most_ndims there is nothing for combining to save, and every
// relay adds volume. A heuristic, not a bound: a rank that gathers from many ranks near it
// (differing from it in a few low dimensions only) receives fewer messages through the grid even
// with a degree <= most_ndims (docs/graphs.md has the case); auto then keeps the 2-D, 3-D and 4-D
// grids and linear. The 3-D and 4-D grids are not gated: their extents are large, a phase
// carries messages to many peers, and the argument says nothing about them.
bool auto_prices_most_grid(int most_ndims, int grid_d, int max_degree);
// Row-major coordinates of a rank, and back.
std::vector<int> grid_coords(int rank, const std::vector<int>& dims);
int grid_rank(const std::vector<int>& coords, const std::vector<int>& dims);
// The rank with `rank`'s coordinates except coordinate k, which is `target`'s.
int grid_hop(int rank, int target, int k, const std::vector<int>& dims);

// A rank's own flows: one per distinct destination other than itself, with its parallel edges,
// sorted by target (self edges are copies, never routed).
std::vector<GridFlow> own_flows(int rank, const ir::graph::RankEdges& edges);

// The patterns of every rank, computed over the whole graph by routing each flow along its
// path (the tests' reference for the distributed construction, grid_setup.h, and offline
// planning). dims must multiply to the topology's ranks.
std::vector<GridPattern> sequential_grid_patterns(const ir::graph::Topology& topology, const std::vector<int>& dims);

}  // namespace cartplan::engine::graph
