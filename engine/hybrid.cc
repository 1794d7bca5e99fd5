// Hybrid plans: a direct phase for some offsets, the combining phases for the rest, and the
// greedy search for the direct set under the cost model.
#include "engine/hybrid.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <set>

#include "engine/order_search.h"
#include "engine/planner.h"

namespace cartplan::engine {
namespace {

// Appends `sub` (a plan of the sub-neighbourhood whose block j is block idx[j] of the whole)
// to `parts`: block indices mapped back, temp slots after the existing ones, tags continued.
void append(ir::PlanParts& parts, const ir::Plan& sub, const std::vector<int>& idx, int& tag) {
  const int base = static_cast<int>(parts.temp_slots.size());
  const ir::Op op = sub.op();
  auto map = [&](ir::BufRef r) {
    if (r.kind == ir::BufKind::kTemp) r.index += base;
    else if (r.kind == ir::BufKind::kSend ? ir::personalized_send(op) : !ir::one_recv_block(op)) r.index = idx[r.index];
    return r;
  };
  for (const ir::TempSlot& s : sub.temp_slots()) parts.temp_slots.push_back({idx[s.shape_of]});
  for (ir::Phase phase : sub.phases()) {
    for (ir::Round& round : phase.rounds) {
      round.tag = tag++;
      for (ir::BufRef& r : round.send) r = map(r);
      for (ir::BufRef& r : round.recv) r = map(r);
    }
    for (ir::Copy& c : phase.copies) c = {map(c.from), map(c.to)};
    parts.phases.push_back(std::move(phase));
  }
  for (const ir::Copy& c : sub.copies()) parts.copies.push_back({map(c.from), map(c.to)});
}

}  // namespace

bool supports_hybrid(ir::Op op) {
  const ir::Op s = ir::symmetric_op(op);
  return s == ir::Op::kAlltoall || s == ir::Op::kAllgather;
}

ir::Plan plan_hybrid(ir::Op op, const Neighborhood& nbh, const std::vector<int>& dim_order,
                     const std::vector<Offset>& direct) {
  assert(supports_hybrid(op));
  const ir::Op sym = ir::symmetric_op(op);
  const std::set<Offset> chosen(direct.begin(), direct.end());
  std::vector<int> direct_idx, combined_idx;
  std::vector<Offset> direct_offsets, combined_offsets;
  for (int i = 0; i < nbh.size(); ++i) {
    const bool d = chosen.count(nbh[i]) > 0;
    assert(!d || !Neighborhood::is_zero(nbh[i]));
    (d ? direct_idx : combined_idx).push_back(i);
    (d ? direct_offsets : combined_offsets).push_back(nbh[i]);
  }
  ir::PlanParts parts;
  parts.op = op;
  parts.kind = direct.empty() ? ir::PlanKind::kCombining : ir::PlanKind::kHybrid;
  parts.ndims = nbh.ndims();
  parts.neighborhood = nbh.offsets();
  parts.dim_order = dim_order;
  int tag = 0;
  if (!combined_offsets.empty())
    append(parts, plan_combining(sym, *Neighborhood::create(nbh.ndims(), combined_offsets), dim_order), combined_idx, tag);
  if (!direct_offsets.empty()) {
    ir::PlanParts direct_parts;
    append(direct_parts, plan_direct(sym, *Neighborhood::create(nbh.ndims(), direct_offsets)), direct_idx, tag);
    assert(direct_parts.phases.size() == 1 && direct_parts.temp_slots.empty());
    // The direct rounds depend on nothing: they join the first phase that sends messages, so
    // the plan has no phase more than its combining part (a phase boundary is a wait for
    // arrivals before the next sends). That phase then mixes shifts of several dimensions.
    ir::Phase& direct_phase = direct_parts.phases.front();
    auto first = std::find_if(parts.phases.begin(), parts.phases.end(), [](const ir::Phase& ph) { return !ph.rounds.empty(); });
    if (first == parts.phases.end()) {
      parts.phases.insert(parts.phases.begin(), std::move(direct_phase));
    } else {
      first->dim = ir::Phase::kAllDims;
      first->rounds.insert(first->rounds.begin(), direct_phase.rounds.begin(), direct_phase.rounds.end());
      first->copies.insert(first->copies.end(), direct_phase.copies.begin(), direct_phase.copies.end());
    }
    parts.copies.insert(parts.copies.end(), direct_parts.copies.begin(), direct_parts.copies.end());
    // Tags in round order, one per round, as every planner numbers them.
    tag = 0;
    for (ir::Phase& ph : parts.phases)
      for (ir::Round& r : ph.rounds) r.tag = tag++;
  }
  parts.stats = ir::derived_stats(parts);
  return ir::Plan(std::move(parts));
}

std::optional<HybridChoice> search_hybrid(ir::Op op, const Neighborhood& nbh, const std::vector<int>& dim_order,
                                          const std::vector<std::int64_t>& block_bytes, const CostModel& model,
                                          const std::optional<Grid>& grid, const PredictOptions& options) {
  if (!supports_hybrid(op)) return std::nullopt;
  // Distinct non-zero offsets in first-occurrence order, and the units the search moves.
  std::vector<Offset> distinct;
  std::set<Offset> seen;
  for (const Offset& o : nbh.offsets())
    if (!Neighborhood::is_zero(o) && seen.insert(o).second) distinct.push_back(o);
  std::vector<int> unit_of(distinct.size());
  int units = 0;
  if (static_cast<int>(distinct.size()) <= kMaxHybridUnits) {
    for (std::size_t i = 0; i < distinct.size(); ++i) unit_of[i] = static_cast<int>(i);
    units = static_cast<int>(distinct.size());
  } else {
    std::map<int, int> class_of;  // non-zero coordinates -> unit, in increasing order
    for (const Offset& o : distinct) class_of.emplace(Neighborhood::nonzeros(o), 0);
    for (auto& [z, u] : class_of) u = units++;
    for (std::size_t i = 0; i < distinct.size(); ++i) unit_of[i] = class_of[Neighborhood::nonzeros(distinct[i])];
  }
  if (units < 2) return std::nullopt;

  std::vector<bool> taken(units, false);
  auto direct_set = [&](int extra) {
    std::vector<Offset> out;
    for (std::size_t i = 0; i < distinct.size(); ++i)
      if (taken[unit_of[i]] || unit_of[i] == extra) out.push_back(distinct[i]);
    return out;
  };
  std::optional<HybridChoice> current;
  for (int moved = 0; moved + 1 < units; ++moved) {
    std::optional<HybridChoice> step;
    int step_unit = -1;
    for (int u = 0; u < units; ++u) {
      if (taken[u]) continue;
      std::vector<Offset> direct = direct_set(u);
      ir::Plan plan = plan_hybrid(op, nbh, dim_order, direct);
      const CostBreakdown cost = predict(plan, block_bytes, model, grid, options);
      if (!step || clearly_cheaper(cost.total_us(), step->cost.total_us())) {
        step = HybridChoice{std::move(direct), std::move(plan), cost};
        step_unit = u;
      }
    }
    if (current && !clearly_cheaper(step->cost.total_us(), current->cost.total_us())) break;
    taken[step_unit] = true;
    current = std::move(step);
  }
  return current;
}

}  // namespace cartplan::engine
