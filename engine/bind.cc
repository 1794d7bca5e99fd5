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

// Error unless `c` has one coordinate per dimension of `grid`, each inside it; `what` names one
// coordinate ("coordinate", "root coordinate").
Result<bool> check_coords(const Grid& grid, const Coords& c, const std::string& what) {
  if (static_cast<int>(c.size()) != grid.ndims())
    return fail(what + "s have " + std::to_string(c.size()) + " entries, expected " + std::to_string(grid.ndims()));
  for (int k = 0; k < grid.ndims(); ++k)
    if (c[k] < 0 || c[k] >= grid.dims()[k])
      return fail(what + " " + std::to_string(k) + " = " + std::to_string(c[k]) +
                  " is outside [0, " + std::to_string(grid.dims()[k]) + ")");
  return true;
}

// One size for all blocks or one per block, none negative, all equal unless blocks have their
// own shape (every allgather block is a copy of the one send block; reductions combine equal
// vectors).
Result<bool> check_block_bytes(ir::Op op, int t, const std::vector<std::int64_t>& block_bytes) {
  if (block_bytes.size() != 1 && static_cast<int>(block_bytes.size()) != t)
    return fail("block sizes: got " + std::to_string(block_bytes.size()) + ", expected 1 or " + std::to_string(t));
  for (std::size_t i = 0; i < block_bytes.size(); ++i) {
    if (block_bytes[i] < 0) return fail("block " + std::to_string(i) + " has negative size " + std::to_string(block_bytes[i]));
    if (!ir::blocks_have_own_shape(op) && block_bytes[i] != block_bytes[0])
      return fail(std::string(ir::to_string(op)) + " blocks must all have the same size; block " + std::to_string(i) +
                  " has " + std::to_string(block_bytes[i]) + " bytes, block 0 has " + std::to_string(block_bytes[0]));
  }
  return true;
}

// bind()'s argument checks, in the order their errors are reported.
Result<bool> check_bind_args(const ir::Plan& plan, const Grid& grid, const Coords& coords,
                             const std::vector<std::int64_t>& block_bytes, const std::optional<Coords>& root) {
  const ir::Op op = plan.op();
  if (grid.ndims() != plan.ndims())
    return fail("grid has " + std::to_string(grid.ndims()) + " dimensions, the plan " + std::to_string(plan.ndims()));
  if (Result<bool> ok = check_coords(grid, coords, "coordinate"); !ok) return ok;
  if (ir::is_rooted(op) && !root) return fail(std::string(ir::to_string(op)) + " needs a root");
  if (!ir::is_rooted(op) && root) return fail(std::string(ir::to_string(op)) + " takes no root");
  if (root)
    if (Result<bool> ok = check_coords(grid, *root, "root coordinate"); !ok) return ok;
  return check_block_bytes(op, plan.num_blocks(), block_bytes);
}

// One rank's binding: walks the plan's trace in plan order, keeping the entries whose mask
// holds on this rank and following which locations hold data.
class RankBinder {
 public:
  // `trace` nullptr: the representative process (bind_representative), where every entry
  // travels and `grid`, if any, only tells which rounds wrap to the process itself.
  RankBinder(const ir::Plan& plan, const ir::Trace* trace, const Grid* grid, const Coords& coords,
             const std::optional<Coords>& root)
      : plan_(plan), trace_(trace), grid_(grid), coords_(coords), root_(root), zero_(plan.ndims(), 0),
        full_send_(plan.num_send_blocks(), true), full_recv_(plan.num_recv_blocks(), false),
        full_temp_(plan.temp_slots().size(), false), recv_written_(plan.num_recv_blocks(), false) {}

  Result<BoundPlan> run(const std::vector<std::int64_t>& block_bytes) {
    b_.rank = trace_ ? grid_->rank(coords_) : kRepresentativeRank;
    const int t = plan_.num_blocks();
    b_.block_bytes = block_bytes.size() == 1 ? std::vector<std::int64_t>(t, block_bytes[0]) : block_bytes;
    for (const ir::TempSlot& s : plan_.temp_slots()) b_.temp_slot_bytes.push_back(b_.block_bytes[s.shape_of]);
    for (int p = 0; p < static_cast<int>(plan_.phases().size()); ++p)
      if (Result<bool> ok = bind_phase(p); !ok) return fail(ok.error());
    b_.phase_begin.push_back(static_cast<int>(b_.rounds.size()));
    if (Result<bool> ok = bind_final_copies(); !ok) return fail(ok.error());
    mark_results();
    return std::move(b_);
  }

