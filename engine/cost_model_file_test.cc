// Tests of the cost-model file: good files load, bad ones name the problem.
#include "engine/cost_model_file.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>

namespace cartplan::engine {
namespace {

TEST_CASE("a calibrated model loads, extra fields are ignored") {
  Result<CostModel> m = parse_cost_model(
      R"({"schema": "cartplan.cost_model/1", "alpha_us": 0.75, "beta_us_per_byte": 0.0003, "machine": "x"})");
  REQUIRE(m.ok());
  CHECK(m->alpha_us == 0.75);
  CHECK(m->beta_us_per_byte == 0.0003);
  const std::string path = std::string(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp") + "/cm.json";
  std::ofstream(path) << R"({"schema": "cartplan.cost_model/1", "alpha_us": 2, "beta_us_per_byte": 0})";
  Result<CostModel> f = load_cost_model(path);
  REQUIRE(f.ok());
  CHECK(f->alpha_us == 2.0);
}

TEST_CASE("bad files are errors naming the problem") {
  CHECK(parse_cost_model("{").error().find("invalid JSON") == 0);
  CHECK(parse_cost_model("[]").error() == "expected a JSON object");
  CHECK(parse_cost_model(R"({"alpha_us": 1, "beta_us_per_byte": 1})").error() ==
        "\"schema\" must be \"cartplan.cost_model/1\"");
  CHECK(parse_cost_model(R"({"schema": "cartplan.cost_model/1", "alpha_us": "1", "beta_us_per_byte": 1})").error() ==
        "\"alpha_us\" must be a number");
  CHECK(parse_cost_model(R"({"schema": "cartplan.cost_model/1", "alpha_us": 1, "beta_us_per_byte": -1})").error() ==
        "\"beta_us_per_byte\" must be finite and >= 0");
  CHECK(load_cost_model("/nonexistent/cm.json").error() == "cannot read cost model '/nonexistent/cm.json'");
}

}  // namespace
}  // namespace cartplan::engine
