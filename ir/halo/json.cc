// Halo plans as canonical JSON: the printer and the strict reader.
#include "ir/halo/json.h"

#include "ir/graph/json_print.h"
#include "ir/halo/strict_json.h"

namespace cartplan::ir::halo {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// Limits that keep a hostile file from costing more than its size suggests.
constexpr int kMaxCoordinate = 1 << 30;
constexpr std::size_t kMaxItems = std::size_t{1} << 17;  // temps + messages + parts
// Wide enough for one part per line.
constexpr std::size_t kWidth = 120;

constexpr std::pair<const char*, HaloAlgorithm> kAlgorithms[] = {{"direct", HaloAlgorithm::kDirect},
                                                                  {"combining", HaloAlgorithm::kCombining},
                                                                  {"dimwise", HaloAlgorithm::kDimwise},
                                                                  {"split", HaloAlgorithm::kSplit},
                                                                  {"hybrid", HaloAlgorithm::kHybrid}};
constexpr std::pair<const char*, Order> kOrders[] = {{"C", Order::kC}, {"Fortran", Order::kFortran}};
constexpr std::pair<const char*, Buffer> kBuffers[] = {{"array", Buffer::kArray}, {"temp", Buffer::kTemp}};

// ---------------------------------------------------------------------------------------------
// Printing

ordered_json place_json(const Place& p) {
  ordered_json j = {{"buf", p.buffer == Buffer::kArray ? "array" : "temp"}};
  if (p.buffer == Buffer::kTemp) j["slot"] = p.slot;
  j["lo"] = p.lo;
  return j;
}

ordered_json phase_json(const Phase& ph) {
  ordered_json msgs = ordered_json::array();
  for (const Message& m : ph.messages) {
    ordered_json parts = ordered_json::array();
    for (const Part& p : m.parts) parts.push_back({{"from", place_json(p.from)}, {"to", place_json(p.to)}, {"extent", p.extent}});
    msgs.push_back({{"shift", m.shift}, {"tag", m.tag}, {"parts", std::move(parts)}});
  }
  return {{"dim", ph.dim}, {"messages", std::move(msgs)}};
}

ordered_json plan_json(const HaloPlan& plan) {
  const ArrayShape& a = plan.array();
  ordered_json j = ordered_json::object();
  j["schema"] = kHaloPlanSchema;
  j["algorithm"] = to_string(plan.algorithm());
  j["array"] = {{"interior", a.interior}, {"ghost_lo", a.ghost_lo}, {"ghost_hi", a.ghost_hi}, {"elem_bytes", a.elem_bytes}, {"order", to_string(a.order)}};
  j["neighborhood"] = plan.neighborhood();
  j["dim_order"] = plan.dim_order();
  ordered_json temps = ordered_json::array();
  for (const Temp& t : plan.temps()) temps.push_back({{"extent", t.extent}});
  j["temps"] = std::move(temps);
  ordered_json phases = ordered_json::array();
  for (const Phase& ph : plan.phases()) phases.push_back(phase_json(ph));
  j["phases"] = std::move(phases);
  const HaloStats& s = plan.stats();
  j["stats"] = {{"messages", s.messages}, {"phases", s.phases}, {"wire_cells", s.wire_cells}, {"ghost_cells", s.ghost_cells}, {"temp_cells", s.temp_cells}};
  return j;
}

// ---------------------------------------------------------------------------------------------
// Reading

class PlanReader : public StrictReader {
 public:
  std::optional<HaloPlan> plan(const json& j);

 private:
  HaloPlanParts parts_;
  std::size_t items_ = 0;
  int d() const { return parts_.array.ndims; }

