// The `cartplan graph` subcommands: option parsing, the five commands and their text output.
#include "tools/graph_commands.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "backends/sim/graph/graph_sim.h"
#include "engine/cost_model_file.h"
#include "engine/graph/choose.h"
#include "engine/graph/graph_spec.h"
#include "engine/graph/grid.h"
#include "engine/graph/schedule.h"
#include "ir/graph/json.h"
#include "ir/graph/json_print.h"
#include "ir/graph/verify.h"
#include "ir/parse_number.h"
#include "ir/read_file.h"
#include "tools/subcommand.h"

namespace cartplan::tools {
namespace {

namespace g = engine::graph;
namespace ig = ir::graph;

constexpr int kExitOk = 0, kExitWrong = 1, kExitBadInput = 2;

constexpr const char* kUsage = R"(usage:
  cartplan graph plan     --graph GRAPH --op OP [PLAN OPTIONS]        (the chosen plan as JSON)
  cartplan graph explain  --graph GRAPH --op OP [PLAN OPTIONS] [--format text|json]  (every candidate)
  cartplan graph simulate --graph GRAPH --op OP [PLAN OPTIONS] [--format text|json]
  cartplan graph rank     --rank R (--plan FILE | --graph GRAPH --op OP [PLAN OPTIONS])
  cartplan graph verify   FILE.json                                   (FILE "-" reads stdin)

GRAPH: random:p=P,q=Q[,seed=S]   moore:dims=AxB[xC],r=R[,holes=F][,seed=S][,periodic=0|1]
       osu:p=P,d=D,r=R           mesh:cells=AxB[xC],parts=P[,stencil=5|9|7|27]   file:PATH
       (file: an edge list, "ranks P" then one "SRC DST" or "SRC,DST" per line; docs/graphs.md)
OP: allgather alltoall
PLAN OPTIONS: [--algo auto|linear|pairing|cumulative|grid] [--theta N] [--block-bytes N]
              [--grid-dims D[,D...]]  (grid: the virtual grids tried, by dimensions; default 2,3,4,30: 30 is the grid with the most dimensions)
              [--vary SEED] (v forms: every block a pseudo-random size in [0, 2 x block-bytes])
              [--alpha-us A] [--beta-us-per-byte B] [--cost-model FILE]
              [--construction distributed|sequential]  (every rank's messages in one process, or
                                     the same patterns computed over the whole graph: faster)
Defaults: --algo auto (linear unless a combining schedule is predicted 10 % cheaper), --theta 4,
          --block-bytes 8, the built-in cost model. Predictions are the model's, not measurements.
Exit status: 0 ok, 1 verify or simulation found errors, 2 bad input.
)";

using Options = SubOptions;

struct Request {
  ig::Topology topology;
  ig::GraphOp op = ig::GraphOp::kAllgather;
  g::GraphPlanOptions plan;
  std::int64_t block_bytes = 8;
  std::optional<std::uint64_t> vary;
  g::BlockSizes sizes() const {
    return vary ? g::BlockSizes::varied(op, topology, 2 * block_bytes, *vary) : g::BlockSizes::uniform(op, topology, block_bytes);
  }
};

const std::set<std::string> kPlanOptions = {"graph",    "op",       "algo",        "theta",           "block-bytes", "vary",
                                            "alpha-us", "beta-us-per-byte", "cost-model", "construction", "grid-dims"};

Result<engine::CostModel> model_of(const Options& o) {
  engine::CostModel m;
  if (const std::string* f = o.get("cost-model")) {
    Result<engine::CostModel> loaded = engine::load_cost_model(*f);
    if (!loaded) return fail("--cost-model: " + loaded.error());
    m = *loaded;
  }
  for (const char* k : {"alpha-us", "beta-us-per-byte"}) {
    if (const std::string* s = o.get(k)) {
      Result<double> v = parse_nonnegative_double(*s);
      if (!v) return fail(std::string("--") + k + ": " + v.error());
      (std::string(k) == "alpha-us" ? m.alpha_us : m.beta_us_per_byte) = *v;
    }
  }
  return m;
}

Result<g::GraphAlgoChoice> algo_of(const Options& o) {
  const std::string* a = o.get("algo");
  if (!a || *a == "auto") return g::GraphAlgoChoice::kAuto;
  if (*a == "linear") return g::GraphAlgoChoice::kLinear;
  if (*a == "pairing") return g::GraphAlgoChoice::kPairing;
  if (*a == "cumulative") return g::GraphAlgoChoice::kCumulative;
  if (*a == "grid") return g::GraphAlgoChoice::kGrid;
  return fail("--algo: unknown value '" + *a + "' (expected auto, linear, pairing, cumulative or grid)");
}

// "2", "2,3": the grid dimensions to try (1 to kMaxGridD = 30 each, no repeats; 30 is the grid with
// the most dimensions, p's factorization).
Result<std::vector<int>> grid_dims_of(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    Result<int> d = parse_int(item, 1, engine::graph::kMaxGridD);
    if (!d) return fail("--grid-dims: " + d.error());
    if (std::find(out.begin(), out.end(), *d) != out.end()) return fail("--grid-dims: " + item + " is listed twice");
    out.push_back(*d);
  }
  if (out.empty() || text.back() == ',') return fail("--grid-dims: expected a list such as 2,3, got '" + text + "'");
  return out;
}

