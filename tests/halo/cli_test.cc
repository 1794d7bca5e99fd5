// End-to-end tests of `cartplan halo`: plan | verify round trips for every algorithm, the golden
// plans (regenerated only by tests/halo/corpus/make_plans.py), explain, simulate, rank, uneven
// block decompositions (--global), and the invalid-input corpus tests/halo/corpus/cli.txt. Bazel runs tests in the runfiles root, so
// the binary is "tools/cartplan".
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

constexpr const char* kPlans = "tests/halo/corpus/plans/";

}  // namespace

TEST_CASE("halo plan | halo verify and simulate: every algorithm, tori and meshes, both orders") {
  for (const char* array : {"--interior 6,5 --ghost-lo 2,1 --ghost-hi 1,2", "--interior 3,4,5 --ghost 1 --order F --elem 4",
                            "--interior 4,4 --ghost 3 --stencil vonneumann:d=2,r=1", "--interior 5 --ghost-lo 2 --elem 3"}) {
    for (const char* algo : {"auto", "direct", "combining", "split", "hybrid"}) {
      const std::string args = std::string(array) + " --algo " + algo;
      INFO(args);
      const RunResult p = run("halo plan " + args);
      REQUIRE(p.status == 0);
      std::ofstream(temp_path("plan.json"), std::ios::binary) << p.out;
      const RunResult v = run("halo verify " + temp_path("plan.json"));
      CHECK(v.status == 0);
      CHECK(contains(v.out, "once with the right value and writes no other"));
      const std::string dims = contains(array, "3,4,5") ? "3,2,2" : contains(array, "--interior 5 ") ? "3" : "3,2";
      for (const char* periods : {"1", "0"}) {
        const RunResult s = run("halo simulate --plan " + temp_path("plan.json") + " --dims " + dims + " --periods " + periods);
        CHECK(s.status == 0);
        CHECK(s.out.rfind("ok: ", 0) == 0);
      }
    }
  }
}

TEST_CASE("the golden plans, regenerated only by make_plans.py") {
  const std::pair<const char*, const char*> golden[] = {
      {"moore2_dimwise", "--interior 6,5 --ghost-lo 2,1 --ghost-hi 1,2 --stencil moore:d=2,r=1 --algo dimwise"},
      {"box3_auto", "--interior 8,8,8 --ghost 2 --stencil box:d=3,n=3,f=-1 --dims 4,4,4"},
      {"vonneumann2_direct", "--interior 5,4 --ghost 1,2 --stencil vonneumann:d=2,r=1 --algo direct --order F --elem 4"},
      {"moore2_combining", "--interior 4,4 --ghost 1 --algo combining"},
      {"corners3_split", "--interior 4,4,4 --ghost 1 --stencil 'offsets:1,1,1;-1,-1,-1;1,0,0;-1,0,0;0,1,0;0,-1,0;0,0,1;0,0,-1' --algo split"},
      {"corners3_hybrid", "--interior 4,4,4 --ghost 1 --stencil 'offsets:1,1,1;-1,-1,-1;1,0,0;-1,0,0;0,1,0;0,-1,0;0,0,1;0,0,-1' --algo hybrid"},
  };
  for (const auto& [name, args] : golden) {
    INFO(name);
    const RunResult r = run(std::string("halo plan ") + args);
    REQUIRE(r.status == 0);
    CHECK(r.out == read_file(std::string(kPlans) + name + ".json"));
    CHECK(run(std::string("halo verify - < ") + kPlans + name + ".json").status == 0);
  }
}

TEST_CASE("halo explain: every candidate with its prediction and bytes per rank, one picked") {
  RunResult r = run("halo explain --interior 64,64 --ghost 2 --elem 8 --stencil moore:d=2,r=1 --dims 4,4");
  REQUIRE(r.status == 0);
  CHECK(contains(r.out, "model predictions for the busiest rank (not measurements)"));
  CHECK(contains(r.out, "bytes sent/rank"));
  CHECK(contains(r.out, "* dimwise    0,1 "));
  CHECK(contains(r.out, "  direct "));
  CHECK(contains(r.out, "  combining "));
  r = run("halo explain --interior 8,8,8 --ghost 1 --stencil 'offsets:1,1,1;-1,-1,-1;1,0,0;-1,0,0;0,1,0;0,-1,0;0,0,1;0,0,-1' --format json");
  REQUIRE(r.status == 0);
  CHECK(r.out.rfind("{\n  \"schema\": \"cartplan.halo_explain/2\",", 0) == 0);
  CHECK(contains(r.out, "\"algorithm\": \"split\""));
  CHECK(contains(r.out, "\"algorithm\": \"hybrid\""));
  CHECK_FALSE(contains(r.out, "\"algorithm\": \"dimwise\""));
}

