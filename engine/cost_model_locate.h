// Where the MPI backend (and anyone else) finds a calibrated cost model without being told,
// in this order:
//   1. an explicit path (the Info key cartplan_cost_model; the CLI's --cost-model);
//   2. the environment variable CARTPLAN_COST_MODEL (a file path);
//   3. the default location: $XDG_CONFIG_HOME/cartplan/ (else $HOME/.config/cartplan/),
//      first cost_model_np<P>.json for the process count P, then cost_model.json;
//   4. the built-in defaults (cost_model.h).
// A file that is named (1, 2) or exists (3) but does not load is an error naming it: a broken
// calibration is not silently replaced by defaults.
//
//   Result<LocatedModel> m = locate_cost_model(std::nullopt, np, std::getenv);
//   if (m->source == ModelSource::kBuiltIn) ...   // no calibration found
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/cost_model.h"
#include "ir/result.h"

namespace cartplan::engine {

enum class ModelSource { kExplicit, kEnvironment, kDefaultLocation, kBuiltIn };

struct LocatedModel {
  CostModel model;
  ModelSource source = ModelSource::kBuiltIn;
  std::string path;  // empty for kBuiltIn
};

using GetEnv = std::function<const char*(const char*)>;

// The candidate files of the default location for `np` processes (empty without a home).
std::vector<std::string> default_cost_model_paths(int np, const GetEnv& getenv);

Result<LocatedModel> locate_cost_model(const std::optional<std::string>& explicit_path, int np, const GetEnv& getenv);

// "the Info key / CARTPLAN_COST_MODEL / the default location PATH / the built-in defaults".
std::string describe(const LocatedModel& m);

}  // namespace cartplan::engine
