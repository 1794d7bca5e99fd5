// The optimizer: predicts direct and combining costs with the alpha/beta model and picks the
// cheaper (seed 000, Sect. 3.1): combining wins iff C*alpha + beta*V*m < t*(alpha + beta*m),
// i.e. for block sizes m < m* = (alpha/beta) * (t - C) / (V - t). When C >= t it never wins;
// when V <= t (e.g. Moore allgather) it wins for every m as long as C < t.
// Here t counts non-zero offsets only (seed 000's Table 1 counts the self block in t).
//
//   PlanOptions o;  o.block_bytes = 4 * 100;              // algo auto, dim order auto
//   Result<ir::Plan> p = make_plan(ir::Op::kAlltoall, nbh, o);
//   p->stats().cost->combining_us;                       // both predictions are recorded
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/cost_model.h"
#include "engine/grid.h"
#include "engine/neighborhood.h"
#include "ir/plan.h"
#include "ir/result.h"

namespace cartplan::engine {

enum class AlgoChoice { kAuto, kDirect, kCombining };

struct PlanOptions {
  AlgoChoice algo = AlgoChoice::kAuto;
  std::optional<std::vector<int>> dim_order;  // nullopt: auto_dim_order
  std::int64_t block_bytes = 8;               // >= 0
  CostModel model;
  // The grid the plan will run on, if known. Then a round whose shift wraps around to the
  // process itself on every rank (a multiple of the dimension on periodic dimensions, e.g. any
  // shift along a dimension of size 1) is a local copy and costs no message in the prediction.
  std::optional<Grid> grid;
};

// t, C and V of the combining plan in the given dimension order, computed without building it.
struct CombiningMetrics {
  int t = 0;  // non-zero offsets
  int C = 0;  // rounds
  int V = 0;  // volume
};
CombiningMetrics combining_metrics(ir::Op op, const Neighborhood& nbh, const std::vector<int>& dim_order);

// (t - C) / (V - t), or nullopt when V <= t.
std::optional<double> cutoff_ratio(const CombiningMetrics& m);
// m* in bytes: combining is cheaper below it. nullopt when there is no finite cut-off.
std::optional<double> cutoff_bytes(const CombiningMetrics& m, const CostModel& model);

// Predicted time of `plan`: alpha per message round plus beta per byte sent (rounds to self
// excluded when `grid` is given).
double predict_us(const ir::Plan& plan, std::int64_t block_bytes, const CostModel& model, const std::optional<Grid>& grid);

// Plans with the chosen algorithm and stamps t/C/V, the cut-off and both predictions into stats.
Result<ir::Plan> make_plan(ir::Op op, const Neighborhood& nbh, const PlanOptions& options);

}  // namespace cartplan::engine
