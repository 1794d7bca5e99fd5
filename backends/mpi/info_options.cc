// The options of a neighbourhood communicator and of an _init call: Info keys read and checked
// (docs/info-keys.md), the model's prices in one list, the fingerprint ranks agree on, and
// whether a given plan fits the neighbourhood.
#include <cstring>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>

#include "backends/mpi/info_options.h"
#include "backends/mpi/openmpi_profile.h"
#include "backends/mpi/plan_dump.h"
#include "engine/cost_model_file.h"
#include "engine/planner.h"
#include "ir/json.h"
#include "ir/parse_number.h"
#include "ir/read_file.h"
#include "ir/verify.h"

namespace cartplan::mpi {
namespace {

// Which of an Info switch's two values sets its flag (true); the other clears it.
enum class SetBy { kFirst, kSecond };

// An Info key of two values, `a` and `b` (in that order in the message): the one `set_by` names
// sets *flag, the other clears it; absent, *flag stays; any other value is MPI_ERR_INFO_VALUE
// naming both.
MpiStatus parse_switch(MPI_Info info, const char* key, const char* a, const char* b, SetBy set_by, bool* flag) {
  bool present = false;
  const std::string v = info_value(info, key, &present);
  if (!present) return {};
  if (v == a) *flag = set_by == SetBy::kFirst;
  else if (v == b) *flag = set_by == SetBy::kSecond;
  else return mpi_error(MPI_ERR_INFO_VALUE, std::string("Info ") + key + " = '" + v + "' (expected " + a + " or " + b + ")");
  return {};
}

// Info keys that choose the plan: cartplan_algorithm, cartplan_dim_order.
MpiStatus parse_choices(MPI_Info info, int ndims, Options* o) {
  bool present = false;
  std::string v = info_value(info, "cartplan_algorithm", &present);
  if (present) {
    if (v == "auto") o->algo = engine::AlgoChoice::kAuto;
    else if (v == "direct") o->algo = engine::AlgoChoice::kDirect;
    else if (v == "combining") o->algo = engine::AlgoChoice::kCombining;
    else if (v == "loground") o->algo = engine::AlgoChoice::kLogRound;
    else if (v == "hybrid") o->algo = engine::AlgoChoice::kHybrid;
    else return mpi_error(MPI_ERR_INFO_VALUE, "Info cartplan_algorithm = '" + v + "' (expected auto, direct, combining, loground or hybrid)");
  }
  v = info_value(info, "cartplan_dim_order", &present);
  if (present) {
    if (v == "auto") {
      o->dim_order.reset();
    } else if (v == "natural") {
      o->dim_order = engine::natural_dim_order(ndims);
    } else {
      Result<std::vector<int>> order = parse_int_list(v, 0, 64);
      if (!order)
        return mpi_error(MPI_ERR_INFO_VALUE, "Info cartplan_dim_order = '" + v + "': " + order.error() +
                                                 " (expected auto, natural or K,K,...)");
      Result<std::vector<int>> checked = engine::check_dim_order(*order, ndims);
      if (!checked) return mpi_error(MPI_ERR_INFO_VALUE, "Info cartplan_dim_order: " + checked.error());
      o->dim_order = *checked;
    }
  }
  return {};
}

// Info keys of the modes: cartplan_check, cartplan_progress, cartplan_tune.
MpiStatus parse_modes(MPI_Info info, Options* o) {
  if (MpiStatus s = parse_check(info, &o->check_collective); !s.ok()) return s;
  if (MpiStatus s = parse_progress(info, &o->progress_anywhere); !s.ok()) return s;
  return parse_tune(info, &o->tune_measure);
}

// Info cartplan_plan: a plan file, read, verified and checked against the dimension.
MpiStatus parse_given_plan(MPI_Info info, int ndims, Options* o) {
  bool present = false;
  std::string v = info_value(info, "cartplan_plan", &present);
  if (present) {
    const std::string key = "Info cartplan_plan = '" + v + "': ";
    Result<std::string> text = read_file_bounded(v);
    if (!text) return mpi_error(MPI_ERR_INFO_VALUE, key + text.error());
    Result<ir::Plan> plan = ir::plan_from_json_string(*text);
    if (!plan) return mpi_error(MPI_ERR_INFO_VALUE, key + plan.error());
    const std::vector<std::string> errors = ir::verify(*plan);
    if (!errors.empty())
      return mpi_error(MPI_ERR_INFO_VALUE, key + "the plan does not verify (" + std::to_string(errors.size()) +
                                               " errors; the first: " + errors.front() + ")");
    if (plan->ndims() != ndims)
      return mpi_error(MPI_ERR_INFO_VALUE, key + "the plan has " + std::to_string(plan->ndims()) +
                                               " dimensions, the communicator " + std::to_string(ndims));
    const std::uint64_t fingerprint = plan_fingerprint(ir::to_json_string(*plan));
    o->given_plan = std::make_shared<const Options::GivenPlan>(Options::GivenPlan{v, std::move(*plan), fingerprint});
  }
  return {};
}

// An Info key holding a byte count or -1 (none); `out` is left alone when the key is absent.
template <class T>
MpiStatus parse_bytes_key(MPI_Info info, const char* key, T* out) {
  bool present = false;
  const std::string v = info_value(info, key, &present);
  if (!present) return {};
  Result<std::int64_t> n = parse_integer(v, -1, std::numeric_limits<std::int64_t>::max());
  if (!n) return mpi_error(MPI_ERR_INFO_VALUE, std::string("Info ") + key + ": " + n.error() + " (expected -1 or a byte count)");
  *out = *n;
  return {};
}

// Info keys of the lowering's thresholds.
MpiStatus parse_lowering(MPI_Info info, Options* o) {
  MpiStatus st = parse_bytes_key(info, "cartplan_struct_min_bytes", &o->struct_min_bytes);
  if (st.ok()) st = parse_bytes_key(info, "cartplan_home_max_bytes", &o->home_max_message_bytes);
  if (st.ok()) st = parse_bytes_key(info, "cartplan_trailer_min_bytes", &o->trailer_min_bytes);
  return st;
}

}  // namespace

MpiStatus parse_model(MPI_Info info, Options* o) {
  bool present = false;
  std::string v = info_value(info, "cartplan_cost_model", &present);
  if (present) {
    Result<std::string> text = read_file_bounded(v);
    if (!text) return mpi_error(MPI_ERR_INFO_VALUE, "Info cartplan_cost_model: " + text.error());
    Result<engine::CostModel> m = engine::parse_cost_model(*text);
    if (!m) return mpi_error(MPI_ERR_INFO_VALUE, "Info cartplan_cost_model: cost model '" + v + "': " + m.error());
    o->model = *m;
  }
  for (auto [key, field] : {std::pair{"cartplan_alpha_us", &o->model.alpha_us},
                            std::pair{"cartplan_beta_us_per_byte", &o->model.beta_us_per_byte}}) {
    v = info_value(info, key, &present);
    if (!present) continue;
    Result<double> x = parse_nonnegative_double(v);
    if (!x) return mpi_error(MPI_ERR_INFO_VALUE, std::string("Info ") + key + ": " + x.error() + " (expected a finite number >= 0)");
    *field = *x;
  }
  return {};
}

MpiStatus parse_check(MPI_Info info, bool* collective) {
  return parse_switch(info, "cartplan_check", "none", "collective", SetBy::kSecond, collective);
}

MpiStatus parse_progress(MPI_Info info, bool* anywhere) {
  return parse_switch(info, "cartplan_progress", "any", "cartplan", SetBy::kFirst, anywhere);
}

MpiStatus parse_tune(MPI_Info info, bool* measure) { return parse_switch(info, "cartplan_tune", "model", "measure", SetBy::kSecond, measure); }

// The environment's defaults of the checking and measuring modes (CARTPLAN_CHECK,
// CARTPLAN_TUNE); Info keys override them. Both are part of the description every rank must
// agree on.
MpiStatus check_from_env(bool* collective) {
  if (const char* env = std::getenv("CARTPLAN_CHECK")) {
    const std::string mode = env;
    if (!mode.empty() && mode != "none" && mode != "collective")
      return mpi_error(MPI_ERR_ARG, "CARTPLAN_CHECK = '" + mode + "' (expected none or collective)");
    if (!mode.empty()) *collective = mode == "collective";
  }
  return {};
}

MpiStatus modes_from_env(Options* options) {
  if (MpiStatus s = check_from_env(&options->check_collective); !s.ok()) return s;
  if (const char* env = std::getenv("CARTPLAN_TUNE")) {
    const std::string mode = env;
    if (mode == "measure") options->tune_measure = true;
    else if (!mode.empty() && mode != "model") return mpi_error(MPI_ERR_ARG, "CARTPLAN_TUNE = '" + mode + "' (expected model or measure)");
  }
  return {};
}


std::vector<double> model_prices(const engine::CostModel& m) {
  std::vector<double> prices;
  for (const engine::CostTerm& t : engine::kCostTerms) prices.push_back(m.*t.price);
  prices.push_back(static_cast<double>(m.eager_limit_bytes));
  prices.push_back(m.phase_overlap);
  return prices;
}

std::string info_value(MPI_Info info, const char* key, bool* present) {
  *present = false;
  if (info == MPI_INFO_NULL) return {};
  int len = 0, flag = 0;
  if (MPI_Info_get_valuelen(info, key, &len, &flag) != MPI_SUCCESS || !flag) return {};
  std::string value(static_cast<std::size_t>(len) + 1, '\0');
  MPI_Info_get(info, key, len + 1, value.data(), &flag);
  value.resize(static_cast<std::size_t>(len));
  *present = flag != 0;
  return value;
}

std::int64_t options_fingerprint(const Options& options) {
  std::uint64_t fp = static_cast<std::uint64_t>(options.algo) * 0x9E3779B97F4A7C15ull;
  auto mix = [&fp](std::uint64_t v) { fp = (fp ^ v) * 0x100000001B3ull; };
  mix(options.dim_order ? 1 : 0);
  if (options.dim_order)
    for (int k : *options.dim_order) mix(static_cast<std::uint64_t>(k) + 7);
  for (double price : model_prices(options.model)) {  // every price: any of them can change the plan
    std::uint64_t bits = 0;
    std::memcpy(&bits, &price, sizeof bits);
    mix(bits);
  }
  mix(options.check_collective ? 2 : 3);
  mix(options.given_plan ? options.given_plan->fingerprint : 0);
  mix(static_cast<std::uint64_t>(options.trailer_min_bytes ? *options.trailer_min_bytes : -2) + 11);
  mix(options.tune_measure ? 5 : 6);
  return static_cast<std::int64_t>(fp >> 2);
}

MpiStatus parse_info(MPI_Info info, int ndims, Options* o) {
  MpiStatus st = parse_choices(info, ndims, o);
  if (st.ok()) st = parse_model(info, o);
  if (st.ok()) st = parse_modes(info, o);
  if (st.ok()) st = parse_given_plan(info, ndims, o);
  if (st.ok()) st = parse_lowering(info, o);
  return st;
}

MpiStatus check_given_plan(const Options& o, const engine::Neighborhood& nbh, std::optional<ir::Op> op) {
  if (!o.given_plan) return {};
  const ir::Plan& plan = o.given_plan->plan;
  const std::string key = "Info cartplan_plan = '" + o.given_plan->path + "': ";
  auto show = [](const ir::Offset& off) {
    std::string s = "(";
    for (std::size_t k = 0; k < off.size(); ++k) s += (k ? "," : "") + std::to_string(off[k]);
    return s + ")";
  };
  if (plan.ndims() != nbh.ndims())
    return mpi_error(MPI_ERR_ARG, key + "the plan has " + std::to_string(plan.ndims()) + " dimensions, the neighbourhood " +
                                      std::to_string(nbh.ndims()));
  if (plan.num_blocks() != nbh.size())
    return mpi_error(MPI_ERR_ARG, key + "the plan's neighbourhood has " + std::to_string(plan.num_blocks()) +
                                      " offsets, the communicator's " + std::to_string(nbh.size()));
  for (int i = 0; i < nbh.size(); ++i)
    if (plan.neighborhood()[i] != nbh.offsets()[i])
      return mpi_error(MPI_ERR_ARG, key + "offset " + std::to_string(i) + " is " + show(plan.neighborhood()[i]) +
                                        " in the plan, " + show(nbh.offsets()[i]) + " on the communicator");
  if (op && plan.op() != *op)
    return mpi_error(MPI_ERR_ARG, key + "the plan is for " + ir::to_string(plan.op()) + ", the request is " +
                                      ir::to_string(*op));
  return {};
}

engine::LowerOptions lower_options(const Options& options) {
  engine::LowerOptions lo = agreed_lower_options(options);
  // Local (where this rank receives what it receives): the Info keys override the agreed values.
  lo.struct_min_bytes = options.struct_min_bytes;
  if (options.home_max_message_bytes) lo.home_max_message_bytes = *options.home_max_message_bytes;
  return lo;
}

engine::Placement planning_placement(const Options& options) {
  return engine::prices_placement(options.model) ? options.placement : engine::Placement{};
}

engine::LowerOptions agreed_lower_options(const Options& options) {
  engine::LowerOptions lo;
  // Not local: the trailer travels, and ranks agreed on the model and this option at init.
  lo.trailer_min_bytes = options.trailer_min_bytes.value_or(openmpi::trailer_min_bytes(options.model));
  lo.home_max_message_bytes = openmpi::home_max_message_bytes(options.model, lo.trailer_min_bytes);
  return lo;
}

}  // namespace cartplan::mpi