Result<Request> request_of(const Options& o) {
  for (const char* k : {"graph", "op"}) {
    if (!o.get(k)) return fail(std::string("missing required option --") + k);
  }
  Request r;
  const std::string& op = *o.get("op");
  if (op != "allgather" && op != "alltoall") return fail("--op: unknown value '" + op + "' (expected allgather or alltoall)");
  r.op = op == "allgather" ? ig::GraphOp::kAllgather : ig::GraphOp::kAlltoall;
  Result<g::GraphAlgoChoice> algo = algo_of(o);
  if (!algo) return fail(algo.error());
  r.plan.algo = *algo;
  if (const std::string* s = o.get("theta")) {
    Result<int> t = parse_int(*s, 1, 1 << 20);
    if (!t) return fail("--theta: " + t.error());
    r.plan.pairing.theta = *t;
  }
  if (const std::string* s = o.get("grid-dims")) {
    Result<std::vector<int>> d = grid_dims_of(*s);
    if (!d) return fail(d.error());
    r.plan.grid_dimensions = *d;
  }
  if (const std::string* s = o.get("block-bytes")) {
    Result<std::int64_t> b = parse_integer(*s, 0, std::int64_t{1} << 30);
    if (!b) return fail("--block-bytes: " + b.error());
    r.block_bytes = *b;
  }
  if (const std::string* s = o.get("vary")) {
    Result<std::int64_t> v = parse_integer(*s, 0, INT64_MAX);
    if (!v) return fail("--vary: " + v.error());
    r.vary = static_cast<std::uint64_t>(*v);
  }
  Result<engine::CostModel> m = model_of(o);
  if (!m) return fail(m.error());
  r.plan.model = *m;
  if (const std::string* c = o.get("construction")) {
    if (*c != "distributed" && *c != "sequential") return fail("--construction: unknown value '" + *c + "' (expected distributed or sequential)");
    r.plan.sequential_construction = *c == "sequential";
  }
  Result<ig::Topology> t = g::parse_graph_spec(*o.get("graph"));
  if (!t) return fail("--graph: " + t.error());
  if (auto e = ig::topology_error(*t)) return fail("--graph: " + *e);
  r.topology = std::move(*t);
  return r;
}

