// The halo optimizer: candidates in every tried dimension order, priced on the grid.
#include "engine/halo/choose.h"

#include <algorithm>
#include <numeric>

#include "engine/halo/bind.h"
#include "engine/halo/planners.h"
#include "engine/halo/uneven.h"
#include "engine/planner.h"

namespace cartplan::engine::halo {

namespace ih = ir::halo;

namespace {

constexpr int kMaxSearchDims = 4;

Result<HaloCandidate> priced(ih::HaloPlan plan, const HaloDescription& h, const HaloPlanOptions& o) {
  Result<HaloBinder> b = HaloBinder::create(plan);
  if (!b) return fail(b.error());  // a planner bug: every planner's plans verify
  Result<HaloCost> c = price_halo(*b, o.model, h.grid, o.placement);
  if (!c) return fail(c.error());
  return HaloCandidate{std::move(plan), *c};
}

std::vector<std::vector<int>> orders_to_try(const HaloDescription& h, const HaloPlanOptions& o) {
  if (o.dim_order) return {*o.dim_order};
  std::vector<int> order = natural_dim_order(h.array.ndims);
  if (h.array.ndims > kMaxSearchDims) {
    std::vector<std::vector<int>> two = {order, combining_dim_order(h)};
    if (two[0] == two[1]) two.pop_back();
    return two;
  }
  std::vector<std::vector<int>> all;
  do all.push_back(order);
  while (std::next_permutation(order.begin(), order.end()));
  return all;
}

// The cheapest of `kind` over the orders (nullopt when none applies).
Result<std::optional<HaloCandidate>> best_over_orders(ih::HaloAlgorithm kind, const HaloDescription& h, const HaloPlanOptions& o) {
  std::optional<HaloCandidate> best;
  for (const std::vector<int>& order : orders_to_try(h, o)) {
    const bool closed = prefix_closed(h, order);
    if (kind == ih::HaloAlgorithm::kDimwise && !closed) continue;
    ih::HaloPlan plan = kind == ih::HaloAlgorithm::kDimwise ? plan_halo_dimwise(h, order)
                        : kind == ih::HaloAlgorithm::kSplit ? plan_halo_split(h, order)
                                                            : plan_halo_hybrid(h, order);
    Result<HaloCandidate> c = priced(std::move(plan), h, o);
    if (!c) return fail(c.error());
    if (!best || c->cost.us < best->cost.us) best = std::move(*c);
  }
  return best;
}

bool wanted(HaloAlgoChoice algo, HaloAlgoChoice kind) { return algo == HaloAlgoChoice::kAuto || algo == kind; }

// Uneven decompositions: the candidates of the shared description (choice_interior), each planned
// again for h's own interior. The costs stay the shared ones, so every rank picks alike.
Result<std::vector<HaloCandidate>> uneven_candidates(const HaloDescription& h, const HaloPlanOptions& o) {
  const std::vector<int>& n = *o.choice_interior;
  if (static_cast<int>(n.size()) != h.array.ndims)
    return fail("choice_interior has " + std::to_string(n.size()) + " extents; the array has " + std::to_string(h.array.ndims) + " dimensions");
  HaloDescription shared = h;
  shared.array.interior = n;
  if (auto e = ir::halo::shape_error(shared.array)) return fail("choice_interior: " + *e);
  HaloPlanOptions so = o;
  so.choice_interior.reset();
  Result<std::vector<HaloCandidate>> cands = halo_candidates(shared, so);
  if (!cands) return fail(cands.error());
  for (HaloCandidate& c : *cands) {
    Result<ih::HaloPlan> own = plan_like(h, c.plan);
    if (!own) return fail(own.error());
    c.plan = std::move(*own);
  }
  return cands;
}

}  // namespace

Result<std::vector<HaloCandidate>> halo_candidates(const HaloDescription& h, const HaloPlanOptions& o) {
  if (o.choice_interior && *o.choice_interior != h.array.interior) return uneven_candidates(h, o);
  if (o.dim_order) {
    Result<std::vector<int>> order = check_dim_order(*o.dim_order, h.array.ndims);
    if (!order) return fail("dim_order: " + order.error());
  }
  std::vector<HaloCandidate> out;
  if (wanted(o.algo, HaloAlgoChoice::kDirect)) {
    Result<HaloCandidate> c = priced(plan_halo_direct(h), h, o);
    if (!c) return fail(c.error());
    out.push_back(std::move(*c));
  }
  if (wanted(o.algo, HaloAlgoChoice::kCombining)) {
    Result<HaloCandidate> c = priced(plan_halo_combining(h, o.dim_order ? *o.dim_order : combining_dim_order(h)), h, o);
    if (!c) return fail(c.error());
    out.push_back(std::move(*c));
  }
  bool closed_somewhere = false;
  for (const std::vector<int>& order : orders_to_try(h, o)) closed_somewhere = closed_somewhere || prefix_closed(h, order);
  const std::pair<HaloAlgoChoice, ih::HaloAlgorithm> kinds[] = {
      {HaloAlgoChoice::kDimwise, ih::HaloAlgorithm::kDimwise}, {HaloAlgoChoice::kSplit, ih::HaloAlgorithm::kSplit}, {HaloAlgoChoice::kHybrid, ih::HaloAlgorithm::kHybrid}};
  for (const auto& [choice, kind] : kinds) {
    const bool refines_closed = kind != ih::HaloAlgorithm::kDimwise && closed_somewhere;
    if (!wanted(o.algo, choice) || (o.algo == HaloAlgoChoice::kAuto && refines_closed)) continue;
    Result<std::optional<HaloCandidate>> c = best_over_orders(kind, h, o);
    if (!c) return fail(c.error());
    if (*c) out.push_back(std::move(**c));
  }
  if (o.algo == HaloAlgoChoice::kDimwise && out.empty())
    return fail("dimwise needs a stencil in which every region's prefix (its last non-zero coordinate in the dimension order set to 0) "
                "is a region of the stencil too, e.g. box, Moore or von Neumann; this one is not, in any order tried: use split or hybrid");
  return out;
}

std::size_t pick_halo_candidate(const std::vector<HaloCandidate>& cands) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < cands.size(); ++i) {
    if (cands[i].cost.us < cands[best].cost.us) best = i;
  }
  return best;
}

Result<ih::HaloPlan> make_halo_plan(const HaloDescription& h, const HaloPlanOptions& options) {
  Result<std::vector<HaloCandidate>> c = halo_candidates(h, options);
  if (!c) return fail(c.error());
  return (*c)[pick_halo_candidate(*c)].plan;
}

}  // namespace cartplan::engine::halo