TEST_CASE("halo simulate --format json and halo rank") {
  const RunResult s = run("halo simulate --interior 8,8,8 --ghost 2 --dims 2,3,2 --periods 1,0,1 --format json");
  REQUIRE(s.status == 0);
  CHECK(s.out.rfind("{\n  \"schema\": \"cartplan.halo_sim/1\",", 0) == 0);
  CHECK(contains(s.out, "\"ok\": true"));
  const RunResult k = run(std::string("halo rank --plan ") + kPlans + "moore2_dimwise.json --dims 3,3 --rank 4");
  REQUIRE(k.status == 0);
  CHECK(contains(k.out, "rank 4 at (1,1) of grid 3x3 periods 1,1 (9 ranks); array sizes 9x8 (C order, 8-byte elements)\n"));
  // Phase 1 towards (1,2): the last interior column (its low ghost is 1 wide), extended over
  // every row, ghost rows included.
  CHECK(contains(k.out, "  send to   5 tag 2, 9 cells: [array start 0,5 extent 9,1]\n"));
}

TEST_CASE("--global: uneven blocks simulated for every algorithm, every rank its own plan") {
  const char* decompositions[] = {"--global 10,9 --ghost-lo 1,2 --ghost-hi 2,1 --dims 3,2",
                                  "--global 11,8 --ghost 2,1 --dims 3,3 --periods 0,0 --order F --elem 4",
                                  "--global 7,10,5 --ghost 1 --dims 2,3,2 --periods 1,0,1", "--global 10 --ghost-lo 3 --ghost-hi 1 --dims 3 --periods 0"};
  for (const char* dec : decompositions) {
    for (const char* algo : {"auto", "direct", "combining", "dimwise", "split", "hybrid"}) {
      const std::string args = std::string(dec) + " --algo " + algo;
      INFO(args);
      const RunResult s = run("halo simulate " + args);
      CHECK(s.status == 0);
      CHECK(s.out.rfind("ok: ", 0) == 0);
      CHECK(contains(s.out, "(uneven): dimension 0: "));
      CHECK(contains(s.out, "every rank ran its own plan\n"));
      CHECK(s.err.empty());
    }
  }
  const RunResult split = run("halo simulate --global 10,9 --ghost 2 --dims 3,2 --periods 0,1 --algo split --stencil 'offsets:1,1;-1,-1;1,0;-1,0' --format json");
  REQUIRE(split.status == 0);
  CHECK(contains(split.out, "\"ok\": true"));
  // Rows 4,3,3 (a mesh), columns 5,4 (a torus), ghost 2: faces (+-1,0) of the 2 ranks per column
  // with a neighbour there, 2 x columns each, and the corners (1,1), (-1,-1), 2 x 2 each: 104
  // cells of 8 bytes (the largest blocks on every rank would give 112).
  CHECK(contains(split.out, "\"ghost_bytes\": 832,"));
  CHECK(contains(split.out, "\"decomposition\": {\"global\": [10, 9], \"uneven\": true, \"extents\": [[4, 3, 3], [5, 4]]}"));
}

TEST_CASE("--global: explain names the blocks; plan and rank give rank R's own interior") {
  RunResult r = run("halo explain --global 10,9 --ghost 1 --dims 3,2");
  REQUIRE(r.status == 0);
  CHECK(contains(r.out, "halo: interior 4x5, "));
  CHECK(contains(r.out, "\ndecomposition: global 10x9 in blocks (uneven): dimension 0: 4,3,3; dimension 1: 5,4; the choice is priced on the "
                        "largest blocks (4x5), every rank plans its own interior in its algorithm and order\n"));
  r = run("halo explain --global 8,8 --ghost 1 --dims 4,2 --format json");
  REQUIRE(r.status == 0);
  CHECK(contains(r.out, "\"decomposition\": {\"global\": [8, 8], \"uneven\": false, \"extents\": [[2, 2, 2, 2], [4, 4]]}"));
  const RunResult shared = run("halo plan --interior 4,5 --ghost 1 --dims 3,2");
  const RunResult first = run("halo plan --global 10,9 --ghost 1 --dims 3,2");
  const RunResult last = run("halo plan --global 10,9 --ghost 1 --dims 3,2 --rank 5");
  REQUIRE(shared.status == 0);
  REQUIRE(first.status == 0);
  REQUIRE(last.status == 0);
  CHECK(first.out == shared.out);  // rank 0 has the largest blocks: the shared plan itself
  CHECK(contains(last.out, "\"array\": {\"interior\": [3, 4], \"ghost_lo\": [1, 1]"));
  CHECK(contains(last.out, "\"algorithm\": \"dimwise\""));
  std::ofstream(temp_path("rank5.json"), std::ios::binary) << last.out;
  CHECK(run("halo verify " + temp_path("rank5.json")).status == 0);
  const RunResult k = run("halo rank --global 10,9 --ghost 1 --dims 3,2 --rank 5");
  REQUIRE(k.status == 0);
  CHECK(contains(k.out, "rank 5 at (2,1) of grid 3x2 periods 1,1 (6 ranks); array sizes 5x6 (C order, 8-byte elements)\n"));
  CHECK(contains(k.out, "  recv from 1 tag 1, 4 cells: [array start 4,1 extent 1,4]\n"));  // from (0,1): 4 columns, rank 1's and its own
}

