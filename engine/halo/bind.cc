// Binding halo plans to one rank: peers and the parts that travel on a mesh.
#include "engine/halo/bind.h"

#include "ir/halo/verify.h"

namespace cartplan::engine::halo {

namespace ih = ir::halo;

namespace {

ir::Offset minus(ir::Offset a, const ir::Offset& b) {
  for (std::size_t k = 0; k < a.size(); ++k) a[k] -= b[k];
  return a;
}

// Whether a part travels, seen from `at` (the sender, or the receiver with offsets moved by
// -shift): its origin and one of its holders exist.
bool travels(const Grid& grid, const Coords& at, const ih::PartTrace& t, const ir::Offset& from_sender) {
  if (!grid.contains(at, minus(t.origin, from_sender))) return false;
  for (const ir::Offset& h : t.holders) {
    if (grid.contains(at, minus(h, from_sender))) return true;
  }
  return false;
}

}  // namespace

Result<HaloBinder> HaloBinder::create(ih::HaloPlan plan) {
  std::vector<std::string> errors = ih::verify_structure(plan, 1);
  if (!errors.empty()) return fail("the halo plan does not verify: " + errors.front());
  ih::TraceResult t = ih::trace_halo(plan, 1);
  if (!t.errors.empty()) return fail("the halo plan does not verify: " + t.errors.front());
  return HaloBinder(std::move(plan), std::move(t.parts));
}

Result<BoundHalo> HaloBinder::bind(const Grid& grid, const Coords& coords) const {
  if (grid.ndims() != plan_.ndims())
    return fail("the grid has " + std::to_string(grid.ndims()) + " dimensions; the plan's array has " + std::to_string(plan_.ndims()));
  if (static_cast<int>(coords.size()) != grid.ndims()) return fail("coordinates " + ir::to_string(coords) + " do not fit the grid");
  for (int k = 0; k < grid.ndims(); ++k) {
    if (coords[k] < 0 || coords[k] >= grid.dims()[k]) return fail("coordinates " + ir::to_string(coords) + " lie outside the grid");
  }
  BoundHalo b;
  b.rank = grid.rank(coords);
  const ir::Offset zero(grid.ndims(), 0);
  for (std::size_t f = 0; f < plan_.phases().size(); ++f) {
    const ih::Phase& ph = plan_.phases()[f];
    for (std::size_t i = 0; i < ph.messages.size(); ++i) {
      const ih::Message& m = ph.messages[i];
      BoundMessage bm{static_cast<int>(f), static_cast<int>(i), m.tag, kNoRank, kNoRank, {}, {}};
      const bool has_dest = grid.contains(coords, m.shift), has_source = grid.contains(coords, minus(zero, m.shift));
      for (std::size_t q = 0; q < m.parts.size(); ++q) {
        const ih::PartTrace& t = parts_[f][i][q];
        if (has_dest && travels(grid, coords, t, zero)) bm.send_parts.push_back(static_cast<int>(q));
        if (has_source && travels(grid, coords, t, m.shift)) bm.recv_parts.push_back(static_cast<int>(q));
      }
      if (!bm.send_parts.empty()) bm.send_peer = grid.relative_rank(coords, m.shift);
      if (!bm.recv_parts.empty()) bm.recv_peer = grid.relative_rank(coords, minus(zero, m.shift));
      b.messages.push_back(std::move(bm));
    }
  }
  return b;
}

}  // namespace cartplan::engine::halo
