// Graph plans as canonical JSON: the printer and the strict, non-throwing reader.
#include "ir/graph/json.h"

#include <algorithm>
#include <exception>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/graph/json_print.h"
#include "ir/json_strict.h"

namespace cartplan::ir::graph {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// Limits that keep a hostile file from costing more than its size suggests.
constexpr int kMaxDepth = 32;
constexpr std::size_t kMaxParts = std::size_t{1} << 26;

// ---------------------------------------------------------------------------------------------
// Printing

ordered_json block_json(const BlockId& b) {
  if (b.target < 0) return ordered_json::array({b.origin});
  return ordered_json::array({b.origin, b.target, b.nth});
}

ordered_json loc_json(const Loc& l) { return ordered_json::array({to_string(l.kind), l.index}); }

ordered_json message_json(const Message& m, const char* peer_key) {
  ordered_json parts = ordered_json::array();
  for (const Part& p : m.parts) parts.push_back(ordered_json{{"block", block_json(p.block)}, {"at", loc_json(p.loc)}});
  return ordered_json{{peer_key, m.peer}, {"parts", std::move(parts)}};
}

ordered_json phase_json(const GraphPhase& ph) {
  ordered_json sends = ordered_json::array(), recvs = ordered_json::array(), copies = ordered_json::array();
  for (const Message& m : ph.sends) sends.push_back(message_json(m, "to"));
  for (const Message& m : ph.recvs) recvs.push_back(message_json(m, "from"));
  for (const Copy& c : ph.copies)
    copies.push_back(ordered_json{{"block", block_json(c.block)}, {"from", loc_json(c.from)}, {"to", loc_json(c.to)}});
  return ordered_json{{"send", std::move(sends)}, {"recv", std::move(recvs)}, {"copies", std::move(copies)}};
}

ordered_json schedule_json(int rank, const RankSchedule& s) {
  ordered_json temps = ordered_json::array(), phases = ordered_json::array();
  for (const BlockId& b : s.temps) temps.push_back(block_json(b));
  for (const GraphPhase& ph : s.phases) phases.push_back(phase_json(ph));
  return ordered_json{{"rank", rank}, {"temps", std::move(temps)}, {"phases", std::move(phases)}};
}

ordered_json plan_json(const GraphPlan& plan) {
  ordered_json j = ordered_json::object();
  j["schema"] = kGraphPlanSchema;
  j["op"] = to_string(plan.op());
  j["algorithm"] = to_string(plan.algorithm());
  if (plan.algorithm() == GraphAlgorithm::kGrid) j["dims"] = plan.dims();
  else if (plan.algorithm() != GraphAlgorithm::kLinear) j["theta"] = plan.theta();
  ordered_json topo = ordered_json::array();
  for (int r = 0; r < plan.size(); ++r)
    topo.push_back(ordered_json{{"rank", r}, {"out", plan.topology().ranks[r].out}, {"in", plan.topology().ranks[r].in}});
  j["topology"] = std::move(topo);
  ordered_json scheds = ordered_json::array();
  for (int r = 0; r < plan.size(); ++r) scheds.push_back(schedule_json(r, plan.schedule(r)));
  j["schedules"] = std::move(scheds);
  return j;
}

// ---------------------------------------------------------------------------------------------
// Reading


// Reads a plan, stopping at the first error; every error starts with the JSON path.
class Reader {
 public:
  std::optional<std::string> error;

  bool fail_at(const std::string& path, const std::string& what) {
    if (!error) error = path + ": " + what;
    return false;
  }

  bool object(const json& j, const std::string& path, const std::set<std::string>& allowed,
              const std::set<std::string>& required) {
    if (!j.is_object()) return fail_at(path, "expected an object, got " + show_json_value(j));
    for (const auto& [k, v] : j.items()) {
      if (!allowed.count(k)) return fail_at(path, "unknown field '" + k + "'");
    }
    for (const std::string& k : required) {
      if (!j.contains(k)) return fail_at(path, "missing field '" + k + "'");
    }
    return true;
  }