 private:
  // True iff the position `offset` from this rank exists and, if `must_be_root`, is the root.
  bool ok_at(const Offset& offset, bool must_be_root) const {
    const std::optional<Coords> c = grid_->relative_coord(coords_, offset);
    return c && (!must_be_root || *c == *root_);
  }

  // The mask: origins are contribution origins + origin_shift, holders are holders +
  // holder_shift, all relative to this rank.
  bool keep(const ir::Flow& f, const Offset& origin_shift, int origin_sign, const Offset& holder_shift) const {
    const ir::Op op = plan_.op();
    const bool origin = std::any_of(f.contents.begin(), f.contents.end(), [&](const ir::Content& c) {
      return ok_at(add(*grid_, c.origin, origin_shift, origin_sign), ir::root_is_origin(op));
    });
    if (!origin) return false;
    return std::any_of(f.holders.begin(), f.holders.end(),
                       [&](const Offset& h) { return ok_at(add(*grid_, h, holder_shift, +1), ir::root_is_target(op)); });
  }

  // Whether a location holds data on this rank (a masked entry carries nothing).
  std::vector<bool>::reference full(const ir::BufRef& ref) {
    return ref.kind == ir::BufKind::kSend ? full_send_[ref.index]
           : ref.kind == ir::BufKind::kRecv ? full_recv_[ref.index]
                                            : full_temp_[ref.index];
  }

  // Applies a performed write and returns whether it combines; or records a masked one.
  bool apply(const ir::BufRef& to, bool performed) {
    bool combine = false;
    if (performed) {
      combine = to.reduce && full(to);
      full(to) = true;
      if (to.kind == ir::BufKind::kRecv) recv_written_[to.index] = true;
    } else if (!to.reduce) {
      full(to) = false;  // overwritten with nothing
    }
    return combine;
  }

  // A local step (trace_->locals[step]): nullopt if masked, else whether it combines.
  Result<std::optional<bool>> local(int step, const ir::Copy& copy, const std::string& ctx) {
    const bool kept = !trace_ || keep(trace_->locals[step], zero_, +1, zero_);
    if (kept && !full(copy.from))
      return fail(ctx + ": reads " + ir::to_string(copy.from) + ", which holds no data on rank " + std::to_string(b_.rank));
    const bool combine = apply(copy.to, kept);
    return kept ? std::optional<bool>(combine) : std::nullopt;
  }

  Result<bool> bind_phase(int p) {
    b_.phase_begin.push_back(static_cast<int>(b_.rounds.size()));
    const ir::Phase& phase = plan_.phases()[p];
    for (int r = 0; r < static_cast<int>(phase.rounds.size()); ++r) {
      Result<BoundRound> br = bind_round(p, r);
      if (!br) return fail(br.error());
      b_.rounds.push_back(std::move(*br));
    }
    apply_receives(p);
    return bind_phase_copies(p);
  }

  // The entries of round r in phase p that travel from and to this rank, and its peers.
  Result<BoundRound> bind_round(int p, int r) {
    const ir::Round& round = plan_.phases()[p].rounds[r];
    BoundRound br;
    br.phase = p;
    br.round = r;
    br.tag = round.tag;
    const int first = trace_ ? trace_->round_start[p][r] : 0;
    const std::string ctx = "phase " + std::to_string(p) + ", round " + std::to_string(r);
    for (int e = 0; e < static_cast<int>(round.send.size()); ++e) {
      const ir::Transfer* x = trace_ ? &trace_->transfers[first + e] : nullptr;
      // As sender: origins as traced, the receiver (holders' reference) at +shift.
      if (!x || keep(*x, zero_, +1, round.shift)) {
        if (!full(round.send[e]))
          return fail(ctx + ", send entry " + std::to_string(e) + ": " + ir::to_string(round.send[e]) +
                      " holds no data on rank " + std::to_string(b_.rank));
        br.send_entries.push_back(e);
        br.send_bytes += b_.bytes(round.send[e]);
      }
      // As receiver: the sender sits at -shift, so an origin o is o - shift from here.
      if (!x || keep(*x, round.shift, -1, zero_)) {
        br.recv_entries.push_back(e);
        br.recv_bytes += b_.bytes(round.recv[e]);
      }
    }
    if (Result<bool> ok = find_peers(br, round.shift, ctx); !ok) return fail(ok.error());
    return br;
  }

