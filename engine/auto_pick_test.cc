// Pins auto's choice and its predicted time on representative requests under every committed
// cost-model file (bench/results), so that a change to how the model is defined, parsed or
// priced provably keeps the plans it chooses. The table was produced by this test's printer
// (CARTPLAN_PRINT_PICKS=1) on the code before the term table (issue 31, item 2); a deliberate
// change of prices regenerates it the same way and says why in its commit.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "backends/mpi/openmpi_profile.h"
#include "doctest/doctest.h"
#include "engine/cost_model_file.h"
#include "engine/optimizer.h"
#include "engine/stencils.h"

namespace cartplan::engine {
namespace {

struct Request {
  const char* name;
  int d, r;
  ir::Op op;
  std::int64_t bytes;
  std::vector<int> dims;
};

// np = 2, 4 and 8 grids; sizes below, around and above the eager limit and the trailer sizes.
const std::vector<Request>& requests() {
  static const std::vector<Request> r = {
      {"moore2 a2a 8 2x1", 2, 1, ir::Op::kAlltoall, 8, {2, 1}},
      {"moore2 a2a 400 2x2", 2, 1, ir::Op::kAlltoall, 400, {2, 2}},
      {"moore2 a2a 4000 2x2", 2, 1, ir::Op::kAlltoall, 4000, {2, 2}},
      {"moore2 a2a 65536 2x1", 2, 1, ir::Op::kAlltoall, 65536, {2, 1}},
      {"moore2 ag 100 2x2", 2, 1, ir::Op::kAllgather, 100, {2, 2}},
      {"moore2 ag 16384 2x2", 2, 1, ir::Op::kAllgather, 16384, {2, 2}},
      {"moore3 a2a 40 2x2x2", 3, 1, ir::Op::kAlltoall, 40, {2, 2, 2}},
      {"moore3 a2a 4000 2x1x1", 3, 1, ir::Op::kAlltoall, 4000, {2, 1, 1}},
      {"moore3 a2a 20000 2x2x2", 3, 1, ir::Op::kAlltoall, 20000, {2, 2, 2}},
      {"moore3 ag 1000 2x2x2", 3, 1, ir::Op::kAllgather, 1000, {2, 2, 2}},
      {"moore4 a2a 100 2x2x1x1", 4, 1, ir::Op::kAlltoall, 100, {2, 2, 1, 1}},
      {"moore4 a2a 8192 2x2x2x1", 4, 1, ir::Op::kAlltoall, 8192, {2, 2, 2, 1}},
      {"moore2r3 a2a 64 2x2", 2, 3, ir::Op::kAlltoall, 64, {2, 2}},
      {"moore2r3 a2a 8000 2x2", 2, 3, ir::Op::kAlltoall, 8000, {2, 2}},
  };
  return r;
}

// auto's pick and its predicted total, "kind total".
std::string pick(const Request& q, const CostModel& model) {
  PlanOptions o;
  o.block_bytes = q.bytes;
  o.model = model;
  o.lowering = openmpi::lower_options(model);  // the committed calibrations' trailers and homes
  o.grid = *Grid::create(q.dims, std::vector<bool>(q.dims.size(), true));
  const Result<std::vector<Candidate>> cands = plan_candidates(q.op, *stencils::moore(q.d, q.r), o);
  REQUIRE(cands.ok());
  const Candidate& c = (*cands)[pick_candidate(*cands)];
  char buf[128];
  std::snprintf(buf, sizeof buf, "%s %.9g", c.name.c_str(), c.cost.total_us());
  return buf;
}

std::vector<std::string> model_files() {
  std::vector<std::string> files;
  for (const char* m : {"cost_model", "cost_model_no_cma", "cost_model_np8", "main_job_cost_model_np2",
                        "main_job_cost_model_np4", "main_job_cost_model_np6", "main_job_cost_model_np6_rebuilt",
                        "main_job_cost_model_np8"})
    files.push_back(std::string("bench/results/cpp-2core/") + m + ".json");
  for (const char* net : {"dragonfly", "fattree", "torus"})
    for (const char* p : {"p64", "p256"}) files.push_back(std::string("bench/results/smpi/cost_model_") + net + "_" + p + ".json");
  return files;
}

// (model, request) -> "kind total", as printed by CARTPLAN_PRINT_PICKS=1.
const std::map<std::pair<std::string, std::string>, std::string>& pinned();

TEST_CASE("auto's picks under the built-in and every committed cost model are pinned") {
  const bool print = std::getenv("CARTPLAN_PRINT_PICKS") != nullptr;
  std::vector<std::pair<std::string, CostModel>> models = {{"builtin", CostModel{}}};
  for (const std::string& f : model_files()) {
    const Result<CostModel> m = load_cost_model(f);
    REQUIRE(m.ok());
    models.emplace_back(f.substr(f.rfind('/') + 1), *m);
  }
  int checked = 0;
  for (const auto& [name, model] : models)
    for (const Request& q : requests()) {
      const std::string got = pick(q, model);
      if (print) {
        std::printf("      {{\"%s\", \"%s\"}, \"%s\"},\n", name.c_str(), q.name, got.c_str());
        continue;
      }
      CAPTURE(name);
      CAPTURE(q.name);
      const auto it = pinned().find({name, q.name});
      REQUIRE(it != pinned().end());
      const std::string want = it->second;
      const std::size_t sp = want.rfind(' ');
      CHECK(got.substr(0, got.rfind(' ')) == want.substr(0, sp));  // the same kind of plan
      const double w = std::stod(want.substr(sp + 1)), g = std::stod(got.substr(got.rfind(' ') + 1));
      CHECK(std::abs(g - w) <= 1e-6 * std::max(1.0, std::abs(w)));  // the same price
      ++checked;
    }
  if (!print) CHECK(checked == static_cast<int>(pinned().size()));
}

const std::map<std::pair<std::string, std::string>, std::string>& pinned() {
  static const std::map<std::pair<std::string, std::string>, std::string> table = {
#include "engine/auto_pick_test.inc"
  };
  return table;
}

}  // namespace
}  // namespace cartplan::engine
