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

Result<BoundPlan> Binder::bind(const Grid& grid, const Coords& coords, const std::vector<std::int64_t>& block_bytes,
                               const std::optional<Coords>& root) const {
  const ir::Plan& plan = plan_;
  const ir::Op op = plan.op();
  const int t = plan.num_blocks();
  if (grid.ndims() != plan.ndims())
    return fail("grid has " + std::to_string(grid.ndims()) + " dimensions, the plan " + std::to_string(plan.ndims()));
  if (static_cast<int>(coords.size()) != grid.ndims())
    return fail("coordinates have " + std::to_string(coords.size()) + " entries, expected " + std::to_string(grid.ndims()));
  for (int k = 0; k < grid.ndims(); ++k)
    if (coords[k] < 0 || coords[k] >= grid.dims()[k])
      return fail("coordinate " + std::to_string(k) + " = " + std::to_string(coords[k]) + " is outside [0, " +
                  std::to_string(grid.dims()[k]) + ")");
  if (ir::is_rooted(op) && !root) return fail(std::string(ir::to_string(op)) + " needs a root");
  if (!ir::is_rooted(op) && root) return fail(std::string(ir::to_string(op)) + " takes no root");
  if (root) {
    if (static_cast<int>(root->size()) != grid.ndims())
      return fail("root coordinates have " + std::to_string(root->size()) + " entries, expected " +
                  std::to_string(grid.ndims()));
    for (int k = 0; k < grid.ndims(); ++k)
      if ((*root)[k] < 0 || (*root)[k] >= grid.dims()[k])
        return fail("root coordinate " + std::to_string(k) + " = " + std::to_string((*root)[k]) + " is outside [0, " +
                    std::to_string(grid.dims()[k]) + ")");
  }
  if (block_bytes.size() != 1 && static_cast<int>(block_bytes.size()) != t)
    return fail("block sizes: got " + std::to_string(block_bytes.size()) + ", expected 1 or " + std::to_string(t));
  for (std::size_t i = 0; i < block_bytes.size(); ++i) {
    if (block_bytes[i] < 0) return fail("block " + std::to_string(i) + " has negative size " + std::to_string(block_bytes[i]));
    // Every allgather block is a copy of the one send block; reductions combine equal vectors.
    if (!ir::blocks_have_own_shape(op) && block_bytes[i] != block_bytes[0])
      return fail(std::string(ir::to_string(op)) + " blocks must all have the same size; block " + std::to_string(i) +
                  " has " + std::to_string(block_bytes[i]) + " bytes, block 0 has " + std::to_string(block_bytes[0]));
  }

  BoundPlan b;
  b.rank = grid.rank(coords);
  b.block_bytes = block_bytes.size() == 1 ? std::vector<std::int64_t>(t, block_bytes[0]) : block_bytes;
  for (const ir::TempSlot& s : plan.temp_slots()) b.temp_slot_bytes.push_back(b.block_bytes[s.shape_of]);

  const Offset zero(plan.ndims(), 0);
  // True iff the position `offset` from this rank exists and, if `must_be_root`, is the root.
  auto ok_at = [&](const Offset& offset, bool must_be_root) {
    const std::optional<Coords> c = grid.relative_coord(coords, offset);
    return c && (!must_be_root || *c == *root);
  };
  // The mask: origins are contribution origins + origin_shift, holders are holders +
  // holder_shift, all relative to this rank.
  auto keep = [&](const ir::Flow& f, const Offset& origin_shift, int origin_sign, const Offset& holder_shift) {
    bool origin = false;
    for (const ir::Content& c : f.contents)
      if ((origin = ok_at(add(grid, c.origin, origin_shift, origin_sign), ir::root_is_origin(op)))) break;
    if (!origin) return false;
    for (const Offset& h : f.holders)
      if (ok_at(add(grid, h, holder_shift, +1), ir::root_is_target(op))) return true;
    return false;
  };

  // Which locations hold data on this rank (a masked entry carries nothing).
  std::vector<bool> full_send(plan.num_send_blocks(), true), full_recv(plan.num_recv_blocks(), false),
      full_temp(plan.temp_slots().size(), false), recv_written(plan.num_recv_blocks(), false);
  auto full = [&](const ir::BufRef& ref) -> std::vector<bool>::reference {
    return ref.kind == ir::BufKind::kSend ? full_send[ref.index]
           : ref.kind == ir::BufKind::kRecv ? full_recv[ref.index]
                                            : full_temp[ref.index];
  };
  // Applies a performed write and returns whether it combines; or records a masked one.
  auto apply = [&](const ir::BufRef& to, bool performed) {
    bool combine = false;
    if (performed) {
      combine = to.reduce && full(to);
      full(to) = true;
      if (to.kind == ir::BufKind::kRecv) recv_written[to.index] = true;
    } else if (!to.reduce) {
      full(to) = false;  // overwritten with nothing
    }
    return combine;
  };
  auto local = [&](const ir::LocalStep& step, const ir::Copy& copy, const std::string& ctx) -> Result<std::optional<bool>> {
    const bool kept = keep(step, zero, +1, zero);
    if (kept && !full(copy.from))
      return fail(ctx + ": reads " + ir::to_string(copy.from) + ", which holds no data on rank " + std::to_string(b.rank));
    const bool combine = apply(copy.to, kept);
    return kept ? std::optional<bool>(combine) : std::nullopt;
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
      const std::string ctx = "phase " + std::to_string(p) + ", round " + std::to_string(r);
      for (int e = 0; e < static_cast<int>(round.send.size()); ++e) {
        const ir::Transfer& x = trace_.transfers[first + e];
        // As sender: origins as traced, the receiver (holders' reference) at +shift.
        if (keep(x, zero, +1, round.shift)) {
          if (!full(round.send[e]))
            return fail(ctx + ", send entry " + std::to_string(e) + ": " + ir::to_string(round.send[e]) +
                        " holds no data on rank " + std::to_string(b.rank));
          br.send_entries.push_back(e);
          br.send_bytes += b.bytes(round.send[e]);
        }
        // As receiver: the sender sits at -shift, so an origin o is o - shift from here.
        if (keep(x, round.shift, -1, zero)) {
          br.recv_entries.push_back(e);
          br.recv_bytes += b.bytes(round.recv[e]);
        }
      }
      if (!br.send_entries.empty()) {
        br.send_peer = grid.relative_rank(coords, round.shift);
        if (br.send_peer == kNoRank)
          return fail(ctx + ": the plan routes data through a process outside the mesh (at " +
                      ir::to_string(round.shift) + " from rank " + std::to_string(b.rank) + ")");
      }
      if (!br.recv_entries.empty()) {
        br.recv_peer = grid.relative_rank(coords, add(grid, zero, round.shift, -1));
        if (br.recv_peer == kNoRank)
          return fail(ctx + ": the plan expects data from a process outside the mesh (at -" +
                      ir::to_string(round.shift) + " from rank " + std::to_string(b.rank) + ")");
      }
      b.rounds.push_back(std::move(br));
    }
    // Receives are applied after every send of the phase, in plan order.
    for (int k = b.phase_begin[p]; k < static_cast<int>(b.rounds.size()); ++k) {
      BoundRound& br = b.rounds[k];
      const ir::Round& round = phase.rounds[br.round];
      std::size_t next = 0;
      for (int e = 0; e < static_cast<int>(round.recv.size()); ++e) {
        const bool arrives = next < br.recv_entries.size() && br.recv_entries[next] == e;
        const bool combine = apply(round.recv[e], arrives);
        if (arrives) {
          br.recv_combine.push_back(combine);
          ++next;
        }
      }
    }
    b.phase_copies.emplace_back();
    for (int c = 0; c < static_cast<int>(phase.copies.size()); ++c) {
      Result<std::optional<bool>> done = local(trace_.locals[trace_.phase_copy_start[p] + c], phase.copies[c],
                                               "phase " + std::to_string(p) + ", copy " + std::to_string(c));
      if (!done) return fail(done.error());
      if (*done) b.phase_copies.back().emplace_back(c, **done);
    }
  }
  b.phase_begin.push_back(static_cast<int>(b.rounds.size()));

  for (int c = 0; c < static_cast<int>(plan.copies().size()); ++c) {
    Result<std::optional<bool>> done =
        local(trace_.locals[trace_.final_copy_start + c], plan.copies()[c], "copy " + std::to_string(c));
    if (!done) return fail(done.error());
    if (*done) {
      b.copies.push_back(c);
      b.copy_combine.push_back(**done);
    }
  }

  const bool me_root = root && *root == coords;
  for (int j = 0; j < plan.num_recv_blocks(); ++j) {
    bool result = true;
    if (ir::root_is_target(op)) {
      result = me_root;
    } else if (ir::root_is_origin(op)) {
      result = ok_at(add(grid, zero, plan.neighborhood()[j], -1), true);
    }
    b.recv_result.push_back(result);
    b.recv_scratch.push_back(recv_written[j] && !result);
  }
  return b;
}

}  // namespace cartplan::engine
