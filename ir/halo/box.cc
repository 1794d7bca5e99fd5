// Box arithmetic: intersection, containment, translation and text.
#include "ir/halo/box.h"

#include <algorithm>

namespace cartplan::ir::halo {

bool Box::empty() const {
  for (int e : extent) {
    if (e <= 0) return true;
  }
  return false;
}

std::int64_t Box::cells() const {
  if (empty()) return 0;
  std::int64_t c = 1;
  for (int e : extent) c *= e;
  return c;
}

bool Box::contains(const Cell& x) const {
  for (int k = 0; k < ndims(); ++k) {
    if (x[k] < lo[k] || x[k] >= hi(k)) return false;
  }
  return true;
}

Box intersect(const Box& a, const Box& b) {
  Box r;
  r.lo.resize(a.lo.size());
  r.extent.resize(a.lo.size());
  for (int k = 0; k < a.ndims(); ++k) {
    r.lo[k] = std::max(a.lo[k], b.lo[k]);
    r.extent[k] = std::max(0, std::min(a.hi(k), b.hi(k)) - r.lo[k]);
  }
  if (r.empty()) std::fill(r.extent.begin(), r.extent.end(), 0);
  return r;
}

bool overlaps(const Box& a, const Box& b) { return !a.empty() && !b.empty() && !intersect(a, b).empty(); }

bool contains(const Box& outer, const Box& inner) {
  if (inner.empty()) return true;
  for (int k = 0; k < inner.ndims(); ++k) {
    if (inner.lo[k] < outer.lo[k] || inner.hi(k) > outer.hi(k)) return false;
  }
  return true;
}

Box translated(const Box& b, const std::vector<int>& delta) {
  Box r = b;
  for (int k = 0; k < b.ndims(); ++k) r.lo[k] += delta[k];
  return r;
}

std::optional<Box> join(const Box& a, const Box& b) {
  if (a.empty() || b.empty()) return std::nullopt;
  int along = -1;
  for (int k = 0; k < a.ndims(); ++k) {
    if (a.lo[k] == b.lo[k] && a.extent[k] == b.extent[k]) continue;
    if (along >= 0 || (a.hi(k) != b.lo[k] && b.hi(k) != a.lo[k])) return std::nullopt;
    along = k;
  }
  if (along < 0) return std::nullopt;  // the same box twice
  Box r = a;
  r.lo[along] = std::min(a.lo[along], b.lo[along]);
  r.extent[along] = a.extent[along] + b.extent[along];
  return r;
}

std::string to_string(const Box& b) {
  std::string s;
  for (int k = 0; k < b.ndims(); ++k) {
    if (k) s += "x";
    s += "[" + std::to_string(b.lo[k]) + "," + std::to_string(b.hi(k)) + ")";
  }
  return s;
}

std::string cell_string(const Cell& x) { return to_string(Offset(x)); }

}  // namespace cartplan::ir::halo
