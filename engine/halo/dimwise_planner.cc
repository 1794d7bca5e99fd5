// The dimension-by-dimension halo planners: dimwise (extended faces, no temps), split (temps
// for cells in transit that no ghost region of their holder may hold) and hybrid (dimwise for
// the prefix-closed part of the stencil, the rest direct). See planners.h.
//
// Phase p routes dimension k = dim_order[p]. The receiver's "arrival" regions of the phase are
// the sign vectors a with a_k = s (s = -1, +1), zero on the dimensions routed later, and
// needed: some region t of the stencil agrees with a on the dimensions routed so far. They
// come from the process at self + s e_k, which holds their cells in its region a' (a with a_k
// zeroed; its interior when a' = 0) at positions shifted by -s * interior_k along k. A needed a
// in the stencil arrives whole into the receiver's ghost region a; another goes to a temp that
// holds the union of what later phases forward from it (B(a, t) for the t extending a).
#include <algorithm>
#include <cassert>
#include <map>
#include <set>

#include "engine/halo/box_cover.h"
#include "engine/halo/plan_support.h"
#include "engine/halo/planners.h"

namespace cartplan::engine::halo {

namespace ih = ir::halo;

namespace {

class DimwiseBuilder {
 public:
  DimwiseBuilder(const ih::ArrayShape& array, const std::vector<ir::Offset>& regions, const std::vector<int>& order)
      : a_(array), regions_(regions), in_n_(regions.begin(), regions.end()), order_(order), pos_(order.size()) {
    for (std::size_t p = 0; p < order.size(); ++p) pos_[order[p]] = static_cast<int>(p);
  }

  void build(ih::HaloPlanParts& plan) {
    for (int p = 0; p < a_.ndims; ++p) {
      ih::Phase phase{order_[p], {}};
      for (int s : {-1, 1}) {
        ir::Offset shift(a_.ndims, 0);
        shift[order_[p]] = -s;
        ih::Message m{shift, 0, {}};
        for (const ir::Offset& a : arrivals(p, s)) add_parts(a, p, m.parts);
        if (!m.parts.empty()) phase.messages.push_back(std::move(m));
      }
      if (!phase.messages.empty()) plan.phases.push_back(std::move(phase));
    }
    plan.temps = temps_;
  }

 private:
  struct TempAt {
    int slot;
    ih::Cell origin;  // the array cell its cell 0 stands for
  };
  const ih::ArrayShape& a_;
  const std::vector<ir::Offset>& regions_;
  const std::set<ir::Offset> in_n_;
  const std::vector<int>& order_;
  std::vector<int> pos_;  // pos_[k]: the phase that routes dimension k
  std::map<ir::Offset, TempAt> temp_of_;
  std::vector<ih::Temp> temps_;

  // t agrees with a on the dimensions routed in phases 0..p.
  bool extends(const ir::Offset& t, const ir::Offset& a, int p) const {
    for (int k = 0; k < a_.ndims; ++k) {
      if (pos_[k] <= p && t[k] != a[k]) return false;
    }
    return true;
  }