  bool count(std::size_t n, const std::string& path) {
    items_ += n;
    return items_ <= kMaxItems || fail_at(path, "more than " + std::to_string(kMaxItems) + " temps, messages and parts in the plan");
  }
  bool array_shape(const json& j);
  bool offsets(const json& j, const std::string& path, std::vector<Offset>& out);
  bool temps(const json& j);
  bool place(const json& j, const std::string& path, Place& out);
  bool message(const json& j, const std::string& path, Message& out);
  bool phase(const json& j, const std::string& path, Phase& out);
  bool stats(const json& j);
};

bool PlanReader::array_shape(const json& j) {
  const std::set<std::string> keys = {"interior", "ghost_lo", "ghost_hi", "elem_bytes", "order"};
  if (!object(j, "$.array", keys, keys)) return false;
  ArrayShape& a = parts_.array;
  if (!int_list(j["interior"], "$.array.interior", 1, kMaxHaloExtent, -1, a.interior)) return false;
  if (a.interior.empty() || a.interior.size() > static_cast<std::size_t>(kMaxHaloDims))
    return fail_at("$.array.interior", "a halo array has 1 to " + std::to_string(kMaxHaloDims) + " dimensions, got " + std::to_string(a.interior.size()));
  a.ndims = static_cast<int>(a.interior.size());
  if (!int_list(j["ghost_lo"], "$.array.ghost_lo", 0, kMaxHaloExtent, a.ndims, a.ghost_lo)) return false;
  if (!int_list(j["ghost_hi"], "$.array.ghost_hi", 0, kMaxHaloExtent, a.ndims, a.ghost_hi)) return false;
  long long elem = 0;
  if (!integer(j["elem_bytes"], "$.array.elem_bytes", 1LL, 1LL << 40, elem)) return false;
  a.elem_bytes = elem;
  if (!enum_value(j["order"], "$.array.order", kOrders, a.order)) return false;
  if (auto e = shape_error(a)) return fail_at("$.array", *e);
  return true;
}

bool PlanReader::offsets(const json& j, const std::string& path, std::vector<Offset>& out) {
  if (!array(j, path) || !count(j.size(), path)) return false;
  out.resize(j.size());
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (!int_list(j[i], path + "[" + std::to_string(i) + "]", -kMaxCoordinate, kMaxCoordinate, d(), out[i])) return false;
  }
  return true;
}

bool PlanReader::temps(const json& j) {
  if (!array(j, "$.temps") || !count(j.size(), "$.temps")) return false;
  parts_.temps.resize(j.size());
  for (std::size_t s = 0; s < j.size(); ++s) {
    const std::string at = "$.temps[" + std::to_string(s) + "]";
    if (!object(j[s], at, {"extent"}, {"extent"})) return false;
    if (!int_list(j[s]["extent"], at + ".extent", 1, kMaxHaloExtent, d(), parts_.temps[s].extent)) return false;
  }
  return true;
}

bool PlanReader::place(const json& j, const std::string& path, Place& out) {
  if (!object(j, path, {"buf", "slot", "lo"}, {"buf", "lo"})) return false;
  if (!enum_value(j["buf"], path + ".buf", kBuffers, out.buffer)) return false;
  if (out.buffer == Buffer::kArray && j.contains("slot")) return fail_at(path + ".slot", "only temps have a slot");
  if (out.buffer == Buffer::kTemp) {
    if (!j.contains("slot")) return fail_at(path, "missing field 'slot' (required by buf \"temp\")");
    if (parts_.temps.empty()) return fail_at(path + ".slot", "the plan has no temps");
    if (!integer(j["slot"], path + ".slot", 0, static_cast<int>(parts_.temps.size()) - 1, out.slot)) return false;
  }
  return int_list(j["lo"], path + ".lo", -kMaxCoordinate, kMaxCoordinate, d(), out.lo);
}

bool PlanReader::message(const json& j, const std::string& path, Message& out) {
  if (!object(j, path, {"shift", "tag", "parts"}, {"shift", "tag", "parts"})) return false;
  if (!int_list(j["shift"], path + ".shift", -kMaxCoordinate, kMaxCoordinate, d(), out.shift)) return false;
  if (!integer(j["tag"], path + ".tag", 0, 1 << 30, out.tag)) return false;
  const json& parts = j["parts"];
  if (!array(parts, path + ".parts") || !count(parts.size(), path + ".parts")) return false;
  out.parts.resize(parts.size());
  for (std::size_t q = 0; q < parts.size(); ++q) {
    const std::string at = path + ".parts[" + std::to_string(q) + "]";
    if (!object(parts[q], at, {"from", "to", "extent"}, {"from", "to", "extent"})) return false;
    if (!place(parts[q]["from"], at + ".from", out.parts[q].from) || !place(parts[q]["to"], at + ".to", out.parts[q].to)) return false;
    if (!int_list(parts[q]["extent"], at + ".extent", 0, kMaxHaloExtent, d(), out.parts[q].extent)) return false;
  }
  return true;
}

