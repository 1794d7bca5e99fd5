// JSON form of a plan: canonical printer and strict, non-throwing parser (schemas cartplan.plan/1, /2 and /3).
#include "ir/json.h"

#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/json_strict.h"

namespace cartplan::ir {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// Limits that keep a hostile file from costing more than its own size suggests (and keep int
// arithmetic on counts safe). Real plans are far below them.
constexpr std::size_t kMaxNeighbors = std::size_t{1} << 20;
constexpr std::size_t kMaxEntries = std::size_t{1} << 24;  // send+recv entries over all rounds;
                                                            // also caps rounds, slots and copies
constexpr int kMaxDepth = 64;

// ---------------------------------------------------------------------------------------------
// Printing

ordered_json offset_json(const Offset& o) {
  ordered_json a = ordered_json::array();
  for (int c : o) a.push_back(c);
  return a;
}

ordered_json ref_json(const BufRef& r) {
  ordered_json o = ordered_json::object();
  o["buf"] = to_string(r.kind);
  o[r.kind == BufKind::kTemp ? "slot" : "block"] = r.index;
  if (r.reduce) o["reduce"] = true;
  return o;
}

ordered_json refs_json(const std::vector<BufRef>& refs) {
  ordered_json a = ordered_json::array();
  for (const BufRef& r : refs) a.push_back(ref_json(r));
  return a;
}

ordered_json copies_json(const std::vector<Copy>& copies) {
  ordered_json a = ordered_json::array();
  for (const Copy& c : copies) {
    ordered_json o = ordered_json::object();
    o["from"] = ref_json(c.from);
    o["to"] = ref_json(c.to);
    a.push_back(std::move(o));
  }
  return a;
}

ordered_json cost_json(const CostInfo& c) {
  ordered_json o = ordered_json::object();
  o["alpha_us"] = c.alpha_us;
  o["beta_us_per_byte"] = c.beta_us_per_byte;
  o["block_bytes"] = c.block_bytes;
  o["combining_rounds"] = c.combining_rounds;
  o["combining_volume"] = c.combining_volume;
  o["direct_us"] = c.direct_us;
  o["combining_us"] = c.combining_us;
  return o;
}

ordered_json temp_slots_json(const std::vector<TempSlot>& slots) {
  ordered_json a = ordered_json::array();
  for (const TempSlot& s : slots) {
    ordered_json o = ordered_json::object();
    o["shape_of"] = s.shape_of;
    a.push_back(std::move(o));
  }
  return a;
}

// A phase; its "copies" list exists from schema version 2 on.
ordered_json phase_json(const Phase& ph, int version) {
  ordered_json rounds = ordered_json::array();
  for (const Round& r : ph.rounds) {
    ordered_json o = ordered_json::object();
    o["shift"] = offset_json(r.shift);
    o["tag"] = r.tag;
    o["send"] = refs_json(r.send);
    o["recv"] = refs_json(r.recv);
    rounds.push_back(std::move(o));
  }
  ordered_json o = ordered_json::object();
  o["dim"] = ph.dim;
  o["rounds"] = std::move(rounds);
  if (version >= 2) o["copies"] = copies_json(ph.copies);
  return o;
}

ordered_json stats_json(const Stats& s) {
  ordered_json st = ordered_json::object();
  st["t"] = s.t;
  st["rounds"] = s.rounds;
  st["volume"] = s.volume;
  st["phase_rounds"] = s.phase_rounds;
  st["cutoff_ratio"] = s.cutoff_ratio ? ordered_json(*s.cutoff_ratio) : ordered_json(nullptr);
  st["cost"] = s.cost ? cost_json(*s.cost) : ordered_json(nullptr);
  if (s.cost) {
    ordered_json pred = ordered_json::object();
    pred["direct"] = s.cost->direct_us;
    pred["combining"] = s.cost->combining_us;
    st["predicted_us"] = std::move(pred);
  } else {
    st["predicted_us"] = nullptr;
  }
  return st;
}

bool is_container(const ordered_json& j) { return j.is_array() || j.is_object(); }

// A container holding only scalars.
bool is_flat(const ordered_json& j) {
  if (!is_container(j)) return false;
  for (const auto& v : j) {
    if (is_container(v)) return false;
  }
  return true;
}

// An object whose values are all non-empty flat objects: in a plan that is exactly a copy
// ({"from": {...}, "to": {...}}), which reads best as one line.
bool is_object_of_flat_objects(const ordered_json& j) {
  if (!j.is_object() || j.empty()) return false;
  for (const auto& v : j) {
    if (!v.is_object() || v.empty() || !is_flat(v)) return false;
  }
  return true;
}

std::string key_text(const std::string& key) { return json(key).dump(); }

void print_inline(const ordered_json& j, std::string& out) {
  if (j.is_array()) {
    out += '[';
    bool first = true;
    for (const auto& v : j) {
      if (!first) out += ", ";
      first = false;
      print_inline(v, out);
    }
    out += ']';
  } else if (j.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [k, v] : j.items()) {
      if (!first) out += ", ";
      first = false;
      out += key_text(k);
      out += ": ";
      print_inline(v, out);
    }
    out += '}';
  } else {
    // nlohmann prints doubles in shortest round-trip form, which keeps print->parse->print exact.
    out += j.dump();
  }
}