std::string fixed(double v, int digits = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

Result<int> cmd_plan(const Options& o) {
  Result<Request> r = request_of(o);
  if (!r) return fail(r.error());
  Result<ig::GraphPlan> plan = g::make_graph_plan(r->op, r->topology, r->sizes(), r->plan);
  if (!plan) return fail(plan.error());
  std::cout << ig::to_json_string(*plan);
  return kExitOk;
}

// "linear", "pairing", "grid 16x16".
std::string candidate_name(const ig::GraphPlan& plan) {
  std::string s = ig::to_string(plan.algorithm());
  for (std::size_t k = 0; k < plan.dims().size(); ++k) s += (k ? "x" : " ") + std::to_string(plan.dims()[k]);
  return s;
}

nlohmann::ordered_json candidates_json(const std::vector<g::GraphCandidate>& cands, std::size_t pick) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < cands.size(); ++i) {
    const g::GraphCandidate& c = cands[i];
    nlohmann::ordered_json j;
    j["algorithm"] = ig::to_string(c.plan.algorithm());
    if (c.plan.algorithm() == ig::GraphAlgorithm::kGrid) j["dims"] = c.plan.dims();
    j["picked"] = i == pick;
    j["max_rank_us"] = c.cost.max_rank_us;
    j["critical_path_us"] = c.cost.critical_path_us;
    j["phases"] = c.cost.phases;
    j["messages"] = c.cost.messages;
    j["max_rank_messages"] = c.cost.max_rank_messages;
    j["bytes"] = c.cost.bytes;
    if (c.setup) {  // built by run_setup (not with --construction sequential)
      j["setup"] = {{"rounds", c.setup->rounds}, {"iterations", c.setup->max_iterations}, {"messages", c.setup->messages},
                    {"bytes", c.setup->bytes}, {"max_rank_messages", c.setup->max_rank_messages}, {"max_rank_bytes", c.setup->max_rank_bytes}};
    }
    list.push_back(std::move(j));
  }
  return list;
}

void print_candidates(const std::vector<g::GraphCandidate>& cands, std::size_t pick) {
  int w = 14;  // the name column: wider for a grid with many dimensions (grid 2x2x2x2x2x2x2x2)
  for (const g::GraphCandidate& c : cands) w = std::max(w, static_cast<int>(candidate_name(c.plan).size()));
  std::printf("  %-*s %12s %12s %7s %10s %10s %12s %7s %12s\n", w, "algorithm", "max rank us", "crit. path", "phases", "messages",
              "max/rank", "bytes", "setup", "setup bytes");
  for (std::size_t i = 0; i < cands.size(); ++i) {
    const g::GraphCandidate& c = cands[i];
    std::printf("%s %-*s %12s %12s %7d %10lld %10lld %12lld %7s %12s\n", i == pick ? "*" : " ", w, candidate_name(c.plan).c_str(),
                fixed(c.cost.max_rank_us).c_str(), fixed(c.cost.critical_path_us).c_str(), c.cost.phases,
                static_cast<long long>(c.cost.messages), static_cast<long long>(c.cost.max_rank_messages), static_cast<long long>(c.cost.bytes),
                c.setup ? std::to_string(c.setup->rounds).c_str() : "-", c.setup ? std::to_string(c.setup->bytes).c_str() : "-");
  }
}

Result<int> cmd_explain(const Options& o) {
  Result<Request> r = request_of(o);
  if (!r) return fail(r.error());
  const std::string format = o.get("format") ? *o.get("format") : "text";
  if (format != "text" && format != "json") return fail("--format: unknown value '" + format + "' (expected text or json)");
  const g::BlockSizes sizes = r->sizes();
  Result<std::vector<g::GraphCandidate>> cands = g::graph_candidates(r->op, r->topology, sizes, r->plan);
  if (!cands) return fail(cands.error());
  const std::size_t pick = g::pick_graph_candidate(*cands);
  if (format == "json") {
    nlohmann::ordered_json j;
    j["schema"] = "cartplan.graph_explain/1";
    j["op"] = ig::to_string(r->op);
    j["graph"] = *o.get("graph");
    j["ranks"] = r->topology.size();
    j["edges"] = r->topology.edges();
    j["mean_block_bytes"] = sizes.mean_bytes();
    j["candidates"] = candidates_json(*cands, pick);
    std::cout << ig::canonical_text(j);
    return kExitOk;
  }
  std::cout << ig::to_string(r->op) << " on " << *o.get("graph") << ": " << r->topology.size() << " ranks, " << r->topology.edges()
            << " edges, mean block " << fixed(sizes.mean_bytes(), 1) << " B (model predictions, not measurements)\n";
  std::cout.flush();
  print_candidates(*cands, pick);
  std::fflush(stdout);
  std::cout << "* picked: linear unless a combining schedule is predicted at least 10 % cheaper (max rank us)\n";
  return kExitOk;
}

