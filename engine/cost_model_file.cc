// Parsing and writing the calibrated cost-model file (versions 1 and 2) from the term table
// (kCostTerms); errors name the file and the bad member.
#include "engine/cost_model_file.h"

#include <algorithm>
#include <cassert>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ir/read_file.h"

namespace cartplan::engine {
namespace {

// Members that describe how a file was made (bench/calibrate writes them) and the members of
// dropped terms that committed calibrations still carry (docs/cost-model.md, "Dropped terms"):
// accepted and ignored. Any other member that is not a term is an error.
constexpr std::string_view kDescriptiveMembers[] = {
    "schema", "machine", "method", "mpi", "timing", "np", "quick", "r2", "worst_relative_error", "points",
    "choices_within_10_percent", "pingpong", "fragments_fitted",
    // dropped terms
    "fragment_us", "inline_limit_bytes", "fast_box_bytes", "segment_us", "scatter_us_per_byte"};

bool descriptive(std::string_view key) {
  return std::find(std::begin(kDescriptiveMembers), std::end(kDescriptiveMembers), key) != std::end(kDescriptiveMembers);
}

// The first member of `j` that is neither a term of the file's version, eager_limit_bytes (v2)
// nor descriptive.
Result<bool> check_members(const nlohmann::json& j, bool v1) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    if (descriptive(key) || (!v1 && (key == "eager_limit_bytes" || key == "phase_overlap"))) continue;
    const bool term = std::any_of(kCostTerms.begin(), kCostTerms.end(),
                                  [&](const CostTerm& t) { return key == t.name && (!v1 || t.in_v1); });
    if (term) continue;
    return fail("unknown member \"" + key + "\" (" +
                (v1 ? "version 1 has alpha_us and beta_us_per_byte" : "docs/cost-model.md lists the members") + ")");
  }
  return true;
}

// Reads every price of the table (v1: its terms only, the others 0), then checks the bounds.
Result<CostModel> read_prices(const nlohmann::json& j, bool v1) {
  CostModel m = CostModel::linear(0, 0);
  for (const CostTerm& t : kCostTerms) {
    if (v1 && !t.in_v1) continue;
    if (!j.contains(t.name)) {
      if (!t.optional || v1) return fail(std::string("\"") + t.name + "\" must be a number");
      m.*t.price = t.fallback ? m.*t.fallback : t.default_price;  // fallbacks precede their users in the table
      continue;
    }
    if (!j[t.name].is_number()) return fail(std::string("\"") + t.name + "\" must be a number");
    m.*t.price = j[t.name].get<double>();
  }
  if (!v1) {
    const char* key = "eager_limit_bytes";
    if (!j.contains(key) || !j[key].is_number_integer() || j[key].get<std::int64_t>() < 0 ||
        j[key].get<std::int64_t>() > CostModel::kMaxEagerLimitBytes)
      return fail(std::string("\"") + key + "\" must be an integer from 0 to 2^40");
    m.eager_limit_bytes = j[key].get<std::int64_t>();
    // Optional (files before it: 0, every phase its messages' sum).
    if (j.contains("phase_overlap")) {
      if (!j["phase_overlap"].is_number() || !(j["phase_overlap"].get<double>() >= 0 && j["phase_overlap"].get<double>() <= 1))
        return fail("\"phase_overlap\" must be a number from 0 to 1");
      m.phase_overlap = j["phase_overlap"].get<double>();
    }
  }
  for (const CostTerm& t : kCostTerms)
    if (std::string e = price_error(t, m); !e.empty()) return fail(std::string("\"") + t.name + "\" " + e);
  return m;
}

}  // namespace

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
  if (Result<bool> ok = check_members(j, v1); !ok) return ErrorMessage{ok.error()};
  return read_prices(j, v1);
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
  // The placement terms only where they price something: older builds reject them as unknown
  // members, and a 0 reads back as the absent term's 0 (print -> parse -> print identical).
  for (const CostTerm& t : kCostTerms)
    if (!is_placement_term(t) || m.*t.price != 0) j[t.name] = m.*t.price;
  j["eager_limit_bytes"] = m.eager_limit_bytes;
  if (m.phase_overlap != 0) j["phase_overlap"] = m.phase_overlap;  // as the placement terms: only where set
  if (!extra_members.empty()) {
    const nlohmann::ordered_json extra = nlohmann::ordered_json::parse(extra_members);
    assert(extra.is_object());
    for (auto it = extra.begin(); it != extra.end(); ++it) {
      assert(descriptive(it.key()) && "a member the parser would reject");
      if (!j.contains(it.key())) j[it.key()] = it.value();
    }
  }
  return j.dump(2) + "\n";
}

}  // namespace cartplan::engine
