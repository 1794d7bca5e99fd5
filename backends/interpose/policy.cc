// The do-no-harm rule of the drop-in: predictions of cartplan's plan and of Open MPI's direct
// round, and the switches that force a plan.
#include "backends/interpose/policy.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "engine/planner.h"
#include "engine/predict.h"

namespace cartplan::interpose {
namespace {

std::string us(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f us", v);
  return buf;
}

// Open MPI's algorithm: cartplan's direct plan on this grid, where rounds that lead back to the
// process itself are local copies, plus one message for each of those (Open MPI sends every
// edge, its self edges through its loopback transport).
double open_mpi_us(const mpi::NeighborhoodComm& nc, ir::Op op, const std::vector<std::int64_t>& block_bytes) {
  const engine::CostModel& model = nc.options().model;
  const ir::Plan direct = engine::plan_direct(op, nc.nbh());
  double self_rounds = 0;
  for (const ir::Phase& phase : direct.phases())
    for (const ir::Round& round : phase.rounds) self_rounds += engine::wraps_to_self(round.shift, nc.grid()) ? 1 : 0;
  return engine::predict(direct, block_bytes, model, nc.grid()).total_us() + self_rounds * model.alpha_us;
}

}  // namespace

const char* form_name(Form form) {
  switch (form) {
    case Form::kBlocking: return "blocking";
    case Form::kNonblocking: return "non-blocking";
    case Form::kPersistent: return "persistent";
  }
  return "?";
}

Forced forced_algorithm() {
  static const Forced forced = [] {
    const char* v = std::getenv("CARTPLAN_INTERPOSE_ALGORITHM");
    if (!v || !*v || std::strcmp(v, "auto") == 0) return Forced::kAuto;
    if (std::strcmp(v, "direct") == 0) return Forced::kDirect;
    if (std::strcmp(v, "combining") == 0) return Forced::kCombining;
    std::fprintf(stderr, "cartplan_interpose: CARTPLAN_INTERPOSE_ALGORITHM='%s' is not auto, direct or combining; using auto\n", v);
    return Forced::kAuto;
  }();
  return forced;
}

double overhead_us(Form form) {
  // bench/results/cpp-2core/osu_summary.md, "Per-call overhead" (medians at 1..64 bytes).
  switch (form) {
    case Form::kBlocking: return 0.1;
    case Form::kNonblocking: return 0.3;
    case Form::kPersistent: return 0.3;
  }
  return 0.3;
}

double oversubscribed_phase_us(double base, double per_core) {
  if (per_core <= 1.0) return base;
  return std::max(base, engine::CostModel::kOversubscribedPhaseUs * (per_core - 1.0));
}

Verdict judge(const mpi::NeighborhoodComm& nc, const ir::Plan& plan, const std::vector<std::int64_t>& block_bytes, Form form) {
  if (forced_algorithm() != Forced::kAuto) return {true, "forced by CARTPLAN_INTERPOSE_ALGORITHM"};
  if (nc.options().algo != engine::AlgoChoice::kAuto || nc.options().given_plan)
    return {true, "asked for by the graph's Info (cartplan_algorithm or cartplan_plan)"};
  if (plan.algorithm() == ir::Algorithm::kDirect)
    return {false, "cartplan's pick is its direct plan: Open MPI's algorithm plus cartplan's overhead"};
  const double mine = engine::predict(plan, block_bytes, nc.options().model, nc.grid()).total_us();
  const double theirs = open_mpi_us(nc, plan.op(), block_bytes);
  const double cost = mine + overhead_us(form);
  Verdict v;
  v.accelerate = cost <= (1 - kClearMargin) * theirs;
  v.why = std::string(ir::to_string(plan.algorithm())) + " predicted " + us(mine) + " + " + us(overhead_us(form)) +
          " per call, Open MPI's direct round " + us(theirs) +
          (v.accelerate ? "" : " (not 10 % cheaper)");
  return v;
}

}  // namespace cartplan::interpose
