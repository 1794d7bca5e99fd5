// Helpers the halo planners share: the plan's frame (array, stencil, order) and its finish
// (tags in phase and message order, the derived stats).
//
//   HaloPlanParts p = plan_frame(h, HaloAlgorithm::kDirect, natural_order);
//   p.phases = ...;
//   return finish_halo_plan(std::move(p));
#pragma once

#include <vector>

#include "engine/halo/description.h"
#include "ir/halo/plan.h"

namespace cartplan::engine::halo {

ir::halo::HaloPlanParts plan_frame(const HaloDescription& h, ir::halo::HaloAlgorithm algorithm, const std::vector<int>& dim_order);
ir::halo::HaloPlan finish_halo_plan(ir::halo::HaloPlanParts parts);
// A part from array box `from` (sender) to array box `to` (receiver) of the same extent.
ir::halo::Part array_part(const ir::halo::Box& from, const ir::halo::Box& to);
// The message that fills ghost region t straight from the neighbour's interior (shift -t).
ir::halo::Message direct_message(const ir::halo::ArrayShape& array, const ir::Offset& t);

}  // namespace cartplan::engine::halo
