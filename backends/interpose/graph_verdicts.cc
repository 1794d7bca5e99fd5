// The graph collectives' verdicts of the drop-in: the agreed price table at creation, and the
// do-no-harm rule per call shape.
#include "backends/interpose/graph_verdicts.h"

#include <cstdio>

#include <utility>

#include "backends/interpose/guard.h"
#include "backends/mpi/test_failure.h"

namespace cartplan::interpose {
namespace {

using engine::graph::CandidatePrices;
using engine::graph::GraphAlgoChoice;
using engine::graph::TableCandidate;
using ir::graph::GraphAlgorithm;
using ir::graph::GraphOp;

// A non-blocking graph call of the drop-in builds its exchange (datatypes, lane, registry) on
// every call: it runs as its v form (graph_collectives.cc), which the graph collectives' pool of
// completed exchanges does not keep, while blocking calls reuse a cached exchange and persistent
// ones build it at init. Measured on this machine at
// np = 2 (not oversubscribed), graph 3-D Moore r=1 with holes, allgather 8 B, forced combining:
// non-blocking 3.13 us against persistent 0.53 us per call (bench/osu_neighbor --topo graph --d 3
// --r 1 --holes --form nonblocking|persistent, docs/dropin.md): 2.6 us, over the 0.173 us alpha
// bench/calibrate fitted there, about 15 messages (counted in messages as policy.h's overheads).
constexpr double kNonblockingBuildMessages = 15.0;

// The candidates whose patterns are built and priced: linear always; the combining ones unless
// linear is forced (CARTPLAN_INTERPOSE_ALGORITHM=direct, Info cartplan_algorithm=linear) or the
// Info names one (graph auto's: the grids where they exist, the 4-D one for both ops, the most-D
// one as graph auto constructs it, GraphComm::most_grid_in_auto: under cartplan_grid_dims auto
// only where some rank's degree exceeds its dimensions; Info cartplan_grid_dims narrows the pick,
// price_table.h's only_grid_d).
std::vector<TableCandidate> candidates(const mpi::GraphComm& g, const mpi::GraphOptions& o) {
  if (forced_algorithm() == Forced::kDirect || o.algo == GraphAlgoChoice::kLinear) return {TableCandidate{}};
  if (o.algo != GraphAlgoChoice::kAuto) return {TableCandidate{}, mpi::forced_candidate(o)};
  return g.auto_candidates(true, g.most_grid_in_auto(o.grid_dims));
}

GraphPick pick_of(bool accelerate, const TableCandidate& c) { return {accelerate, c.algorithm, c.grid_d}; }

// The first agreement: every rank has the native state and the same theta and algorithm
// (they decide which patterns are constructed, among neighbours, in the same order everywhere).
bool agree_options(MPI_Comm graph, const mpi::MpiStatus& local, const mpi::GraphOptions& o, std::string* why) {
  const std::int64_t algo = static_cast<std::int64_t>(o.algo);
  std::int64_t mine[7] = {local.ok() ? 0 : 1, o.theta, -o.theta, algo, -algo, o.grid_dims, -o.grid_dims}, all[7] = {};
  if (PMPI_Allreduce(mine, all, 7, MPI_INT64_T, MPI_MAX, graph) != MPI_SUCCESS) {
    *why = "the graph options' agreement failed";
    return false;
  }
  const bool alike = all[1] == -all[2] && all[3] == -all[4] && all[5] == -all[6];
  if (all[0]) *why = local.ok() ? "another rank's graph state or Info failed" : "graph state: " + local.message;
  else if (!alike) *why = "ranks gave different cartplan_theta, cartplan_algorithm or cartplan_grid_dims values";
  return all[0] == 0 && alike;
}

// The second agreement: the price table, as graph auto's (GraphComm::agree_prices: a failure on
// any rank fails it on every rank, in the same reduction).
bool agree_prices(mpi::GraphComm& g, const mpi::GraphOptions& o, const engine::CostModel& model, GraphVerdicts* v,
                  std::string* why) {
  const mpi::MpiStatus s = g.agree_prices(candidates(g, o), o.theta, model, &v->prices);
  if (!s.ok()) *why = "the price table: " + s.message;
  return s.ok();
}

// A step of graph_prepare, agreed on the user's communicator (every rank is in the same
// MPI_Comm_dup): a rank that failed alone would pass its calls through while the others run
// them through cartplan, and neither would see the other's messages. So a duplicate is
// accelerated on every rank or none.
mpi::MpiStatus agreed_outcome(MPI_Comm comm, const mpi::MpiStatus& local) {
  int mine = local.ok() ? 0 : 1, failed = 0;
  if (PMPI_Allreduce(&mine, &failed, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
    return mpi::mpi_error(MPI_ERR_OTHER, "the agreement on the duplicate's graph state failed");
  if (failed && local.ok()) return mpi::mpi_error(MPI_ERR_OTHER, "another rank could not make the duplicate's graph state");
  return local;
}

// "pairing", "grid 3-D", "grid most-D" (grid_dims(p, kMaxGridD)), ...
std::string name(const TableCandidate& a) {
  const std::string n = ir::graph::to_string(a.algorithm);
  if (a.algorithm != GraphAlgorithm::kGrid) return n;
  return a.grid_d == engine::graph::kMaxGridD ? n + " most-D" : n + " " + std::to_string(a.grid_d) + "-D";
}

std::string us(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f us", v);
  return buf;
}

// policy.h's rule on the agreed prices: cartplan's cost with its per-call overhead and
// completion against Open MPI's (linear). `size_pass`: the call learns its sizes first (v forms,
// and uniform blocking and non-blocking calls, which run as their v form): one message per edge
// before the schedule (linear's price at 0 bytes), and an exchange built for that call's sizes.
bool pays(const GraphVerdicts& v, const CandidatePrices& p, const TableCandidate& a, Form form, double size_pass_us, double* cost) {
  const bool builds = form == Form::kNonblocking || size_pass_us > 0;
  const double build = builds ? kNonblockingBuildMessages : 0.0;
  *cost = p[static_cast<std::size_t>(engine::graph::candidate_index(a))] + (overhead_messages(form) + build) * v.model.alpha_us +
          completion_us(form, v.per_core) + size_pass_us;
  return *cost <= (1 - kClearMargin) * p[0];
}

// Auto on a v form: a combining candidate that pays at every size of the table (the one cheaper
// at 0 bytes if both do), else linear (pass through). Never grid: sizes are not agreed
// (engine/graph/price_table.h's without_grid).
GraphPick any_size(const GraphVerdicts& v, GraphOp op, Form form, std::string* why) {
  GraphPick pick;
  double best = 0;
  const double size_pass_us = engine::graph::table_prices(v.prices, op, 0)[0];
  for (TableCandidate a : {TableCandidate{GraphAlgorithm::kPairing, 0}, TableCandidate{GraphAlgorithm::kCumulative, 0}}) {
    bool all = true;
    double at0 = 0, cost = 0;
    for (int i = 0; all && i < engine::graph::kPriceTableSizes; ++i) {
      all = pays(v, engine::graph::table_prices(v.prices, op, engine::graph::price_table_bytes(i)), a, form, size_pass_us, &cost);
      if (i == 0) at0 = cost;
    }
    if (all && (!pick.accelerate || at0 < best)) pick = pick_of(true, a), best = at0;
  }
  *why = pick.accelerate ? std::string(ir::graph::to_string(pick.algorithm)) + " schedule pays at every block size"
                         : "no combining schedule is predicted 10 % cheaper than Open MPI's at every block size";
  return pick;
}

// `grid_agreed`: a persistent init agreed one block size on every rank (mpi::GraphOptions's
// grid_in_auto); otherwise grid is no candidate of auto or of forced combining.
GraphPick decide(const GraphVerdicts& v, GraphOp op, Form form, std::int64_t bytes, bool grid_agreed, std::string* why) {
  if (forced_algorithm() == Forced::kDirect) {
    *why = "linear schedule, forced by CARTPLAN_INTERPOSE_ALGORITHM";
    return {true, GraphAlgorithm::kLinear};
  }
  if (v.options.algo != GraphAlgoChoice::kAuto) {
    *why = "asked for by the graph's Info (cartplan_algorithm)";
    return pick_of(true, mpi::forced_candidate(v.options));
  }
  const CandidatePrices all = engine::graph::only_grid_d(engine::graph::table_prices(v.prices, op, bytes < 0 ? 0 : bytes), v.options.grid_dims);
  const CandidatePrices p = grid_agreed ? all : engine::graph::without_grid(all);
  if (forced_algorithm() == Forced::kCombining) {
    const TableCandidate a = engine::graph::cheaper_combining(p);
    *why = name(a) + " schedule, forced by CARTPLAN_INTERPOSE_ALGORITHM";
    return pick_of(true, a);
  }
  if (bytes < 0) return any_size(v, op, form, why);
  const TableCandidate a = engine::graph::cheaper_combining(p);
  double cost = 0;
  const bool yes = pays(v, p, a, form, 0.0, &cost);
  *why = name(a) + " schedule: " + us(cost) + " with cartplan's per-call costs against " +
         us(p[0]) + " for Open MPI's one message per edge" + (yes ? "" : " (not 10 % less)");
  return pick_of(yes, yes ? a : TableCandidate{});
}

}  // namespace

// The one table between an Info choice and an algorithm (auto has none: linear).
constexpr std::pair<GraphAlgoChoice, GraphAlgorithm> kChoices[] = {{GraphAlgoChoice::kLinear, GraphAlgorithm::kLinear},
                                                                   {GraphAlgoChoice::kPairing, GraphAlgorithm::kPairing},
                                                                   {GraphAlgoChoice::kCumulative, GraphAlgorithm::kCumulative},
                                                                   {GraphAlgoChoice::kGrid, GraphAlgorithm::kGrid}};

GraphAlgorithm algorithm_of(GraphAlgoChoice c) {
  for (const auto& [choice, algorithm] : kChoices)
    if (choice == c) return algorithm;
  return GraphAlgorithm::kLinear;
}

GraphAlgoChoice choice_of(GraphAlgorithm a) {
  for (const auto& [choice, algorithm] : kChoices)
    if (algorithm == a) return choice;
  return GraphAlgoChoice::kLinear;
}

bool graph_detect(MPI_Comm graph, MPI_Info info, const Detection& det, std::unique_ptr<GraphVerdicts>* out,
                  SpareComms* spare, std::string* why) {
  if (!det.graph_candidate) {  // agreed in detection (model, CARTPLAN_INTERPOSE_GRAPHS)
    *why = det.graph_refusal;
    return false;
  }
  mpi::GraphComm* g = nullptr;
  mpi::MpiStatus s = mpi::require_graph(graph, &g);  // collective: one MPI_Comm_dup
  const mpi::MpiStatus spared = make_spare(graph, spare);  // one more, made on every rank whatever happened above
  if (s.ok()) s = spared;
  auto v = std::make_unique<GraphVerdicts>();
  if (s.ok()) v->options = g->options();
  if (s.ok()) s = mpi::parse_graph_info(info, &v->options);
  if (!agree_options(graph, s, v->options, why)) return false;
  if (!agree_prices(*g, v->options, det.model, v.get(), why)) return false;
  v->model = det.model;
  v->per_core = det.per_core;
  *out = std::move(v);
  return true;
}

mpi::MpiStatus graph_prepare(MPI_Comm comm, const GraphVerdicts& v, SpareComms* spare) {
  mpi::GraphComm* g = nullptr;
  mpi::MpiStatus s = mpi::require_graph(comm, &g);         // collective: one MPI_Comm_dup
  const mpi::MpiStatus spared = make_spare(comm, spare);   // one more, on every rank whatever happened above
  s = agreed_outcome(comm, s.ok() ? spared : s);
  if (!s.ok()) return s;  // on every rank: nobody constructs a pattern with a peer that has no state
  for (const TableCandidate& a : candidates(*g, v.options)) {
    ir::graph::RankSchedule unused;
    const mpi::MpiStatus built = g->schedule(GraphOp::kAllgather, a, v.options.theta, &unused);  // constructs the pattern
    if (!built.ok() && s.ok()) s = built;  // the next construction still needs this rank
  }
  if (s.ok() && mpi::test_failure("prepare")) s = mpi::injected_failure("prepare");
  s = agreed_outcome(comm, s);
  if (s.ok())  // every rank holds every candidate's pattern: a blocking call on it sweeps nothing
    for (const TableCandidate& a : candidates(*g, v.options)) g->grid_agreed(a);
  return s;
}

GraphPick graph_pick(GraphVerdicts& v, GraphOp op, Form form, std::int64_t bytes, bool grid_agreed, bool reporter, int serial) {
  grid_agreed = grid_agreed && form == Form::kPersistent && bytes >= 0;
  for (auto it = v.decisions.rbegin(); it != v.decisions.rend(); ++it)
    if (it->op == op && it->form == form && it->bytes == bytes && it->grid_agreed == grid_agreed) return it->pick;
  std::string why;
  const GraphPick pick = decide(v, op, form, bytes, grid_agreed, &why);
  if (v.decisions.size() >= 32) v.decisions.erase(v.decisions.begin());
  v.decisions.push_back({op, form, bytes, grid_agreed, pick});
  if (reporter) {
    const std::string size = bytes < 0 ? "blocks of any size (sizes may differ by rank)" : std::to_string(bytes) + "-byte blocks";
    std::fprintf(stderr, "cartplan_interpose: communicator %d graph %s %s %s: %s (%s)\n", serial, ir::graph::to_string(op),
                 form_name(form), size.c_str(), pick.accelerate ? "accelerated" : "passed through", why.c_str());
  }
  return pick;
}

}  // namespace cartplan::interpose
