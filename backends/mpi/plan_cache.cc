// The plan cache of a neighbourhood communicator: plans made or given, bound to this rank and
// kept under a key of everything that chooses them; measuring mode's candidate list.
#include "backends/mpi/plan_cache.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "backends/mpi/plan_dump.h"
#include "engine/planner.h"
#include "ir/json.h"

namespace cartplan::mpi {

MpiStatus PlanCache::plan_for(ir::Op op, const Options& o, std::int64_t block_bytes,
                                     std::shared_ptr<const BoundPlanEntry>* out, int root) {
  return plan_for(op, o, std::vector<std::int64_t>{block_bytes}, out, root);
}

MpiStatus PlanCache::plan_for(ir::Op op, const Options& o, const std::vector<std::int64_t>& sizes,
                                     std::shared_ptr<const BoundPlanEntry>* out, int root, const std::vector<bool>& contiguous) {
  // The optimizer predicts with the real per-block sizes (faces and corners of a halo); a block
  // no rank uses (negative: unknown) costs nothing. With a fixed algorithm the sizes do not
  // change the plan.
  std::vector<std::int64_t> block_sizes;
  for (std::int64_t s : sizes) block_sizes.push_back(std::max<std::int64_t>(s, 0));
  if (block_sizes.size() != 1 && static_cast<int>(block_sizes.size()) != nbh_.size())
    return mpi_error(MPI_ERR_INTERN, "plan_for: " + std::to_string(block_sizes.size()) + " block sizes for " +
                                         std::to_string(nbh_.size()) + " blocks");
  std::vector<bool> block_contiguous = contiguous;
  if (!block_contiguous.empty() && block_contiguous.size() != block_sizes.size())
    return mpi_error(MPI_ERR_INTERN, "plan_for: " + std::to_string(block_contiguous.size()) + " contiguity flags for " +
                                         std::to_string(block_sizes.size()) + " block sizes");
  if (o.algo != engine::AlgoChoice::kAuto || o.given_plan) {
    block_sizes.assign(1, 0);
    block_contiguous.clear();
  }
  // The model's prices and the lowering's thresholds: predictions depend on both.
  std::vector<double> prices = model_prices(o.model);
  const engine::LowerOptions lo = agreed_lower_options(o);
  for (std::int64_t v : {lo.struct_min_bytes, lo.trailer_min_bytes, lo.home_max_message_bytes}) prices.push_back(static_cast<double>(v));
  const PlanKey key{static_cast<int>(op), static_cast<int>(o.algo), prices,
                    o.dim_order ? *o.dim_order : std::vector<int>{-1}, block_sizes, root,
                    o.given_plan ? o.given_plan->fingerprint : 0, block_contiguous};
  if (auto it = cache_.find(key); it != cache_.end()) {
    *out = it->second;
    return {};
  }
  engine::PlanOptions po = planner_options(o, block_sizes, block_contiguous);
  Result<ir::Plan> plan = fail("no plan");
  if (o.given_plan) {
    // A plan from cartplan_plan, verified when it was read; it must be this request's.
    MpiStatus fits = check_given_plan(o, nbh_, op);
    if (!fits.ok()) return fits;
    plan = o.given_plan->plan;
  } else {
    plan = engine::make_plan(op, nbh_, po);
  }
  if (!plan) return mpi_error(MPI_ERR_ARG, plan.error());
  std::shared_ptr<const BoundPlanEntry> entry;
  MpiStatus bound = bind_entry(*plan, root, &entry);
  if (!bound.ok()) return bound;
  if (cache_.size() >= kMaxEntries) cache_.clear();  // bounded: a long run with many sizes does not grow
  cache_.emplace(key, entry);
  *out = entry;
  return {};
}

engine::PlanOptions PlanCache::planner_options(const Options& o, const std::vector<std::int64_t>& block_sizes,
                                                      const std::vector<bool>& contiguous) const {
  engine::PlanOptions po;
  po.algo = o.algo;
  po.dim_order = o.dim_order;
  po.model = o.model;
  po.lowering = agreed_lower_options(o);  // every rank must pick the same plan: agreed inputs only
  if (block_sizes.size() == 1) po.block_bytes = block_sizes[0];
  else po.block_sizes = block_sizes;
  po.block_contiguous = contiguous;
  po.grid = grid_;  // rounds that wrap to this process are local copies: free in the prediction
  po.placement = planning_placement(o);
  return po;
}

MpiStatus PlanCache::bind_entry(const ir::Plan& plan, int root, std::shared_ptr<const BoundPlanEntry>* out) {
  Result<engine::Binder> binder = engine::Binder::create(plan);
  if (!binder) return mpi_error(MPI_ERR_INTERN, binder.error());
  // Byte counts of the bound plan are not used by this backend (datatypes carry the sizes).
  std::optional<engine::Coords> root_coords;
  if (root >= 0) root_coords = grid_.coords(root);
  Result<engine::BoundPlan> bound = binder->bind(grid_, coords_, {0}, root_coords);
  if (!bound) return mpi_error(MPI_ERR_INTERN, bound.error());
  // CARTPLAN_DUMP_PLANS: every new plan once (plan_dump.h). A directory this process cannot
  // write is reported on stderr and changes nothing else: the peers run this plan regardless.
  dump_plan_if_requested(plan);
  *out = std::make_shared<const BoundPlanEntry>(BoundPlanEntry{plan, std::move(*bound)});
  return {};
}

std::vector<std::size_t> PlanCache::measure_order(const std::vector<double>& predicted_us, std::size_t pick) {
  std::vector<std::size_t> order(predicted_us.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if ((a == pick) != (b == pick)) return a == pick;
    return predicted_us[a] < predicted_us[b];
  });
  const double cheapest = predicted_us.empty() ? 0 : *std::min_element(predicted_us.begin(), predicted_us.end());
  std::vector<std::size_t> out;
  for (std::size_t i : order)
    if (predicted_us[i] <= kMeasureRange * cheapest) out.push_back(i);
  return out;
}