  Result<bool> find_peers(BoundRound& br, const Offset& shift, const std::string& ctx) const {
    if (!trace_) {
      // The representative process: itself where the shift wraps, else a peer of the round's own.
      const int peer = grid_ && wraps_to_self(shift, *grid_) ? kRepresentativeRank : 1 + static_cast<int>(b_.rounds.size());
      br.send_peer = br.send_entries.empty() ? kNoRank : peer;
      br.recv_peer = br.recv_entries.empty() ? kNoRank : peer;
      return true;
    }
    if (!br.send_entries.empty()) {
      br.send_peer = grid_->relative_rank(coords_, shift);
      if (br.send_peer == kNoRank)
        return fail(ctx + ": the plan routes data through a process outside the mesh (at " + ir::to_string(shift) +
                    " from rank " + std::to_string(b_.rank) + ")");
    }
    if (!br.recv_entries.empty()) {
      br.recv_peer = grid_->relative_rank(coords_, add(*grid_, zero_, shift, -1));
      if (br.recv_peer == kNoRank)
        return fail(ctx + ": the plan expects data from a process outside the mesh (at -" + ir::to_string(shift) +
                    " from rank " + std::to_string(b_.rank) + ")");
    }
    return true;
  }

  // Receives are applied after every send of the phase, in plan order.
  void apply_receives(int p) {
    const ir::Phase& phase = plan_.phases()[p];
    for (int k = b_.phase_begin[p]; k < static_cast<int>(b_.rounds.size()); ++k) {
      BoundRound& br = b_.rounds[k];
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
  }

  Result<bool> bind_phase_copies(int p) {
    const ir::Phase& phase = plan_.phases()[p];
    b_.phase_copies.emplace_back();
    for (int c = 0; c < static_cast<int>(phase.copies.size()); ++c) {
      Result<std::optional<bool>> done = local(trace_ ? trace_->phase_copy_start[p] + c : 0, phase.copies[c],
                                               "phase " + std::to_string(p) + ", copy " + std::to_string(c));
      if (!done) return fail(done.error());
      if (*done) b_.phase_copies.back().emplace_back(c, **done);
    }
    return true;
  }

  Result<bool> bind_final_copies() {
    for (int c = 0; c < static_cast<int>(plan_.copies().size()); ++c) {
      Result<std::optional<bool>> done =
          local(trace_ ? trace_->final_copy_start + c : 0, plan_.copies()[c], "copy " + std::to_string(c));
      if (!done) return fail(done.error());
      if (*done) {
        b_.copies.push_back(c);
        b_.copy_combine.push_back(**done);
      }
    }
    return true;
  }

  // Which recv blocks are this rank's result, and which it only forwards through (scratch).
  void mark_results() {
    const ir::Op op = plan_.op();
    const bool me_root = root_ && *root_ == coords_;
    for (int j = 0; j < plan_.num_recv_blocks(); ++j) {
      bool result = true;
      if (!trace_) {
        // The representative process has every block (rooted ops priced as their symmetric op).
      } else if (ir::root_is_target(op)) {
        result = me_root;
      } else if (ir::root_is_origin(op)) {
        result = ok_at(add(*grid_, zero_, plan_.neighborhood()[j], -1), true);
      }
      b_.recv_result.push_back(result);
      b_.recv_scratch.push_back(recv_written_[j] && !result);
    }
  }

  const ir::Plan& plan_;
  const ir::Trace* trace_;
  const Grid* grid_;
  const Coords& coords_;
  const std::optional<Coords>& root_;
  const Offset zero_;
  std::vector<bool> full_send_, full_recv_, full_temp_, recv_written_;
  BoundPlan b_;
};

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
  if (Result<bool> ok = check_bind_args(plan_, grid, coords, block_bytes, root); !ok) return fail(ok.error());
  return RankBinder(plan_, &trace_, &grid, coords, root).run(block_bytes);
}

Result<BoundPlan> bind_representative(const ir::Plan& plan, const std::optional<Grid>& grid,
                                      const std::vector<std::int64_t>& block_bytes) {
  if (grid && grid->ndims() != plan.ndims())
    return fail("grid has " + std::to_string(grid->ndims()) + " dimensions, the plan " + std::to_string(plan.ndims()));
  if (Result<bool> ok = check_block_bytes(plan.op(), plan.num_blocks(), block_bytes); !ok) return fail(ok.error());
  const Coords none;
  return RankBinder(plan, nullptr, grid ? &*grid : nullptr, none, std::nullopt).run(block_bytes);
}

}  // namespace cartplan::engine
