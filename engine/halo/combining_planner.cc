// The combining halo planner: seed 000's Algorithm 1 (engine::plan_combining, alltoall) mapped
// onto the array. Block i is ghost region t_i of the receiver; cartplan's offset for it is
// -t_i (block i goes to self + N[i], i.e. from the process at self + t_i). Send block i is the
// sender's source slab, recv block i the ghost region, temp slot s a box shaped like the region
// of its block.
#include <cassert>

#include "engine/halo/plan_support.h"
#include "engine/halo/planners.h"
#include "engine/planner.h"

namespace cartplan::engine::halo {

namespace ih = ir::halo;

namespace {

Neighborhood combining_neighborhood(const std::vector<ir::Offset>& regions) {
  std::vector<ir::Offset> offsets;
  for (ir::Offset t : regions) {
    for (int& c : t) c = -c;
    offsets.push_back(t);
  }
  Result<Neighborhood> nbh = Neighborhood::create(static_cast<int>(regions.front().size()), offsets);
  assert(nbh);
  return *nbh;
}

// Where an entry of the combining plan lies in the array or the temps, and its block's region.
struct Mapper {
  const ih::ArrayShape& array;
  const std::vector<ir::Offset>& regions;
  const ir::Plan& plan;

  int block_of(const ir::BufRef& r) const { return r.kind == ir::BufKind::kTemp ? plan.temp_slots()[r.index].shape_of : r.index; }
  ih::Place place(const ir::BufRef& r) const {
    const ir::Offset& t = regions[block_of(r)];
    if (r.kind == ir::BufKind::kSend) return ih::Place{ih::Buffer::kArray, 0, ih::source_region(array, t).lo};
    if (r.kind == ir::BufKind::kRecv) return ih::Place{ih::Buffer::kArray, 0, ih::ghost_region(array, t).lo};
    return ih::Place{ih::Buffer::kTemp, r.index, std::vector<int>(array.ndims, 0)};
  }
  ih::Part part(const ir::BufRef& from, const ir::BufRef& to) const {
    assert(block_of(from) == block_of(to));
    return ih::Part{place(from), place(to), ih::ghost_region(array, regions[block_of(to)]).extent};
  }
};

}  // namespace

std::vector<int> combining_dim_order(const HaloDescription& h) {
  const std::vector<ir::Offset> regions = nonempty_regions(h);
  if (regions.empty()) return natural_dim_order(h.array.ndims);
  return auto_dim_order(combining_neighborhood(regions));
}

ih::HaloPlan plan_halo_combining(const HaloDescription& h, const std::vector<int>& dim_order) {
  ih::HaloPlanParts p = plan_frame(h, ih::HaloAlgorithm::kCombining, dim_order);
  const std::vector<ir::Offset> regions = nonempty_regions(h);
  if (regions.empty()) return finish_halo_plan(std::move(p));
  const ir::Plan plan = plan_combining(ir::Op::kAlltoall, combining_neighborhood(regions), dim_order);
  assert(plan.copies().empty());  // no zero offset, no duplicates
  const Mapper map{h.array, regions, plan};
  for (const ir::TempSlot& s : plan.temp_slots()) p.temps.push_back(ih::Temp{ih::ghost_region(h.array, regions[s.shape_of]).extent});
  for (const ir::Phase& ph : plan.phases()) {
    ih::Phase phase{ph.dim, {}};
    for (const ir::Round& r : ph.rounds) {
      ih::Message m{r.shift, 0, {}};
      for (std::size_t e = 0; e < r.send.size(); ++e) m.parts.push_back(map.part(r.send[e], r.recv[e]));
      phase.messages.push_back(std::move(m));
    }
    p.phases.push_back(std::move(phase));
  }
  return finish_halo_plan(std::move(p));
}

}  // namespace cartplan::engine::halo
