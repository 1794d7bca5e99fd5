// One rank's plan in a block decomposition: its own interior in the shared choice.
#include "engine/halo/block_plan.h"

#include <algorithm>
#include <cassert>
#include <optional>
#include <string>

#include "engine/halo/uneven.h"

namespace cartplan::engine::halo {

std::vector<int> largest_blocks(const std::vector<std::vector<int>>& extents) {
  std::vector<int> n;
  for (const std::vector<int>& e : extents) {
    assert(!e.empty());
    n.push_back(*std::max_element(e.begin(), e.end()));
  }
  return n;
}

namespace {

// Why extents and coords do not describe a rank of like's decomposition, if they do not.
std::optional<std::string> blocks_error(const HaloDescription& like, const std::vector<std::vector<int>>& extents, const std::vector<int>& coords) {
  const std::size_t d = static_cast<std::size_t>(like.array.ndims);
  if (extents.size() != d) return "extents for " + std::to_string(extents.size()) + " dimensions; the array has " + std::to_string(d);
  if (coords.size() != d) return "coordinates " + ir::to_string(coords) + " for " + std::to_string(coords.size()) + " dimensions; the array has " + std::to_string(d);
  for (std::size_t k = 0; k < d; ++k) {
    const std::string dim = "dimension " + std::to_string(k);
    if (extents[k].empty()) return "extents[" + std::to_string(k) + "] has no blocks";
    if (like.grid && static_cast<int>(extents[k].size()) != like.grid->dims()[k])
      return "extents[" + std::to_string(k) + "] has " + std::to_string(extents[k].size()) + " blocks; the grid has " + std::to_string(like.grid->dims()[k]) +
             " processes in " + dim;
    if (coords[k] < 0 || coords[k] >= static_cast<int>(extents[k].size()))
      return "coordinate " + std::to_string(coords[k]) + " of " + dim + " is outside its " + std::to_string(extents[k].size()) + " blocks";
  }
  return std::nullopt;
}

}  // namespace

Result<ir::halo::HaloPlan> plan_block(const HaloDescription& like, const std::vector<std::vector<int>>& extents, const std::vector<int>& coords,
                                      HaloPlanOptions options) {
  if (std::optional<std::string> e = blocks_error(like, extents, coords)) return fail(*e);
  ir::halo::ArrayShape a = like.array;
  a.interior = interior_at(extents, coords);
  Result<HaloDescription> own = describe_halo(a, like.neighborhood, like.grid);
  if (!own) return fail(own.error());
  options.choice_interior = largest_blocks(extents);
  return make_halo_plan(*own, options);
}

}  // namespace cartplan::engine::halo