  bool integer(const json& j, const std::string& path, long long lo, long long hi, int& out) {
    if (!j.is_number_integer()) return fail_at(path, "expected an integer, got " + show_json_value(j));
    const long long v = j.is_number_unsigned() ? static_cast<long long>(std::min<unsigned long long>(j.get<unsigned long long>(), 1ULL << 62))
                                               : j.get<long long>();
    if (v < lo || v > hi) return fail_at(path, std::to_string(v) + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    out = static_cast<int>(v);
    return true;
  }

  bool array(const json& j, const std::string& path) {
    if (!j.is_array()) return fail_at(path, "expected an array, got " + show_json_value(j));
    return true;
  }

  bool int_list(const json& j, const std::string& path, int lo, int hi, std::vector<int>& out) {
    if (!array(j, path)) return false;
    out.resize(j.size());
    for (std::size_t i = 0; i < j.size(); ++i) {
      if (!integer(j[i], path + "[" + std::to_string(i) + "]", lo, hi, out[i])) return false;
    }
    return true;
  }

  template <class E, std::size_t N>
  bool enum_value(const json& j, const std::string& path, const std::pair<const char*, E> (&names)[N], E& out) {
    if (!j.is_string()) return fail_at(path, "expected a string, got " + show_json_value(j));
    std::string all;
    for (const auto& [name, value] : names) {
      if (j.get<std::string>() == name) {
        out = value;
        return true;
      }
      all += all.empty() ? name : std::string(", ") + name;
    }
    return fail_at(path, "unknown value " + show_json_value(j) + " (expected " + all + ")");
  }

  std::optional<GraphPlan> plan(const json& j);

 private:
  GraphPlanParts parts_;
  std::size_t total_parts_ = 0;

  bool header(const json& j);
  bool grid_fits();
  bool topology(const json& j, const std::string& path);
  bool schedule(const json& j, const std::string& path, int rank, RankSchedule& out);
  bool phase(const json& j, const std::string& path, int rank, int temps, GraphPhase& out);
  bool message(const json& j, const std::string& path, const char* peer_key, int rank, int temps, Message& out);
  bool block(const json& j, const std::string& path, BlockId& out);
  bool loc(const json& j, const std::string& path, int rank, int temps, Loc& out);
};

constexpr std::pair<const char*, GraphOp> kOps[] = {{"allgather", GraphOp::kAllgather}, {"alltoall", GraphOp::kAlltoall}};
constexpr std::pair<const char*, GraphAlgorithm> kAlgorithms[] = {
    {"linear", GraphAlgorithm::kLinear}, {"pairing", GraphAlgorithm::kPairing}, {"cumulative", GraphAlgorithm::kCumulative},
    {"grid", GraphAlgorithm::kGrid}};
constexpr std::pair<const char*, LocKind> kLocKinds[] = {{"send", LocKind::kSend}, {"recv", LocKind::kRecv}, {"temp", LocKind::kTemp}};

bool Reader::header(const json& j) {
  if (!object(j, "$", {"schema", "op", "algorithm", "theta", "dims", "topology", "schedules"},
              {"schema", "op", "algorithm", "topology", "schedules"}))
    return false;
  if (!j["schema"].is_string() || j["schema"].get<std::string>() != kGraphPlanSchema)
    return fail_at("$.schema", "expected \"" + std::string(kGraphPlanSchema) + "\", got " + show_json_value(j["schema"]));
  if (!enum_value(j["op"], "$.op", kOps, parts_.op)) return false;
  if (!enum_value(j["algorithm"], "$.algorithm", kAlgorithms, parts_.algorithm)) return false;
  const bool combining = parts_.algorithm == GraphAlgorithm::kPairing || parts_.algorithm == GraphAlgorithm::kCumulative;
  const bool grid = parts_.algorithm == GraphAlgorithm::kGrid;
  if (!combining && j.contains("theta")) return fail_at("$.theta", std::string("a ") + to_string(parts_.algorithm) + " plan has no friendship threshold");
  if (combining && !j.contains("theta")) return fail_at("$", "missing field 'theta' (required by algorithm " + show_json_value(j["algorithm"]) + ")");
  if (combining && !integer(j["theta"], "$.theta", 1, 1 << 20, parts_.theta)) return false;
  if (!grid && j.contains("dims")) return fail_at("$.dims", std::string("a ") + to_string(parts_.algorithm) + " plan has no virtual grid");
  if (grid && !j.contains("dims")) return fail_at("$", "missing field 'dims' (required by algorithm \"grid\")");
  if (grid && !int_list(j["dims"], "$.dims", 1, kMaxGraphRanks, parts_.dims)) return false;
  return true;
}

// A grid plan's dims multiply to the ranks (after the topology is read).
bool Reader::grid_fits() {
  if (parts_.algorithm != GraphAlgorithm::kGrid) return true;
  long long product = 1;
  for (int d : parts_.dims) product = std::min<long long>(product * d, 1LL << 40);
  if (product == parts_.topology.size()) return true;
  return fail_at("$.dims", "the grid has " + std::to_string(product) + " places but the topology has " +
                               std::to_string(parts_.topology.size()) + " ranks");
}

bool Reader::topology(const json& j, const std::string& path) {
  if (!array(j, path)) return false;
  if (j.size() > static_cast<std::size_t>(kMaxGraphRanks)) return fail_at(path, "more than " + std::to_string(kMaxGraphRanks) + " ranks");
  const int p = static_cast<int>(j.size());
  parts_.topology.ranks.resize(p);
  for (int r = 0; r < p; ++r) {
    const std::string at = path + "[" + std::to_string(r) + "]";
    int rank = 0;
    if (!object(j[r], at, {"rank", "out", "in"}, {"rank", "out", "in"})) return false;
    if (!integer(j[r]["rank"], at + ".rank", r, r, rank)) return false;
    if (!int_list(j[r]["out"], at + ".out", 0, p - 1, parts_.topology.ranks[r].out)) return false;
    if (!int_list(j[r]["in"], at + ".in", 0, p - 1, parts_.topology.ranks[r].in)) return false;
  }
  if (auto e = topology_error(parts_.topology)) return fail_at(path, *e);
  return true;
}

bool Reader::block(const json& j, const std::string& path, BlockId& out) {
  const int p = parts_.topology.size();
  if (!array(j, path)) return false;
  const std::size_t want = parts_.op == GraphOp::kAllgather ? 1 : 3;
  if (j.size() != want)
    return fail_at(path, std::string("a block of ") + to_string(parts_.op) + " is " +
                             (want == 1 ? "[origin]" : "[origin, target, nth]") + ", got " + show_json_value(j));
  out = BlockId{};
  if (!integer(j[0], path + "[0]", 0, p - 1, out.origin)) return false;
  if (want == 1) return true;
  if (!integer(j[1], path + "[1]", 0, p - 1, out.target)) return false;
  const int edges = count_of(parts_.topology.ranks[out.origin].out, out.target);
  if (edges == 0) return fail_at(path, "rank " + std::to_string(out.origin) + " has no edge to rank " + std::to_string(out.target));
  return integer(j[2], path + "[2]", 0, edges - 1, out.nth);
}

bool Reader::loc(const json& j, const std::string& path, int rank, int temps, Loc& out) {
  if (!array(j, path)) return false;
  if (j.size() != 2) return fail_at(path, "a location is [kind, index], got " + show_json_value(j));
  if (!enum_value(j[0], path + "[0]", kLocKinds, out.kind)) return false;
  const RankEdges& e = parts_.topology.ranks[rank];
  const int n = out.kind == LocKind::kSend ? send_blocks(parts_.op, parts_.topology, rank)
                : out.kind == LocKind::kRecv ? static_cast<int>(e.in.size()) : temps;
  if (n == 0) return fail_at(path, "rank " + std::to_string(rank) + " has no " + to_string(out.kind) + " blocks");
  return integer(j[1], path + "[1]", 0, n - 1, out.index);
}

bool Reader::message(const json& j, const std::string& path, const char* peer_key, int rank, int temps, Message& out) {
  if (!object(j, path, {peer_key, "parts"}, {peer_key, "parts"})) return false;
  if (!integer(j[peer_key], path + "." + peer_key, 0, parts_.topology.size() - 1, out.peer)) return false;
  const json& parts = j["parts"];
  if (!array(parts, path + ".parts")) return false;
  total_parts_ += parts.size();
  if (total_parts_ > kMaxParts) return fail_at(path, "more than " + std::to_string(kMaxParts) + " message parts in the plan");
  out.parts.resize(parts.size());
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string at = path + ".parts[" + std::to_string(i) + "]";
    if (!object(parts[i], at, {"block", "at"}, {"block", "at"})) return false;
    if (!block(parts[i]["block"], at + ".block", out.parts[i].block)) return false;
    if (!loc(parts[i]["at"], at + ".at", rank, temps, out.parts[i].loc)) return false;
  }
  return true;
}

bool Reader::phase(const json& j, const std::string& path, int rank, int temps, GraphPhase& out) {
  if (!object(j, path, {"send", "recv", "copies"}, {"send", "recv", "copies"})) return false;
  for (const char* key : {"send", "recv"}) {
    const json& list = j[key];
    if (!array(list, path + "." + key)) return false;
    std::vector<Message>& msgs = std::string(key) == "send" ? out.sends : out.recvs;
    msgs.resize(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string at = path + "." + key + "[" + std::to_string(i) + "]";
      if (!message(list[i], at, std::string(key) == "send" ? "to" : "from", rank, temps, msgs[i])) return false;
    }
  }
  const json& copies = j["copies"];
  if (!array(copies, path + ".copies")) return false;
  out.copies.resize(copies.size());
  for (std::size_t i = 0; i < copies.size(); ++i) {
    const std::string at = path + ".copies[" + std::to_string(i) + "]";
    if (!object(copies[i], at, {"block", "from", "to"}, {"block", "from", "to"})) return false;
    if (!block(copies[i]["block"], at + ".block", out.copies[i].block)) return false;
    if (!loc(copies[i]["from"], at + ".from", rank, temps, out.copies[i].from)) return false;
    if (!loc(copies[i]["to"], at + ".to", rank, temps, out.copies[i].to)) return false;
  }
  return true;
}

bool Reader::schedule(const json& j, const std::string& path, int rank, RankSchedule& out) {
  int r = 0;
  if (!object(j, path, {"rank", "temps", "phases"}, {"rank", "temps", "phases"})) return false;
  if (!integer(j["rank"], path + ".rank", rank, rank, r)) return false;
  if (!array(j["temps"], path + ".temps")) return false;
  out.temps.resize(j["temps"].size());
  total_parts_ += out.temps.size();
  if (total_parts_ > kMaxParts) return fail_at(path + ".temps", "too many temp slots");
  for (std::size_t s = 0; s < out.temps.size(); ++s) {
    if (!block(j["temps"][s], path + ".temps[" + std::to_string(s) + "]", out.temps[s])) return false;
  }
  const json& phases = j["phases"];
  if (!array(phases, path + ".phases")) return false;
  total_parts_ += phases.size();
  if (total_parts_ > kMaxParts) return fail_at(path + ".phases", "too many phases");
  out.phases.resize(phases.size());
  for (std::size_t f = 0; f < phases.size(); ++f) {
    if (!phase(phases[f], path + ".phases[" + std::to_string(f) + "]", rank, static_cast<int>(out.temps.size()), out.phases[f]))
      return false;
  }
  return true;
}

std::optional<GraphPlan> Reader::plan(const json& j) {
  if (!header(j)) return std::nullopt;
  if (!topology(j["topology"], "$.topology") || !grid_fits()) return std::nullopt;
  const json& scheds = j["schedules"];
  if (!array(scheds, "$.schedules")) return std::nullopt;
  const int p = parts_.topology.size();
  if (static_cast<int>(scheds.size()) != p) {
    fail_at("$.schedules", "has " + std::to_string(scheds.size()) + " entries but the topology has " + std::to_string(p) + " ranks");
    return std::nullopt;
  }
  parts_.schedules.resize(p);
  for (int r = 0; r < p; ++r) {
    if (!schedule(scheds[r], "$.schedules[" + std::to_string(r) + "]", r, parts_.schedules[r])) return std::nullopt;
  }
  return GraphPlan(std::move(parts_));
}

}  // namespace

std::string to_json_string(const GraphPlan& plan) { return canonical_text(plan_json(plan)); }

Result<GraphPlan> graph_plan_from_json_string(std::string_view text) {
  Result<json> j = parse_strict_json(text, kMaxDepth);
  if (!j) return fail(j.error());
  Reader reader;
  std::optional<GraphPlan> plan = reader.plan(*j);
  if (!plan) return fail(*reader.error);
  return std::move(*plan);
}

}  // namespace cartplan::ir::graph