bool PlanReader::phase(const json& j, const std::string& path, Phase& out) {
  if (!object(j, path, {"dim", "messages"}, {"dim", "messages"})) return false;
  if (!integer(j["dim"], path + ".dim", Phase::kAllDims, d() - 1, out.dim)) return false;
  const json& msgs = j["messages"];
  if (!array(msgs, path + ".messages") || !count(msgs.size(), path + ".messages")) return false;
  out.messages.resize(msgs.size());
  for (std::size_t i = 0; i < msgs.size(); ++i) {
    if (!message(msgs[i], path + ".messages[" + std::to_string(i) + "]", out.messages[i])) return false;
  }
  return true;
}

bool PlanReader::stats(const json& j) {
  const std::set<std::string> keys = {"messages", "phases", "wire_cells", "ghost_cells", "temp_cells"};
  if (!object(j, "$.stats", keys, keys)) return false;
  HaloStats& s = parts_.stats;
  long long wire = 0, ghost = 0, temp = 0;
  if (!integer(j["messages"], "$.stats.messages", 0, 1 << 30, s.messages) || !integer(j["phases"], "$.stats.phases", 0, 1 << 30, s.phases))
    return false;
  if (!integer(j["wire_cells"], "$.stats.wire_cells", 0LL, 1LL << 62, wire) || !integer(j["ghost_cells"], "$.stats.ghost_cells", 0LL, 1LL << 62, ghost) ||
      !integer(j["temp_cells"], "$.stats.temp_cells", 0LL, 1LL << 62, temp))
    return false;
  s.wire_cells = wire, s.ghost_cells = ghost, s.temp_cells = temp;
  return true;
}

std::optional<HaloPlan> PlanReader::plan(const json& j) {
  const std::set<std::string> keys = {"schema", "algorithm", "array", "neighborhood", "dim_order", "temps", "phases", "stats"};
  if (!object(j, "$", keys, keys)) return std::nullopt;
  if (!j["schema"].is_string() || j["schema"].get<std::string>() != kHaloPlanSchema) {
    fail_at("$.schema", "expected \"" + std::string(kHaloPlanSchema) + "\", got " + show(j["schema"]));
    return std::nullopt;
  }
  if (!enum_value(j["algorithm"], "$.algorithm", kAlgorithms, parts_.algorithm) || !array_shape(j["array"])) return std::nullopt;
  if (!offsets(j["neighborhood"], "$.neighborhood", parts_.neighborhood)) return std::nullopt;
  if (!int_list(j["dim_order"], "$.dim_order", 0, d() - 1, d(), parts_.dim_order) || !temps(j["temps"])) return std::nullopt;
  const json& phases = j["phases"];
  if (!array(phases, "$.phases") || !count(phases.size(), "$.phases")) return std::nullopt;
  parts_.phases.resize(phases.size());
  for (std::size_t f = 0; f < phases.size(); ++f) {
    if (!phase(phases[f], "$.phases[" + std::to_string(f) + "]", parts_.phases[f])) return std::nullopt;
  }
  if (!stats(j["stats"])) return std::nullopt;
  return HaloPlan(std::move(parts_));
}

}  // namespace

std::string to_json_string(const HaloPlan& plan) { return ir::graph::canonical_text(plan_json(plan), kWidth); }

Result<HaloPlan> halo_plan_from_json_string(std::string_view text) {
  Result<json> j = parse_strict_json(text);
  if (!j) return fail(j.error());
  PlanReader reader;
  std::optional<HaloPlan> plan = reader.plan(*j);
  if (!plan) return fail(*reader.error);
  return std::move(*plan);
}

}  // namespace cartplan::ir::halo
