// Pricing graph schedules with the cost model's transport-neutral terms.
#include "engine/graph/price.h"

#include <algorithm>

namespace cartplan::engine::graph {
namespace {

std::int64_t message_bytes(const ir::graph::Message& m, const BlockSizes& sizes) {
  std::int64_t b = 0;
  for (const ir::graph::Part& p : m.parts) b += sizes.bytes(p.block);
  return b;
}

// One end of a message: half the per-message price, half the wire, the packing if several parts.
double end_us(std::int64_t bytes, std::size_t parts, const CostModel& m) {
  const double b = static_cast<double>(bytes);
  double us = 0.5 * (m.alpha_us + m.beta_us_per_byte * b);
  if (bytes > m.eager_limit_bytes) us += 0.5 * m.rendezvous_us;
  if (parts > 1) us += m.copy_us_per_byte * b;
  return us;
}

}  // namespace

double phase_us(const ir::graph::GraphPhase& ph, const BlockSizes& sizes, const CostModel& model) {
  double us = ph.sends.empty() && ph.recvs.empty() ? 0.0 : model.phase_us;
  for (const auto* list : {&ph.sends, &ph.recvs}) {
    for (const ir::graph::Message& m : *list) us += end_us(message_bytes(m, sizes), m.parts.size(), model);
  }
  for (const ir::graph::Copy& c : ph.copies) us += model.copy_us_per_byte * static_cast<double>(sizes.bytes(c.block));
  return us;
}

double schedule_us(const ir::graph::RankSchedule& schedule, const BlockSizes& sizes, const CostModel& model) {
  double us = 0;
  for (const ir::graph::GraphPhase& ph : schedule.phases) us += phase_us(ph, sizes, model);
  return us;
}

RankCost price_rank(const ir::graph::GraphPlan& plan, int rank, const BlockSizes& sizes, const CostModel& model) {
  RankCost c;
  for (const ir::graph::GraphPhase& ph : plan.schedule(rank).phases) {
    c.us += phase_us(ph, sizes, model);
    if (!ph.sends.empty() || !ph.recvs.empty()) ++c.phases;
    c.sends += static_cast<std::int64_t>(ph.sends.size());
    c.recvs += static_cast<std::int64_t>(ph.recvs.size());
    for (const ir::graph::Message& m : ph.sends) c.sent_bytes += message_bytes(m, sizes);
    for (const ir::graph::Message& m : ph.recvs) c.received_bytes += message_bytes(m, sizes);
    for (const ir::graph::Copy& cp : ph.copies) c.copied_bytes += sizes.bytes(cp.block);
  }
  return c;
}

GraphCost price_plan(const ir::graph::GraphPlan& plan, const BlockSizes& sizes, const CostModel& model) {
  GraphCost g;
  const int p = plan.size();
  double sum = 0;
  for (int r = 0; r < p; ++r) {
    const RankCost c = price_rank(plan, r, sizes, model);
    if (c.us > g.max_rank_us) g.max_rank_us = c.us, g.max_rank = r;
    sum += c.us;
    g.messages += c.sends;
    g.bytes += c.sent_bytes;
    g.max_rank_messages = std::max(g.max_rank_messages, c.sends + c.recvs);
    g.phases = std::max(g.phases, c.phases);
  }
  g.mean_rank_us = p ? sum / p : 0.0;
  // Critical path: phase by phase, a rank waits for itself and for the ranks it receives from.
  std::vector<double> finish(p, 0.0), before(p, 0.0);
  for (int f = 0; f < plan.phases(); ++f) {
    before = finish;
    for (int r = 0; r < p; ++r) {
      const auto& phases = plan.schedule(r).phases;
      if (f >= static_cast<int>(phases.size())) continue;
      double start = before[r];
      for (const ir::graph::Message& m : phases[f].recvs) start = std::max(start, before[m.peer]);
      finish[r] = start + phase_us(phases[f], sizes, model);
    }
  }
  for (double t : finish) g.critical_path_us = std::max(g.critical_path_us, t);
  return g;
}

}  // namespace cartplan::engine::graph