  std::vector<ir::Offset> arrivals(int p, int s) const {
    std::vector<ir::Offset> out;
    std::set<ir::Offset> seen;
    for (const ir::Offset& t : regions_) {
      if (t[order_[p]] != s) continue;
      ir::Offset a = t;
      for (int k = 0; k < a_.ndims; ++k) {
        if (pos_[k] > p) a[k] = 0;
      }
      if (seen.insert(a).second) out.push_back(a);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // B(a, t): a's sides on the dimensions routed so far, t's source slabs on the later ones.
  ih::Box needed_box(const ir::Offset& a, const ir::Offset& t, int p) const {
    ih::Box b;
    for (int k = 0; k < a_.ndims; ++k) {
      const auto [lo, hi] = pos_[k] <= p ? ih::side_interval(a_, k, a[k]) : ih::source_interval(a_, k, t[k]);
      b.lo.push_back(lo);
      b.extent.push_back(hi - lo);
    }
    return b;
  }

  ih::Place place_in(const ir::Offset& region, const ih::Box& cells) const {
    const bool zero = region == ir::Offset(a_.ndims, 0);
    if (zero || in_n_.count(region)) return ih::Place{ih::Buffer::kArray, 0, cells.lo};
    const TempAt& t = temp_of_.at(region);
    ih::Cell lo = cells.lo;
    for (int k = 0; k < a_.ndims; ++k) lo[k] -= t.origin[k];
    return ih::Place{ih::Buffer::kTemp, t.slot, lo};
  }

  std::vector<ih::Box> boxes_of(const ir::Offset& a, int p);
  void add_parts(const ir::Offset& a, int p, std::vector<ih::Part>& parts);
};

// The boxes of arrival region a: the whole ghost region if the stencil holds it, else the
// disjoint cover of what the regions extending it need (and a new temp for them).
std::vector<ih::Box> DimwiseBuilder::boxes_of(const ir::Offset& a, int p) {
  if (in_n_.count(a)) return {ih::ghost_region(a_, a)};
  std::vector<ih::Box> need;
  for (const ir::Offset& t : regions_) {
    if (extends(t, a, p)) need.push_back(needed_box(a, t, p));
  }
  std::vector<ih::Box> boxes;
  ih::Box bound = need.front();
  for (const CoverPiece& c : disjoint_cover(need)) boxes.push_back(c.box);
  for (const ih::Box& b : boxes) {
    for (int k = 0; k < a_.ndims; ++k) {
      const int hi = std::max(bound.hi(k), b.hi(k));
      bound.lo[k] = std::min(bound.lo[k], b.lo[k]);
      bound.extent[k] = hi - bound.lo[k];
    }
  }
  temp_of_[a] = TempAt{static_cast<int>(temps_.size()), bound.lo};
  temps_.push_back(ih::Temp{bound.extent});
  return boxes;
}

void DimwiseBuilder::add_parts(const ir::Offset& a, int p, std::vector<ih::Part>& parts) {
  const int k = order_[p];
  ir::Offset prefix = a;
  prefix[k] = 0;
  for (const ih::Box& b : boxes_of(a, p)) {
    ih::Box src = b;
    src.lo[k] -= a[k] * a_.interior[k];
    parts.push_back(ih::Part{place_in(prefix, src), place_in(a, b), b.extent});
  }
}

// The regions all of whose prefixes (in dim_order) are regions too.
std::vector<ir::Offset> closed_part(const std::vector<ir::Offset>& regions, const std::vector<int>& order) {
  const std::set<ir::Offset> in(regions.begin(), regions.end());
  std::vector<ir::Offset> out;
  for (const ir::Offset& t : regions) {
    ir::Offset prefix = t;
    bool closed = true;
    for (auto k = order.rbegin(); k != order.rend(); ++k) {
      if (prefix[*k] == 0) continue;
      prefix[*k] = 0;
      if (prefix != ir::Offset(t.size(), 0) && !in.count(prefix)) closed = false;
    }
    if (closed) out.push_back(t);
  }
  return out;
}

ih::HaloPlan build(const HaloDescription& h, const std::vector<ir::Offset>& regions, const std::vector<int>& order, ih::HaloAlgorithm algo) {
  ih::HaloPlanParts p = plan_frame(h, algo, order);
  DimwiseBuilder(h.array, regions, order).build(p);
  return finish_halo_plan(std::move(p));
}

}  // namespace

bool prefix_closed(const HaloDescription& h, const std::vector<int>& dim_order) {
  const std::vector<ir::Offset> regions = nonempty_regions(h);
  return closed_part(regions, dim_order).size() == regions.size();
}

ih::HaloPlan plan_halo_dimwise(const HaloDescription& h, const std::vector<int>& dim_order) {
  assert(prefix_closed(h, dim_order));
  return build(h, nonempty_regions(h), dim_order, ih::HaloAlgorithm::kDimwise);
}

ih::HaloPlan plan_halo_split(const HaloDescription& h, const std::vector<int>& dim_order) {
  return build(h, nonempty_regions(h), dim_order, ih::HaloAlgorithm::kSplit);
}

ih::HaloPlan plan_halo_hybrid(const HaloDescription& h, const std::vector<int>& dim_order) {
  const std::vector<ir::Offset> regions = nonempty_regions(h), closed = closed_part(regions, dim_order);
  ih::HaloPlanParts p = build(h, closed, dim_order, ih::HaloAlgorithm::kHybrid).parts();
  const std::set<ir::Offset> in_closed(closed.begin(), closed.end());
  if (p.phases.empty()) p.phases.push_back(ih::Phase{ih::Phase::kAllDims, {}});
  for (const ir::Offset& t : regions) {
    if (in_closed.count(t)) continue;
    p.phases.front().messages.push_back(direct_message(h.array, t));
    p.phases.front().dim = ih::Phase::kAllDims;
  }
  if (p.phases.front().messages.empty()) p.phases.clear();
  return finish_halo_plan(std::move(p));
}

}  // namespace cartplan::engine::halo