Result<ig::GraphPlan> read_plan(const std::string& path) { return read_plan_file(path, &ig::graph_plan_from_json_string); }

Result<int> cmd_verify(const Options& o) {
  if (o.positional.empty()) return fail("verify needs a plan file (or - for stdin)");
  Result<ig::GraphPlan> plan = read_plan(o.positional[0]);
  if (!plan) return fail(plan.error());
  const std::vector<std::string> errors = ig::verify(*plan);
  for (const std::string& e : errors) std::cerr << "cartplan graph verify: " << e << "\n";
  if (!errors.empty()) return kExitWrong;
  std::cout << "ok: " << ig::to_string(plan->algorithm()) << " " << ig::to_string(plan->op()) << " on " << plan->size()
            << " ranks delivers every block exactly once\n";
  return kExitOk;
}

Result<int> cmd_simulate(const Options& o) {
  Result<Request> r = request_of(o);
  if (!r) return fail(r.error());
  const std::string format = o.get("format") ? *o.get("format") : "text";
  if (format != "text" && format != "json") return fail("--format: unknown value '" + format + "' (expected text or json)");
  const g::BlockSizes sizes = r->sizes();
  Result<ig::GraphPlan> plan = g::make_graph_plan(r->op, r->topology, sizes, r->plan);
  if (!plan) return fail(plan.error());
  sim::graph::GraphSimOptions so;
  so.model = r->plan.model;
  Result<sim::graph::GraphSimReport> rep = sim::graph::simulate_graph(*plan, sizes, so);
  if (!rep) return fail(rep.error());
  if (format == "json") {
    nlohmann::ordered_json j;
    j["schema"] = "cartplan.graph_sim/1";
    j["op"] = ig::to_string(plan->op());
    j["algorithm"] = ig::to_string(plan->algorithm());
    j["ranks"] = rep->ranks;
    j["ok"] = rep->ok;
    j["errors"] = rep->errors;
    j["messages"] = rep->messages;
    j["bytes"] = rep->bytes;
    j["max_rank_messages"] = rep->max_rank_messages;
    j["max_rank_bytes"] = rep->max_rank_bytes;
    j["phases"] = rep->phases;
    j["predicted_max_rank_us"] = rep->cost.max_rank_us;
    j["predicted_critical_path_us"] = rep->cost.critical_path_us;
    std::cout << ig::canonical_text(j);
  } else {
    std::cout << (rep->ok ? "ok" : "WRONG") << ": " << ig::to_string(plan->algorithm()) << " " << ig::to_string(plan->op()) << " on "
              << rep->ranks << " ranks, " << rep->phases << " phases, " << rep->messages << " messages, " << rep->bytes << " bytes\n"
              << "busiest rank: " << rep->max_rank_messages << " messages, " << rep->max_rank_bytes << " bytes sent and received\n"
              << "model: " << fixed(rep->cost.max_rank_us) << " us (max over ranks), " << fixed(rep->cost.critical_path_us)
              << " us (critical path)\n";
    for (const std::string& e : rep->errors) std::cerr << "cartplan graph simulate: " << e << "\n";
  }
  return rep->ok ? kExitOk : kExitWrong;
}

std::string parts_text(const std::vector<ig::Part>& parts) {
  std::string s;
  for (const ig::Part& p : parts) s += " " + ig::to_string(p.block) + "@" + ig::to_string(p.loc);
  return s;
}

std::string ranks_text(const std::vector<int>& list) {
  std::string s = "[";
  for (std::size_t i = 0; i < list.size(); ++i) s += (i ? " " : "") + std::to_string(list[i]);
  return s + "]";
}

