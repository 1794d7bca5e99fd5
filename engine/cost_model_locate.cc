// Finding the calibrated cost model: explicit path, environment, default location, defaults.
#include "engine/cost_model_locate.h"

#include <fstream>

#include "engine/cost_model_file.h"

namespace cartplan::engine {

std::vector<std::string> default_cost_model_paths(int np, const GetEnv& getenv) {
  std::string dir;
  if (const char* x = getenv("XDG_CONFIG_HOME"); x && *x) dir = std::string(x) + "/cartplan";
  else if (const char* h = getenv("HOME"); h && *h) dir = std::string(h) + "/.config/cartplan";
  else return {};
  return {dir + "/cost_model_np" + std::to_string(np) + ".json", dir + "/cost_model.json"};
}

Result<LocatedModel> locate_cost_model(const std::optional<std::string>& explicit_path, int np, const GetEnv& getenv) {
  auto load = [](const std::string& path, ModelSource source, const std::string& what) -> Result<LocatedModel> {
    Result<CostModel> m = load_cost_model(path);
    if (!m) return fail(what + ": " + m.error());
    return LocatedModel{*m, source, path};
  };
  if (explicit_path) return load(*explicit_path, ModelSource::kExplicit, "cost model");
  if (const char* env = getenv("CARTPLAN_COST_MODEL"); env && *env)
    return load(env, ModelSource::kEnvironment, "CARTPLAN_COST_MODEL");
  for (const std::string& path : default_cost_model_paths(np, getenv))
    if (std::ifstream(path).good()) return load(path, ModelSource::kDefaultLocation, "default cost model");
  return LocatedModel{};
}

std::string describe(const LocatedModel& m) {
  switch (m.source) {
    case ModelSource::kExplicit: return "the file " + m.path;
    case ModelSource::kEnvironment: return "CARTPLAN_COST_MODEL = " + m.path;
    case ModelSource::kDefaultLocation: return "the default location " + m.path;
    case ModelSource::kBuiltIn: break;
  }
  return "the built-in defaults";
}

}  // namespace cartplan::engine
