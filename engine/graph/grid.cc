// Virtual-grid routing: dims, coordinates and the sequential reference patterns.
#include "engine/graph/grid.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <tuple>
#include <utility>

#include "engine/graph/generators.h"

namespace cartplan::engine::graph {

bool auto_prices_most_grid(int most_ndims, int grid_d, int max_degree) {
  if (most_ndims <= 4) return false;  // the most-D grid is one of the 2-D, 3-D and 4-D rows
  if (grid_d > 4) return true;        // Info cartplan_grid_dims names it
  return grid_d == 0 && max_degree > most_ndims;
}

std::vector<int> grid_dims(int p, int d) {
  std::vector<int> dims = balanced_dims(p, d);
  dims.erase(std::remove(dims.begin(), dims.end(), 1), dims.end());
  return dims;
}

std::vector<int> grid_coords(int rank, const std::vector<int>& dims) {
  std::vector<int> c(dims.size());
  for (int k = static_cast<int>(dims.size()) - 1; k >= 0; --k) {
    c[k] = rank % dims[k];
    rank /= dims[k];
  }
  return c;
}

int grid_rank(const std::vector<int>& coords, const std::vector<int>& dims) {
  int r = 0;
  for (std::size_t k = 0; k < dims.size(); ++k) r = r * dims[k] + coords[k];
  return r;
}

int grid_hop(int rank, int target, int k, const std::vector<int>& dims) {
  std::vector<int> c = grid_coords(rank, dims);
  c[k] = grid_coords(target, dims)[k];
  return grid_rank(c, dims);
}

std::vector<GridFlow> own_flows(int rank, const ir::graph::RankEdges& edges) {
  std::map<int, int> count;
  for (int t : edges.out)
    if (t != rank) ++count[t];
  std::vector<GridFlow> out;
  for (auto [t, e] : count) out.push_back(GridFlow{rank, t, e});
  return out;
}

std::vector<GridPattern> sequential_grid_patterns(const ir::graph::Topology& topology, const std::vector<int>& dims) {
  const int p = topology.size();
  // (phase, from, to, flow) of every hop of every flow's path.
  std::vector<std::tuple<int, int, int, GridFlow>> hops;
  for (int s = 0; s < p; ++s) {
    for (const GridFlow& f : own_flows(s, topology.ranks[s])) {
      int at = s;
      for (int k = 0; k < static_cast<int>(dims.size()); ++k) {
        const int next = grid_hop(at, f.target, k, dims);
        if (next == at) continue;
        hops.emplace_back(k, at, next, f);
        at = next;
      }
      assert(at == f.target);
    }
  }
  std::sort(hops.begin(), hops.end());
  std::vector<GridPattern> out(p);
  for (int r = 0; r < p; ++r) out[r].rank = r;
  for (std::size_t i = 0; i < hops.size();) {
    const auto& [phase, from, to, first] = hops[i];
    GridMessage m{phase, to, {}};
    for (; i < hops.size() && std::get<0>(hops[i]) == phase && std::get<1>(hops[i]) == from && std::get<2>(hops[i]) == to; ++i)
      m.flows.push_back(std::get<3>(hops[i]));
    out[from].sends.push_back(m);
    m.peer = from;
    out[to].recvs.push_back(std::move(m));
  }
  // Receives sorted by (phase, source): hops are sorted by (phase, from), so they already are.
  return out;
}

}  // namespace cartplan::engine::graph
