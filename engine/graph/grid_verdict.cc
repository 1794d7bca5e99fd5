// The grid construction's verdict sweep (an all-reduce MAX of error classes along the grid's lines).
#include "engine/graph/grid_verdict.h"

#include <algorithm>
#include <cassert>
#include <cstddef>

namespace cartplan::engine::graph {

namespace {

[[maybe_unused]] int grid_size(const std::vector<int>& dims) {
  int p = 1;
  for (int e : dims) p *= e;
  return p;
}

}  // namespace

GridVerdict::GridVerdict(int rank, const std::vector<int>& dims, int code) : dims_(&dims), rank_(rank), known_(code), sent_(code) {
  assert(rank >= 0 && rank < grid_size(dims) && "the rank is one of the grid's");
  assert(code >= 0 && "an error class, 0 for none");
}

int GridVerdict::stride() const {
  int s = 1;
  for (std::size_t j = static_cast<std::size_t>(round_) + 1; j < dims_->size(); ++j) s *= (*dims_)[j];
  return s;
}

int GridVerdict::peers() const { return done() ? 0 : (*dims_)[static_cast<std::size_t>(round_)] - 1; }

int GridVerdict::peer(int i) const {
  assert(!done() && i >= 0 && i < peers());
  const int s = stride(), extent = (*dims_)[static_cast<std::size_t>(round_)];
  const int mine = rank_ / s % extent;
  const int v = i < mine ? i : i + 1;  // coordinate values other than this rank's
  return rank_ + (v - mine) * s;
}

bool GridVerdict::take(int from, int word) {
  if (done() || word < 0) return false;
  const int s = stride(), extent = (*dims_)[static_cast<std::size_t>(round_)];
  const int delta = from - rank_;
  // A line peer differs from this rank by a non-zero multiple of the stride, within the extent.
  if (delta == 0 || delta % s != 0) return false;
  const int v = rank_ / s % extent + delta / s;
  if (v < 0 || v >= extent) return false;
  known_ = std::max(known_, word);
  return true;
}

void GridVerdict::next() {
  ++round_;
  sent_ = known_;
}

std::vector<int> run_grid_verdicts(const std::vector<int>& dims, const std::vector<int>& codes, std::int64_t* messages) {
  std::vector<GridVerdict> ranks;
  for (std::size_t r = 0; r < codes.size(); ++r) ranks.emplace_back(static_cast<int>(r), dims, codes[r]);
  std::int64_t sent = 0;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    // Every rank sends its round-k word before any rank takes one (as in MPI: all sends are
    // posted before the round's receives complete), then every rank takes its peers' words.
    std::vector<int> words;
    for (const GridVerdict& v : ranks) words.push_back(v.word());
    for (GridVerdict& v : ranks) {
      for (int i = 0; i < v.peers(); ++i) {
        const int from = v.peer(i);
        const bool ok = v.take(from, words[static_cast<std::size_t>(from)]);
        assert(ok);
        (void)ok;
      }
      sent += v.peers();
    }
    for (GridVerdict& v : ranks) v.next();
  }
  if (messages) *messages = sent;
  std::vector<int> out;
  for (const GridVerdict& v : ranks) out.push_back(v.verdict());
  return out;
}

}  // namespace cartplan::engine::graph
