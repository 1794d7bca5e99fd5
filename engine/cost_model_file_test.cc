// Tests of the cost-model file: version 2 round-trips, version 1 still loads (as the linear
// model), bad files name the problem.
#include "engine/cost_model_file.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

namespace cartplan::engine {
namespace {

TEST_CASE("a version-1 file loads as the linear model, descriptive members are ignored") {
  Result<CostModel> m = parse_cost_model(
      R"({"schema": "cartplan.cost_model/1", "alpha_us": 0.75, "beta_us_per_byte": 0.0003, "machine": "x"})");
  REQUIRE(m.ok());
  CHECK(*m == CostModel::linear(0.75, 0.0003));
  CHECK(m->phase_us == 0);
  CHECK(m->copy_us_per_byte == 0);
  CHECK(m->rendezvous_us == 0);
  const std::string path = std::string(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp") + "/cm.json";
  std::ofstream(path) << R"({"schema": "cartplan.cost_model/1", "alpha_us": 2, "beta_us_per_byte": 0})";
  Result<CostModel> f = load_cost_model(path);
  REQUIRE(f.ok());
  CHECK(f->alpha_us == 2.0);
}

TEST_CASE("a version-2 file round-trips every term, extra members kept") {
  CostModel m;
  m.alpha_us = 0.5;
  m.beta_us_per_byte = 0.00025;
  m.phase_us = 1.5;
  m.copy_us_per_byte = 0.000125;
  m.eager_limit_bytes = 8192;
  m.rendezvous_us = 3.25;
  m.pipeline_us = 1.75;
  m.pipeline_us_per_byte = -0.000125;  // signed, down to -beta
  m.single_copy_us_per_byte = 0.0000375;
  m.off_node_alpha_us = 0.25;
  m.off_node_beta_us_per_byte = -0.0000625;  // signed, down to -beta
  m.node_link_us_per_byte = 0.0001;
  const std::string text = cost_model_to_json(m, R"({"np": 4, "r2": 0.9})");
  CHECK(text.find("\"schema\": \"cartplan.cost_model/2\"") != std::string::npos);
  CHECK(text.find("\"np\": 4") != std::string::npos);
  for (const CostTerm& t : kCostTerms) CHECK(text.find(std::string("\"") + t.name + "\"") != std::string::npos);
  Result<CostModel> back = parse_cost_model(text);
  REQUIRE(back.ok());
  CHECK(*back == m);
  CHECK(cost_model_to_json(*back, R"({"np": 4, "r2": 0.9})") == text);  // print -> parse -> print
}

TEST_CASE("placement terms at 0 are left out: the file is one that builds before them read") {
  CostModel m;
  m.node_link_us_per_byte = 0.0001;  // one placement term priced: only it is written
  const std::string one = cost_model_to_json(m);
  CHECK(one.find("\"node_link_us_per_byte\"") != std::string::npos);
  CHECK(one.find("off_node") == std::string::npos);
  Result<CostModel> back = parse_cost_model(one);
  REQUIRE(back.ok());
  CHECK(*back == m);
  CHECK(cost_model_to_json(*back) == one);
  // None priced: exactly the members of a file written before the placement terms existed.
  m.node_link_us_per_byte = 0;
  const std::string none = cost_model_to_json(m);
  const nlohmann::json j = nlohmann::json::parse(none);
  CHECK(j.size() == kCostTerms.size() - 3 + 2);  // the terms but placement's, schema, eager limit
  for (const CostTerm& t : kCostTerms) CHECK(j.contains(t.name) == !is_placement_term(t));
  REQUIRE(parse_cost_model(none).ok());
  CHECK(cost_model_to_json(*parse_cost_model(none)) == none);
}

TEST_CASE("phase_overlap: optional, written only where set, from 0 to 1") {
  CostModel m;
  CHECK(m.phase_overlap == 0);
  CHECK(cost_model_to_json(m).find("phase_overlap") == std::string::npos);  // files stay readable by older builds
  m.phase_overlap = 0.75;
  const std::string text = cost_model_to_json(m);
  CHECK(text.find("\"phase_overlap\": 0.75") != std::string::npos);
  Result<CostModel> back = parse_cost_model(text);
  REQUIRE(back.ok());
  CHECK(back->phase_overlap == 0.75);
  CHECK(*back == m);
  CHECK(cost_model_to_json(*back) == text);
  nlohmann::json j = nlohmann::json::parse(text);
  j.erase("phase_overlap");
  REQUIRE(parse_cost_model(j.dump()).ok());
  CHECK(parse_cost_model(j.dump())->phase_overlap == 0);  // files before it: the sum
  for (const char* bad : {"1.5", "-0.1", "\"x\""}) {
    j["phase_overlap"] = nlohmann::json::parse(bad);
    Result<CostModel> r = parse_cost_model(j.dump());
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().find("\"phase_overlap\" must be a number from 0 to 1") != std::string::npos);
  }
  m.phase_overlap = 2;
  CHECK(cost_model_error(m) == "phase_overlap must be a number from 0 to 1");
  // Version 1 has no such member.
  CHECK_FALSE(parse_cost_model(R"({"schema": "cartplan.cost_model/1", "alpha_us": 1, "beta_us_per_byte": 0, "phase_overlap": 1})").ok());
}

TEST_CASE("a version-2 file without the later terms: pipeline_us follows rendezvous_us, the others their defaults") {
  Result<CostModel> m = parse_cost_model(R"({"schema": "cartplan.cost_model/2", "alpha_us": 1, "beta_us_per_byte": 0.001,
      "phase_us": 2, "copy_us_per_byte": 0.0001, "rendezvous_us": 4.5, "eager_limit_bytes": 4064})");
  REQUIRE(m.ok());
  CHECK(m->pipeline_us == 4.5);
  CHECK(m->pipeline_us_per_byte == 0);
  CHECK(m->single_copy_us_per_byte == CostModel{}.single_copy_us_per_byte);
  // The dropped fast-box term's members, in files written before it was dropped: ignored.
  const Result<CostModel> old_file = parse_cost_model(R"({"schema": "cartplan.cost_model/2", "alpha_us": 1,
      "beta_us_per_byte": 0.001, "phase_us": 2, "copy_us_per_byte": 0.0001, "rendezvous_us": 4.5,
      "eager_limit_bytes": 4064, "inline_limit_bytes": 256, "fast_box_bytes": 4096, "fragment_us": 0.5})");
  REQUIRE(old_file.ok());
  CHECK(cost_model_to_json(*old_file).find("fragment") == std::string::npos);
  CHECK(old_file->rendezvous_us == 4.5);
  CHECK(parse_cost_model(R"({"schema": "cartplan.cost_model/2", "alpha_us": 1, "beta_us_per_byte": 0.001, "phase_us": 2,
      "copy_us_per_byte": 0.0001, "rendezvous_us": 4.5, "eager_limit_bytes": 4064, "pipeline_us": -1})")
            .error() == "\"pipeline_us\" must be a finite number >= 0");
  CHECK(parse_cost_model(R"({"schema": "cartplan.cost_model/2", "alpha_us": 1, "beta_us_per_byte": 0.001, "phase_us": 2,
      "copy_us_per_byte": 0.0001, "rendezvous_us": 4.5, "eager_limit_bytes": 4064, "single_copy_us_per_byte": "fast"})")
            .error() == "\"single_copy_us_per_byte\" must be a number");
  for (const char* limit : {"-1", "1099511627777", "9223372036854775807", "18446744073709551615", "4064.5"})
    CHECK(parse_cost_model(std::string(R"({"schema": "cartplan.cost_model/2", "alpha_us": 1, "beta_us_per_byte": 0.001,
      "phase_us": 2, "copy_us_per_byte": 0.0001, "rendezvous_us": 4.5, "eager_limit_bytes": )") + limit + "}")
              .error() == "\"eager_limit_bytes\" must be an integer from 0 to 2^40");
  // The pipeline's per-byte term may be negative, but a pipelined byte never costs less than nothing.
  const std::string head = R"({"schema": "cartplan.cost_model/2", "alpha_us": 1, "beta_us_per_byte": 0.001, "phase_us": 2,
      "copy_us_per_byte": 0.0001, "rendezvous_us": 4.5, "eager_limit_bytes": 4064, )";
  CHECK(parse_cost_model(head + R"("pipeline_us_per_byte": -0.001})")->pipeline_us_per_byte == -0.001);
  CHECK(parse_cost_model(head + R"("pipeline_us_per_byte": -0.0011})").error() ==
        "\"pipeline_us_per_byte\" must be a finite number >= -beta_us_per_byte");
  for (const char* bad : {R"("pipeline_us_per_byte": "cheap"})", R"("pipeline_us_per_byte": null})"})
    CHECK(parse_cost_model(head + bad).error() == "\"pipeline_us_per_byte\" must be a number");
}

