// Tests of the cost-model lookup order: explicit path, environment, default location, defaults.
#include "engine/cost_model_locate.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "engine/cost_model_file.h"

namespace cartplan::engine {
namespace {

std::string tmpdir() {
  const char* t = std::getenv("TEST_TMPDIR");
  return std::string(t ? t : "/tmp") + "/locate";
}

struct FakeEnv {
  std::map<std::string, std::string> vars;
  GetEnv get() const {
    return [this](const char* k) -> const char* {
      auto it = vars.find(k);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

void write_model(const std::string& path, double alpha) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  CostModel m;
  m.alpha_us = alpha;
  std::ofstream(path) << cost_model_to_json(m);
}

TEST_CASE("lookup order: explicit, CARTPLAN_COST_MODEL, default location (np-specific first), built-in") {
  const std::string dir = tmpdir();
  std::filesystem::remove_all(dir);
  FakeEnv env;
  env.vars["HOME"] = dir + "/home";
  Result<LocatedModel> m = locate_cost_model(std::nullopt, 4, env.get());
  REQUIRE(m.ok());
  CHECK(m->source == ModelSource::kBuiltIn);
  CHECK(m->model == CostModel{});
  CHECK(describe(*m) == "the built-in defaults");

  write_model(dir + "/home/.config/cartplan/cost_model.json", 3);
  m = locate_cost_model(std::nullopt, 4, env.get());
  REQUIRE(m.ok());
  CHECK(m->source == ModelSource::kDefaultLocation);
  CHECK(m->model.alpha_us == 3);
  write_model(dir + "/home/.config/cartplan/cost_model_np4.json", 4);
  CHECK(locate_cost_model(std::nullopt, 4, env.get())->model.alpha_us == 4);
  CHECK(locate_cost_model(std::nullopt, 2, env.get())->model.alpha_us == 3);

  env.vars["XDG_CONFIG_HOME"] = dir + "/xdg";  // takes the place of $HOME/.config
  CHECK(locate_cost_model(std::nullopt, 4, env.get())->source == ModelSource::kBuiltIn);
  CHECK(default_cost_model_paths(4, env.get()).front() == dir + "/xdg/cartplan/cost_model_np4.json");

  write_model(dir + "/env.json", 5);
  env.vars["CARTPLAN_COST_MODEL"] = dir + "/env.json";
  m = locate_cost_model(std::nullopt, 4, env.get());
  CHECK(m->source == ModelSource::kEnvironment);
  CHECK(m->model.alpha_us == 5);

  write_model(dir + "/explicit.json", 6);
  m = locate_cost_model(dir + "/explicit.json", 4, env.get());
  CHECK(m->source == ModelSource::kExplicit);
  CHECK(m->model.alpha_us == 6);
}

TEST_CASE("a named or present file that does not load is an error naming it") {
  const std::string dir = tmpdir() + "2";
  std::filesystem::remove_all(dir);
  FakeEnv env;
  env.vars["CARTPLAN_COST_MODEL"] = dir + "/missing.json";
  CHECK(locate_cost_model(std::nullopt, 2, env.get()).error() ==
        "CARTPLAN_COST_MODEL: cannot read '" + dir + "/missing.json': No such file or directory");
  env.vars.clear();
  env.vars["XDG_CONFIG_HOME"] = dir;
  std::filesystem::create_directories(dir + "/cartplan");
  std::ofstream(dir + "/cartplan/cost_model.json") << "{";
  CHECK(locate_cost_model(std::nullopt, 2, env.get()).error().find("default cost model: cost model '" + dir +
                                                                   "/cartplan/cost_model.json': invalid JSON") == 0);
}

}  // namespace
}  // namespace cartplan::engine
