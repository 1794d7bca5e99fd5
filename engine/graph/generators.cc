// Deterministic graph generators: Erdos-Renyi, Moore grids with holes, OSU OMB's neighbourhood,
// partitioned meshes.
#include "engine/graph/generators.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <set>

namespace cartplan::engine::graph {

using ir::graph::Topology;

namespace {

// splitmix64 stream: portable, unlike std:: distributions.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t x = (s_ += 0x9e3779b97f4a7c15ULL);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)

 private:
  std::uint64_t s_;
};

std::int64_t cells_of(const std::vector<int>& dims) {
  std::int64_t n = 1;
  for (int d : dims) n *= d;
  return n;
}

std::vector<int> coords_of(std::int64_t index, const std::vector<int>& dims) {
  std::vector<int> c(dims.size());
  for (int k = static_cast<int>(dims.size()) - 1; k >= 0; --k) {
    c[k] = static_cast<int>(index % dims[k]);
    index /= dims[k];
  }
  return c;
}

// Row-major index of coords + offset, or -1 outside a non-periodic grid.
std::int64_t shifted(const std::vector<int>& c, const std::vector<int>& off, const std::vector<int>& dims, bool periodic) {
  std::int64_t index = 0;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    int x = c[k] + off[k];
    if (periodic) x = ((x % dims[k]) + dims[k]) % dims[k];
    else if (x < 0 || x >= dims[k]) return -1;
    index = index * dims[k] + x;
  }
  return index;
}

// Every offset in [-r, r]^d in lexicographic order (last dimension fastest).
std::vector<std::vector<int>> box_offsets(int d, int r) {
  std::vector<std::vector<int>> out;
  std::vector<int> o(d, -r);
  while (true) {
    out.push_back(o);
    int k = d - 1;
    while (k >= 0 && o[k] == r) o[k--] = -r;
    if (k < 0) return out;
    ++o[k];
  }
}

Result<int> checked_ranks(std::int64_t n) {
  if (n < 1 || n > ir::graph::kMaxGraphRanks)
    return fail("the graph would have " + std::to_string(n) + " ranks; allowed: 1 to " + std::to_string(ir::graph::kMaxGraphRanks));
  return static_cast<int>(n);
}

}  // namespace

Topology from_out_lists(std::vector<std::vector<int>> out) {
  Topology t;
  t.ranks.resize(out.size());
  for (std::size_t a = 0; a < out.size(); ++a) {
    for (int b : out[a]) t.ranks[b].in.push_back(static_cast<int>(a));
  }
  for (std::size_t a = 0; a < out.size(); ++a) t.ranks[a].out = std::move(out[a]);
  return t;
}

Result<Topology> erdos_renyi(int p, double q, std::uint64_t seed) {
  if (auto n = checked_ranks(p); !n) return fail(n.error());
  if (!(q >= 0 && q <= 1)) return fail("q must be in [0, 1], got " + std::to_string(q));
  if (static_cast<double>(p) * p * q > 1e8) return fail("the graph would have about " + std::to_string(static_cast<long long>(p * (p * q))) + " edges; at most 1e8");
  Rng rng(seed);
  std::vector<std::vector<int>> out(p);
  for (int a = 0; a < p; ++a) {
    for (int b = 0; b < p; ++b) {
      if (b != a && rng.uniform() < q) out[a].push_back(b);
    }
  }
  return from_out_lists(std::move(out));
}

Result<Topology> moore(const std::vector<int>& dims, int r, bool periodic, double holes, std::uint64_t seed) {
  if (dims.empty() || dims.size() > 4) return fail("a Moore grid has 1 to 4 dimensions, got " + std::to_string(dims.size()));
  for (int d : dims) {
    if (d < 1) return fail("every grid dimension needs at least one cell, got " + std::to_string(d));
  }
  if (r < 1 || r > 8) return fail("the radius must be in [1, 8], got " + std::to_string(r));
  if (!(holes >= 0 && holes < 1)) return fail("holes must be a fraction in [0, 1), got " + std::to_string(holes));
  const std::int64_t cells = cells_of(dims);
  if (auto n = checked_ranks(cells); !n) return fail(n.error());
  Rng rng(seed);
  std::vector<int> rank_of(cells, -1);
  int p = 0;
  for (std::int64_t c = 0; c < cells; ++c) {
    if (rng.uniform() >= holes) rank_of[c] = p++;
  }
  if (p == 0) return fail("every cell of the grid is a hole");
  std::vector<std::vector<int>> out(p);
  const std::vector<std::vector<int>> offsets = box_offsets(static_cast<int>(dims.size()), r);
  for (std::int64_t c = 0; c < cells; ++c) {
    if (rank_of[c] < 0) continue;
    const std::vector<int> xy = coords_of(c, dims);
    for (const std::vector<int>& off : offsets) {
      if (std::all_of(off.begin(), off.end(), [](int v) { return v == 0; })) continue;
      const std::int64_t n = shifted(xy, off, dims, periodic);
      if (n >= 0 && rank_of[n] >= 0) out[rank_of[c]].push_back(rank_of[n]);
    }
  }
  return from_out_lists(std::move(out));
}

std::vector<int> balanced_dims(int p, int d) {
  std::vector<int> factors;
  for (int f = 2, n = p; n > 1;) {
    if (static_cast<long long>(f) * f > n) f = n;
    if (n % f == 0) {
      factors.push_back(f);
      n /= f;
    } else {
      ++f;
    }
  }
  std::vector<int> dims(d, 1);
  std::sort(factors.rbegin(), factors.rend());
  for (int f : factors) *std::min_element(dims.begin(), dims.end()) *= f;
  std::sort(dims.rbegin(), dims.rend());
  return dims;
}

