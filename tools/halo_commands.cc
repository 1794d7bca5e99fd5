// The `cartplan halo` subcommands: option parsing, the five commands and their output.
#include "tools/halo_commands.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <tuple>
#include <optional>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "backends/sim/halo/halo_sim.h"
#include "engine/cost_model_file.h"
#include "engine/halo/block_plan.h"
#include "engine/halo/choose.h"
#include "engine/halo/uneven.h"
#include "engine/planner.h"
#include "ir/graph/json_print.h"
#include "ir/halo/json.h"
#include "ir/halo/verify.h"
#include "ir/parse_number.h"
#include "ir/read_file.h"
#include "tools/subcommand.h"

namespace cartplan::tools {
namespace {

namespace eh = engine::halo;
namespace ih = ir::halo;

constexpr int kExitOk = 0, kExitWrong = 1, kExitBadInput = 2;

constexpr const char* kUsage = R"(usage:
  cartplan halo plan     ARRAY [GRID] [PLAN OPTIONS] [--rank R]     (the chosen plan as JSON)
  cartplan halo explain  ARRAY [GRID] [PLAN OPTIONS] [--format text|json]  (every candidate)
  cartplan halo simulate (ARRAY [PLAN OPTIONS] | --plan FILE) GRID [--format text|json]
  cartplan halo rank     (ARRAY [PLAN OPTIONS] | --plan FILE) GRID --rank R  (one rank's program)
  cartplan halo verify   FILE.json                                  (FILE "-" reads stdin)

ARRAY: --interior N,N,..  the local interior extents (the same on every rank), or
       --global N,N,..    (with --dims) the global interior cut into blocks: in dimension k
                          the first N%dims[k] ranks get N/dims[k]+1 cells, the others N/dims[k];
                          the choice is priced on the largest blocks, every rank plans its own
                          interior in the chosen algorithm and order (plan and rank: rank R's,
                          plan's --rank defaulting to 0; simulate: every rank its own)
       --ghost G[,G,..]   ghost width on both sides (one value: every dimension), or
       --ghost-lo G,.. --ghost-hi G,..  per side
       [--elem BYTES]     element size (default 8)    [--order C|F]  memory order (default C)
       [--stencil SPEC]   sign-vector offsets naming the ghost regions to fill: moore:d=D,r=1,
                          vonneumann:d=D,r=1, box:d=D,n=3,f=-1, offsets:1,0;-1,0, @file.json
                          (default: every region, moore:d=D,r=1)
GRID:  --dims P,P,.. [--periods 1,0,..]  (default: every dimension periodic). plan and explain
       price the busiest rank of this grid; without it a rank whose neighbours are all others.
PLAN OPTIONS: [--algo auto|direct|combining|dimwise|split|hybrid] [--dim-order K,K,..]
              [--cost-model FILE] [--alpha-us A] [--beta-us-per-byte B]
              [--ranks-per-node R | --cyclic-nodes N]  (with --dims: R consecutive ranks share
                                     a node, or rank r is on node r mod N; the model's
                                     placement terms price what leaves a node)
A ghost cell is filled iff the sign vector of its position outside the interior is in the
stencil and its source cell exists (periodic wrap, or inside the mesh). Predictions are the
cost model's, not measurements. Exit status: 0 ok, 1 verify or simulation found errors, 2 bad input.
)";

std::string list_text(const std::vector<int>& v, const char* sep = ",");

// ---------------------------------------------------------------------------------------------
// Options: "--name value" or "--name=value", each at most once; positional arguments.

using Options = SubOptions;

template <class T>
Result<T> named(const std::string& option, Result<T> r) {
  if (!r) return fail("--" + option + ": " + r.error());
  return r;
}

const std::set<std::string> kArrayOptions = {"interior", "global", "ghost", "ghost-lo", "ghost-hi", "elem", "order", "stencil"};
const std::set<std::string> kGridOptions = {"dims", "periods"};
const std::set<std::string> kPlanOptions = {"algo", "dim-order", "cost-model", "alpha-us", "beta-us-per-byte",
                                            "ranks-per-node", "cyclic-nodes"};

// One value for every dimension, or d values.
Result<std::vector<int>> per_dimension(const std::string& key, const std::string& text, int d, int lo, int hi) {
  Result<std::vector<int>> v = named(key, parse_int_list(text, lo, hi, ih::kMaxHaloDims));
  if (!v) return v;
  if (v->size() == 1) return std::vector<int>(d, v->front());
  if (static_cast<int>(v->size()) != d)
    return fail("--" + key + " has " + std::to_string(v->size()) + " values; the array has " + std::to_string(d) + " dimensions (give 1 or " + std::to_string(d) + ")");
  return v;
}

// --global (docs/cli.md): the global interior cut into blocks over --dims (engine/halo/uneven.h).
struct Blocks {
  std::vector<int> global;
  std::vector<std::vector<int>> extents;  // per dimension, per coordinate
  std::vector<int> largest, smallest;     // per dimension
  bool uneven = false;                    // smallest != largest: ranks' interiors differ
};

Result<std::optional<Blocks>> blocks_of(const Options& o) {
  const std::string* global = o.get("global");
  if (!global) return std::optional<Blocks>{};
  if (o.get("interior")) return fail("--global and --interior exclude each other");
  if (!o.get("dims")) return fail("--global needs --dims (the process grid the global interior is cut over)");
  Result<std::vector<int>> n = named("global", parse_int_list(*global, 1, std::numeric_limits<int>::max(), ih::kMaxHaloDims + 1));
  if (!n) return fail(n.error());
  if (n->size() > static_cast<std::size_t>(ih::kMaxHaloDims)) return fail("--global: a halo array has 1 to " + std::to_string(ih::kMaxHaloDims) + " dimensions");
  Result<std::vector<int>> dims = named("dims", parse_int_list(*o.get("dims"), 1, 1 << 20, 64));
  if (!dims) return fail(dims.error());
  if (dims->size() != n->size()) return fail("--dims has " + std::to_string(dims->size()) + " values; --global has " + std::to_string(n->size()));
  Blocks b{*n, {}, {}, {}};
  for (std::size_t k = 0; k < n->size(); ++k) {
    Result<std::vector<int>> e = eh::block_extents((*n)[k], (*dims)[k]);
    if (!e) return fail("--global: dimension " + std::to_string(k) + ": " + e.error());
    b.extents.push_back(*e);
    b.smallest.push_back(*std::min_element(e->begin(), e->end()));
  }
  b.largest = eh::largest_blocks(b.extents);
  b.uneven = b.smallest != b.largest;
  return std::optional<Blocks>(std::move(b));
}

Result<std::vector<int>> interior_of(const Options& o, const std::optional<Blocks>& blocks) {
  if (blocks) return blocks->largest;
  const std::string* interior = o.get("interior");
  if (!interior) return fail("missing required option --interior (or --global with --dims)");
  Result<std::vector<int>> n = named("interior", parse_int_list(*interior, 1, ih::kMaxHaloExtent, ih::kMaxHaloDims + 1));
  if (!n) return fail(n.error());
  if (n->size() > static_cast<std::size_t>(ih::kMaxHaloDims)) return fail("--interior: a halo array has 1 to " + std::to_string(ih::kMaxHaloDims) + " dimensions");
  return n;
}

// The array; with --global, its interior is the largest block (the shared description).
Result<ih::ArrayShape> array_of(const Options& o, const std::optional<Blocks>& blocks) {
  ih::ArrayShape a;
  Result<std::vector<int>> n = interior_of(o, blocks);
  if (!n) return fail(n.error());
  a.ndims = static_cast<int>(n->size());
  a.interior = *n;
  const std::string *g = o.get("ghost"), *lo = o.get("ghost-lo"), *hi = o.get("ghost-hi");
  if (g && (lo || hi)) return fail("--ghost and --ghost-lo/--ghost-hi exclude each other");
  if (!g && !lo && !hi) return fail("missing required option --ghost (or --ghost-lo and --ghost-hi)");
  for (auto [key, text, out] : {std::tuple{"ghost-lo", g ? g : lo, &a.ghost_lo}, std::tuple{"ghost-hi", g ? g : hi, &a.ghost_hi}}) {
    if (!text) {
      out->assign(a.ndims, 0);  // a side not given has no ghost cells
      continue;
    }
    Result<std::vector<int>> v = per_dimension(g ? "ghost" : key, *text, a.ndims, 0, ih::kMaxHaloExtent);
    if (!v) return fail(v.error());
    *out = *v;
  }
  if (const std::string* e = o.get("elem")) {
    Result<std::int64_t> bytes = named("elem", parse_integer(*e, 1, std::int64_t{1} << 30));
    if (!bytes) return fail(bytes.error());
    a.elem_bytes = *bytes;
  }
  const std::string* order = o.get("order");
  if (order && *order != "C" && *order != "F" && *order != "Fortran") return fail("--order: unknown value '" + *order + "' (expected C or F)");
  a.order = order && *order != "C" ? ih::Order::kFortran : ih::Order::kC;
  return a;
}

Result<std::optional<engine::Grid>> grid_of(const Options& o, int d) {
  const std::string *dims = o.get("dims"), *periods = o.get("periods");
  if (!dims) {
    if (periods) return fail("--periods needs --dims");
    return std::optional<engine::Grid>{};
  }
  Result<std::vector<int>> p = named("dims", parse_int_list(*dims, 1, 1 << 20, 64));
  if (!p) return fail(p.error());
  if (static_cast<int>(p->size()) != d) return fail("--dims has " + std::to_string(p->size()) + " values; the array has " + std::to_string(d) + " dimensions");
  std::vector<bool> per(d, true);
  if (periods) {
    Result<std::vector<int>> v = per_dimension("periods", *periods, d, 0, 1);
    if (!v) return fail(v.error());
    for (int k = 0; k < d; ++k) per[k] = (*v)[k] == 1;
  }
  Result<engine::Grid> g = engine::Grid::create(*p, per);
  if (!g) return fail("--dims: " + g.error());
  return std::optional<engine::Grid>(*g);
}

Result<eh::HaloDescription> description_of(const Options& o, const std::optional<Blocks>& blocks) {
  Result<ih::ArrayShape> a = array_of(o, blocks);
  if (!a) return fail(a.error());
  Result<std::optional<engine::Grid>> g = grid_of(o, a->ndims);
  if (!g) return fail(g.error());
  const std::string spec = o.get("stencil") ? *o.get("stencil") : "moore:d=" + std::to_string(a->ndims) + ",r=1";
  Result<eh::HaloDescription> h = eh::describe_halo(*a, spec, *g);
  if (!h) return fail((o.get("stencil") ? "--stencil: " : "") + h.error());
  if (blocks && blocks->uneven) {  // every block's own description must hold too
    a->interior = blocks->smallest;
    Result<eh::HaloDescription> small = eh::describe_halo(*a, h->neighborhood, *g);
    if (!small) return fail("--global: the smallest blocks (" + list_text(blocks->smallest, "x") + "): " + small.error());
  }
  return h;
}

Result<eh::HaloPlanOptions> plan_options_of(const Options& o, int d) {
  eh::HaloPlanOptions p;
  const std::pair<const char*, eh::HaloAlgoChoice> algos[] = {{"auto", eh::HaloAlgoChoice::kAuto},       {"direct", eh::HaloAlgoChoice::kDirect},
                                                              {"combining", eh::HaloAlgoChoice::kCombining}, {"dimwise", eh::HaloAlgoChoice::kDimwise},
                                                              {"split", eh::HaloAlgoChoice::kSplit},     {"hybrid", eh::HaloAlgoChoice::kHybrid}};
  if (const std::string* a = o.get("algo")) {
    bool found = false;
    for (const auto& [name, choice] : algos) found = found || (*a == name && (p.algo = choice, true));
    if (!found) return fail("--algo: unknown value '" + *a + "' (expected auto, direct, combining, dimwise, split or hybrid)");
  }
  if (const std::string* s = o.get("dim-order")) {
    Result<std::vector<int>> v = named("dim-order", parse_int_list(*s, 0, d - 1, 64));
    if (!v) return fail(v.error());
    v = named("dim-order", engine::check_dim_order(*v, d));
    if (!v) return fail(v.error());
    p.dim_order = *v;
  }
  if (const std::string* f = o.get("cost-model")) {
    Result<engine::CostModel> m = engine::load_cost_model(*f);
    if (!m) return fail("--cost-model: " + m.error());
    p.model = *m;
  }
  for (const char* k : {"alpha-us", "beta-us-per-byte"}) {
    if (const std::string* s = o.get(k)) {
      Result<double> v = named(k, parse_nonnegative_double(*s));
      if (!v) return fail(v.error());
      (std::string(k) == "alpha-us" ? p.model.alpha_us : p.model.beta_us_per_byte) = *v;
    }
  }
  Result<engine::Placement> placed = parse_node_placement(o.get("ranks-per-node"), o.get("cyclic-nodes"), o.get("dims") != nullptr);
  if (!placed) return fail(placed.error());
  p.placement = *placed;
  return p;
}

std::string fixed(double v, int digits = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string list_text(const std::vector<int>& v, const char* sep) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

std::string array_text(const ih::ArrayShape& a) {
  return "interior " + list_text(a.interior, "x") + ", ghost lo " + list_text(a.ghost_lo) + " hi " + list_text(a.ghost_hi) + ", " +
         std::to_string(a.elem_bytes) + "-byte elements, " + ih::to_string(a.order) + " order";
}

std::string grid_text(const std::optional<engine::Grid>& g) {
  if (!g) return "no grid (every neighbour another process)";
  std::vector<int> periods;
  for (bool b : g->periods()) periods.push_back(b);
  return "grid " + list_text(g->dims(), "x") + " periods " + list_text(periods) + " (" + std::to_string(g->size()) + " ranks)";
}

// What plan, explain, simulate and rank plan from: the description (with --global the shared
// one, whose interior is the largest blocks), the options, and the blocks.
struct Planning {
  eh::HaloDescription h;
  eh::HaloPlanOptions options;
  std::optional<Blocks> blocks;
};

Result<Planning> planning_of(const Options& o) {
  Result<std::optional<Blocks>> blocks = blocks_of(o);
  if (!blocks) return fail(blocks.error());
  Result<eh::HaloDescription> h = description_of(o, *blocks);
  if (!h) return fail(h.error());
  Result<eh::HaloPlanOptions> po = plan_options_of(o, h->array.ndims);
  if (!po) return fail(po.error());
  return Planning{*h, *po, *blocks};
}

// The plan of the rank at coords: with --global its own interior, in the shared choice (the
// plan simulate_halo_blocks gives that rank).
Result<ih::HaloPlan> own_plan(const Planning& p, const engine::Coords& coords) {
  if (!p.blocks) return eh::make_halo_plan(p.h, p.options);
  return eh::plan_block(p.h, p.blocks->extents, coords, p.options);
}

// The "decomposition" member of explain's and simulate's JSON.
nlohmann::ordered_json decomposition_json(const Blocks& b) { return {{"global", b.global}, {"uneven", b.uneven}, {"extents", b.extents}}; }

// "global 10x9 in blocks (uneven): dimension 0: 4,3,3; dimension 1: 5,4; ...".
std::string blocks_text(const Blocks& b) {
  std::string s = "global " + list_text(b.global, "x") + " in blocks (" + (b.uneven ? "uneven" : "even") + "):";
  for (std::size_t k = 0; k < b.extents.size(); ++k) s += std::string(k ? ";" : "") + " dimension " + std::to_string(k) + ": " + list_text(b.extents[k]);
  if (b.uneven)
    s += "; the choice is priced on the largest blocks (" + list_text(b.largest, "x") + "), every rank plans its own interior in its algorithm and order";
  return s;
}

Result<int> cmd_plan(const Options& o) {
  if (o.get("rank") && !o.get("global")) return fail("--rank needs --global (without it every rank has the same plan)");
  Result<Planning> p = planning_of(o);
  if (!p) return fail(p.error());
  engine::Coords at;
  if (p->blocks) {
    Result<int> rank = o.get("rank") ? named("rank", parse_int(*o.get("rank"), 0, p->h.grid->size() - 1)) : Result<int>(0);
    if (!rank) return fail(rank.error());
    at = p->h.grid->coords(*rank);
  }
  Result<ih::HaloPlan> plan = own_plan(*p, at);
  if (!plan) return fail(plan.error());
  std::cout << ih::to_json_string(*plan);
  return kExitOk;
}

// Each term of the table by its name in cost-model files ("alpha_us": its price x count).
nlohmann::ordered_json terms_json(const engine::CostBreakdown& terms) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < engine::kCostTerms.size(); ++i) j[engine::kCostTerms[i].name] = terms.term_us[i];
  if (terms.overlap_us != 0) j["phase_overlap"] = terms.overlap_us;
  return j;
}

nlohmann::ordered_json candidate_json(const eh::HaloCandidate& c, bool picked) {
  const eh::HaloCost& k = c.cost;
  return {{"algorithm", ih::to_string(c.plan.algorithm())}, {"dim_order", c.plan.dim_order()}, {"picked", picked},
          {"predicted_us", k.us}, {"messages", k.counts.sends}, {"phases", k.counts.phases},
          {"bytes_sent", k.counts.sent_bytes + k.counts.self_bytes}, {"ghost_bytes", c.plan.stats().ghost_cells * c.plan.array().elem_bytes},
          {"temp_bytes", k.temp_bytes}, {"rank", k.rank}, {"terms_us", terms_json(k.terms)}};
}

void print_candidates(const std::vector<eh::HaloCandidate>& cands, std::size_t pick, const engine::CostModel& model) {
  std::printf("  %-10s %-8s %12s %9s %7s %16s %12s %11s\n", "algorithm", "order", "predicted us", "messages", "phases", "bytes sent/rank",
              "ghost bytes", "temp bytes");
  for (std::size_t i = 0; i < cands.size(); ++i) {
    const eh::HaloCandidate& c = cands[i];
    std::printf("%s %-10s %-8s %12s %9lld %7d %16lld %12lld %11lld\n", i == pick ? "*" : " ", ih::to_string(c.plan.algorithm()),
                list_text(c.plan.dim_order()).c_str(), fixed(c.cost.us).c_str(), static_cast<long long>(c.cost.counts.sends), c.cost.counts.phases,
                static_cast<long long>(c.cost.counts.sent_bytes + c.cost.counts.self_bytes),
                static_cast<long long>(c.plan.stats().ghost_cells * c.plan.array().elem_bytes), static_cast<long long>(c.cost.temp_bytes));
  }
  std::printf("* picked (the cheapest prediction). Its terms: %s\n", eh::explain(cands[pick].cost, model).c_str());
}

Result<int> cmd_explain(const Options& o) {
  const std::string format = o.get("format") ? *o.get("format") : "text";
  if (format != "text" && format != "json") return fail("--format: unknown value '" + format + "' (expected text or json)");
  Result<Planning> p = planning_of(o);
  if (!p) return fail(p.error());
  const eh::HaloDescription* h = &p->h;
  const eh::HaloPlanOptions* po = &p->options;
  Result<std::vector<eh::HaloCandidate>> cands = eh::halo_candidates(*h, *po);  // with --global: the shared description's
  if (!cands) return fail(cands.error());
  const std::size_t pick = eh::pick_halo_candidate(*cands);
  if (format == "json") {
    nlohmann::ordered_json j = {{"schema", "cartplan.halo_explain/2"}, {"array", array_text(h->array)}, {"grid", grid_text(h->grid)},
                                {"regions", h->neighborhood.size()}};
    if (p->blocks) j["decomposition"] = decomposition_json(*p->blocks);
    j["candidates"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < cands->size(); ++i) j["candidates"].push_back(candidate_json((*cands)[i], i == pick));
    std::cout << ir::graph::canonical_text(j);
    return kExitOk;
  }
  std::cout << "halo: " << array_text(h->array) << "; " << h->neighborhood.size() << " regions; " << grid_text(h->grid) << "\n";
  if (p->blocks) std::cout << "decomposition: " << blocks_text(*p->blocks) << "\n";
  std::cout << "model predictions for the busiest rank (not measurements):\n";
  std::cout.flush();
  print_candidates(*cands, pick, po->model);
  std::fflush(stdout);
  return kExitOk;
}

Result<ih::HaloPlan> read_plan(const std::string& path) { return read_plan_file(path, &ih::halo_plan_from_json_string); }

Result<int> cmd_verify(const Options& o) {
  if (o.positional.empty()) return fail("verify needs a plan file (or - for stdin)");
  Result<ih::HaloPlan> plan = read_plan(o.positional[0]);
  if (!plan) return fail(plan.error());
  const std::vector<std::string> errors = ih::verify(*plan);
  for (const std::string& e : errors) std::cerr << "cartplan halo verify: " << e << "\n";
  if (!errors.empty()) return kExitWrong;
  std::cout << "ok: " << ih::to_string(plan->algorithm()) << " halo plan fills each of the " << plan->stats().ghost_cells
            << " required ghost cells once with the right value and writes no other (" << plan->stats().wire_cells << " cells sent)\n";
  return kExitOk;
}

struct PlanOnGrid {
  ih::HaloPlan plan;  // with --global: the shared description's (the largest blocks)
  engine::Grid grid;
  engine::CostModel model;
  std::optional<Planning> uneven;  // with --global
};

// The plan of --plan FILE, or the one planned from the description; and the grid (required).
Result<PlanOnGrid> plan_on_grid(const Options& o) {
  if (!o.get("dims")) return fail("missing required option --dims (the grid to run on)");
  if (const std::string* f = o.get("plan")) {
    for (const std::set<std::string>* group : {&kArrayOptions, &kPlanOptions}) {
      for (const std::string& k : *group) {
        if (o.get(k)) return fail("--plan and --" + k + " exclude each other");
      }
    }
    Result<ih::HaloPlan> plan = read_plan(*f);
    if (!plan) return fail(plan.error());
    Result<std::optional<engine::Grid>> g = grid_of(o, plan->ndims());
    if (!g) return fail(g.error());
    return PlanOnGrid{*plan, **g, engine::CostModel{}, std::nullopt};
  }
  Result<Planning> p = planning_of(o);
  if (!p) return fail(p.error());
  Result<ih::HaloPlan> plan = eh::make_halo_plan(p->h, p->options);
  if (!plan) return fail(plan.error());
  const engine::Grid grid = *p->h.grid;
  const engine::CostModel model = p->options.model;
  return PlanOnGrid{*plan, grid, model, p->blocks ? std::optional<Planning>(std::move(*p)) : std::nullopt};
}

void print_sim_report(const sim::halo::HaloSimReport& r, const eh::HaloCost& cost, const char* algo, const PlanOnGrid& pg, bool json) {
  const Blocks* blocks = pg.uneven ? &*pg.uneven->blocks : nullptr;
  if (json) {
    nlohmann::ordered_json j{{"schema", "cartplan.halo_sim/1"}, {"algorithm", algo}, {"ranks", r.ranks}, {"ok", r.ok}, {"errors", r.errors},
                             {"phases", r.phases}, {"transfers", r.transfers}, {"wire_bytes", r.wire_bytes}, {"self_bytes", r.self_bytes},
                             {"ghost_bytes", r.ghost_bytes}, {"max_rank_sent_bytes", r.max_rank_sent_bytes}, {"predicted_us", cost.us}};
    if (blocks) j["decomposition"] = decomposition_json(*blocks);
    std::cout << ir::graph::canonical_text(j);
    return;
  }
  std::cout << (r.ok ? "ok" : "WRONG") << ": " << algo << " on " << r.ranks << " ranks, " << r.phases << " phases, " << r.transfers
            << " transfers, " << r.wire_bytes << " bytes between ranks and " << r.self_bytes << " to themselves; required ghost cells "
            << r.ghost_bytes << " bytes, " << r.written_bytes << " written once\n"
            << "busiest rank: " << r.max_rank_sent_bytes << " bytes sent; model: " << fixed(cost.us) << " us (rank " << cost.rank << ")\n";
  if (blocks) std::cout << "decomposition: " << blocks_text(*blocks) << "; every rank ran its own plan\n";
}

Result<int> cmd_simulate(const Options& o) {
  const std::string format = o.get("format") ? *o.get("format") : "text";
  if (format != "text" && format != "json") return fail("--format: unknown value '" + format + "' (expected text or json)");
  Result<PlanOnGrid> pg = plan_on_grid(o);
  if (!pg) return fail(pg.error());
  Result<eh::HaloBinder> b = eh::HaloBinder::create(pg->plan);
  if (!b) return fail(b.error());
  Result<sim::halo::HaloSimReport> r =
      pg->uneven ? sim::halo::simulate_halo_blocks(pg->uneven->h, pg->uneven->blocks->extents, pg->uneven->options, pg->grid)
                 : sim::halo::simulate_halo(*b, pg->grid);
  if (!r) return fail(r.error());
  Result<eh::HaloCost> cost = eh::price_halo(*b, pg->model, pg->grid);  // with --global: the shared choice's price
  if (!cost) return fail(cost.error());
  print_sim_report(*r, *cost, ih::to_string(pg->plan.algorithm()), *pg, format == "json");
  for (const std::string& e : r->errors) std::cerr << "cartplan halo simulate: " << e << "\n";
  return r->ok ? kExitOk : kExitWrong;
}

std::string region_text(const eh::HaloRegion& r) {
  std::string s = r.buffer == eh::HaloRegion::kArray ? "array" : "temp[" + std::to_string(r.buffer) + "]";
  return s + " start " + list_text(r.start) + " extent " + list_text(r.extent);
}

void print_program(const eh::HaloProgram& p, const engine::Grid& g) {
  std::cout << "rank " << p.rank << " at " << ir::to_string(g.coords(p.rank)) << " of " << grid_text(g) << "; array sizes ";
  std::vector<int> sizes;
  for (int k = 0; k < p.array.ndims; ++k) sizes.push_back(p.array.extent(k));
  std::cout << list_text(sizes, "x") << " (" << ih::to_string(p.array.order) << " order, " << p.array.elem_bytes << "-byte elements)\n";
  for (std::size_t s = 0; s < p.temp_extents.size(); ++s) std::cout << "  temp[" << s << "]: " << list_text(p.temp_extents[s], "x") << "\n";
  for (std::size_t f = 0; f < p.phases.size(); ++f) {
    const eh::HaloPhaseProgram& ph = p.phases[f];
    std::cout << "phase " << f << (ph.recvs.empty() && ph.sends.empty() ? ": (nothing)" : ":") << "\n";
    for (const auto* list : {&ph.recvs, &ph.sends}) {
      for (const eh::HaloTransfer& t : *list) {
        std::cout << "  " << (list == &ph.recvs ? "recv from " : "send to   ") << t.peer << " tag " << t.tag << ", " << t.cells << " cells:";
        for (const eh::HaloRegion& r : t.regions) std::cout << " [" << region_text(r) << "]";
        std::cout << "\n";
      }
    }
  }
}

Result<int> cmd_rank(const Options& o) {
  if (!o.get("rank")) return fail("missing required option --rank");
  Result<PlanOnGrid> pg = plan_on_grid(o);
  if (!pg) return fail(pg.error());
  Result<int> rank = named("rank", parse_int(*o.get("rank"), 0, pg->grid.size() - 1));
  if (!rank) return fail(rank.error());
  Result<ih::HaloPlan> plan = pg->uneven ? own_plan(*pg->uneven, pg->grid.coords(*rank)) : Result<ih::HaloPlan>(pg->plan);
  if (!plan) return fail(plan.error());
  Result<eh::HaloBinder> b = eh::HaloBinder::create(std::move(*plan));
  if (!b) return fail(b.error());
  Result<eh::HaloProgram> p = eh::lower_halo(*b, pg->grid, pg->grid.coords(*rank));
  if (!p) return fail(p.error());
  print_program(*p, pg->grid);
  return kExitOk;
}

std::set<std::string> operator+(std::set<std::string> a, const std::set<std::string>& b) {
  a.insert(b.begin(), b.end());
  return a;
}

}  // namespace

int run_halo_command(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::cerr << kUsage;
    return kExitBadInput;
  }
  const std::string& command = args[0];
  if (command == "help" || command == "--help") {
    std::cout << kUsage;
    return kExitOk;
  }
  const std::set<std::string> planning = kArrayOptions + kGridOptions + kPlanOptions;
  std::set<std::string> allowed;
  std::size_t positional = 0;
  Result<int> (*handler)(const Options&) = nullptr;
  if (command == "plan") handler = cmd_plan, allowed = planning + std::set<std::string>{"rank"};
  else if (command == "explain") handler = cmd_explain, allowed = planning + std::set<std::string>{"format"};
  else if (command == "simulate") handler = cmd_simulate, allowed = planning + std::set<std::string>{"format", "plan"};
  else if (command == "rank") handler = cmd_rank, allowed = planning + std::set<std::string>{"rank", "plan"};
  else if (command == "verify") handler = cmd_verify, positional = 1;
  else {
    std::cerr << "cartplan: halo: unknown subcommand '" << command << "' (expected plan, explain, verify, simulate, rank or help)\n";
    return kExitBadInput;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (rest.size() == 1 && rest[0] == "--help") {
    std::cout << kUsage;
    return kExitOk;
  }
  Result<Options> options = parse_sub_options(rest, allowed, positional);
  return finish_subcommand("halo " + command, options ? handler(*options) : Result<int>(fail(options.error())));
}

}  // namespace cartplan::tools
