// The halo optimizer (docs/halo.md): builds the candidate plans the request allows, prices each
// (price.h) on the description's grid and keeps the cheapest; ties go to the earlier candidate
// in the fixed order direct, combining, dimwise, split, hybrid. Dimwise, split and hybrid are
// built in every dimension order for d <= 4 (the natural and the combining order otherwise),
// and each keeps its cheapest order (the lexicographically first on ties). Auto offers dimwise
// where the stencil is prefix-closed in some order, split and hybrid where it is not.
//
//   HaloPlanOptions o;                                     // auto, built-in model
//   Result<std::vector<HaloCandidate>> c = halo_candidates(h, o);
//   const HaloCandidate& best = (*c)[pick_halo_candidate(*c)];
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/cost_model.h"
#include "engine/halo/description.h"
#include "engine/halo/price.h"
#include "ir/halo/plan.h"
#include "ir/result.h"

namespace cartplan::engine::halo {

enum class HaloAlgoChoice { kAuto, kDirect, kCombining, kDimwise, kSplit, kHybrid };

struct HaloPlanOptions {
  HaloAlgoChoice algo = HaloAlgoChoice::kAuto;
  std::optional<std::vector<int>> dim_order;  // nullopt: search (dimwise, split, hybrid) / seed 000's (combining)
  CostModel model;
  // Which ranks share a node on the description's grid (engine/placement.h); unknown: one node.
  Placement placement{};
  // Uneven decompositions (uneven.h): the interior the choice is priced on, the same on every
  // rank (the largest extent per dimension); each candidate is then planned again for the
  // description's own interior in its algorithm and order, its cost still the shared one.
  // nullopt (or the description's own interior): the description's.
  std::optional<std::vector<int>> choice_interior;
};

struct HaloCandidate {
  ir::halo::HaloPlan plan;
  HaloCost cost;
};

// Errors: a bad dim_order or choice_interior; dimwise asked for a stencil that is not
// prefix-closed in any order tried.
Result<std::vector<HaloCandidate>> halo_candidates(const HaloDescription& h, const HaloPlanOptions& options);

// The cheapest candidate (the first on ties).
std::size_t pick_halo_candidate(const std::vector<HaloCandidate>& candidates);

Result<ir::halo::HaloPlan> make_halo_plan(const HaloDescription& h, const HaloPlanOptions& options);

}  // namespace cartplan::engine::halo
