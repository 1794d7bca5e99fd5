// Halo descriptions: normalizing the stencil and checking the array against it and the grid.
#include "engine/halo/description.h"

#include <algorithm>

#include "engine/spec.h"
#include "ir/halo/verify.h"

namespace cartplan::engine::halo {

namespace ih = ir::halo;

Result<HaloDescription> describe_halo(ih::ArrayShape array, const std::vector<ir::Offset>& offsets, std::optional<Grid> grid) {
  if (auto e = ih::shape_error(array)) return fail(*e);
  std::vector<ir::Offset> n;
  for (const ir::Offset& o : offsets) {
    if (static_cast<int>(o.size()) != array.ndims)
      return fail("offset " + ir::to_string(o) + " has " + std::to_string(o.size()) + " coordinates; the array has " + std::to_string(array.ndims) +
                  " dimensions");
    if (!ih::is_sign_vector(o))
      return fail("offset " + ir::to_string(o) +
                  " is not a sign vector: a halo stencil names ghost regions by coordinates -1, 0 and 1 (a deep halo is a wider ghost, e.g. "
                  "--ghost 3 with moore:d=2,r=1, not a farther offset)");
    if (std::any_of(o.begin(), o.end(), [](int c) { return c != 0; })) n.push_back(o);
  }
  std::sort(n.begin(), n.end());
  n.erase(std::unique(n.begin(), n.end()), n.end());
  if (auto e = ih::neighborhood_error(array, n)) return fail(*e);
  if (grid && grid->ndims() != array.ndims)
    return fail("the grid has " + std::to_string(grid->ndims()) + " dimensions; the array has " + std::to_string(array.ndims));
  return HaloDescription{std::move(array), std::move(n), std::move(grid)};
}

Result<HaloDescription> describe_halo(ih::ArrayShape array, std::string_view spec, std::optional<Grid> grid) {
  Result<Neighborhood> nbh = parse_spec(spec);
  if (!nbh) return fail(nbh.error());
  if (nbh->ndims() != array.ndims)
    return fail("the stencil has " + std::to_string(nbh->ndims()) + " dimensions; the array has " + std::to_string(array.ndims));
  return describe_halo(std::move(array), nbh->offsets(), std::move(grid));
}

std::vector<ir::Offset> nonempty_regions(const HaloDescription& h) {
  std::vector<ir::Offset> r;
  for (const ir::Offset& t : h.neighborhood) {
    if (!ih::ghost_region(h.array, t).empty()) r.push_back(t);
  }
  return r;
}

}  // namespace cartplan::engine::halo
