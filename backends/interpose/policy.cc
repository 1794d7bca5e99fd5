// The do-no-harm rule of the drop-in: predictions of cartplan's plan and of Open MPI's direct
// round, and the switches that force a plan.
#include "backends/interpose/policy.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backends/mpi/info_options.h"
#include "engine/bind.h"
#include "engine/features.h"
#include "engine/lower.h"
#include "engine/predict.h"

namespace cartplan::interpose {
namespace {

std::string us(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f us", v);
  return buf;
}

// Open MPI 4.1's shared-memory transport (vader) as far as the rule prices it. A message of at
// most kInlineLimitBytes goes through the receiving peer's fast box, a ring of kFastBoxBytes
// per peer (each message with about kFastBoxHeaderBytes of headers), while there is room; any
// other message is a fragment and costs one message more (the model's alpha: a fragment is
// never cheaper than a message). This is what tells cartplan's merged 512-byte message from
// Open MPI's two inline 256-byte ones. The drop-in runs only on Open MPI, so this profile
// lives here beside it, not in engine/'s transport-neutral model.
constexpr std::int64_t kInlineLimitBytes = 256;
constexpr std::int64_t kFastBoxBytes = 4096;
constexpr std::int64_t kFastBoxHeaderBytes = 32;

// Blocks whose offsets differ by a wrap reach the same process on every rank: one peer, one
// fast box.
bool same_peer(const ir::Offset& a, const ir::Offset& b, const engine::Grid& grid) {
  ir::Offset d(a.size());
  for (std::size_t k = 0; k < a.size(); ++k) d[k] = a[k] - b[k];
  return engine::wraps_to_self(d, grid);
}

// Open MPI's algorithm: one phase of point-to-point messages, one per edge (block), the edges
// to the process itself included (its loopback transport); on a mesh a block counts for the
// share of processes that have its neighbour. Each peer's messages fill its fast box in order;
// the others are fragments. (cartplan's own direct plan is not this: it sends the blocks of
// repeated offsets, which small grids produce, in one message.)
double open_mpi_us(const mpi::NeighborhoodComm& nc, const engine::CostModel& model, const std::vector<std::int64_t>& block_bytes) {
  const engine::Grid& grid = nc.grid();
  std::vector<std::pair<ir::Offset, std::int64_t>> rings;  // peer -> bytes used in its fast box
  double us = model.phase_us;
  for (int i = 0; i < nc.nbh().size(); ++i) {
    const ir::Offset& o = nc.nbh().offsets()[i];
    const std::int64_t bytes = block_bytes[block_bytes.size() == 1 ? 0 : static_cast<std::size_t>(i)];
    const double share = engine::peer_share(o, grid);
    us += share * model.message_us(bytes);
    if (engine::wraps_to_self(o, grid)) continue;  // loopback: no fast box
    auto ring = std::find_if(rings.begin(), rings.end(), [&](const auto& r) { return same_peer(r.first, o, grid); });
    if (ring == rings.end()) ring = rings.insert(rings.end(), {o, 0});
    const std::int64_t need = bytes + kFastBoxHeaderBytes;
    if (bytes <= kInlineLimitBytes && ring->second + need <= kFastBoxBytes) ring->second += need;
    else us += share * model.alpha_us;
  }
  return us;
}

}  // namespace

// The program of a process with all its neighbours (engine/bind.h, bind_representative): every
// round has a peer of its own there, so no fast box fills up with several of them.
double cartplan_fragments(const ir::Plan& plan, const std::vector<std::int64_t>& block_bytes, const engine::Grid& grid,
                          const engine::LowerOptions& lowering) {
  const std::vector<std::int64_t> sizes =
      ir::blocks_have_own_shape(plan.op()) ? block_bytes : std::vector<std::int64_t>{block_bytes.at(0)};
  Result<engine::BoundPlan> rep = engine::bind_representative(plan, grid, sizes);
  if (!rep) return 0;
  Result<engine::Program> program = engine::lower(plan, *rep, engine::contiguous_layout(plan, *rep), lowering);
  if (!program) return 0;
  const std::vector<std::vector<double>> weights = engine::round_weights(plan, grid);
  double n = 0;
  for (const engine::PhaseProgram& ph : program->phases)
    for (const engine::Message& m : ph.messages)
      if (!m.recv && m.bytes > kInlineLimitBytes) n += weights[static_cast<std::size_t>(m.phase)][static_cast<std::size_t>(m.round)];
  return n;
}

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

double overhead_messages(Form form) {
  // bench/results/cpp-2core/osu_summary.md, "Per-call overhead" (medians at 1..64 bytes: 0.06 us
  // blocking and non-blocking, 0.12 us persistent) over alpha = 0.173 us
  // (bench/results/cpp-2core/cost_model.json).
  switch (form) {
    case Form::kBlocking: return 0.35;
    case Form::kNonblocking: return 0.35;
    case Form::kPersistent: return 0.7;
  }
  return 0.7;
}

double oversubscribed_phase_us(double base, double per_core) {
  if (per_core <= 1.0) return base;
  return std::max(base, engine::CostModel::kOversubscribedPhaseUs * (per_core - 1.0));
}

double completion_us(Form form, double per_core) {
  if (form == Form::kBlocking || per_core <= 1.0) return 0;
  return engine::CostModel::kOversubscribedPhaseUs * (per_core - 1.0);
}

Verdict judge(const mpi::NeighborhoodComm& nc, const ir::Plan& plan, const std::vector<std::int64_t>& block_bytes, Form form,
              double per_core) {
  if (forced_algorithm() != Forced::kAuto) return {true, "forced by CARTPLAN_INTERPOSE_ALGORITHM"};
  if (nc.options().algo != engine::AlgoChoice::kAuto || nc.options().given_plan)
    return {true, "asked for by the graph's Info (cartplan_algorithm or cartplan_plan)"};
  const engine::CostModel& model = nc.options().model;
  engine::PredictOptions lowering;  // as the executor lowers, from what ranks agreed on (the verdict must be the same everywhere)
  lowering.lowering = mpi::agreed_lower_options(nc.options());
  const double mine = engine::predict(plan, block_bytes, model, nc.grid(), lowering).total_us() +
                      cartplan_fragments(plan, block_bytes, nc.grid(), lowering.lowering) * model.alpha_us;
  const double theirs = open_mpi_us(nc, model, block_bytes);
  const double overhead = overhead_messages(form) * model.alpha_us;
  const double completion = completion_us(form, per_core);
  const double cost = mine + overhead + completion;
  Verdict v;
  v.accelerate = cost <= (1 - kClearMargin) * theirs;
  v.why = std::string(ir::to_string(plan.algorithm())) + " plan, " + std::to_string(plan.stats().rounds) + " rounds: " +
          us(mine) + " + " + us(overhead) + " per call" + (completion > 0 ? " + " + us(completion) + " to complete it" : "") +
          " against " + us(theirs) + " for Open MPI's one message per edge" +
          (v.accelerate ? "" : " (not 10 % less)");
  return v;
}

}  // namespace cartplan::interpose
