// The agreed price table of graph auto: filling, interpolating and picking.
#include "engine/graph/price_table.h"

#include <cassert>

#include "engine/graph/choose.h"
#include "engine/graph/price.h"
#include "engine/graph/sizes.h"

namespace cartplan::engine::graph {

using ir::graph::GraphAlgorithm;
using ir::graph::GraphOp;

namespace {

std::size_t row(GraphOp op, int candidate) {
  return static_cast<std::size_t>(((op == GraphOp::kAlltoall ? 1 : 0) * kPriceCandidates + candidate) * kPriceTableSizes);
}

}  // namespace

std::int64_t price_table_bytes(int i) { return i == 0 ? 0 : std::int64_t{1} << (i - 1); }

int candidate_index(const TableCandidate& c) {
  switch (c.algorithm) {
    case GraphAlgorithm::kLinear: return 0;
    case GraphAlgorithm::kPairing: return 1;
    case GraphAlgorithm::kCumulative: return 2;
    case GraphAlgorithm::kGrid: return c.grid_d > 4 ? 6 : c.grid_d == 4 ? 5 : c.grid_d == 3 ? 4 : 3;
  }
  assert(false);
  return 0;
}

TableCandidate candidate_at(int index) {
  constexpr TableCandidate kAll[kPriceCandidates] = {{GraphAlgorithm::kLinear, 0}, {GraphAlgorithm::kPairing, 0},
                                                     {GraphAlgorithm::kCumulative, 0}, {GraphAlgorithm::kGrid, 2},
                                                     {GraphAlgorithm::kGrid, 3}, {GraphAlgorithm::kGrid, 4},
                                                     {GraphAlgorithm::kGrid, kMaxGridD}};
  assert(index >= 0 && index < kPriceCandidates);
  return kAll[index];
}

void add_prices(GraphOp op, const TableCandidate& c, const ir::graph::RankSchedule& schedule, const CostModel& model,
                PriceTable* table) {
  const std::size_t base = row(op, candidate_index(c));
  for (int i = 0; i < kPriceTableSizes; ++i)
    (*table)[base + static_cast<std::size_t>(i)] = schedule_us(schedule, BlockSizes::constant(op, price_table_bytes(i)), model);
}

CandidatePrices table_prices(const PriceTable& table, GraphOp op, std::int64_t block_bytes) {
  int hi = 1;
  while (hi < kPriceTableSizes - 1 && price_table_bytes(hi) < block_bytes) ++hi;
  const int lo = hi - 1;
  const double f = static_cast<double>(block_bytes - price_table_bytes(lo)) /
                   static_cast<double>(price_table_bytes(hi) - price_table_bytes(lo));
  CandidatePrices us{};
  for (int c = 0; c < kPriceCandidates; ++c) {
    const std::size_t base = row(op, c);
    us[static_cast<std::size_t>(c)] = table[base + lo] + f * (table[base + hi] - table[base + lo]);
  }
  return us;
}

TableCandidate cheaper_combining(const CandidatePrices& us) {
  int best = 0;
  for (int c = 1; c < kPriceCandidates; ++c) {
    const double v = us[static_cast<std::size_t>(c)];
    if (v > 0 && (best == 0 || v < us[static_cast<std::size_t>(best)])) best = c;
  }
  return best == 0 ? TableCandidate{GraphAlgorithm::kPairing, 0} : candidate_at(best);
}

CandidatePrices without_grid(CandidatePrices us) {
  for (int d : {2, 3, 4, kMaxGridD}) us[static_cast<std::size_t>(candidate_index({GraphAlgorithm::kGrid, d}))] = 0.0;
  return us;
}

CandidatePrices only_grid_d(CandidatePrices us, int grid_d) {
  if (grid_d < 2) return us;
  const int keep = candidate_index({GraphAlgorithm::kGrid, grid_d});
  for (int d : {2, 3, 4, kMaxGridD})
    if (candidate_index({GraphAlgorithm::kGrid, d}) != keep) us[static_cast<std::size_t>(candidate_index({GraphAlgorithm::kGrid, d}))] = 0.0;
  return us;
}

TableCandidate pick_from_prices(const CandidatePrices& us) {
  const TableCandidate best = cheaper_combining(us);
  return us[static_cast<std::size_t>(candidate_index(best))] <= (1.0 - kGraphGain) * us[0] ? best : TableCandidate{};
}

}  // namespace cartplan::engine::graph
