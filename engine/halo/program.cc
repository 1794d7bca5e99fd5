// Lowering a bound halo plan to one rank's program: transfers per peer, joined regions.
#include "engine/halo/program.h"

#include <algorithm>
#include <map>

namespace cartplan::engine::halo {

namespace ih = ir::halo;

namespace {

std::vector<int> translation(const ih::Part& p) {
  std::vector<int> t = p.to.lo;
  for (std::size_t k = 0; k < t.size(); ++k) t[k] -= p.from.lo[k];
  return t;
}

bool alike(const ih::Part& x, const ih::Part& y) {
  return x.from.buffer == y.from.buffer && x.from.slot == y.from.slot && x.to.buffer == y.to.buffer && x.to.slot == y.to.slot &&
         translation(x) == translation(y);
}

// Joins parts with the same buffers and translation whose boxes touch, until none do; the
// joined part takes the place of the first.
std::vector<ih::Part> joined(std::vector<ih::Part> parts) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (std::size_t a = 0; a < parts.size() && !changed; ++a) {
      for (std::size_t b = a + 1; b < parts.size() && !changed; ++b) {
        const std::optional<ih::Box> from = alike(parts[a], parts[b]) ? ih::join(parts[a].from_box(), parts[b].from_box()) : std::nullopt;
        if (!from) continue;
        const ih::Box to = ih::translated(*from, translation(parts[a]));
        parts[a] = ih::Part{ih::Place{parts[a].from.buffer, parts[a].from.slot, from->lo}, ih::Place{parts[a].to.buffer, parts[a].to.slot, to.lo}, to.extent};
        parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(b));
        changed = true;
      }
    }
  }
  return parts;
}

HaloRegion region_of(const ih::ArrayShape& array, const ih::Place& place, const std::vector<int>& extent) {
  HaloRegion r{place.buffer == ih::Buffer::kArray ? HaloRegion::kArray : place.slot, place.lo, extent};
  if (place.buffer == ih::Buffer::kArray) {
    for (int k = 0; k < array.ndims; ++k) r.start[k] += array.ghost_lo[k];
  }
  return r;
}

// What one side of a phase gathers per peer: the first message's tag and shift, and the kept parts.
struct PeerParts {
  int tag = 0;
  ir::Offset shift;
  std::vector<ih::Part> parts;
};

// One side's transfers of a phase: the kept parts of the messages per peer. Receives are by peer
// rank; sends by the shift of their first message, lexicographically, so every rank sends in the
// same relative order (the Moore neighbours from -1,-1 to 1,1, as the linear loop does), also
// where the grid wraps: there peer-rank order would reorder a rank's sends against its
// neighbours' (issues 30 and 33).
std::vector<HaloTransfer> transfers(const HaloBinder& binder, const std::vector<const BoundMessage*>& msgs, bool recv) {
  std::map<int, PeerParts> by_peer;
  for (const BoundMessage* bm : msgs) {
    const int peer = recv ? bm->recv_peer : bm->send_peer;
    if (peer == kNoRank) continue;
    const ih::Message& m = binder.plan().phases()[bm->phase].messages[bm->message];
    auto [it, fresh] = by_peer.try_emplace(peer, PeerParts{bm->tag, m.shift, {}});
    for (int q : recv ? bm->recv_parts : bm->send_parts) it->second.parts.push_back(m.parts[q]);
  }
  std::vector<std::pair<int, PeerParts*>> order;
  for (auto& [peer, gathered] : by_peer) order.emplace_back(peer, &gathered);
  if (!recv)
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second->shift < b.second->shift; });
  std::vector<HaloTransfer> out;
  for (auto& [peer, gathered] : order) {
    HaloTransfer t{peer, gathered->tag, {}, 0};
    for (const ih::Part& p : joined(std::move(gathered->parts))) {
      t.regions.push_back(region_of(binder.plan().array(), recv ? p.to : p.from, p.extent));
      t.cells += t.regions.back().cells();
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

std::int64_t HaloRegion::cells() const {
  std::int64_t c = 1;
  for (int e : extent) c *= e;
  return c;
}

Result<HaloProgram> lower_halo(const HaloBinder& binder, const Grid& grid, const Coords& coords) {
  Result<BoundHalo> bound = binder.bind(grid, coords);
  if (!bound) return fail(bound.error());
  HaloProgram p;
  p.rank = bound->rank;
  p.array = binder.plan().array();
  for (const ih::Temp& t : binder.plan().temps()) p.temp_extents.push_back(t.extent);
  p.phases.resize(binder.plan().phases().size());
  std::vector<std::vector<const BoundMessage*>> by_phase(p.phases.size());
  for (const BoundMessage& bm : bound->messages) by_phase[bm.phase].push_back(&bm);
  for (std::size_t f = 0; f < p.phases.size(); ++f) {
    p.phases[f].recvs = transfers(binder, by_phase[f], true);
    p.phases[f].sends = transfers(binder, by_phase[f], false);
  }
  return p;
}

HaloCounts count(const HaloProgram& program) {
  HaloCounts c;
  const std::int64_t e = program.array.elem_bytes;
  for (const HaloPhaseProgram& ph : program.phases) {
    bool remote = false;
    for (const HaloTransfer& t : ph.sends) {
      if (t.peer == program.rank) {
        ++c.self_transfers, c.self_bytes += t.cells * e;
        continue;
      }
      remote = true;
      ++c.sends, c.sent_bytes += t.cells * e;
      c.regions += static_cast<std::int64_t>(t.regions.size());
    }
    for (const HaloTransfer& t : ph.recvs) {
      if (t.peer == program.rank) continue;
      remote = true;
      ++c.recvs, c.received_bytes += t.cells * e;
    }
    if (remote) ++c.phases;
  }
  return c;
}

}  // namespace cartplan::engine::halo