MpiStatus PlanCache::candidate_entries(ir::Op op, const Options& o, const std::vector<std::int64_t>& sizes,
                                              const std::vector<bool>& contiguous, std::vector<CandidateEntry>* out) {
  out->clear();
  std::vector<std::int64_t> block_sizes;
  for (std::int64_t s : sizes) block_sizes.push_back(std::max<std::int64_t>(s, 0));
  const engine::PlanOptions po = planner_options(o, block_sizes, contiguous);
  Result<std::vector<engine::Candidate>> cands = engine::plan_candidates(op, nbh_, po);
  if (!cands) return mpi_error(MPI_ERR_ARG, cands.error());
  // The model's own pick (make_plan's: engine::pick_candidate) first, then the others cheapest
  // first. Plans that are the same under another name are timed once.
  std::vector<double> predicted;
  for (const engine::Candidate& c : *cands) predicted.push_back(c.cost.total_us());
  std::vector<std::string> seen;
  for (std::size_t i : measure_order(predicted, engine::pick_candidate(*cands))) {
    const engine::Candidate* c = &(*cands)[i];
    if (static_cast<int>(out->size()) >= kMeasureMaxCandidates) break;
    std::string text = ir::to_json_string(c->plan);
    if (std::find(seen.begin(), seen.end(), text) != seen.end()) continue;
    seen.push_back(std::move(text));
    CandidateEntry e{c->name, c->cost.total_us(), nullptr};
    MpiStatus bound = bind_entry(engine::with_choice_stats(op, nbh_, po, c->plan), -1, &e.entry);
    if (!bound.ok()) return bound;
    out->push_back(std::move(e));
  }
  return {};
}

}  // namespace cartplan::mpi
