// Tests of the graph generators: sizes, degrees, determinism, holes, OMB's neighbourhood, meshes.
#include "engine/graph/generators.h"

#include <doctest/doctest.h>

namespace cartplan::engine::graph {

TEST_CASE("Erdos-Renyi: deterministic per seed, consistent, density near q") {
  Result<ir::graph::Topology> a = erdos_renyi(200, 0.05, 3), b = erdos_renyi(200, 0.05, 3), c = erdos_renyi(200, 0.05, 4);
  REQUIRE(a.ok());
  CHECK(*a == *b);
  CHECK_FALSE(*a == *c);
  CHECK_FALSE(ir::graph::topology_error(*a).has_value());
  const double density = static_cast<double>(a->edges()) / (200.0 * 199.0);
  CHECK(density > 0.04);
  CHECK(density < 0.06);
  CHECK(erdos_renyi(10, 1.5, 1).error() == "q must be in [0, 1], got 1.500000");
}

TEST_CASE("Moore: (2r+1)^d - 1 neighbours on a large torus; wrap-around duplicates and self edges on a small one") {
  Result<ir::graph::Topology> t = moore({8, 8}, 2, true, 0.0, 1);
  REQUIRE(t.ok());
  CHECK(t->size() == 64);
  CHECK(t->ranks[0].out.size() == 24);
  Result<ir::graph::Topology> small = moore({1, 3}, 1, true, 0.0, 1);
  REQUIRE(small.ok());
  CHECK(small->ranks[0].out.size() == 8);
  CHECK(ir::graph::count_of(small->ranks[0].out, 0) == 2);  // offsets (+-1, 0) wrap onto the rank itself
  CHECK_FALSE(ir::graph::topology_error(*small).has_value());
  Result<ir::graph::Topology> mesh = moore({4, 4}, 1, false, 0.0, 1);
  CHECK(mesh->ranks[0].out.size() == 3);
  Result<ir::graph::Topology> holes = moore({20, 20}, 1, true, 0.25, 5);
  CHECK(holes->size() < 340);
  CHECK(holes->size() > 260);
  CHECK_FALSE(ir::graph::topology_error(*holes).has_value());
  CHECK(moore({4, 4}, 1, true, 1.0, 1).error() == "holes must be a fraction in [0, 1), got 1.000000");
}

TEST_CASE("OSU OMB's neighbourhood: balanced dims, offsets in order, no self edges, sources = destinations") {
  CHECK(balanced_dims(64, 2) == std::vector<int>{8, 8});
  CHECK(balanced_dims(12, 2) == std::vector<int>{4, 3});
  CHECK(balanced_dims(30, 3) == std::vector<int>{5, 3, 2});
  Result<ir::graph::Topology> t = osu_neighborhood(64, 2, 1);
  REQUIRE(t.ok());
  CHECK(t->ranks[9].out == std::vector<int>{0, 1, 2, 8, 10, 16, 17, 18});
  CHECK(t->ranks[9].in == t->ranks[9].out);
  CHECK_FALSE(ir::graph::topology_error(*t).has_value());
  CHECK(osu_neighborhood(16, 2, 2).error().find("radius 2 needs every dimension of the grid to be at least 5") == 0);
}

TEST_CASE("mesh partitions: every part has neighbours, the graph is symmetric") {
  Result<ir::graph::Topology> t = mesh_partition({64, 64}, 12, 9);
  REQUIRE(t.ok());
  CHECK(t->size() == 12);
  CHECK_FALSE(ir::graph::topology_error(*t).has_value());
  for (int r = 0; r < 12; ++r) {
    CHECK_FALSE(t->ranks[r].out.empty());
    CHECK(t->ranks[r].out == t->ranks[r].in);
  }
  Result<ir::graph::Topology> cube = mesh_partition({16, 16, 16}, 8, 27);
  REQUIRE(cube.ok());
  CHECK(cube->ranks[0].out.size() == 7);  // 2x2x2 boxes: every other box touches a corner
  CHECK(mesh_partition({4, 4}, 17, 5).error() == "17 parts for a mesh of 16 cells");
  CHECK(mesh_partition({4, 4}, 2, 7).error() == "a 2-D mesh stencil has 5 or 9 points, got 7");
}

}  // namespace cartplan::engine::graph
