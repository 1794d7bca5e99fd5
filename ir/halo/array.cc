// The halo array's shape checks and sign-vector regions.
#include "ir/halo/array.h"

namespace cartplan::ir::halo {

const char* to_string(Order order) { return order == Order::kC ? "C" : "Fortran"; }

Box ArrayShape::whole() const {
  Box b;
  for (int k = 0; k < ndims; ++k) {
    b.lo.push_back(lo(k));
    b.extent.push_back(extent(k));
  }
  return b;
}

Box ArrayShape::interior_box() const { return Box{std::vector<int>(ndims, 0), interior}; }

std::optional<std::string> shape_error(const ArrayShape& s) {
  if (s.ndims < 1 || s.ndims > kMaxHaloDims)
    return "the array has " + std::to_string(s.ndims) + " dimensions; halo arrays have 1 to " + std::to_string(kMaxHaloDims);
  const std::size_t d = s.ndims;
  if (s.interior.size() != d || s.ghost_lo.size() != d || s.ghost_hi.size() != d)
    return "interior, ghost_lo and ghost_hi need " + std::to_string(d) + " values each";
  for (int k = 0; k < s.ndims; ++k) {
    const std::string at = "[" + std::to_string(k) + "] = ";
    if (s.interior[k] < 1) return "interior" + at + std::to_string(s.interior[k]) + ": an interior extent is at least 1";
    if (s.interior[k] > kMaxHaloExtent) return "interior" + at + std::to_string(s.interior[k]) + " is larger than " + std::to_string(kMaxHaloExtent);
    for (const auto* g : {&s.ghost_lo, &s.ghost_hi}) {
      const char* name = g == &s.ghost_lo ? "ghost_lo" : "ghost_hi";
      if ((*g)[k] < 0) return name + at + std::to_string((*g)[k]) + ": a ghost width is at least 0";
      if ((*g)[k] > kMaxHaloExtent) return name + at + std::to_string((*g)[k]) + " is larger than " + std::to_string(kMaxHaloExtent);
    }
  }
  if (s.elem_bytes < 1) return "elem_bytes = " + std::to_string(s.elem_bytes) + ": an element has at least 1 byte";
  double bytes = static_cast<double>(s.elem_bytes);
  for (int k = 0; k < s.ndims; ++k) bytes *= s.extent(k);
  if (bytes > 0x1p62) return "the array has more than 2^62 bytes";
  return std::nullopt;
}

bool is_sign_vector(const Offset& o) {
  for (int c : o) {
    if (c < -1 || c > 1) return false;
  }
  return true;
}

Offset sign_of(const ArrayShape& s, const Cell& x) {
  Offset t(s.ndims, 0);
  for (int k = 0; k < s.ndims; ++k) t[k] = x[k] < 0 ? -1 : x[k] >= s.interior[k] ? 1 : 0;
  return t;
}

std::pair<int, int> side_interval(const ArrayShape& s, int k, int side) {
  if (side < 0) return {-s.ghost_lo[k], 0};
  if (side > 0) return {s.interior[k], s.interior[k] + s.ghost_hi[k]};
  return {0, s.interior[k]};
}

std::pair<int, int> source_interval(const ArrayShape& s, int k, int side) {
  if (side < 0) return {s.interior[k] - s.ghost_lo[k], s.interior[k]};
  if (side > 0) return {0, s.ghost_hi[k]};
  return {0, s.interior[k]};
}

namespace {
Box product(const ArrayShape& s, const Offset& t, std::pair<int, int> (*interval)(const ArrayShape&, int, int)) {
  Box b;
  for (int k = 0; k < s.ndims; ++k) {
    const auto [lo, hi] = interval(s, k, t[k]);
    b.lo.push_back(lo);
    b.extent.push_back(hi - lo);
  }
  return b;
}
}  // namespace

Box ghost_region(const ArrayShape& s, const Offset& t) { return product(s, t, side_interval); }

Box source_region(const ArrayShape& s, const Offset& t) { return product(s, t, source_interval); }

}  // namespace cartplan::ir::halo