TEST_CASE("--global: split's and hybrid's plans of ranks other than 0, piped to halo verify, pass") {
  const char* const arrays[] = {"--global 10,9 --ghost 1 --dims 3,2", "--global 7,5 --ghost 2 --dims 2,2 --periods 1,0 --stencil 'offsets:1,1;1,-1'",
                                "--global 6,5,4 --ghost 1 --dims 2,2,2 --stencil 'offsets:1,1,0;1,-1,0;1,0,1'"};
  for (const char* array : arrays) {
    for (const char* algo : {"split", "hybrid"}) {
      for (const char* rank : {"1", "3"}) {
        const std::string args = std::string("halo plan ") + array + " --algo " + algo + " --rank " + rank;
        INFO(args);
        const RunResult p = run(args);
        REQUIRE(p.status == 0);
        CHECK(contains(p.out, std::string("\"algorithm\": \"") + algo + "\""));
        const RunResult v = run(args + " | tools/cartplan halo verify -");
        CHECK(v.status == 0);
        CHECK(v.out.rfind(std::string("ok: ") + algo + " halo plan fills each of the ", 0) == 0);
      }
    }
  }
}

TEST_CASE("--global: errors, message for message") {
  const std::pair<const char*, const char*> bad[] = {
      {"plan --global 10,9 --interior 4,4 --ghost 1 --dims 3,2", "--global and --interior exclude each other"},
      {"plan --global 10,9 --ghost 1", "--global needs --dims (the process grid the global interior is cut over)"},
      {"explain --global 2,9 --ghost 1 --dims 3,2", "--global: dimension 0: 2 cells cut into 3 blocks leave a block empty (every interior extent is at least 1)"},
      {"plan --global 10,9 --ghost 1 --dims 3", "--dims has 1 values; --global has 2"},
      {"plan --global 7,9 --ghost 3 --dims 3,2",
       "--global: the smallest blocks (2x4): ghost_lo[0] = 3 is wider than the interior (2 cells) it is filled from (the neighbour at (-1,-1))"},
      {"plan --interior 4,4 --ghost 1 --rank 1", "--rank needs --global (without it every rank has the same plan)"},
      {"plan --global 10,9 --ghost 1 --dims 3,2 --rank 6", "--rank: '6' is out of range [0, 5]"},
      {"plan --global 10,9 --ghost 1 --dims 3,2 --rank -1", "--rank: '-1' is negative"},
      {"rank --global 10,9 --ghost 1 --dims 3,2 --rank -1", "--rank: '-1' is negative"},
      {"plan --interior 4,4 --ghost 1 --algo fast --rank 1", "--rank needs --global (without it every rank has the same plan)"},  // before planning
      {"simulate --plan tests/halo/corpus/plans/moore2_dimwise.json --global 10,9 --dims 3,2", "--plan and --global exclude each other"},
  };
  for (const auto& [args, message] : bad) {
    INFO(args);
    const RunResult r = run(std::string("halo ") + args);
    CHECK(r.status == 2);
    const std::string command = std::string(args).substr(0, std::string(args).find(' '));
    CHECK(r.err == "cartplan: halo " + command + ": " + message + "\n");
  }
}

TEST_CASE("invalid-input corpus (tests/halo/corpus/cli.txt)") { cartplan::tests::cli::check_corpus("tests/halo/corpus/cli.txt", 50, false); }
