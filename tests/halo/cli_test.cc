// End-to-end tests of `cartplan halo`: plan | verify round trips for every algorithm, the golden
// plans (regenerated only by tests/halo/corpus/make_plans.py), explain, simulate, rank, and the
// invalid-input corpus tests/halo/corpus/cli.txt. Bazel runs tests in the runfiles root, so
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

TEST_CASE("invalid-input corpus (tests/halo/corpus/cli.txt)") { cartplan::tests::cli::check_corpus("tests/halo/corpus/cli.txt", 50, false); }