TEST_CASE("unknown members are errors naming them; descriptive and dropped terms' members load") {
  const std::string head = R"({"schema": "cartplan.cost_model/2", "alpha_us": 1, "beta_us_per_byte": 0.001, "phase_us": 2,
      "copy_us_per_byte": 0.0001, "rendezvous_us": 4.5, "eager_limit_bytes": 4064, )";
  CHECK(parse_cost_model(head + R"("alpha": 3})").error() ==
        "unknown member \"alpha\" (docs/cost-model.md lists the members)");
  CHECK(parse_cost_model(head + R"("segment_usec": 0.1})").error().find("unknown member \"segment_usec\"") == 0);
  CHECK(parse_cost_model(head + R"("np": 4, "machine": "x", "pingpong": {"alpha_us": 2}, "fragment_us": 0, "segment_us": 0.1, "scatter_us_per_byte": 0})").ok());
  // Version 1 has alpha and beta only: a v2 term there is not silently ignored.
  CHECK(parse_cost_model(R"({"schema": "cartplan.cost_model/1", "alpha_us": 1, "beta_us_per_byte": 1, "phase_us": 1})")
            .error() == "unknown member \"phase_us\" (version 1 has alpha_us and beta_us_per_byte)");
  // Every term of the table but the unpriced placement terms is a member of the written file,
  // and nothing else but the schema and eager limit (the placement case above).
  const nlohmann::json j = nlohmann::json::parse(cost_model_to_json(CostModel{}));
  CHECK(j.size() == kCostTerms.size() - 3 + 2);
  for (const CostTerm& t : kCostTerms) CHECK(j.contains(t.name) == !is_placement_term(t));
}

