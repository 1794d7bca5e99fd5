// The cost model applied to a plan: the program of a process with all its neighbours, its
// features, their prices. No layout rule lives here (lower.h holds them all).
#include "engine/predict.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <limits>
#include <string_view>

#include "engine/bind.h"

namespace cartplan::engine {
namespace {

// Whether lowering the plan with these sizes keeps every byte count (message, staging arena)
// within 64 bits: at most as many bytes as there are entries times the largest block.
bool lowerable(const ir::Plan& plan, const std::vector<std::int64_t>& block_bytes) {
  double entries = static_cast<double>(plan.num_blocks() + plan.temp_slots().size() + 1), largest = 0;
  for (const ir::Phase& phase : plan.phases())
    for (const ir::Round& r : phase.rounds) entries += static_cast<double>(r.send.size());
  for (std::int64_t b : block_bytes) {
    if (b < 0) return false;
    largest = std::max(largest, static_cast<double>(b));
  }
  return entries * largest < 0x1p62;
}

CostBreakdown unpriced() {
  CostBreakdown c;
  c.priced = false;
  return c;
}

}  // namespace

CostBreakdown predict(const ir::Plan& plan, const std::vector<std::int64_t>& block_bytes, const CostModel& model,
                      const std::optional<Grid>& grid, const PredictOptions& options) {
  assert(block_bytes.size() == 1 || static_cast<int>(block_bytes.size()) == plan.num_blocks());
  assert(options.contiguous.size() <= 1 || static_cast<int>(options.contiguous.size()) == plan.num_blocks());
  if (!lowerable(plan, block_bytes)) return unpriced();
  const std::optional<Grid> g = grid && grid->ndims() == plan.ndims() ? grid : std::nullopt;
  // Blocks of ops without own shapes all have block 0's size (allgather, reductions).
  const std::vector<std::int64_t> sizes =
      ir::blocks_have_own_shape(plan.op()) ? block_bytes : std::vector<std::int64_t>{block_bytes.at(0)};
  Result<BoundPlan> bound = bind_representative(plan, g, sizes);
  if (!bound) return unpriced();
  Layout layout = contiguous_layout(plan, *bound);
  const std::vector<bool>& flags = options.contiguous;
  for (auto* side : {&layout.send, &layout.recv})
    for (std::size_t i = 0; i < side->size() && !flags.empty(); ++i) (*side)[i].contiguous = flags[flags.size() == 1 ? 0 : i];
  if (!flags.empty()) layout.unit.contiguous = flags[0];
  Result<Program> program = lower(plan, *bound, layout, options.lowering);
  if (!program) return unpriced();
  return price(count_features(*program, round_weights(plan, g), model.eager_limit_bytes,
                              round_traffic(plan, g, options.placement)),
               model);
}

double CostBreakdown::us(double CostModel::*price) const {
  assert(kCostTerms[term_index(price)].price == price);
  return term_us[term_index(price)];
}

// One row of the table on `counts`: its count x its price (price's terms and a phase side's).
static double term_price(const Features& counts, const CostModel& model, const CostTerm& t) {
  return counts.*t.feature * model.*t.price;
}

// The price of one side of a phase (its counts x the table's prices).
static double side_us(const Features& side, const CostModel& model) {
  double us = 0;
  for (const CostTerm& t : kCostTerms) us += term_price(side, model, t);
  return us;
}

CostBreakdown price(const Features& counts, const CostModel& model) {
  CostBreakdown c;
  c.counts = counts;
  for (std::size_t i = 0; i < kCostTerms.size(); ++i) c.term_us[i] = term_price(counts, model, kCostTerms[i]);
  if (model.phase_overlap != 0) {
    double hidden = 0;
    for (const PhaseSides& s : counts.sides) hidden += std::min(side_us(s.on, model), side_us(s.off, model));
    c.overlap_us = -model.phase_overlap * hidden;
  }
  return c;
}

std::string explain(const CostBreakdown& c, const CostModel& model) {
  if (!c.priced) return "blocks too large to price | total inf us";
  std::string line;
  char buf[160];
  for (std::size_t i = 0; i < kCostTerms.size(); ++i) {
    const CostTerm& t = kCostTerms[i];
    const bool per_byte = std::string_view(t.unit) == "us/B";  // whole bytes, prices to 6 decimals
    std::snprintf(buf, sizeof buf, per_byte ? "%s %.0f B x %.6f = %.3f | " : "%s %g x %.3f = %.3f | ", t.counts,
                  c.counts.*t.feature, model.*t.price, c.term_us[i]);
    line += buf;
  }
  if (model.phase_overlap != 0) {
    std::snprintf(buf, sizeof buf, "overlap %.2f x hidden = %.3f | ", model.phase_overlap, c.overlap_us);
    line += buf;
  }
  std::snprintf(buf, sizeof buf, "total %.3f us", c.total_us());
  return line + buf;
}

}  // namespace cartplan::engine
