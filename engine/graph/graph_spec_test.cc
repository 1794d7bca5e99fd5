// Tests of GRAPH spec parsing.
#include "engine/graph/graph_spec.h"

#include <doctest/doctest.h>

namespace cartplan::engine::graph {

TEST_CASE("every kind parses") {
  CHECK(parse_graph_spec("random:p=20,q=0.2,seed=3")->size() == 20);
  CHECK(parse_graph_spec("moore:dims=4x5,r=1")->size() == 20);
  CHECK(parse_graph_spec("moore:dims=4x5,r=1,holes=0.5,seed=2,periodic=0")->size() < 20);
  CHECK(parse_graph_spec("osu:p=27,d=3,r=1")->size() == 27);
  CHECK(parse_graph_spec("mesh:cells=32x32,parts=6,stencil=5")->size() == 6);
}

TEST_CASE("errors name the spec and the parameter") {
  CHECK(parse_graph_spec("ring:p=3").error() == "graph 'ring:p=3': unknown kind 'ring' (expected random, moore, osu, mesh or file)");
  CHECK(parse_graph_spec("random").error() == "graph 'random': expected KIND:PARAMETERS (random, moore, osu, mesh or file)");
  CHECK(parse_graph_spec("random:p=20").error() == "graph 'random:p=20': missing parameter 'q'");
  CHECK(parse_graph_spec("random:p=20,q=0.1,x=1").error() == "graph 'random:p=20,q=0.1,x=1': unknown parameter 'x' (expected p, q, seed)");
  CHECK(parse_graph_spec("random:p=2x,q=0.1").error() == "graph 'random:p=2x,q=0.1': p: '2x' is not an integer");
  CHECK(parse_graph_spec("random:p=20,p=3,q=1").error() == "graph 'random:p=20,p=3,q=1': parameter 'p' given twice");
  CHECK(parse_graph_spec("moore:dims=4xx,r=1").error() == "graph 'moore:dims=4xx,r=1': dims: '' is not an integer");
  CHECK(parse_graph_spec("file:/nonexistent/g.txt").error().find("cannot read '/nonexistent/g.txt'") == 0);
}

}  // namespace cartplan::engine::graph
