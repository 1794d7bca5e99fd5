// bind(): peers, mesh masks and byte counts of one rank's part of a plan.
#include "engine/bind.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <string>

#include "ir/verify.h"

namespace cartplan::engine {
namespace {

// a + sign_b * b as an offset that reaches the same process of `grid` from every rank. The sum
// is taken in 64 bits (a verified plan may hold origins of +-2^30 and shifts of INT_MIN), then
// reduced into int range: modulo the dimension on periodic dimensions, and clamped to
// [-dim, dim] on the others (beyond that it leaves the mesh from every coordinate either way).
Offset add(const Grid& grid, const Offset& a, const Offset& b, int sign_b) {
  Offset r(a.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    const std::int64_t d = grid.dims()[k];
    std::int64_t v = std::int64_t{a[k]} + sign_b * std::int64_t{b[k]};
    if (grid.periods()[k])
      v %= d;
    else
      v = std::clamp(v, -d, d);
    r[k] = static_cast<int>(v);
  }
  return r;
}

}  // namespace

std::int64_t BoundPlan::bytes(const ir::BufRef& ref) const {
  return ref.kind == ir::BufKind::kTemp ? temp_slot_bytes[ref.index] : block_bytes[ref.index];
}

Result<Binder> Binder::create(const ir::Plan& plan) {
  const std::vector<std::string> errors = ir::verify(plan);
  if (!errors.empty())
    return fail("plan does not verify (" + std::to_string(errors.size()) + " errors; first: " + errors.front() + ")");
  return Binder(plan, ir::trace(plan));
}

Result<BoundPlan> Binder::bind(const Grid& grid, const Coords& coords, const std::vector<std::int64_t>& block_bytes) const {
  const ir::Plan& plan = plan_;
  const int t = plan.num_blocks();
  if (grid.ndims() != plan.ndims())
    return fail("grid has " + std::to_string(grid.ndims()) + " dimensions, the plan " + std::to_string(plan.ndims()));
  if (static_cast<int>(coords.size()) != grid.ndims())
    return fail("coordinates have " + std::to_string(coords.size()) + " entries, expected " + std::to_string(grid.ndims()));
  for (int k = 0; k < grid.ndims(); ++k)
    if (coords[k] < 0 || coords[k] >= grid.dims()[k])
      return fail("coordinate " + std::to_string(k) + " = " + std::to_string(coords[k]) + " is outside [0, " +
                  std::to_string(grid.dims()[k]) + ")");
  if (block_bytes.size() != 1 && static_cast<int>(block_bytes.size()) != t)
    return fail("block sizes: got " + std::to_string(block_bytes.size()) + ", expected 1 or " + std::to_string(t));
  for (std::size_t i = 0; i < block_bytes.size(); ++i) {
    if (block_bytes[i] < 0) return fail("block " + std::to_string(i) + " has negative size " + std::to_string(block_bytes[i]));
    // Every allgather block is a copy of the one send block.
    if (plan.op() == ir::Op::kAllgather && block_bytes[i] != block_bytes[0])
      return fail("allgather blocks must all have the size of the send block; block " + std::to_string(i) + " has " +
                  std::to_string(block_bytes[i]) + " bytes, block 0 has " + std::to_string(block_bytes[0]));
  }

  BoundPlan b;
  b.rank = grid.rank(coords);
  b.block_bytes = block_bytes.size() == 1 ? std::vector<std::int64_t>(t, block_bytes[0]) : block_bytes;
  for (const ir::TempSlot& s : plan.temp_slots()) b.temp_slot_bytes.push_back(b.block_bytes[s.shape_of]);

  // An entry travels iff its origin is in the mesh and at least one of its final targets is.
  // `origin` is relative to this rank; targets lie at origin + neighborhood[j].
  auto travels = [&](const ir::Transfer& x, const Offset& origin) {
    if (!grid.contains(coords, origin)) return false;
    for (int j : x.targets)
      if (grid.contains(coords, add(grid, origin, plan.neighborhood()[j], +1))) return true;
    return false;
  };

  for (int p = 0; p < static_cast<int>(plan.phases().size()); ++p) {
    b.phase_begin.push_back(static_cast<int>(b.rounds.size()));
    const ir::Phase& phase = plan.phases()[p];
    for (int r = 0; r < static_cast<int>(phase.rounds.size()); ++r) {
      const ir::Round& round = phase.rounds[r];
      BoundRound br;
      br.phase = p;
      br.round = r;
      br.tag = round.tag;
      const int first = trace_.round_start[p][r];
      for (int e = 0; e < static_cast<int>(round.send.size()); ++e) {
        const ir::Transfer& x = trace_.transfers[first + e];
        // As sender: the content's origin is x.content.origin from here.
        if (travels(x, x.content.origin)) {
          br.send_entries.push_back(e);
          br.send_bytes += b.bytes(round.send[e]);
        }
        // As receiver: the sender sits at -shift, so the origin is content.origin - shift.
        if (travels(x, add(grid, x.content.origin, round.shift, -1))) {
          br.recv_entries.push_back(e);
          br.recv_bytes += b.bytes(round.recv[e]);
        }
      }
      const std::string ctx = "phase " + std::to_string(p) + ", round " + std::to_string(r);
      if (!br.send_entries.empty()) {
        br.send_peer = grid.relative_rank(coords, round.shift);
        if (br.send_peer == kNoRank)
          return fail(ctx + ": the plan routes data through a process outside the mesh (at " +
                      ir::to_string(round.shift) + " from rank " + std::to_string(b.rank) + ")");
      }
      if (!br.recv_entries.empty()) {
        br.recv_peer = grid.relative_rank(coords, add(grid, Offset(round.shift.size(), 0), round.shift, -1));
        if (br.recv_peer == kNoRank)
          return fail(ctx + ": the plan expects data from a process outside the mesh (at -" +
                      ir::to_string(round.shift) + " from rank " + std::to_string(b.rank) + ")");
      }
      b.rounds.push_back(std::move(br));
    }
  }
  b.phase_begin.push_back(static_cast<int>(b.rounds.size()));

  for (int c = 0; c < static_cast<int>(plan.copies().size()); ++c) {
    // A copy moves data whose origin must exist (a duplicate's first occurrence may have been
    // masked); its target is this rank, which exists.
    const std::optional<ir::Content>& content = trace_.copy_content[c];
    assert(content.has_value());
    if (grid.contains(coords, content->origin)) b.copies.push_back(c);
  }
  return b;
}

}  // namespace cartplan::engine
