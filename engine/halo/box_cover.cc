// Disjoint covers of unions of boxes over the grid of all box bounds.
#include "engine/halo/box_cover.h"

#include <algorithm>
#include <set>

namespace cartplan::engine::halo {

namespace ih = ir::halo;

namespace {

// Every cell of the grid the boxes' bounds make, with the boxes containing it (non-empty only).
std::vector<CoverPiece> elementary_pieces(const std::vector<ih::Box>& boxes) {
  const int d = boxes.front().ndims();
  std::vector<std::vector<int>> cuts(d);
  for (int k = 0; k < d; ++k) {
    std::set<int> s;
    for (const ih::Box& b : boxes) {
      if (!b.empty()) s.insert({b.lo[k], b.hi(k)});
    }
    cuts[k].assign(s.begin(), s.end());
    if (cuts[k].size() < 2) return {};
  }
  std::vector<CoverPiece> pieces;
  std::vector<std::size_t> j(d, 0);
  while (true) {
    ih::Box cell{std::vector<int>(d), std::vector<int>(d)};
    for (int k = 0; k < d; ++k) cell.lo[k] = cuts[k][j[k]], cell.extent[k] = cuts[k][j[k] + 1] - cuts[k][j[k]];
    CoverPiece piece{cell, {}};
    for (std::size_t i = 0; i < boxes.size(); ++i) {
      if (!boxes[i].empty() && ih::contains(boxes[i], cell)) piece.covered_by.push_back(static_cast<int>(i));
    }
    if (!piece.covered_by.empty()) pieces.push_back(std::move(piece));
    int k = d - 1;
    while (k >= 0 && ++j[k] + 1 >= cuts[k].size()) j[k--] = 0;
    if (k < 0) return pieces;
  }
}

}  // namespace

std::vector<CoverPiece> disjoint_cover(const std::vector<ih::Box>& boxes) {
  if (boxes.empty()) return {};
  std::vector<CoverPiece> pieces = elementary_pieces(boxes);
  bool joined = true;
  while (joined) {
    joined = false;
    for (std::size_t a = 0; a < pieces.size() && !joined; ++a) {
      for (std::size_t b = a + 1; b < pieces.size() && !joined; ++b) {
        if (pieces[a].covered_by != pieces[b].covered_by) continue;
        if (std::optional<ih::Box> u = ih::join(pieces[a].box, pieces[b].box)) {
          pieces[a].box = *u;
          pieces.erase(pieces.begin() + static_cast<std::ptrdiff_t>(b));
          joined = true;
        }
      }
    }
  }
  std::sort(pieces.begin(), pieces.end(), [](const CoverPiece& x, const CoverPiece& y) { return x.box.lo < y.box.lo; });
  return pieces;
}

}  // namespace cartplan::engine::halo