// Canonical layout rule: scalars, empty containers, flat containers (only scalars inside) and
// objects of flat objects (copies) go on one line with ", " and ": " separators; every other
// container puts one member per line, indented two spaces per level. So offsets, shifts,
// dim_order, phase_rounds, buffer references, temp slots, copies, cost and predicted_us are
// single lines, while lists of them (neighborhood, send/recv lists, ...) have one item per line.
void print_canonical(const ordered_json& j, int indent, std::string& out) {
  if (!is_container(j) || j.empty() || is_flat(j) || is_object_of_flat_objects(j)) {
    print_inline(j, out);
    return;
  }
  const std::string inner(static_cast<std::size_t>(indent + 2), ' ');
  const bool array = j.is_array();
  out += array ? "[\n" : "{\n";
  bool first = true;
  for (const auto& [k, v] : j.items()) {
    if (!first) out += ",\n";
    first = false;
    out += inner;
    if (!array) {
      out += key_text(k);
      out += ": ";
    }
    print_canonical(v, indent + 2, out);
  }
  out += '\n';
  out.append(static_cast<std::size_t>(indent), ' ');
  out += array ? ']' : '}';
}

// ---------------------------------------------------------------------------------------------
// Parsing

// A JSON path as a chain of stack frames, turned into text only when an error is reported, so
// reading millions of entries costs no string building. A step points at its parent, so a
// Path must not outlive the Path it was made from (name a step before deriving from it).
struct Path {
  const Path* parent = nullptr;
  const char* field = nullptr;  // ".field" step when set, else "[index]" step (root: no parent)
  std::size_t index = 0;

  Path operator/(const char* f) const { return Path{this, f, 0}; }
  Path operator[](std::size_t i) const { return Path{this, nullptr, i}; }

  std::string str() const {
    if (!parent) return "$";
    std::string s = parent->str();
    if (field) return s + "." + field;
    return s + "[" + std::to_string(index) + "]";
  }
};

std::string type_of(const json& j) {
  if (j.is_number_integer()) return "integer";
  return j.type_name();
}

// Reads a plan, stopping at the first error. Each reader returns false after recording an
// error whose text starts with the JSON path of the offending value.
class Reader {
 public:
  Result<Plan> read(const json& root) {
    PlanParts parts;
    if (!read_plan(root, Path{}, parts)) return fail(std::move(error_));
    return Plan(std::move(parts));
  }

 private:
  bool error(const Path& p, const std::string& msg) {
    error_ = p.str() + ": " + msg;
    return false;
  }

  // j must be an object whose keys are exactly `fields`. Unknown keys are reported before
  // missing ones so a misspelt field is named as such rather than as the missing one.
  bool object(const json& j, const Path& p, std::initializer_list<const char*> fields) {
    if (!j.is_object()) return error(p, "expected an object, got " + type_of(j));
    for (const auto& [k, v] : j.items()) {
      bool known = false;
      for (const char* f : fields) known = known || k == f;
      if (!known) return error(p, "unknown field " + quote_json_text(k));
    }
    for (const char* f : fields) {
      if (!j.contains(f)) return error(p, std::string("missing field '") + f + "'");
    }
    return true;
  }

