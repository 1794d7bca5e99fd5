// Tests of graph edge lists: consistency errors and the k-th edge rule's helpers.
#include "ir/graph/topology.h"

#include <doctest/doctest.h>

#include "ir/graph/test_plans.h"

namespace cartplan::ir::graph {

TEST_CASE("a consistent graph with duplicates and self edges has no error") {
  CHECK_FALSE(topology_error(tiny_topology()).has_value());
  CHECK(tiny_topology().edges() == 6);
}

TEST_CASE("edge counts that differ between the two ends are named") {
  Topology t = tiny_topology();
  t.ranks[1].in.pop_back();  // drop the self edge's source entry
  auto e = topology_error(t);
  REQUIRE(e);
  CHECK(*e == "rank 1 lists rank 1 1 time(s) among its destinations, but rank 1 lists rank 1 0 time(s) among its sources");
  t = tiny_topology();
  t.ranks[0].out.push_back(2);
  e = topology_error(t);
  REQUIRE(e);
  CHECK(e->find("rank 0 lists rank 2 2 time(s)") != std::string::npos);
}

TEST_CASE("ranks out of range are named with their position") {
  Topology t = tiny_topology();
  t.ranks[2].in[0] = 7;
  auto e = topology_error(t);
  REQUIRE(e);
  CHECK(*e == "rank 2, source 0: rank 7 is out of range [0, 3)");
}

TEST_CASE("occurrence and position_of implement the k-th edge rule") {
  const std::vector<int> list = {4, 1, 4, 4, 2};
  CHECK(occurrence(list, 0) == 0);
  CHECK(occurrence(list, 3) == 2);
  CHECK(position_of(list, 4, 1) == 2);
  CHECK(position_of(list, 4, 3) == -1);
  CHECK(count_of(list, 4) == 3);
  CHECK(to_string(BlockId{3, 5, 1}) == "(3->5#1)");
  CHECK(to_string(BlockId{3, -1, 0}) == "(3)");
}

}  // namespace cartplan::ir::graph
