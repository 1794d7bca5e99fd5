// Neighborhood: validated offset lists and the per-dimension counts (t, C_k, z_i) planners use.
#include "engine/neighborhood.h"

#include <algorithm>
#include <cassert>
#include <string>

namespace cartplan::engine {

Result<Neighborhood> Neighborhood::create(int ndims, std::vector<Offset> offsets) {
  if (ndims < 1 || ndims > kMaxDims)
    return fail("ndims = " + std::to_string(ndims) + ": a neighbourhood needs between 1 and " +
                std::to_string(kMaxDims) + " dimensions");
  if (offsets.empty()) return fail("a neighbourhood needs at least one offset");
  if (offsets.size() > static_cast<std::size_t>(kMaxOffsets))
    return fail("a neighbourhood has at most " + std::to_string(kMaxOffsets) + " offsets, got " +
                std::to_string(offsets.size()));
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    const Offset& o = offsets[i];
    if (o.size() != static_cast<std::size_t>(ndims))
      return fail("offset " + std::to_string(i) + " has " + std::to_string(o.size()) +
                  " coordinates, expected " + std::to_string(ndims));
    for (std::size_t k = 0; k < o.size(); ++k) {
      // Compare in 64 bits: std::abs(INT_MIN) is undefined.
      const long long v = o[k];
      if (v > kMaxCoordinate || v < -static_cast<long long>(kMaxCoordinate))
        return fail("offset " + std::to_string(i) + " coordinate " + std::to_string(k) + " = " +
                    std::to_string(v) + ": |coordinate| must be at most " +
                    std::to_string(kMaxCoordinate));
    }
  }
  return Neighborhood(ndims, std::move(offsets));
}

bool Neighborhood::is_zero(const Offset& o) {
  return std::all_of(o.begin(), o.end(), [](int v) { return v == 0; });
}

int Neighborhood::nonzeros(const Offset& o) {
  return static_cast<int>(std::count_if(o.begin(), o.end(), [](int v) { return v != 0; }));
}

int Neighborhood::nonzero_count() const {
  return static_cast<int>(
      std::count_if(offsets_.begin(), offsets_.end(), [](const Offset& o) { return !is_zero(o); }));
}

int Neighborhood::distinct_nonzero(int dim) const {
  assert(dim >= 0 && dim < ndims_ && "dimension out of range");
  // Computed on demand (not cached) so the class stays a plain value; sort+unique is O(t log t).
  std::vector<int> values;
  values.reserve(offsets_.size());
  for (const Offset& o : offsets_)
    if (o[dim] != 0) values.push_back(o[dim]);
  std::sort(values.begin(), values.end());
  return static_cast<int>(std::unique(values.begin(), values.end()) - values.begin());
}

}  // namespace cartplan::engine