Result<Topology> osu_neighborhood(int p, int d, int r) {
  if (auto n = checked_ranks(p); !n) return fail(n.error());
  if (d < 1 || d > 4) return fail("OSU neighbourhoods have 1 to 4 dimensions, got " + std::to_string(d));
  const std::vector<int> dims = balanced_dims(p, d);
  // OMB refuses radii above half the smallest dimension (duplicate neighbours).
  if (r < 1 || r > (dims.back() - 1) / 2)
    return fail("radius " + std::to_string(r) + " needs every dimension of the grid to be at least " + std::to_string(2 * r + 1) +
                "; the smallest of " + std::to_string(p) + " ranks in " + std::to_string(d) + " dimensions is " + std::to_string(dims.back()));
  std::vector<std::vector<int>> out(p);
  const std::vector<std::vector<int>> offsets = box_offsets(d, r);
  for (int c = 0; c < p; ++c) {
    const std::vector<int> xy = coords_of(c, dims);
    for (const std::vector<int>& off : offsets) {
      const int n = static_cast<int>(shifted(xy, off, dims, true));
      if (n != c) out[c].push_back(n);
    }
  }
  // OMB lists the sources in the same (offset) order as the destinations.
  Topology t = from_out_lists(out);
  for (int c = 0; c < p; ++c) t.ranks[c].in = t.ranks[c].out;
  return t;
}

namespace {

struct Box {
  std::vector<int> lo, hi;  // [lo, hi) per dimension
};

// Recursive coordinate bisection: split the longest side in proportion to the parts on each side.
void bisect(const Box& box, int parts, std::vector<Box>& out) {
  if (parts == 1) {
    out.push_back(box);
    return;
  }
  std::size_t k = 0;
  for (std::size_t i = 1; i < box.lo.size(); ++i) {
    if (box.hi[i] - box.lo[i] > box.hi[k] - box.lo[k]) k = i;
  }
  const int left = parts / 2, len = box.hi[k] - box.lo[k];
  const int cut = box.lo[k] + std::clamp(static_cast<int>(std::lround(static_cast<double>(len) * left / parts)), 1, std::max(1, len - 1));
  Box a = box, b = box;
  a.hi[k] = cut;
  b.lo[k] = cut;
  bisect(a, left, out);
  bisect(b, parts - left, out);
}

std::vector<std::vector<int>> stencil_offsets(int d, int points) {
  std::vector<std::vector<int>> out;
  for (const std::vector<int>& o : box_offsets(d, 1)) {
    const int nonzero = static_cast<int>(std::count_if(o.begin(), o.end(), [](int v) { return v != 0; }));
    if (nonzero == 0) continue;
    if (points == 2 * d + 1 && nonzero != 1) continue;  // 5 or 7 points: faces only
    out.push_back(o);
  }
  return out;
}

}  // namespace

Result<Topology> mesh_partition(const std::vector<int>& cells, int parts, int stencil) {
  const int d = static_cast<int>(cells.size());
  if (d != 2 && d != 3) return fail("a mesh has 2 or 3 dimensions, got " + std::to_string(d));
  const int full = d == 2 ? 9 : 27;
  if (stencil != 2 * d + 1 && stencil != full)
    return fail("a " + std::to_string(d) + "-D mesh stencil has " + std::to_string(2 * d + 1) + " or " + std::to_string(full) + " points, got " + std::to_string(stencil));
  for (int c : cells) {
    if (c < 1) return fail("every mesh dimension needs at least one cell, got " + std::to_string(c));
  }
  const std::int64_t n = cells_of(cells);
  if (n > (std::int64_t{1} << 26)) return fail("the mesh has " + std::to_string(n) + " cells; at most 2^26");
  if (auto ok = checked_ranks(parts); !ok) return fail(ok.error());
  if (parts > n) return fail(std::to_string(parts) + " parts for a mesh of " + std::to_string(n) + " cells");
  std::vector<Box> boxes;
  bisect(Box{std::vector<int>(d, 0), cells}, parts, boxes);
  std::vector<int> owner(n, -1);
  for (int b = 0; b < parts; ++b) {
    const Box& box = boxes[b];
    std::vector<int> size(d);
    for (int k = 0; k < d; ++k) size[k] = box.hi[k] - box.lo[k];
    if (cells_of(size) == 0) return fail(std::to_string(parts) + " parts do not fit the mesh: a part would be empty");
    for (std::int64_t i = 0; i < cells_of(size); ++i) {
      std::vector<int> c = coords_of(i, size);
      for (int k = 0; k < d; ++k) c[k] += box.lo[k];
      owner[shifted(c, std::vector<int>(d, 0), cells, false)] = b;
    }
  }
  std::vector<std::set<int>> touches(parts);
  const std::vector<std::vector<int>> offsets = stencil_offsets(d, stencil);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::vector<int> c = coords_of(i, cells);
    for (const std::vector<int>& off : offsets) {
      const std::int64_t j = shifted(c, off, cells, false);
      if (j >= 0 && owner[j] != owner[i]) touches[owner[i]].insert(owner[j]);
    }
  }
  std::vector<std::vector<int>> out(parts);
  for (int b = 0; b < parts; ++b) out[b].assign(touches[b].begin(), touches[b].end());
  return from_out_lists(std::move(out));
}

}  // namespace cartplan::engine::graph
