// Tests of the strict edge-list reader.
#include "engine/graph/edge_list.h"

#include <doctest/doctest.h>

namespace cartplan::engine::graph {

TEST_CASE("edges in file order, comments, blanks, commas, duplicates and self edges") {
  Result<ir::graph::Topology> t = parse_edge_list("# a graph\nranks 3\n\n0 1\n0,1\n 2 , 0\n1 1\n");
  REQUIRE_MESSAGE(t.ok(), t.error());
  CHECK(t->ranks[0].out == std::vector<int>{1, 1});
  CHECK(t->ranks[1].in == std::vector<int>{0, 0, 1});
  CHECK(t->ranks[2].out == std::vector<int>{0});
  CHECK(t->ranks[0].in == std::vector<int>{2});
}

TEST_CASE("errors name the line and what is wrong") {
  CHECK(parse_edge_list("0 1\n").error() == "line 1: an edge before the 'ranks P' line");
  CHECK(parse_edge_list("").error() == "no 'ranks P' line");
  CHECK(parse_edge_list("ranks 0\n").error() == "line 1: ranks: '0' is out of range [1, 1048576]");
  CHECK(parse_edge_list("ranks 2\nranks 2\n").error() == "line 2: a second 'ranks' line");
  CHECK(parse_edge_list("ranks 2\n0 2\n").error() == "line 2: destination: '2' is out of range [0, 1]");
  CHECK(parse_edge_list("ranks 2\n0 x\n").error() == "line 2: destination: 'x' is not an integer");
  CHECK(parse_edge_list("ranks 2\n0 1 1\n").error() == "line 2: expected 'SOURCE DESTINATION', got 3 field(s)");
  CHECK(parse_edge_list("ranks 2\n-1 1\n").error() == "line 2: source: '-1' is negative");
  CHECK(parse_edge_list("ranks 2\n0,\n").error() == "line 2: destination: '' is not an integer");
}

}  // namespace cartplan::engine::graph
