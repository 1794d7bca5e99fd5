// cartplan: the command-line inspector -- plans, verifies, simulates and lowers Cartesian collectives.
//
//   cartplan plan --op alltoall --stencil box:d=3,n=3,f=-1 --algo combining --format text
//   cartplan plan --op allgather --stencil moore:d=2,r=1 > p.json && cartplan verify p.json
//   cartplan simulate --op alltoall --stencil moore:d=2,r=1 --dims 4,4 --periods 0,0
//   cartplan lower --op alltoall --stencil box:d=1,n=3,f=-1 --dims 3 --rank 0 --format text
//
// Exit status: 0 success, 1 the plan/simulation is wrong (verify errors, delivery errors),
// 2 bad input (message "cartplan: ..." on stderr), 3 internal error. Contract: docs/cli.md.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/mpi/openmpi_profile.h"
#include "backends/sim/program_sim.h"
#include "backends/sim/simulator.h"
#include "engine/cost_model.h"
#include "engine/cost_model_file.h"
#include "ir/read_file.h"
#include "engine/bind.h"
#include "engine/grid.h"
#include "engine/lower.h"
#include "engine/neighborhood.h"
#include "engine/optimizer.h"
#include "engine/planner.h"
#include "engine/program_print.h"
#include "engine/spec.h"
#include "ir/json.h"
#include "ir/parse_number.h"
#include "ir/plan.h"
#include "ir/print.h"
#include "ir/result.h"
#include "ir/verify.h"
#include "tools/graph_commands.h"
#include "tools/halo_commands.h"
#include "tools/subcommand.h"

