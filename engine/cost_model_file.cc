// Parsing the calibrated cost-model file; errors name the file and the bad field.
#include "engine/cost_model_file.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace cartplan::engine {

Result<CostModel> parse_cost_model(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return fail(std::string("invalid JSON: ") + e.what());
  }
  if (!j.is_object()) return fail("expected a JSON object");
  if (!j.contains("schema") || j["schema"] != kCostModelSchema)
    return fail(std::string("\"schema\" must be \"") + kCostModelSchema + "\"");
  CostModel m;
  for (auto [key, field] : {std::pair{"alpha_us", &m.alpha_us}, std::pair{"beta_us_per_byte", &m.beta_us_per_byte}}) {
    if (!j.contains(key) || !j[key].is_number()) return fail(std::string("\"") + key + "\" must be a number");
    *field = j[key].get<double>();
    if (!std::isfinite(*field) || *field < 0) return fail(std::string("\"") + key + "\" must be finite and >= 0");
  }
  return m;
}

Result<CostModel> load_cost_model(const std::string& path) {
  std::ifstream in(path);
  if (!in) return fail("cannot read cost model '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  Result<CostModel> m = parse_cost_model(s.str());
  if (!m) return fail("cost model '" + path + "': " + m.error());
  return m;
}

}  // namespace cartplan::engine