  bool array(const json& j, const Path& p, std::size_t max_size) {
    if (!j.is_array()) return error(p, "expected an array, got " + type_of(j));
    if (j.size() > max_size) {
      return error(p, std::to_string(j.size()) + " entries exceed the limit of " +
                          std::to_string(max_size));
    }
    return true;
  }

  // Any JSON number with an integral value in [lo, hi]; 5.0 and 1e2 count as integers because
  // JSON does not distinguish them, 2.5 does not.
  bool integer(const json& j, const Path& p, std::int64_t lo, std::int64_t hi, std::int64_t& out) {
    auto out_of_range = [&] {
      return error(p, show_json_value(j) + " out of range [" + std::to_string(lo) + ", " +
                          std::to_string(hi) + "]");
    };
    if (j.is_number_unsigned()) {
      const std::uint64_t u = j.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(hi)) return out_of_range();
      out = static_cast<std::int64_t>(u);
    } else if (j.is_number_integer()) {
      out = j.get<std::int64_t>();
    } else if (j.is_number_float()) {
      const double d = j.get<double>();
      if (!std::isfinite(d) || std::trunc(d) != d) {
        return error(p, "expected an integer, got number " + show_json_value(j));
      }
      // 2^63 is exact as a double; anything at or beyond it cannot be an int64.
      if (d < -9223372036854775808.0 || d >= 9223372036854775808.0) return out_of_range();
      out = static_cast<std::int64_t>(d);
    } else {
      return error(p, "expected an integer, got " + type_of(j));
    }
    if (out < lo || out > hi) return out_of_range();
    return true;
  }

  bool integer(const json& j, const Path& p, int lo, int hi, int& out) {
    std::int64_t v = 0;
    if (!integer(j, p, std::int64_t{lo}, std::int64_t{hi}, v)) return false;
    out = static_cast<int>(v);
    return true;
  }

  bool any_int(const json& j, const Path& p, int& out) {
    return integer(j, p, std::numeric_limits<int>::min(), std::numeric_limits<int>::max(), out);
  }

  bool count(const json& j, const Path& p, int& out) {
    return integer(j, p, 0, std::numeric_limits<int>::max(), out);
  }

  bool number(const json& j, const Path& p, double& out) {
    if (!j.is_number()) return error(p, "expected a number, got " + type_of(j));
    out = j.get<double>();
    return true;
  }

  // One of `names` (as written in JSON); `expected` lists them for the message.
  bool name(const json& j, const Path& p, std::initializer_list<const char*> names,
            const char* expected, int& out) {
    if (!j.is_string()) return error(p, "expected a string, got " + type_of(j));
    const std::string& s = j.get_ref<const std::string&>();
    int i = 0;
    for (const char* n : names) {
      if (s == n) {
        out = i;
        return true;
      }
      ++i;
    }
    return error(p, "unknown value " + quote_json_text(s) + " (expected " + expected + ")");
  }

  bool offset(const json& j, const Path& p, Offset& out) {
    if (!array(j, p, static_cast<std::size_t>(kMaxDims))) return false;
    if (j.size() != static_cast<std::size_t>(ndims_)) {
      return error(p, "expected " + std::to_string(ndims_) + " coordinates (ndims), got " +
                          std::to_string(j.size()));
    }
    out.resize(j.size());
    for (std::size_t k = 0; k < j.size(); ++k) {
      if (!any_int(j[k], p[k], out[k])) return false;
    }
    return true;
  }

  // A buffer reference; the index must address an existing block or slot. `write`: a position
  // that is written (recv entry, copy target), where schema 2 allows "reduce": true.
  bool ref(const json& j, const Path& p, BufRef& out, bool write) {
    if (!j.is_object()) return error(p, "expected an object, got " + type_of(j));
    const auto buf = j.find("buf");
    if (buf == j.end()) return error(p, "missing field 'buf'");
    int kind = 0;
    if (!name(*buf, p / "buf", {"send", "recv", "temp"}, "send, recv or temp", kind)) return false;
    out.kind = static_cast<BufKind>(kind);
    const char* key = out.kind == BufKind::kTemp ? "slot" : "block";
    if (j.contains("reduce")) {
      const Path rp = p / "reduce";
      if (version_ < 2) return error(rp, "unknown field 'reduce' (reduce entries need schema " + std::string(kPlanSchemaV2) + ")");
      if (!write) return error(rp, "only written entries (recv entries, copy targets) can reduce");
      if (!j["reduce"].is_boolean()) return error(rp, "expected true, got " + type_of(j["reduce"]));
      if (!j["reduce"].get<bool>()) return error(rp, "must be true when present (omit it for an overwrite)");
      if (!object(j, p, {"buf", key, "reduce"})) return false;
      out.reduce = true;
    } else if (!object(j, p, {"buf", key})) {
      return false;
    }
    const Path ip = p / key;
    if (!any_int(j[key], ip, out.index)) return false;
    int limit = 0;
    std::string what;
    switch (out.kind) {
      case BufKind::kSend:
        if (!personalized_send(op_)) {
          if (out.index != 0) {
            return error(ip, std::string(to_string(op_)) + " send buffer has one block, got block " +
                                 std::to_string(out.index) + " (expected 0)");
          }
          return true;
        }
        limit = num_blocks_;
        what = "neighborhood has " + std::to_string(num_blocks_) + " entries";
        break;
      case BufKind::kRecv:
        if (one_recv_block(op_)) {
          if (out.index != 0) {
            return error(ip, std::string(to_string(op_)) + " recv buffer has one block, got block " +
                                 std::to_string(out.index) + " (expected 0)");
          }
          return true;
        }
        limit = num_blocks_;
        what = "neighborhood has " + std::to_string(num_blocks_) + " entries";
        break;
      case BufKind::kTemp:
        limit = num_slots_;
        what = std::to_string(num_slots_) + " temp slots";
        break;
    }
    if (out.index < 0 || out.index >= limit) {
      return error(ip, (out.kind == BufKind::kTemp ? "slot " : "block ") +
                           std::to_string(out.index) + " out of range (" + what + ")");
    }
    return true;
  }

  bool refs(const json& j, const Path& p, std::vector<BufRef>& out, bool write) {
    if (!array(j, p, kMaxEntries)) return false;
    entries_ += j.size();
    if (entries_ > kMaxEntries) {
      return error(p, "more than " + std::to_string(kMaxEntries) + " send/recv entries in all rounds");
    }
    out.resize(j.size());
    for (std::size_t i = 0; i < j.size(); ++i) {
      if (!ref(j[i], p[i], out[i], write)) return false;
    }
    return true;
  }

  bool copies(const json& j, const Path& p, std::vector<Copy>& out) {
    if (!array(j, p, kMaxEntries)) return false;
    entries_ += j.size();
    if (entries_ > kMaxEntries) {
      return error(p, "more than " + std::to_string(kMaxEntries) + " entries and copies in all");
    }
    out.resize(j.size());
    for (std::size_t i = 0; i < j.size(); ++i) {
      const Path cp = p[i];
      if (!object(j[i], cp, {"from", "to"})) return false;
      if (!ref(j[i]["from"], cp / "from", out[i].from, false)) return false;
      if (!ref(j[i]["to"], cp / "to", out[i].to, true)) return false;
    }
    return true;
  }

  bool round(const json& j, const Path& p, Round& out) {
    if (!object(j, p, {"shift", "tag", "send", "recv"})) return false;
    if (!offset(j["shift"], p / "shift", out.shift)) return false;
    if (!count(j["tag"], p / "tag", out.tag)) return false;
    if (!refs(j["send"], p / "send", out.send, false)) return false;
    return refs(j["recv"], p / "recv", out.recv, true);
  }

  bool phase(const json& j, const Path& p, Phase& out) {
    if (version_ >= 2) {
      if (!object(j, p, {"dim", "rounds", "copies"})) return false;
    } else if (!object(j, p, {"dim", "rounds"})) {
      return false;
    }
    const Path dp = p / "dim";
    if (!any_int(j["dim"], dp, out.dim)) return false;
    if (out.dim != Phase::kAllDims && (out.dim < 0 || out.dim >= ndims_)) {
      return error(dp, "dimension " + std::to_string(out.dim) + " out of range (expected -1 or 0.." +
                           std::to_string(ndims_ - 1) + ")");
    }
    const json& rounds = j["rounds"];
    const Path rp = p / "rounds";
    if (!array(rounds, rp, kMaxEntries)) return false;
    num_rounds_ += rounds.size();
    if (num_rounds_ > kMaxEntries) {
      return error(rp, "more than " + std::to_string(kMaxEntries) + " rounds in all phases");
    }
    out.rounds.resize(rounds.size());
    for (std::size_t i = 0; i < rounds.size(); ++i) {
      if (!round(rounds[i], rp[i], out.rounds[i])) return false;
    }
    if (version_ >= 2) return copies(j["copies"], p / "copies", out.copies);
    return true;
  }

  bool dim_order(const json& j, const Path& p, std::vector<int>& out) {
    if (!array(j, p, static_cast<std::size_t>(kMaxDims))) return false;
    if (j.size() != static_cast<std::size_t>(ndims_)) {
      return error(p, "expected a permutation of 0.." + std::to_string(ndims_ - 1) + ", got " +
                          std::to_string(j.size()) + " entries");
    }
    std::vector<bool> seen(j.size(), false);
    out.resize(j.size());
    for (std::size_t k = 0; k < j.size(); ++k) {
      if (!any_int(j[k], p[k], out[k])) return false;
      if (out[k] < 0 || out[k] >= ndims_) {
        return error(p[k], "dimension " + std::to_string(out[k]) + " out of range (expected 0.." +
                               std::to_string(ndims_ - 1) + ")");
      }
      if (seen[out[k]]) {
        return error(p[k], "dimension " + std::to_string(out[k]) +
                               " appears twice (dim_order must be a permutation)");
      }
      seen[out[k]] = true;
    }
    return true;
  }

  bool cost(const json& j, const Path& p, CostInfo& out) {
    if (!object(j, p, {"alpha_us", "beta_us_per_byte", "block_bytes", "combining_rounds",
                       "combining_volume", "direct_us", "combining_us"})) {
      return false;
    }
    return number(j["alpha_us"], p / "alpha_us", out.alpha_us) &&
           number(j["beta_us_per_byte"], p / "beta_us_per_byte", out.beta_us_per_byte) &&
           integer(j["block_bytes"], p / "block_bytes", std::int64_t{0},
                   std::numeric_limits<std::int64_t>::max(), out.block_bytes) &&
           count(j["combining_rounds"], p / "combining_rounds", out.combining_rounds) &&
           count(j["combining_volume"], p / "combining_volume", out.combining_volume) &&
           number(j["direct_us"], p / "direct_us", out.direct_us) &&
           number(j["combining_us"], p / "combining_us", out.combining_us);
  }

  // predicted_us is printed for readers of the contract but carries no information of its own;
  // it must repeat cost exactly so an edited file cannot say two different things.
  bool predicted(const json& j, const Path& p, const std::optional<CostInfo>& c) {
    if (j.is_null()) {
      if (c) return error(p, "is null but cost is set (expected direct and combining from cost)");
      return true;
    }
    if (!c) return error(p, "must be null when cost is null");
    if (!object(j, p, {"direct", "combining"})) return false;
    double direct = 0, combining = 0;
    if (!number(j["direct"], p / "direct", direct)) return false;
    if (!number(j["combining"], p / "combining", combining)) return false;
    if (direct != c->direct_us) {
      return error(p / "direct", show_json_value(j["direct"]) + " does not match cost.direct_us " +
                                     show_json_value(json(c->direct_us)));
    }
    if (combining != c->combining_us) {
      return error(p / "combining", show_json_value(j["combining"]) + " does not match cost.combining_us " +
                                        show_json_value(json(c->combining_us)));
    }
    return true;
  }

  bool stats(const json& j, const Path& p, Stats& out) {
    if (!object(j, p, {"t", "rounds", "volume", "phase_rounds", "cutoff_ratio", "cost",
                       "predicted_us"})) {
      return false;
    }
    if (!count(j["t"], p / "t", out.t)) return false;
    if (!count(j["rounds"], p / "rounds", out.rounds)) return false;
    if (!count(j["volume"], p / "volume", out.volume)) return false;
    const json& pr = j["phase_rounds"];
    const Path prp = p / "phase_rounds";
    if (!array(pr, prp, kMaxEntries)) return false;
    out.phase_rounds.resize(pr.size());
    for (std::size_t i = 0; i < pr.size(); ++i) {
      if (!count(pr[i], prp[i], out.phase_rounds[i])) return false;
    }
    const json& cr = j["cutoff_ratio"];
    if (!cr.is_null()) {
      double r = 0;
      if (!number(cr, p / "cutoff_ratio", r)) return false;
      out.cutoff_ratio = r;
    }
    const json& c = j["cost"];
    if (!c.is_null()) {
      CostInfo info;
      if (!cost(c, p / "cost", info)) return false;
      out.cost = info;
    }
    return predicted(j["predicted_us"], p / "predicted_us", out.cost);
  }

  // The schema decides which fields exist, so it is checked before anything else.
  bool schema(const json& j, const Path& p) {
    const auto schema = j.find("schema");
    if (schema == j.end()) return error(p, "missing field 'schema'");
    if (!schema->is_string()) return error(p / "schema", "expected a string, got " + type_of(*schema));
    const std::string& version = schema->get_ref<const std::string&>();
    if (version == kPlanSchema) {
      version_ = 1;
    } else if (version == kPlanSchemaV2) {
      version_ = 2;
    } else if (version == kPlanSchemaV3) {
      version_ = 3;
    } else {
      return error(p / "schema", "unsupported schema " + quote_json_text(schema->get<std::string>()) + " (expected " +
                                     kPlanSchema + ", " + kPlanSchemaV2 + " or " + kPlanSchemaV3 + ")");
    }
    return true;
  }

  bool op(const json& j, const Path& p, Op& out) {
    int v = 0;
    if (version_ == 1) {
      if (!name(j, p, {"alltoall", "allgather"},
                "alltoall or allgather; reduction and rooted ops need schema cartplan.plan/2", v))
        return false;
    } else if (!name(j, p, {"alltoall", "allgather", "allreduce", "reduce_scatter", "bcast", "gather", "scatter", "reduce"},
                     "alltoall, allgather, allreduce, reduce_scatter, bcast, gather, scatter or reduce", v)) {
      return false;
    }
    out = op_ = static_cast<Op>(v);
    return true;
  }

  // The plan's kind. Schemas 1 and 2 name direct and combining plans only (a file they wrote
  // for a log-round or hybrid plan says "combining", and is read as such).
  bool kind(const json& j, const Path& p, PlanKind& out) {
    int v = 0;
    if (version_ < 3) {
      if (!name(j, p, {"direct", "combining"},
                "direct or combining; log-round and hybrid plans need schema cartplan.plan/3", v))
        return false;
    } else if (!name(j, p, {"direct", "combining", "log-round", "hybrid"}, "direct, combining, log-round or hybrid", v)) {
      return false;
    }
    out = static_cast<PlanKind>(v);
    return true;
  }

  bool neighborhood(const json& nbh, const Path& np, std::vector<Offset>& out) {
    if (!array(nbh, np, kMaxNeighbors)) return false;
    out.resize(nbh.size());
    for (std::size_t i = 0; i < nbh.size(); ++i) {
      if (!offset(nbh[i], np[i], out[i])) return false;
    }
    num_blocks_ = static_cast<int>(nbh.size());
    return true;
  }

  bool temp_slots(const json& slots, const Path& sp, std::vector<TempSlot>& out) {
    if (!array(slots, sp, kMaxEntries)) return false;
    out.resize(slots.size());
    for (std::size_t k = 0; k < slots.size(); ++k) {
      const Path slot = sp[k];
      if (!object(slots[k], slot, {"shape_of"})) return false;
      const Path shp = slot / "shape_of";
      int& b = out[k].shape_of;
      if (!any_int(slots[k]["shape_of"], shp, b)) return false;
      if (b < 0 || b >= num_blocks_) {
        return error(shp, "block " + std::to_string(b) + " out of range (neighborhood has " +
                              std::to_string(num_blocks_) + " entries)");
      }
    }
    num_slots_ = static_cast<int>(slots.size());
    return true;
  }

  bool phases(const json& phases, const Path& pp, std::vector<Phase>& out) {
    if (!array(phases, pp, kMaxEntries)) return false;
    out.resize(phases.size());
    for (std::size_t i = 0; i < phases.size(); ++i) {
      if (!phase(phases[i], pp[i], out[i])) return false;
    }
    return true;
  }

  bool read_plan(const json& j, const Path& p, PlanParts& out) {
    if (!j.is_object()) return error(p, "expected an object, got " + type_of(j));
    if (!schema(j, p)) return false;
    if (!object(j, p, {"schema", "op", "algorithm", "ndims", "neighborhood", "dim_order",
                       "temp_slots", "phases", "copies", "stats"})) {
      return false;
    }
    if (!op(j["op"], p / "op", out.op)) return false;
    if (!kind(j["algorithm"], p / "algorithm", out.kind)) return false;
    if (!integer(j["ndims"], p / "ndims", 1, kMaxDims, out.ndims)) return false;
    ndims_ = out.ndims;
    if (!neighborhood(j["neighborhood"], p / "neighborhood", out.neighborhood)) return false;
    if (!dim_order(j["dim_order"], p / "dim_order", out.dim_order)) return false;
    if (!temp_slots(j["temp_slots"], p / "temp_slots", out.temp_slots)) return false;
    if (!phases(j["phases"], p / "phases", out.phases)) return false;
    if (!copies(j["copies"], p / "copies", out.copies)) return false;
    return stats(j["stats"], p / "stats", out.stats);
  }

  std::string error_;
  int version_ = 1;
  Op op_ = Op::kAlltoall;
  int ndims_ = 0;
  int num_blocks_ = 0;
  int num_slots_ = 0;
  std::size_t entries_ = 0;
  std::size_t num_rounds_ = 0;
};

}  // namespace