void print_rank(const ig::GraphPlan& plan, int rank) {
  const ig::RankSchedule& s = plan.schedule(rank);
  std::cout << "rank " << rank << " of " << plan.size() << ": " << ig::to_string(plan.algorithm()) << " " << ig::to_string(plan.op());
  if (plan.algorithm() == ig::GraphAlgorithm::kGrid) std::cout << ", virtual " << candidate_name(plan).substr(5) << " grid";
  else if (plan.algorithm() != ig::GraphAlgorithm::kLinear) std::cout << ", theta " << plan.theta();
  std::cout << "\n  out " << ranks_text(plan.topology().ranks[rank].out) << "\n  in  " << ranks_text(plan.topology().ranks[rank].in) << "\n";
  if (!s.temps.empty()) {
    std::cout << "  temps:";
    for (std::size_t t = 0; t < s.temps.size(); ++t) std::cout << " temp[" << t << "]=" << ig::to_string(s.temps[t]);
    std::cout << "\n";
  }
  for (std::size_t f = 0; f < s.phases.size(); ++f) {
    const ig::GraphPhase& ph = s.phases[f];
    std::cout << "phase " << f << (ph.sends.empty() && ph.recvs.empty() && ph.copies.empty() ? ": (nothing)\n" : ":\n");
    for (const ig::Message& m : ph.sends) std::cout << "  send to   " << m.peer << ":" << parts_text(m.parts) << "\n";
    for (const ig::Message& m : ph.recvs) std::cout << "  recv from " << m.peer << ":" << parts_text(m.parts) << "\n";
    for (const ig::Copy& c : ph.copies)
      std::cout << "  copy " << ig::to_string(c.block) << " " << ig::to_string(c.from) << " -> " << ig::to_string(c.to) << "\n";
  }
}

Result<int> cmd_rank(const Options& o) {
  if (!o.get("rank")) return fail("missing required option --rank");
  std::optional<ig::GraphPlan> plan;
  if (const std::string* f = o.get("plan")) {
    for (const std::string& k : kPlanOptions) {
      if (o.get(k)) return fail("--plan and --" + k + " exclude each other");
    }
    Result<ig::GraphPlan> p = read_plan(*f);
    if (!p) return fail(p.error());
    plan = std::move(*p);
  } else {
    Result<Request> r = request_of(o);
    if (!r) return fail(r.error());
    Result<ig::GraphPlan> p = g::make_graph_plan(r->op, r->topology, r->sizes(), r->plan);
    if (!p) return fail(p.error());
    plan = std::move(*p);
  }
  Result<int> rank = parse_int(*o.get("rank"), 0, plan->size() - 1);
  if (!rank) return fail("--rank: " + rank.error());
  print_rank(*plan, *rank);
  return kExitOk;
}

}  // namespace

int run_graph_command(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::cerr << kUsage;
    return kExitBadInput;
  }
  const std::string& command = args[0];
  if (command == "help" || command == "--help") {
    std::cout << kUsage;
    return kExitOk;
  }
  std::set<std::string> allowed = kPlanOptions;
  std::size_t positional = 0;
  Result<int> (*handler)(const Options&) = nullptr;
  if (command == "plan") handler = cmd_plan;
  else if (command == "explain") handler = cmd_explain, allowed.insert("format");
  else if (command == "simulate") handler = cmd_simulate, allowed.insert("format");
  else if (command == "rank") handler = cmd_rank, allowed.insert({"rank", "plan"});
  else if (command == "verify") handler = cmd_verify, allowed.clear(), positional = 1;
  else {
    std::cerr << "cartplan: graph: unknown subcommand '" << command << "' (expected plan, explain, verify, simulate, rank or help)\n";
    return kExitBadInput;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (rest.size() == 1 && rest[0] == "--help") {
    std::cout << kUsage;
    return kExitOk;
  }
  Result<Options> options = parse_sub_options(rest, allowed, positional);
  return finish_subcommand("graph " + command, options ? handler(*options) : Result<int>(fail(options.error())));
}

}  // namespace cartplan::tools
