// Grid: validation, MPI_Cart_create rank order and wrap/mesh-aware relative addressing.
#include "engine/grid.h"

#include <cassert>
#include <climits>
#include <string>

namespace cartplan::engine {

namespace {

// coords + sign * offset on the grid. 64-bit arithmetic because a coordinate near INT_MAX plus
// an offset of 2^28 (or the negation of INT_MIN for the source side) must not overflow.
std::optional<Coords> shifted(const std::vector<int>& dims, const std::vector<bool>& periods,
                              const Coords& coords, const Offset& offset, int sign) {
  assert(coords.size() == dims.size() && "coords length must equal ndims");
  assert(offset.size() == dims.size() && "offset length must equal ndims");
  Coords out(dims.size());
  for (std::size_t k = 0; k < dims.size(); ++k) {
    const std::int64_t d = dims[k];
    assert(coords[k] >= 0 && coords[k] < dims[k] && "coordinate out of range");
    std::int64_t v = static_cast<std::int64_t>(coords[k]) + sign * static_cast<std::int64_t>(offset[k]);
    if (periods[k]) {
      // C++ '%' keeps the sign of the dividend; fold negatives back into [0, d).
      v %= d;
      if (v < 0) v += d;
    } else if (v < 0 || v >= d) {
      return std::nullopt;
    }
    out[k] = static_cast<int>(v);
  }
  return out;
}

}  // namespace

Result<Grid> Grid::create(std::vector<int> dims, std::vector<bool> periods) {
  if (dims.empty()) return fail("a grid needs at least one dimension");
  if (static_cast<int>(dims.size()) > ir::kMaxDims)
    return fail("a grid has at most " + std::to_string(ir::kMaxDims) + " dimensions, got " +
                std::to_string(dims.size()));
  if (periods.size() != dims.size())
    return fail("periods has " + std::to_string(periods.size()) + " entries but dims has " +
                std::to_string(dims.size()));
  std::int64_t size = 1;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] < 1)
      return fail("dims[" + std::to_string(k) + "] = " + std::to_string(dims[k]) +
                  ": every dimension needs at least one process");
    // Checked after every factor: each factor is < 2^31, so the product never exceeds 2^62.
    size *= dims[k];
    if (size > INT_MAX)
      return fail("the grid has more than " + std::to_string(INT_MAX) +
                  " processes (product of dims exceeds int at dims[" + std::to_string(k) +
                  "] = " + std::to_string(dims[k]) + ")");
  }
  return Grid(std::move(dims), std::move(periods), static_cast<int>(size));
}

Coords Grid::coords(int rank) const {
  assert(rank >= 0 && rank < size_ && "rank out of range");
  Coords c(dims_.size());
  // Row-major: peel the fastest (last) dimension first.
  for (int k = ndims() - 1; k >= 0; --k) {
    c[k] = rank % dims_[k];
    rank /= dims_[k];
  }
  return c;
}

int Grid::rank(const Coords& coords) const {
  assert(coords.size() == dims_.size() && "coords length must equal ndims");
  int r = 0;
  for (std::size_t k = 0; k < dims_.size(); ++k) {
    assert(coords[k] >= 0 && coords[k] < dims_[k] && "coordinate out of range");
    r = r * dims_[k] + coords[k];  // cannot overflow: r < size_ <= INT_MAX throughout
  }
  return r;
}

std::optional<Coords> Grid::relative_coord(const Coords& coords, const Offset& offset) const {
  return shifted(dims_, periods_, coords, offset, +1);
}

int Grid::relative_rank(const Coords& coords, const Offset& offset) const {
  auto c = relative_coord(coords, offset);
  return c ? rank(*c) : kNoRank;
}

Grid::Shift Grid::relative_shift(const Coords& coords, const Offset& offset) const {
  Shift s;
  if (auto dst = shifted(dims_, periods_, coords, offset, +1)) s.dest = rank(*dst);
  if (auto src = shifted(dims_, periods_, coords, offset, -1)) s.source = rank(*src);
  return s;
}

bool Grid::shift_exists(const Coords& coords, const Offset& offset, int sign) const noexcept {
  for (std::size_t k = 0; k < dims_.size(); ++k) {
    const std::int64_t v = static_cast<std::int64_t>(coords[k]) + sign * static_cast<std::int64_t>(offset[k]);
    if (!periods_[k] && (v < 0 || v >= dims_[k])) return false;
  }
  return true;
}

bool wraps_to_self(const Offset& shift, const Grid& grid) {
  for (int k = 0; k < grid.ndims(); ++k) {
    if (shift[k] == 0) continue;
    if (!grid.periods()[k] || shift[k] % grid.dims()[k] != 0) return false;
  }
  return true;
}

double peer_share(const Offset& shift, const Grid& grid) {
  double share = 1;
  for (int k = 0; k < grid.ndims(); ++k) {
    if (shift[k] == 0 || grid.periods()[k]) continue;
    const std::int64_t n = grid.dims()[k], s = shift[k] < 0 ? -std::int64_t{shift[k]} : shift[k];
    share *= s >= n ? 0.0 : static_cast<double>(n - s) / static_cast<double>(n);
  }
  return share;
}

}  // namespace cartplan::engine
