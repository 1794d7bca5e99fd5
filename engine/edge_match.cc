// Canonical offsets, offset multisets and the send/receive block orders of a distributed graph.
#include "engine/edge_match.h"

#include <algorithm>
#include <cassert>
#include <string>

namespace cartplan::engine {

Offset canonical_offset(const Grid& grid, const Coords& from, const Coords& to) {
  const int d = grid.ndims();
  assert(static_cast<int>(from.size()) == d && static_cast<int>(to.size()) == d);
  Offset o(d);
  for (int k = 0; k < d; ++k) {
    int v = to[k] - from[k];
    if (grid.periods()[k]) {
      const int n = grid.dims()[k];
      v = ((v % n) + n) % n;
      if (v > n / 2) v -= n;
    }
    o[k] = v;
  }
  return o;
}

OffsetCounts count_offsets(std::vector<Offset> offsets) {
  std::sort(offsets.begin(), offsets.end());
  OffsetCounts out;
  for (Offset& o : offsets) {
    if (!out.empty() && out.back().first == o) ++out.back().second;
    else out.emplace_back(std::move(o), 1);
  }
  return out;
}

OffsetCounts merge_counts(const OffsetCounts& a, const OffsetCounts& b) {
  OffsetCounts out;
  out.reserve(a.size() + b.size());
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].first < b[j].first)) out.push_back(a[i++]);
    else if (i == a.size() || b[j].first < a[i].first) out.push_back(b[j++]);
    else {
      out.emplace_back(a[i].first, std::max(a[i].second, b[j].second));
      ++i;
      ++j;
    }
  }
  return out;
}

std::vector<Offset> expand(const OffsetCounts& counts) {
  std::vector<Offset> out;
  for (const auto& [o, n] : counts)
    for (int c = 0; c < n; ++c) out.push_back(o);
  return out;
}

namespace {

std::string show(const Offset& o) {
  std::string s = "(";
  for (std::size_t k = 0; k < o.size(); ++k) s += (k ? "," : "") + std::to_string(o[k]);
  return s + ")";
}

// Maps list positions to neighbourhood indices: the c-th occurrence of offset o in the list
// takes the c-th copy of o in `nbh` (sorted, so copies are adjacent). `exists(i)` says whether
// neighbourhood entry i is in the grid for this rank; every existing entry must be taken once.
template <class Exists>
Result<std::vector<int>> assign(const std::vector<Offset>& nbh, const std::vector<Offset>& list, Exists exists,
                                const char* what) {
  std::vector<int> out(list.size(), -1);
  std::vector<char> taken(nbh.size(), 0);
  for (std::size_t k = 0; k < list.size(); ++k) {
    auto first = std::lower_bound(nbh.begin(), nbh.end(), list[k]);
    int i = static_cast<int>(first - nbh.begin());
    while (i < static_cast<int>(nbh.size()) && nbh[i] == list[k] && taken[i]) ++i;
    if (i == static_cast<int>(nbh.size()) || nbh[i] != list[k])
      return fail(std::string(what) + " " + std::to_string(k) + " at offset " + show(list[k]) +
                  " is not in the common neighbourhood (or occurs more often than there)");
    if (!exists(i)) return fail(std::string(what) + " " + std::to_string(k) + " at offset " + show(list[k]) + " lies outside the grid");
    taken[i] = 1;
    out[k] = i;
  }
  for (std::size_t i = 0; i < nbh.size(); ++i)
    if (!taken[i] && exists(static_cast<int>(i)))
      return fail(std::string(what) + " list lacks offset " + show(nbh[i]) + " whose process exists");
  return out;
}

}  // namespace

Result<EdgeOrder> match_edges(const Grid& grid, const Coords& me, const std::vector<Offset>& nbh,
                              const std::vector<Offset>& dest_offsets, const std::vector<Offset>& source_offsets) {
  assert(std::is_sorted(nbh.begin(), nbh.end()));
  std::vector<char> has_target(nbh.size()), has_source(nbh.size());
  for (std::size_t i = 0; i < nbh.size(); ++i) {
    const Grid::Shift s = grid.relative_shift(me, nbh[i]);
    has_target[i] = s.dest != kNoRank;
    has_source[i] = s.source != kNoRank;
  }
  Result<std::vector<int>> send = assign(nbh, dest_offsets, [&](int i) { return has_target[i] != 0; }, "destination");
  if (!send) return fail(send.error());
  Result<std::vector<int>> recv = assign(nbh, source_offsets, [&](int i) { return has_source[i] != 0; }, "source");
  if (!recv) return fail(recv.error());
  return EdgeOrder{std::move(*send), std::move(*recv)};
}

}  // namespace cartplan::engine
