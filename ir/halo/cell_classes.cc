// Cutting a halo plan's buffers into classes of cells that every part treats alike.
#include "ir/halo/cell_classes.h"

#include <algorithm>
#include <set>

namespace cartplan::ir::halo {
namespace {

using CutSets = std::vector<std::vector<std::set<int>>>;  // [frame][dim]

CutSets initial_cuts(const HaloPlanParts& plan) {
  const int d = plan.array.ndims;
  CutSets cuts(1 + plan.temps.size(), std::vector<std::set<int>>(d));
  for (int k = 0; k < d; ++k) {
    for (int s = -1; s <= 1; ++s) {
      const auto [lo, hi] = side_interval(plan.array, k, s);
      cuts[0][k].insert({lo, hi});
    }
    for (std::size_t t = 0; t < plan.temps.size(); ++t) cuts[1 + t][k].insert({0, plan.temps[t].extent[k]});
  }
  for (const Phase& ph : plan.phases) {
    for (const Message& m : ph.messages) {
      for (const Part& p : m.parts) {
        for (const Place* place : {&p.from, &p.to}) {
          const int f = CellClasses::frame_of(place->buffer, place->slot);
          for (int k = 0; k < d; ++k) cuts[f][k].insert({place->lo[k], place->lo[k] + p.extent[k]});
        }
      }
    }
  }
  return cuts;
}

// Mirrors the cuts strictly inside `from` (shifted by tau) into `to`; true if any was new.
bool mirror(const std::set<int>& from, int lo, int hi, int tau, std::set<int>& to, std::int64_t& steps) {
  bool changed = false;
  for (auto it = from.upper_bound(lo); it != from.end() && *it < hi; ++it, ++steps) changed |= to.insert(*it + tau).second;
  return changed;
}

// One pass over every part and dimension; true if a cut was added.
bool close_once(const HaloPlanParts& plan, CutSets& cuts, std::int64_t& steps) {
  bool changed = false;
  for (const Phase& ph : plan.phases) {
    for (const Message& m : ph.messages) {
      for (const Part& p : m.parts) {
        const int a = CellClasses::frame_of(p.from.buffer, p.from.slot), b = CellClasses::frame_of(p.to.buffer, p.to.slot);
        for (int k = 0; k < plan.array.ndims; ++k) {
          const int tau = p.to.lo[k] - p.from.lo[k];
          changed |= mirror(cuts[a][k], p.from.lo[k], p.from.lo[k] + p.extent[k], tau, cuts[b][k], steps);
          changed |= mirror(cuts[b][k], p.to.lo[k], p.to.lo[k] + p.extent[k], -tau, cuts[a][k], steps);
          ++steps;
        }
      }
    }
  }
  return changed;
}

bool too_many(const CutSets& cuts) {
  for (const auto& frame : cuts) {
    double classes = 1;
    for (const auto& c : frame) {
      if (c.size() > CellClasses::kMaxCuts) return true;
      classes *= static_cast<double>(c.size() - 1);
    }
    if (classes > static_cast<double>(CellClasses::kMaxClasses)) return true;
  }
  return false;
}

}  // namespace

Result<CellClasses> CellClasses::create(const HaloPlanParts& plan) {
  CutSets cuts = initial_cuts(plan);
  bool changed = true;
  std::int64_t steps = 0;
  while (changed) {
    if (too_many(cuts) || steps > kMaxSteps)
      return fail("the plan's boxes cut a buffer into more than " + std::to_string(kMaxClasses) +
                  " classes of cells (or a dimension into more than " + std::to_string(kMaxCuts) + " intervals, or take more than " +
                  std::to_string(kMaxSteps) + " steps to cut); verify gives up");
    changed = close_once(plan, cuts, steps);
  }
  CellClasses c;
  for (const auto& frame : cuts) {
    c.cuts_.emplace_back();
    std::int64_t n = 1;
    for (const auto& s : frame) {
      c.cuts_.back().emplace_back(s.begin(), s.end());
      n *= static_cast<std::int64_t>(s.size() - 1);
    }
    c.count_.push_back(n);
  }
  return c;
}

std::int64_t CellClasses::count_in(int frame, const Box& box) const {
  if (box.empty()) return 0;
  std::int64_t n = 1;
  for (std::size_t k = 0; k < box.lo.size(); ++k) {
    const std::vector<int>& c = cuts_[frame][k];
    n *= std::lower_bound(c.begin(), c.end(), box.hi(k)) - std::upper_bound(c.begin(), c.end(), box.lo[k]) + 1;
  }
  return n;
}

std::int64_t CellClasses::index_of(int frame, const Cell& x) const {
  std::int64_t idx = 0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    const std::vector<int>& c = cuts_[frame][k];
    const auto j = std::upper_bound(c.begin(), c.end(), x[k]) - c.begin() - 1;
    idx = idx * static_cast<std::int64_t>(c.size() - 1) + j;
  }
  return idx;
}

Box CellClasses::class_box(int frame, std::int64_t index) const {
  const std::size_t d = cuts_[frame].size();
  Box b{std::vector<int>(d), std::vector<int>(d)};
  for (std::size_t k = d; k-- > 0;) {
    const std::vector<int>& c = cuts_[frame][k];
    const std::int64_t n = static_cast<std::int64_t>(c.size() - 1), j = index % n;
    index /= n;
    b.lo[k] = c[j];
    b.extent[k] = c[j + 1] - c[j];
  }
  return b;
}

void CellClasses::for_each(int frame, const Box& box, const std::function<void(std::int64_t, const Cell&)>& f) const {
  if (box.empty()) return;
  const std::size_t d = box.lo.size();
  std::vector<std::size_t> first(d), last(d), j(d);
  for (std::size_t k = 0; k < d; ++k) {
    const std::vector<int>& c = cuts_[frame][k];
    first[k] = std::upper_bound(c.begin(), c.end(), box.lo[k]) - c.begin() - 1;
    last[k] = std::lower_bound(c.begin(), c.end(), box.hi(k)) - c.begin();  // one past the last interval
  }
  j = first;
  Cell x(d);
  while (true) {
    for (std::size_t k = 0; k < d; ++k) x[k] = cuts_[frame][k][j[k]];
    f(index_of(frame, x), x);
    std::size_t k = d;
    while (k > 0) {
      --k;
      if (++j[k] < last[k]) break;
      j[k] = first[k];
      if (k == 0) return;
    }
  }
}

}  // namespace cartplan::ir::halo
