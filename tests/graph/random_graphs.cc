// Random multigraphs with parallel and self edges, lists shuffled.
#include "tests/graph/random_graphs.h"

#include <algorithm>
#include <random>

namespace cartplan::engine::graph {

ir::graph::Topology random_multigraph(int p, double q, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  ir::graph::Topology t;
  t.ranks.resize(p);
  for (int a = 0; a < p; ++a) {
    for (int b = 0; b < p; ++b) {
      if (u(rng) >= q) continue;
      const int edges = u(rng) < 0.25 ? 2 : 1;
      for (int e = 0; e < edges; ++e) {
        t.ranks[a].out.push_back(b);
        t.ranks[b].in.push_back(a);
      }
    }
  }
  for (ir::graph::RankEdges& r : t.ranks) {
    std::shuffle(r.out.begin(), r.out.end(), rng);
    std::shuffle(r.in.begin(), r.in.end(), rng);
  }
  return t;
}

}  // namespace cartplan::engine::graph
