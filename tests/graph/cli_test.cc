// End-to-end tests of `cartplan graph`: plan | verify round trips, the golden plan, explain,
// simulate, rank, and the invalid-input corpus tests/graph/corpus/cli.txt. Bazel runs tests in
// the runfiles root, so the binary is "tools/cartplan".
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <doctest/doctest.h>

#include "tests/cli_run.h"

namespace {

using cartplan::tests::cli::contains;
using cartplan::tests::cli::read_file;
using cartplan::tests::cli::run;
using cartplan::tests::cli::RunResult;
using cartplan::tests::cli::temp_path;

}  // namespace

TEST_CASE("graph plan | graph verify: every algorithm and op, every kind of graph") {
  for (const char* graph : {"random:p=40,q=0.3,seed=2", "moore:dims=6x5,r=1,holes=0.1", "osu:p=27,d=3,r=1", "mesh:cells=32x32,parts=9",
                            "file:tests/graph/corpus/graphs/tiny.txt", "moore:dims=1x3,r=1"}) {
    for (const char* op : {"allgather", "alltoall"}) {
      for (const char* algo : {"linear", "pairing", "cumulative", "grid", "auto"}) {
        const std::string args = std::string("graph plan --graph ") + graph + " --op " + op + " --algo " + algo + " --theta 2";
        INFO(args);
        const RunResult p = run(args);
        REQUIRE(p.status == 0);
        std::ofstream(temp_path("plan.json"), std::ios::binary) << p.out;
        const RunResult v = run("graph verify " + temp_path("plan.json"));
        CHECK(v.status == 0);
        CHECK(contains(v.out, "delivers every block exactly once"));
        const RunResult s = run("graph simulate --graph " + std::string(graph) + " --op " + op + " --algo " + algo + " --theta 2 --vary 5");
        CHECK(s.status == 0);
        CHECK(s.out.rfind("ok: ", 0) == 0);
      }
    }
  }
}

TEST_CASE("the golden plan: seed 003's pairing on the corpus graph, regenerated only by make_plans.py") {
  const RunResult r = run("graph plan --graph file:tests/graph/corpus/graphs/tiny.txt --op allgather --algo pairing --theta 2");
  REQUIRE(r.status == 0);
  CHECK(r.out == read_file("tests/graph/corpus/plans/valid_pairing.json"));
  CHECK(run("graph verify - < tests/graph/corpus/plans/valid_pairing.json").status == 0);
}

TEST_CASE("the golden grid plan: alltoall through a 3x2 grid, regenerated only by make_plans.py") {
  const RunResult r = run("graph plan --graph file:tests/graph/corpus/graphs/tiny.txt --op alltoall --algo grid --grid-dims 2");
  REQUIRE(r.status == 0);
  CHECK(r.out == read_file("tests/graph/corpus/plans/valid_grid.json"));
  CHECK(run("graph verify - < tests/graph/corpus/plans/valid_grid.json").status == 0);
  const RunResult k = run("graph rank --plan tests/graph/corpus/plans/valid_grid.json --rank 2");
  REQUIRE(k.status == 0);
  CHECK(contains(k.out, "rank 2 of 6: grid alltoall, virtual 3x2 grid\n"));
}

TEST_CASE("graph explain: six allgather candidates with predictions and set-up costs, one picked") {
  const RunResult r = run("graph explain --graph moore:dims=16x16,r=2 --op allgather");
  REQUIRE(r.status == 0);
  CHECK(contains(r.out, "256 ranks, 6144 edges"));
  CHECK(contains(r.out, "model predictions, not measurements"));
  CHECK(contains(r.out, "  linear "));
  CHECK(contains(r.out, "  pairing "));
  CHECK(contains(r.out, "  cumulative "));
  // 8 messages per rank and phase pair instead of 24: 2048 messages, 2 set-up rounds.
  // The name column is as wide as the longest name, the most-D grid's (2^8, not picked here).
  CHECK(contains(r.out, "* grid 16x16                   9.16         9.16       2       2048         16        49152       2       122880\n"));
  CHECK(contains(r.out, "  grid 2x2x2x2x2x2x2x2        12.25 "));
  CHECK(contains(r.out, "  grid 8x8x4 "));
  CHECK(contains(r.out, "  grid 4x4x4x4 "));  // auto's allgather prices the 4-D grid too (not picked here)
  const RunResult a = run("graph explain --graph moore:dims=16x16,r=2 --op alltoall");
  REQUIRE(a.status == 0);
  CHECK(contains(a.out, "grid 4x4x4x4 "));
  const RunResult g23 = run("graph explain --graph moore:dims=16x16,r=2 --op allgather --grid-dims 2,3");
  REQUIRE(g23.status == 0);
  CHECK(contains(g23.out, "  grid 8x8x4 "));
  CHECK(!contains(g23.out, "grid 4x4x4x4"));  // a list without 4 leaves it out
  const RunResult j = run("graph explain --graph moore:dims=16x16,r=2 --op allgather --grid-dims 3 --format json");
  REQUIRE(j.status == 0);
  CHECK(contains(j.out, "\"algorithm\": \"grid\",\n      \"dims\": [8, 8, 4],"));
}

TEST_CASE("graph plan/explain: auto's allgather on Erdos-Renyi q = 0.05, p = 256 at 4 B runs the most-D grid (2^8), else the 4-D one") {
  const std::string g = "--graph random:p=256,q=0.05,seed=1 --op allgather --block-bytes 4 --construction sequential";
  const RunResult p = run("graph plan " + g);
  REQUIRE(p.status == 0);
  CHECK(contains(p.out, "\"algorithm\": \"grid\",\n  \"dims\": [2, 2, 2, 2, 2, 2, 2, 2],"));
  const RunResult e = run("graph explain " + g);
  REQUIRE(e.status == 0);
  CHECK(contains(e.out, "* grid 2x2x2x2x2x2x2x2 "));
  const RunResult e234 = run("graph explain " + g + " --grid-dims 2,3,4");
  REQUIRE(e234.status == 0);
  CHECK(contains(e234.out, "* grid 4x4x4x4 "));
  // Without the 4-D grid the 3-D one is not 10 % cheaper than linear in the built-in model: linear.
  const RunResult e23 = run("graph explain " + g + " --grid-dims 2,3");
  REQUIRE(e23.status == 0);
  CHECK(contains(e23.out, "* linear "));
  CHECK(contains(e23.out, "  grid 8x8x4 "));
  CHECK(!contains(e23.out, "4x4x4x4"));
}

TEST_CASE("graph simulate --format json and graph rank") {
  const RunResult s = run("graph simulate --graph osu:p=64,d=2,r=1 --op alltoall --algo pairing --format json");
  REQUIRE(s.status == 0);
  CHECK(s.out.rfind("{\n  \"schema\": \"cartplan.graph_sim/1\",", 0) == 0);
  CHECK(contains(s.out, "\"ok\": true"));
  const RunResult k = run("graph rank --plan tests/graph/corpus/plans/valid_pairing.json --rank 0");
  REQUIRE(k.status == 0);
  CHECK(contains(k.out, "rank 0 of 6: pairing allgather, theta 2\n"));
  CHECK(contains(k.out, "  send to   2: (0)@send[0] (1)@temp[0]\n"));
}

TEST_CASE("invalid-input corpus (tests/graph/corpus/cli.txt)") { cartplan::tests::cli::check_corpus("tests/graph/corpus/cli.txt", 47, false); }
