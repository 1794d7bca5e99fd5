// Parsing and writing the calibrated cost-model file (versions 1 and 2); errors name the file
// and the bad field.
#include "engine/cost_model_file.h"

#include <cassert>
#include <cmath>
#include <tuple>

#include <nlohmann/json.hpp>

#include "ir/read_file.h"

namespace cartplan::engine {

Result<CostModel> parse_cost_model(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return fail(std::string("invalid JSON: ") + e.what());
  }
  if (!j.is_object()) return fail("expected a JSON object");
  const bool v1 = j.contains("schema") && j["schema"] == kCostModelSchemaV1;
  if (!v1 && (!j.contains("schema") || j["schema"] != kCostModelSchema))
    return fail(std::string("\"schema\" must be \"") + kCostModelSchema + "\" (or \"" + kCostModelSchemaV1 + "\")");
  CostModel m = CostModel::linear(0, 0);
  std::vector<std::pair<const char*, double*>> fields = {{"alpha_us", &m.alpha_us},
                                                         {"beta_us_per_byte", &m.beta_us_per_byte}};
  if (!v1)
    fields.insert(fields.end(), {{"phase_us", &m.phase_us},
                                 {"copy_us_per_byte", &m.copy_us_per_byte},
                                 {"rendezvous_us", &m.rendezvous_us}});
  for (auto [key, field] : fields) {
    if (!j.contains(key) || !j[key].is_number()) return fail(std::string("\"") + key + "\" must be a number");
    *field = j[key].get<double>();
    if (!std::isfinite(*field) || *field < 0) return fail(std::string("\"") + key + "\" must be finite and >= 0");
  }
  if (!v1) {
    const char* key = "eager_limit_bytes";
    if (!j.contains(key) || !j[key].is_number_integer() || j[key].get<std::int64_t>() < 0)
      return fail(std::string("\"") + key + "\" must be an integer >= 0");
    m.eager_limit_bytes = j[key].get<std::int64_t>();
    // Optional: files calibrated before these terms existed keep the built-in values.
    // A file without pipeline_us prices struct messages above the limit like the others.
    for (auto [key, field, fallback] : {std::tuple{"pipeline_us", &m.pipeline_us, m.rendezvous_us},
                                        std::tuple{"single_copy_us_per_byte", &m.single_copy_us_per_byte,
                                                   CostModel::kDefaultSingleCopyUsPerByte},
                                        std::tuple{"segment_us", &m.segment_us, CostModel::kDefaultSegmentUs},
                                        std::tuple{"scatter_us_per_byte", &m.scatter_us_per_byte,
                                                   CostModel::kDefaultScatterUsPerByte}}) {
      *field = fallback;
      if (!j.contains(key)) continue;
      if (!j[key].is_number() || !std::isfinite(j[key].get<double>()) || j[key].get<double>() < 0)
        return fail(std::string("\"") + key + "\" must be a finite number >= 0");
      *field = j[key].get<double>();
    }
    // fragment_us, inline_limit_bytes and fast_box_bytes (the fast-box term, dropped: it was 0
    // in every committed calibration, docs/cost-model.md "Dropped terms") may still be in older
    // files: ignored, like any other extra member.
    // Signed: the pipeline may cost less per byte than an eager message, never less than nothing.
    const char* per_byte = "pipeline_us_per_byte";
    m.pipeline_us_per_byte = CostModel::kDefaultPipelineUsPerByte;
    if (j.contains(per_byte)) {
      if (!j[per_byte].is_number() || !std::isfinite(j[per_byte].get<double>()) ||
          j[per_byte].get<double>() + m.beta_us_per_byte < 0)
        return fail(std::string("\"") + per_byte + "\" must be a finite number >= -beta_us_per_byte");
      m.pipeline_us_per_byte = j[per_byte].get<double>();
    }
  }
  return m;
}

Result<CostModel> load_cost_model(const std::string& path) {
  // The bounded reader: a path naming /dev/zero or a huge file is an error, not a memory blow-up.
  Result<std::string> text = read_file_bounded(path);
  if (!text) return ErrorMessage{text.error()};
  Result<CostModel> m = parse_cost_model(*text);
  if (!m) return fail("cost model '" + path + "': " + m.error());
  return m;
}

std::string cost_model_to_json(const CostModel& m, const std::string& extra_members) {
  nlohmann::ordered_json j;
  j["schema"] = kCostModelSchema;
  j["alpha_us"] = m.alpha_us;
  j["beta_us_per_byte"] = m.beta_us_per_byte;
  j["phase_us"] = m.phase_us;
  j["copy_us_per_byte"] = m.copy_us_per_byte;
  j["eager_limit_bytes"] = m.eager_limit_bytes;
  j["rendezvous_us"] = m.rendezvous_us;
  j["single_copy_us_per_byte"] = m.single_copy_us_per_byte;
  j["pipeline_us"] = m.pipeline_us;
  j["pipeline_us_per_byte"] = m.pipeline_us_per_byte;
  j["segment_us"] = m.segment_us;
  j["scatter_us_per_byte"] = m.scatter_us_per_byte;
  if (!extra_members.empty()) {
    const nlohmann::ordered_json extra = nlohmann::ordered_json::parse(extra_members);
    assert(extra.is_object());
    for (auto it = extra.begin(); it != extra.end(); ++it)
      if (!j.contains(it.key())) j[it.key()] = it.value();
  }
  return j.dump(2) + "\n";
}

}  // namespace cartplan::engine