namespace {

using cartplan::ErrorMessage;
using cartplan::ReadOptions;
using cartplan::read_file_bounded;
using cartplan::fail;
using cartplan::Result;
namespace engine = cartplan::engine;
namespace ir = cartplan::ir;
namespace openmpi = cartplan::openmpi;
namespace sim = cartplan::sim;

constexpr int kExitOk = 0;
constexpr int kExitWrong = 1;     // verify errors or simulation delivery errors
constexpr int kExitBadInput = 2;
constexpr int kExitInternal = 3;

// The simulator holds every rank in memory; beyond these it would exhaust the machine.
constexpr std::int64_t kMaxSimRanks = std::int64_t{1} << 22;
constexpr double kMaxSimMemoryBytes = 8.0 * (1 << 30);

constexpr const char* kUsage = R"(usage:
  cartplan plan     --op OP --stencil SPEC [--algo auto|direct|combining|loground|hybrid]
                    [--dim-order auto|natural|K,K,..] [--block-bytes N]
                    [--alpha-us A] [--beta-us-per-byte B] [--cost-model FILE] [--format json|text|dot]
                    [--block-sizes N,N,..]  (one size per offset: faces and corners differ)
                    [--dims P,P,.. [--periods 1,0,..]]  (price for this grid: rounds that
                                   wrap to the process itself are local copies)
                    [--strided]   (price the blocks as strided in memory, e.g. subarrays)
                    [--ranks-per-node R | --cyclic-nodes N]  (with --dims: R consecutive ranks
                                   share a node, or rank r is on node r mod N; the model's
                                   placement terms price what leaves a node)
                    [--explain]   (print every candidate's predicted cost term by term instead)
  cartplan verify   FILE.json            (FILE "-" reads stdin)
  cartplan simulate --op OP --stencil SPEC --dims P,P,.. [--periods 1,0,..] [--root RANK]
                    [--block-bytes N | --block-sizes N,.. (alltoall)] [--algo ..] [--dim-order ..] [--alpha-us A]
                    [--beta-us-per-byte B] [--cost-model FILE] [--format json|text]
                    [--values int|double]
                    [--programs]  (also lower every rank's program and run those: the
                                   MPI backend's steps and messages; integer values only)
  cartplan lower    --op OP --stencil SPEC --dims P,P,.. --rank R [--periods 1,0,..] [--root RANK]
                    [--block-bytes N | --block-sizes N,.. (alltoall)] [--algo ..] [--dim-order ..] [--alpha-us A]
                    [--beta-us-per-byte B] [--cost-model FILE] [--format json|text]
                    (the program rank R runs: per phase its local steps and messages)
  cartplan graph    plan|explain|verify|simulate|rank ...  (general distributed graphs: cartplan graph help)
  cartplan halo     plan|explain|verify|simulate|rank ...  (halo exchanges of arrays: cartplan halo help)
  cartplan help | --help | SUBCOMMAND --help

OP: alltoall allgather allreduce reduce_scatter, and the rooted bcast gather scatter reduce.
    Plans are rank-independent: the root is given to simulate (--root, a rank of the grid),
    not to plan. Reductions simulate a sum over vectors of 8-byte elements (--block-bytes a
    multiple of 8), exact for --values int (default), within 1e-9 (relative) for double.

SPEC: moore:d=D,r=R  vonneumann:d=D,r=R  box:d=D,n=N,f=F  chebyshev:d=D,depth=K,shadow=S
      manhattan:d=D,depth=K,shadow=S  offsets:1,0;-1,0;0,1  @file.json
Defaults: --algo auto, --dim-order auto (increasing C_k), --block-bytes 8, --format json,
          every dimension periodic, the built-in cost model (engine/cost_model.h: alpha 1 us,
          phase 0.5 us, beta 0.0005 us/byte, copy 0.0002 us/byte, rendezvous 2 us above 4064 B).
Exit status: 0 ok, 1 verify or simulation found errors, 2 bad input, 3 unexpected failure.
)";

std::string in_quotes(std::string_view s) { return "'" + std::string(s) + "'"; }

// ---------------------------------------------------------------------------------------------
// Strict value parsers. Each error names the option and the offending text.

// The shared strict parsers (ir/parse_number.h), with the option's name in front of errors.
template <class T>
Result<T> for_option(std::string_view what, Result<T> r) {
  if (!r) return fail(std::string(what) + ": " + r.error());
  return r;
}

Result<std::int64_t> parse_int(std::string_view what, std::string_view s, std::int64_t lo, std::int64_t hi) {
  return for_option(what, cartplan::parse_integer(s, lo, hi));
}

Result<std::vector<int>> parse_int_list(std::string_view what, std::string_view s, int lo, int hi,
                                        std::size_t max_entries = 64) {
  return for_option(what, cartplan::parse_int_list(s, lo, hi, max_entries));
}

Result<double> parse_nonnegative(std::string_view what, std::string_view s) {
  return for_option(what, cartplan::parse_nonnegative_double(s));
}

// ---------------------------------------------------------------------------------------------
// Command lines: a subcommand, then "--name value" (or "--name=value") options.

struct Options {
  std::map<std::string, std::string> values;
  std::vector<std::string> positional;
  bool help = false;

  const std::string* get(const std::string& name) const {
    auto it = values.find(name);
    return it == values.end() ? nullptr : &it->second;
  }
};

Result<Options> parse_options(const std::string& command, const std::vector<std::string>& args,
                              const std::set<std::string>& allowed, std::size_t max_positional) {
  Options out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      out.help = true;
      continue;
    }
    if (arg.size() < 2 || arg.compare(0, 2, "--") != 0 || arg == "--") {
      if (arg.size() > 1 && arg[0] == '-' && arg != "-")
        return fail("unknown option " + in_quotes(arg) + " for '" + command + "'");
      if (out.positional.size() >= max_positional)
        return fail("unexpected argument " + in_quotes(arg) + " for '" + command + "'");
      out.positional.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::optional<std::string> value;
    if (const std::size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    if (!allowed.count(name)) return fail("unknown option " + in_quotes("--" + name) + " for '" + command + "'");
    if (name == "explain" || name == "programs" || name == "strided") {  // the flags: no value
      if (value) return fail("option --" + name + " takes no value");
      value = "1";
    }
    if (!value) {
      // A following option is not a value ("--op --stencil x" is a missing value).
      if (i + 1 == args.size() || args[i + 1].compare(0, 2, "--") == 0)
        return fail("option --" + name + " needs a value");
      value = args[++i];
    }
    if (!out.values.emplace(name, *value).second) return fail("option --" + name + " given more than once");
  }
  return out;
}

// Maps `--name` to one of `choices`, or the default when absent.
template <class T>
Result<T> parse_enum(const Options& o, const std::string& name, const std::vector<std::pair<std::string, T>>& choices,
                     T fallback) {
  const std::string* v = o.get(name);
  if (!v) return fallback;
  std::string names;
  for (const auto& [text, value] : choices) {
    if (*v == text) return value;
    names += (names.empty() ? "" : "|") + text;
  }
  return fail("--" + name + ": unknown value " + in_quotes(*v) + " (expected " + names + ")");
}

// ---------------------------------------------------------------------------------------------
// Planning options shared by `plan` and `simulate`.

enum class Format { kJson, kText, kDot };

struct PlanRequest {
  ir::Op op = ir::Op::kAlltoall;
  std::optional<engine::Neighborhood> nbh;
  engine::PlanOptions options;
  Format format = Format::kJson;
};

const std::set<std::string> kPlanOptions = {"op",       "stencil",          "algo",   "dim-order", "block-bytes",
                                            "alpha-us", "beta-us-per-byte", "format", "cost-model", "root"};

Result<ir::Op> parse_op(const Options& o) {
  return parse_enum<ir::Op>(o, "op",
                            {{"alltoall", ir::Op::kAlltoall},
                             {"allgather", ir::Op::kAllgather},
                             {"allreduce", ir::Op::kAllreduce},
                             {"reduce_scatter", ir::Op::kReduceScatter},
                             {"bcast", ir::Op::kBcast},
                             {"gather", ir::Op::kGather},
                             {"scatter", ir::Op::kScatter},
                             {"reduce", ir::Op::kReduce}},
                            ir::Op::kAlltoall);
}

Result<engine::AlgoChoice> parse_algo(const Options& o) {
  return parse_enum<engine::AlgoChoice>(o, "algo",
                                        {{"auto", engine::AlgoChoice::kAuto},
                                         {"direct", engine::AlgoChoice::kDirect},
                                         {"combining", engine::AlgoChoice::kCombining},
                                         {"loground", engine::AlgoChoice::kLogRound},
                                         {"hybrid", engine::AlgoChoice::kHybrid}},
                                        engine::AlgoChoice::kAuto);
}

Result<Format> parse_format(const Options& o, bool allow_dot) {
  std::vector<std::pair<std::string, Format>> formats = {{"json", Format::kJson}, {"text", Format::kText}};
  if (allow_dot) formats.push_back({"dot", Format::kDot});
  return parse_enum<Format>(o, "format", formats, Format::kJson);
}

// A calibrated model first (--cost-model); explicit --alpha-us/--beta-us-per-byte override its
// values.
Result<engine::CostModel> parse_model(const Options& o) {
  engine::CostModel model;
  if (const std::string* s = o.get("cost-model")) {
    // Read with the bounded reader: /dev/zero or a huge file is an error, not a memory blow-up.
    Result<std::string> text = read_file_bounded(*s);
    if (!text) return fail("--cost-model: " + text.error());
    Result<engine::CostModel> m = engine::parse_cost_model(*text);
    if (!m) return fail("--cost-model: cost model " + in_quotes(*s) + ": " + m.error());
    model = *m;
  }
  if (const std::string* s = o.get("alpha-us")) {
    Result<double> a = parse_nonnegative("--alpha-us", *s);
    if (!a) return ErrorMessage{a.error()};
    model.alpha_us = *a;
  }
  if (const std::string* s = o.get("beta-us-per-byte")) {
    Result<double> b = parse_nonnegative("--beta-us-per-byte", *s);
    if (!b) return ErrorMessage{b.error()};
    model.beta_us_per_byte = *b;
  }
  return model;
}

// --block-sizes: one size per offset of the stencil, in its order (the faces, edges and corners
// of a halo's v/w request differ): predictions use them instead of --block-bytes.
Result<std::vector<std::int64_t>> parse_block_sizes(const Options& o, const engine::Neighborhood& nbh) {
  const std::string* s = o.get("block-sizes");
  if (!s) return std::vector<std::int64_t>{};
  if (o.get("block-bytes")) return fail("--block-sizes and --block-bytes exclude each other");
  Result<std::vector<int>> sizes = parse_int_list("--block-sizes", *s, 0, std::numeric_limits<int>::max(),
                                                  static_cast<std::size_t>(nbh.size()) + 1);
  if (!sizes) return ErrorMessage{sizes.error()};
  if (static_cast<int>(sizes->size()) != nbh.size())
    return fail("--block-sizes has " + std::to_string(sizes->size()) + " entries but the stencil " +
                in_quotes(*o.get("stencil")) + " has " + std::to_string(nbh.size()) + " offsets");
  return std::vector<std::int64_t>(sizes->begin(), sizes->end());
}

// --dim-order: auto (nullopt), natural, or a permutation K,K,..
Result<std::optional<std::vector<int>>> parse_dim_order(const Options& o, const engine::Neighborhood& nbh) {
  const std::string* s = o.get("dim-order");
  if (!s || *s == "auto") return std::optional<std::vector<int>>();
  if (*s == "natural") return std::optional<std::vector<int>>(engine::natural_dim_order(nbh.ndims()));
  Result<std::vector<int>> list =
      parse_int_list("--dim-order", *s, std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
  if (!list) return ErrorMessage{list.error()};
  Result<std::vector<int>> checked = engine::check_dim_order(*list, nbh.ndims());
  if (!checked) return fail("--dim-order: " + checked.error());
  return std::optional<std::vector<int>>(*checked);
}

// The options of `plan`, `simulate` and `lower` that say what to plan, in the order their
// errors are reported.
Result<PlanRequest> parse_plan_request(const Options& o, bool allow_dot) {
  PlanRequest req;
  for (const char* required : {"op", "stencil"})
    if (!o.get(required)) return fail("missing required option --" + std::string(required));
  Result<ir::Op> op = parse_op(o);
  if (!op) return ErrorMessage{op.error()};
  req.op = *op;
  Result<engine::AlgoChoice> algo = parse_algo(o);
  if (!algo) return ErrorMessage{algo.error()};
  req.options.algo = *algo;
  Result<Format> format = parse_format(o, allow_dot);
  if (!format) return ErrorMessage{format.error()};
  req.format = *format;
  if (const std::string* s = o.get("block-bytes")) {
    Result<std::int64_t> n = parse_int("--block-bytes", *s, 0, std::numeric_limits<std::int64_t>::max());
    if (!n) return ErrorMessage{n.error()};
    req.options.block_bytes = *n;
  }
  Result<engine::CostModel> model = parse_model(o);
  if (!model) return ErrorMessage{model.error()};
  req.options.model = *model;
  req.options.lowering = openmpi::lower_options(*model);  // predict and lower as the MPI backend does
  Result<engine::Neighborhood> nbh = engine::parse_spec(*o.get("stencil"));
  if (!nbh) return fail("--stencil: " + nbh.error());
  req.nbh = std::move(*nbh);
  Result<std::vector<std::int64_t>> sizes = parse_block_sizes(o, *req.nbh);
  if (!sizes) return ErrorMessage{sizes.error()};
  req.options.block_sizes = *sizes;
  Result<std::optional<std::vector<int>>> order = parse_dim_order(o, *req.nbh);
  if (!order) return ErrorMessage{order.error()};
  req.options.dim_order = *order;
  return req;
}

// The block sizes a simulation or a lowering uses: --block-sizes (alltoall only: its blocks are
// personalized, one per offset), else --block-bytes for every block.
Result<std::vector<std::int64_t>> run_block_sizes(const PlanRequest& req) {
  if (req.options.block_sizes.empty()) return std::vector<std::int64_t>{req.options.block_bytes};
  if (req.op != ir::Op::kAlltoall)
    return fail("--block-sizes applies to plan, and to simulate and lower of alltoall only, not " +
                std::string(ir::to_string(req.op)));
  return req.options.block_sizes;
}

std::string with_newline(std::string s) {
  if (s.empty() || s.back() != '\n') s += '\n';
  return s;
}

// The grid (--dims, --periods) and, for rooted ops, the root (--root) of `simulate` and `lower`;
// `plan` takes an optional grid for its predictions.
struct Placement {
  std::vector<int> dims;
  std::vector<bool> periods;
  std::optional<engine::Grid> grid;
  int root = -1;
};

// --dims and --periods (every dimension periodic unless --periods says otherwise).
Result<Placement> parse_grid(const Options& o, const PlanRequest& req) {
  Placement out;
  Result<std::vector<int>> dims =
      parse_int_list("--dims", *o.get("dims"), std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
  if (!dims) return ErrorMessage{dims.error()};
  out.dims = *dims;
  out.periods.assign(dims->size(), true);
  if (const std::string* s = o.get("periods")) {
    Result<std::vector<int>> p = parse_int_list("--periods", *s, std::numeric_limits<int>::min(),
                                                std::numeric_limits<int>::max());
    if (!p) return ErrorMessage{p.error()};
    for (int x : *p)
      if (x != 0 && x != 1) return fail("--periods: entry " + std::to_string(x) + " is not 0 or 1 in " + in_quotes(*s));
    if (p->size() != dims->size())
      return fail("--periods has " + std::to_string(p->size()) + " entries but --dims has " +
                  std::to_string(dims->size()));
    out.periods.assign(p->begin(), p->end());
  }
  const int ndims = req.nbh->ndims();
  if (static_cast<int>(dims->size()) != ndims)
    return fail("--dims has " + std::to_string(dims->size()) + " entries but the stencil " + in_quotes(*o.get("stencil")) +
                " has " + std::to_string(ndims) + " dimensions");
  Result<engine::Grid> grid = engine::Grid::create(out.dims, out.periods);
  if (!grid) return fail("--dims: " + grid.error());
  out.grid = *grid;
  return out;
}

// The grid, and the root of rooted ops (required there, refused elsewhere).
Result<Placement> parse_placement(const Options& o, const PlanRequest& req) {
  Result<Placement> placed = parse_grid(o, req);
  if (!placed) return placed;
  Placement out = std::move(*placed);
  const engine::Grid* grid = &*out.grid;
  if (const std::string* s = o.get("root")) {
    if (!ir::is_rooted(req.op))
      return fail("--root applies only to bcast, gather, scatter and reduce, not to " + std::string(ir::to_string(req.op)));
    Result<std::int64_t> root = parse_int("--root", *s, 0, std::numeric_limits<int>::max());
    if (!root) return ErrorMessage{root.error()};
    if (*root >= grid->size())
      return fail("--root: rank " + std::to_string(*root) + " is not in the grid (ranks 0.." +
                  std::to_string(grid->size() - 1) + ")");
    out.root = static_cast<int>(*root);
  } else if (ir::is_rooted(req.op)) {
    return fail("--op " + std::string(ir::to_string(req.op)) + " needs --root RANK");
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Subcommands. Each returns an exit status; bad input is reported through Result errors.

// `plan --explain`: every candidate's predicted cost term by term, the chosen one marked.
Result<int> explain_candidates(const Options& o, const PlanRequest& req) {
  Result<std::vector<engine::Candidate>> cands = engine::plan_candidates(req.op, *req.nbh, req.options);
  if (!cands) return ErrorMessage{cands.error()};
  const engine::CostModel& m = req.options.model;
  std::cout << "candidates for " << ir::to_string(req.op) << " " << *o.get("stencil");
  if (o.get("dims")) std::cout << " on " << *o.get("dims") << (o.get("periods") ? " periods " + *o.get("periods") : "");
  if (o.get("strided")) std::cout << ", strided";
  if (o.get("ranks-per-node")) std::cout << ", " << req.options.placement.ranks_per_node << " ranks per node";
  if (o.get("cyclic-nodes")) std::cout << ", " << req.options.placement.describe();
  if (req.options.block_sizes.empty())
    std::cout << ", blocks of " << req.options.block_bytes << " bytes";
  else
    std::cout << ", block sizes " << *o.get("block-sizes");
  std::cout << "; model:";
  for (const engine::CostTerm& t : engine::kCostTerms) std::cout << " " << t.name << " " << m.*t.price << ",";
  std::cout << " eager_limit_bytes " << m.eager_limit_bytes;
  if (m.phase_overlap != 0) std::cout << ", phase_overlap " << m.phase_overlap;
  std::cout << "\n";
  const std::size_t best = engine::pick_candidate(*cands);
  for (std::size_t i = 0; i < cands->size(); ++i) {
    const engine::Candidate& c = (*cands)[i];
    std::cout << (i == best ? "* " : "  ") << c.name << " (rounds " << c.plan.stats().rounds << ", phases "
              << c.plan.phases().size() << ", volume " << c.plan.stats().volume << ", order "
              << ir::to_string(c.plan.dim_order()) << "): " << engine::explain(c.cost, m) << "\n";
  }
  std::cout << "chosen: " << (*cands)[best].name << "\n";
  return kExitOk;
}

Result<int> cmd_plan(const Options& o) {
  Result<PlanRequest> req = parse_plan_request(o, /*allow_dot=*/true);
  if (!req) return ErrorMessage{req.error()};
  if (o.get("root"))
    return fail("--root: plans are rank-independent, so plan takes no root (give it to simulate, or to the executor)");
  if (o.get("periods") && !o.get("dims")) return fail("--periods needs --dims");
  // Blocks strided in the caller's memory (a halo's subarray datatypes), as persistent requests
  // of the MPI backend agree on: above the eager limit their messages are pipelined.
  if (o.get("strided")) req->options.block_contiguous = {false};
  if (o.get("dims")) {
    // The plan stays rank-independent; the grid only prices it (rounds that wrap to the
    // process itself are local copies), as the MPI backend does for its communicator.
    Result<Placement> where = parse_grid(o, *req);
    if (!where) return ErrorMessage{where.error()};
    req->options.grid = where->grid;
  }
  Result<engine::Placement> placed =
      cartplan::tools::parse_node_placement(o.get("ranks-per-node"), o.get("cyclic-nodes"), o.get("dims") != nullptr);
  if (!placed) return ErrorMessage{placed.error()};
  req->options.placement = *placed;
  if (o.get("explain")) return explain_candidates(o, *req);
  Result<ir::Plan> plan = engine::make_plan(req->op, *req->nbh, req->options);
  if (!plan) return ErrorMessage{plan.error()};
  switch (req->format) {
    case Format::kJson: std::cout << with_newline(ir::to_json_string(*plan)); break;
    case Format::kText: std::cout << with_newline(ir::to_text(*plan)); break;
    case Format::kDot: std::cout << with_newline(ir::to_dot(*plan)); break;
  }
  return kExitOk;
}

ReadOptions stdin_allowed() {
  ReadOptions r;
  r.dash_is_stdin = true;
  return r;
}

Result<int> cmd_verify(const Options& o) {
  if (o.positional.size() != 1) return fail("verify needs exactly one FILE.json argument (\"-\" for stdin)");
  const std::string& path = o.positional[0];
  Result<std::string> text = read_file_bounded(path, stdin_allowed());
  if (!text) return ErrorMessage{text.error()};
  Result<ir::Plan> plan = ir::plan_from_json_string(*text);
  if (!plan) return fail(in_quotes(path) + ": " + plan.error());
  const std::vector<std::string> errors = ir::verify(*plan);
  if (!errors.empty()) {
    for (const std::string& e : errors) std::cerr << "cartplan verify: " << e << "\n";
    return kExitWrong;
  }
  std::cout << "ok: " << ir::to_string(plan->op()) << " " << ir::to_string(plan->kind()) << ", "
            << plan->stats().rounds << " rounds, " << plan->stats().volume << " transfers\n";
  return kExitOk;
}

std::string join(const std::vector<int>& v, const char* sep) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

// Refuses simulations that would not fit in memory (a rough upper estimate of the simulator's
// per-rank state: bound rounds, entries, every buffer's bytes and the messages in flight).
Result<bool> check_simulation_size(const ir::Plan& plan, const engine::Grid& grid, std::int64_t block_bytes) {
  const double buffers = plan.num_send_blocks() + plan.num_blocks() + static_cast<double>(plan.temp_slots().size());
  const double per_rank = 640.0 + plan.stats().rounds * 160.0 + plan.stats().volume * 24.0 +
                          buffers * (64.0 + static_cast<double>(block_bytes)) +
                          plan.stats().volume * static_cast<double>(block_bytes);
  const double total = per_rank * grid.size();
  if (total > kMaxSimMemoryBytes) {
    char gib[64];
    std::snprintf(gib, sizeof gib, "%.3g GiB", total / (1 << 30));
    return fail("too large to simulate: about " + std::string(gib) + " for " + std::to_string(grid.size()) +
                " ranks (limit " + std::to_string(static_cast<int>(kMaxSimMemoryBytes / (1 << 30))) +
                " GiB); use fewer ranks or a smaller --block-bytes");
  }
  return true;
}

// The simulator's options from --values and --root; with --programs only integer sums.
Result<sim::SimOptions> parse_sim_options(const Options& o, const PlanRequest& req, const Placement& where) {
  sim::SimOptions sim_options;
  sim_options.root = where.root;
  Result<sim::SimOptions::Values> values = parse_enum<sim::SimOptions::Values>(
      o, "values", {{"int", sim::SimOptions::Values::kInt64}, {"double", sim::SimOptions::Values::kDouble}},
      sim::SimOptions::Values::kInt64);
  if (!values) return ErrorMessage{values.error()};
  if (o.get("values") && !ir::is_reduction(req.op))
    return fail("--values applies only to allreduce, reduce_scatter and reduce");
  sim_options.values = *values;
  if (o.get("programs") && sim_options.values == sim::SimOptions::Values::kDouble)
    return fail("--programs runs integer sums only; drop --values double");
  if (ir::is_reduction(req.op) && req.options.block_bytes % 8 != 0)
    return fail("--block-bytes: " + std::to_string(req.options.block_bytes) +
                " is not a multiple of 8 (reductions simulate vectors of 8-byte elements)");
  sim_options.model = req.options.model;
  return sim_options;
}

// --programs: the same collective once more, as the lowered programs the MPI backend runs.
Result<sim::ProgramSimReport> simulate_as_programs(const ir::Plan& plan, const engine::Grid& grid,
                                                   const sim::SimOptions& sim_options, const engine::CostModel& model) {
  sim::ProgramSimOptions po;
  po.block_bytes = sim_options.block_bytes;
  po.root = sim_options.root;
  const engine::LowerOptions lo = openmpi::lower_options(model);  // as the backend lowers
  po.home_max_message_bytes = lo.home_max_message_bytes;
  po.trailer_min_bytes = lo.trailer_min_bytes;
  Result<sim::ProgramSimReport> r = sim::simulate_programs(plan, grid, po);
  if (!r) return fail("simulate --programs: " + r.error());
  return r;
}

void print_simulation_json(const ir::Plan& plan, const sim::SimReport& report, const sim::SimOptions& sim_options,
                           const std::optional<sim::ProgramSimReport>& prog) {
  nlohmann::ordered_json j;
  j["ok"] = report.ok;
  j["errors"] = report.errors;
  j["error_count"] = report.error_count;
  j["messages"] = report.messages;
  j["bytes"] = report.bytes;
  j["copies"] = report.copies;
  j["model_time_us"] = report.model_time_us;
  j["ranks"] = report.ranks;
  if (ir::is_rooted(plan.op())) j["root"] = sim_options.root;
  j["algorithm"] = ir::to_string(plan.kind());
  j["rounds"] = plan.stats().rounds;
  j["volume"] = plan.stats().volume;
  if (prog) {
    nlohmann::ordered_json pj;
    pj["ok"] = prog->ok;
    pj["errors"] = prog->errors;
    pj["error_count"] = prog->error_count;
    pj["messages"] = prog->messages;
    pj["bytes"] = prog->bytes;
    pj["copied_bytes"] = prog->copied_bytes;
    pj["combined_bytes"] = prog->combined_bytes;
    pj["steps"] = prog->steps;
    pj["max_staging_bytes"] = prog->max_staging_bytes;
    j["programs"] = pj;
  }
  std::cout << j.dump(2) << "\n";
}

// "ok, ..." or "FAILED, N delivery errors" with the listed errors.
void print_result(bool good, std::int64_t count, const std::vector<std::string>& errors) {
  if (good) {
    std::cout << "ok, every recv block holds the right data\n";
    return;
  }
  std::cout << "FAILED, " << count << " delivery errors\n";
  for (const std::string& e : errors) std::cout << "    " << e << "\n";
  if (count > static_cast<std::int64_t>(errors.size()))
    std::cout << "    ... and " << count - static_cast<std::int64_t>(errors.size()) << " more\n";
}

void print_simulation_text(const Options& o, const PlanRequest& req, const Placement& where, const ir::Plan& plan,
                           const sim::SimReport& report, const std::optional<sim::ProgramSimReport>& prog) {
  const ir::Stats& stats = plan.stats();
  std::vector<int> period_flags(where.periods.begin(), where.periods.end());
  std::cout << "simulate " << ir::to_string(plan.op()) << " " << ir::to_string(plan.kind()) << " on grid "
            << join(where.dims, "x") << " (periods " << join(period_flags, ",") << "), " << report.ranks << " ranks"
            << (ir::is_rooted(plan.op()) ? ", root " + std::to_string(where.root) : std::string()) << "\n"
            << "  plan:     " << stats.rounds << " rounds, volume " << stats.volume
            << (o.get("block-sizes") ? ", block sizes " + *o.get("block-sizes")
                                     : ", block bytes " + std::to_string(req.options.block_bytes))
            << "\n"
            << "  traffic:  " << report.messages << " messages, " << report.bytes << " bytes, " << report.copies
            << " local copies\n"
            << "  model:    " << report.model_time_us << " us (max over ranks)\n";
  std::cout << "  result:   ";
  print_result(report.ok, report.error_count, report.errors);
  if (!prog) return;
  std::cout << "  programs: " << prog->messages << " messages, " << prog->bytes << " bytes, " << prog->copied_bytes
            << " bytes copied, " << prog->combined_bytes << " bytes combined, staging up to "
            << prog->max_staging_bytes << " bytes per rank\n"
            << "  programs: ";
  print_result(prog->ok, prog->error_count, prog->errors);
}

Result<int> cmd_simulate(const Options& o) {
  for (const char* required : {"op", "stencil", "dims"})
    if (!o.get(required)) return fail("missing required option --" + std::string(required));
  Result<PlanRequest> req = parse_plan_request(o, /*allow_dot=*/false);
  if (!req) return ErrorMessage{req.error()};
  Result<Placement> where = parse_placement(o, *req);
  if (!where) return ErrorMessage{where.error()};
  const engine::Grid& grid = *where->grid;
  if (grid.size() > kMaxSimRanks)
    return fail("--dims: " + std::to_string(grid.size()) + " ranks are too large to simulate (at most " +
                std::to_string(kMaxSimRanks) + ")");
  Result<sim::SimOptions> sim_options = parse_sim_options(o, *req, *where);
  if (!sim_options) return ErrorMessage{sim_options.error()};

  // The grid is known here: rounds that wrap to the process itself are free in the prediction.
  req->options.grid = grid;
  Result<ir::Plan> plan = engine::make_plan(req->op, *req->nbh, req->options);
  if (!plan) return ErrorMessage{plan.error()};
  Result<std::vector<std::int64_t>> sizes = run_block_sizes(*req);
  if (!sizes) return ErrorMessage{sizes.error()};
  Result<bool> size_ok = check_simulation_size(*plan, grid, *std::max_element(sizes->begin(), sizes->end()));
  if (!size_ok) return ErrorMessage{size_ok.error()};
  sim_options->block_bytes = *sizes;

  Result<sim::SimReport> report = sim::simulate(*plan, grid, *sim_options);
  if (!report) return fail("simulate: " + report.error());
  std::optional<sim::ProgramSimReport> prog;
  if (o.get("programs")) {
    Result<sim::ProgramSimReport> r = simulate_as_programs(*plan, grid, *sim_options, req->options.model);
    if (!r) return ErrorMessage{r.error()};
    prog = std::move(*r);
  }
  if (req->format == Format::kJson)
    print_simulation_json(*plan, *report, *sim_options, prog);
  else
    print_simulation_text(o, *req, *where, *plan, *report, prog);
  return report->ok && (!prog || prog->ok) ? kExitOk : kExitWrong;
}

// `lower`: the program one rank runs (engine::lower with contiguous blocks of --block-bytes).
Result<int> cmd_lower(const Options& o) {
  for (const char* required : {"op", "stencil", "dims", "rank"})
    if (!o.get(required)) return fail("missing required option --" + std::string(required));
  Result<PlanRequest> req = parse_plan_request(o, /*allow_dot=*/false);
  if (!req) return ErrorMessage{req.error()};
  Result<Placement> where = parse_placement(o, *req);
  if (!where) return ErrorMessage{where.error()};
  const engine::Grid& grid = *where->grid;
  Result<std::int64_t> rank = parse_int("--rank", *o.get("rank"), 0, std::numeric_limits<int>::max());
  if (!rank) return ErrorMessage{rank.error()};
  if (*rank >= grid.size())
    return fail("--rank: rank " + std::to_string(*rank) + " is not in the grid (ranks 0.." +
                std::to_string(grid.size() - 1) + ")");

  req->options.grid = grid;
  Result<std::vector<std::int64_t>> sizes = run_block_sizes(*req);
  if (!sizes) return ErrorMessage{sizes.error()};
  Result<ir::Plan> plan = engine::make_plan(req->op, *req->nbh, req->options);
  if (!plan) return ErrorMessage{plan.error()};
  Result<engine::Binder> binder = engine::Binder::create(*plan);
  if (!binder) return fail("lower: " + binder.error());
  std::optional<engine::Coords> root;
  if (where->root >= 0) root = grid.coords(where->root);
  Result<engine::BoundPlan> bound =
      binder->bind(grid, grid.coords(static_cast<int>(*rank)), *sizes, root);
  if (!bound) return fail("lower: " + bound.error());
  Result<engine::Program> program =
      engine::lower(*plan, *bound, engine::contiguous_layout(*plan, *bound), req->options.lowering);
  if (!program) return fail("lower: " + program.error());
  if (req->format == Format::kJson)
    std::cout << engine::to_json(*program).dump(2) << "\n";
  else
    std::cout << engine::to_text(*program);
  return kExitOk;
}

int run(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::cerr << kUsage;
    return kExitBadInput;
  }
  const std::string& command = args[0];
  if (command == "help" || command == "--help" || command == "-h") {
    std::cout << kUsage;
    return kExitOk;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "graph") return cartplan::tools::run_graph_command(rest);
  if (command == "halo") return cartplan::tools::run_halo_command(rest);
  std::set<std::string> allowed;
  std::size_t max_positional = 0;
  Result<int> (*handler)(const Options&) = nullptr;
  if (command == "plan") {
    allowed = kPlanOptions;
    allowed.insert({"explain", "block-sizes", "dims", "periods", "strided", "ranks-per-node", "cyclic-nodes"});
    handler = cmd_plan;
  } else if (command == "verify") {
    max_positional = 1;
    handler = cmd_verify;
  } else if (command == "simulate") {
    allowed = kPlanOptions;
    allowed.insert({"dims", "periods", "values", "programs", "block-sizes"});
    handler = cmd_simulate;
  } else if (command == "lower") {
    allowed = kPlanOptions;
    allowed.insert({"dims", "periods", "rank", "block-sizes"});
    handler = cmd_lower;
  } else {
    std::cerr << "cartplan: unknown subcommand " << in_quotes(command) << " (expected plan, verify, simulate, lower, graph, halo or help)\n";
    return kExitBadInput;
  }

  Result<Options> options = parse_options(command, rest, allowed, max_positional);
  if (!options) {
    std::cerr << "cartplan: " << options.error() << "\n";
    return kExitBadInput;
  }
  if (options->help) {
    std::cout << kUsage;
    return kExitOk;
  }
  Result<int> status = handler(*options);
  if (!status) {
    std::cerr << "cartplan: " << status.error() << "\n";
    return kExitBadInput;
  }
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "cartplan: cannot write to standard output\n";
    return kExitBadInput;
  }
  return *status;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& e) {
    std::cerr << "cartplan: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "cartplan: internal error: unknown exception\n";
  }
  return kExitInternal;
}