ordered_json to_json(const Plan& plan) {
  ordered_json j = ordered_json::object();
  const int version = min_schema_version(plan);
  j["schema"] = version == 1 ? kPlanSchema : version == 2 ? kPlanSchemaV2 : kPlanSchemaV3;
  j["op"] = to_string(plan.op());
  j["algorithm"] = to_string(plan.kind());
  j["ndims"] = plan.ndims();
  ordered_json nbh = ordered_json::array();
  for (const Offset& o : plan.neighborhood()) nbh.push_back(offset_json(o));
  j["neighborhood"] = std::move(nbh);
  j["dim_order"] = plan.dim_order();
  j["temp_slots"] = temp_slots_json(plan.temp_slots());
  ordered_json phases = ordered_json::array();
  for (const Phase& ph : plan.phases()) phases.push_back(phase_json(ph, version));
  j["phases"] = std::move(phases);
  j["copies"] = copies_json(plan.copies());
  j["stats"] = stats_json(plan.stats());
  return j;
}

std::string to_json_string(const Plan& plan) {
  std::string out;
  print_canonical(to_json(plan), 0, out);
  out += '\n';
  return out;
}

Result<Plan> plan_from_json(const json& j) {
  // The reader itself only throws on allocation failure; that still must not escape a parser
  // that promises to report problems as errors.
  try {
    return Reader().read(j);
  } catch (const std::exception& e) {
    return fail(std::string("$: cannot read plan: ") + e.what());
  }
}

Result<Plan> plan_from_json_string(std::string_view text) {
  Result<json> j = parse_strict_json(text, kMaxDepth);
  if (!j) return fail(j.error());
  return plan_from_json(*j);
}

}  // namespace cartplan::ir