TEST_CASE("bad files are errors naming the problem") {
  CHECK(parse_cost_model("{").error().find("invalid JSON") == 0);
  CHECK(parse_cost_model("[]").error() == "expected a JSON object");
  CHECK(parse_cost_model(R"({"alpha_us": 1, "beta_us_per_byte": 1})").error() ==
        "\"schema\" must be \"cartplan.cost_model/2\" (or \"cartplan.cost_model/1\")");
  CHECK(parse_cost_model(R"({"schema": "cartplan.cost_model/1", "alpha_us": "1", "beta_us_per_byte": 1})").error() ==
        "\"alpha_us\" must be a number");
  CHECK(parse_cost_model(R"({"schema": "cartplan.cost_model/1", "alpha_us": 1, "beta_us_per_byte": -1})").error() ==
        "\"beta_us_per_byte\" must be a finite number >= 0");
  // A v2 file must carry every v2 term.
  CHECK(parse_cost_model(R"({"schema": "cartplan.cost_model/2", "alpha_us": 1, "beta_us_per_byte": 1})").error() ==
        "\"phase_us\" must be a number");
  CHECK(parse_cost_model(R"({"schema": "cartplan.cost_model/2", "alpha_us": 1, "beta_us_per_byte": 1, "phase_us": 1,
        "copy_us_per_byte": 0, "rendezvous_us": 0, "eager_limit_bytes": 1.5})")
            .error() == "\"eager_limit_bytes\" must be an integer from 0 to 2^40");
  CHECK(load_cost_model("/nonexistent/cm.json").error() ==
        "cannot read '/nonexistent/cm.json': No such file or directory");
  // Read through the bounded reader: an endless file fails quickly instead of filling memory.
  Result<CostModel> endless = load_cost_model("/dev/zero");
  REQUIRE(!endless);
  CHECK(endless.error().find("cannot read '/dev/zero': larger than") == 0);
}

TEST_CASE("every committed cost-model file loads (bench/results)") {
  // Files from before a term was dropped keep its members; they load, and write back without.
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator("bench/results")) {
    if (entry.path().extension() != ".json") continue;
    CAPTURE(entry.path().string());
    const Result<CostModel> m = load_cost_model(entry.path().string());
    REQUIRE(m.ok());
    CHECK(m->alpha_us > 0);
    const Result<CostModel> again = parse_cost_model(cost_model_to_json(*m));
    REQUIRE(again.ok());
    CHECK(*again == *m);
    ++files;
  }
  CHECK(files >= 11);  // cpp-2core and smpi calibrations at the time of writing
}

}  // namespace
}  // namespace cartplan::engine
