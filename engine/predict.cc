// The cost model applied to a plan: counts messages, phases, wire and copied bytes, and
// messages above the eager limit, then prices them.
#include "engine/predict.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <map>
#include <utility>

#include "engine/bind.h"
#include "engine/final_home.h"

namespace cartplan::engine {
namespace {

// Whether a message's parts lie as one run of memory, taking the caller's blocks to lie back to
// back in index order (Cart_alltoall's and Cart_allgather's layout, and the usual prefix-sum
// displacements of the v forms). Open MPI merges adjacent segments of a struct datatype, so
// such a message is contiguous to it, whatever datatype carries it.
bool one_run(const std::vector<Loc>& parts) {
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const Loc& p = parts[i];
    if (!p.contiguous || p.kind == Loc::Kind::kScratch) return false;
    if (i == 0) continue;
    const Loc& q = parts[i - 1];
    if (p.kind != q.kind) return false;
    if (p.kind == Loc::Kind::kStaging ? q.offset + q.bytes != p.offset : p.index != q.index + 1) return false;
  }
  return true;
}

// Per round of the plan (phase, then round): whether its message is one run of memory on both
// sides, from the program one process runs (lower.h decides aliasing, packing and staging; its
// rules are not repeated here). Open MPI's ob1 reads a message above the eager limit with one
// single copy only when both sides are contiguous; otherwise the receiver asks for the
// pipelined protocol. So the same struct message can take either path depending on where the
// lowering places its blocks (e.g. combining in the reversed dimension order sends from
// send[0..2] into recv[0..2], one run on both sides; docs/measurements.md has the cost).
// nullopt when the plan cannot be lowered here (other ops; a route the grid does not have).
std::optional<std::vector<std::vector<bool>>> runs_of(const ir::Plan& plan, const std::vector<std::int64_t>& block_bytes,
                                                      const Grid& grid, std::int64_t struct_min_bytes,
                                                      std::int64_t home_limit, const std::vector<bool>& contiguous) {
  if (plan.op() != ir::Op::kAlltoall && plan.op() != ir::Op::kAllgather) return std::nullopt;
  // bind() and lower() add up message and staging bytes in 64-bit integers and trust their
  // callers to have checked the sizes; predict() sees any size (a block of INT64_MAX bytes is
  // in the invalid-input corpus, refused later by the caller), so sizes whose sums could
  // overflow are not lowered here.
  double entries = static_cast<double>(plan.num_blocks() + plan.temp_slots().size() + 1), largest = 0;
  for (const ir::Phase& phase : plan.phases())
    for (const ir::Round& r : phase.rounds) entries += static_cast<double>(r.send.size());
  for (std::int64_t b : block_bytes) largest = std::max(largest, static_cast<double>(b));
  if (entries * largest >= 0x1p62) return std::nullopt;
  Result<Binder> binder = Binder::create(plan);
  if (!binder) return std::nullopt;
  // A process in the middle of every dimension: on a mesh it has the most peers.
  Coords coords;
  for (int k = 0; k < grid.ndims(); ++k) coords.push_back(grid.dims()[k] / 2);
  const std::vector<std::int64_t> sizes =
      ir::blocks_have_own_shape(plan.op()) ? block_bytes : std::vector<std::int64_t>{block_bytes[0]};
  Result<BoundPlan> bound = binder->bind(grid, coords, sizes);
  if (!bound) return std::nullopt;
  Layout layout = contiguous_layout(plan, *bound);
  if (!contiguous.empty())
    for (auto* side : {&layout.send, &layout.recv})
      for (std::size_t i = 0; i < side->size(); ++i)
        (*side)[i].contiguous = contiguous[contiguous.size() == 1 ? 0 : i];
  LowerOptions lo;
  lo.struct_min_bytes = struct_min_bytes;
  lo.home_max_message_bytes = home_limit;
  Result<Program> program = lower(plan, *bound, layout, lo);
  if (!program) return std::nullopt;
  // Both sides of a round: this process's send and its receive (on a torus every process's
  // messages of a round look alike; on a mesh this is the middle one's).
  std::vector<std::vector<int>> sides(plan.phases().size());
  for (std::size_t p = 0; p < plan.phases().size(); ++p) sides[p].assign(plan.phases()[p].rounds.size(), 0);
  for (const PhaseProgram& ph : program->phases)
    for (const Message& m : ph.messages) {
      int& s = sides[static_cast<std::size_t>(m.phase)][static_cast<std::size_t>(m.round)];
      if (s >= 0) s = one_run(m.parts) ? s + 1 : -1;
    }
  std::vector<std::vector<bool>> runs(plan.phases().size());
  for (std::size_t p = 0; p < sides.size(); ++p)
    for (int s : sides[p]) runs[p].push_back(s == 2);
  return runs;
}

}  // namespace

bool wraps_to_self(const ir::Offset& shift, const Grid& grid) {
  for (int k = 0; k < grid.ndims(); ++k) {
    if (shift[k] == 0) continue;
    if (!grid.periods()[k] || shift[k] % grid.dims()[k] != 0) return false;
  }
  return true;
}

// The share of the grid's processes that have a peer at +shift: 1 on a torus, less on a mesh,
// where a process near the boundary skips the round. Predictions are means over ranks, so they
// are the same on every rank (the plan must be) and exact for small symmetric meshes, where
// every process is a boundary process (a 2x2 mesh sends 3 of 8 direct messages per process).
double peer_share(const ir::Offset& shift, const Grid& grid) {
  double share = 1;
  for (int k = 0; k < grid.ndims(); ++k) {
    if (shift[k] == 0 || grid.periods()[k]) continue;
    const int n = grid.dims()[k], s = shift[k] < 0 ? -shift[k] : shift[k];
    share *= s >= n ? 0.0 : static_cast<double>(n - s) / n;
  }
  return share;
}

CostBreakdown predict(const ir::Plan& plan, const std::vector<std::int64_t>& block_bytes, const CostModel& model,
                      const std::optional<Grid>& grid, std::int64_t struct_min_bytes, const std::vector<bool>& contiguous,
                      std::optional<std::int64_t> trailer_min_bytes_arg) {
  assert(block_bytes.size() == 1 || static_cast<int>(block_bytes.size()) == plan.num_blocks());
  assert(contiguous.size() <= 1 || static_cast<int>(contiguous.size()) == plan.num_blocks());
  // The block an entry stands for (a temp slot: the block it is shaped like). Blocks of ops
  // without own shapes all look like block 0 (allgather, reductions).
  const bool own = ir::blocks_have_own_shape(plan.op());
  auto block_of = [&](const ir::BufRef& r) -> std::size_t {
    if (!own) return 0;
    return static_cast<std::size_t>(r.kind == ir::BufKind::kTemp ? plan.temp_slots()[r.index].shape_of : r.index);
  };
  auto bytes = [&](const ir::BufRef& r) {
    const std::int64_t b = block_bytes[block_bytes.size() == 1 ? 0 : block_of(r)];
    return static_cast<double>(b > 0 ? b : 0);
  };
  // Whether the block behind an entry lies contiguously in the caller's memory.
  auto contiguous_entry = [&](const ir::BufRef& r) {
    if (contiguous.empty()) return true;
    return static_cast<bool>(contiguous[contiguous.size() == 1 ? 0 : block_of(r)]);
  };
  const bool use_grid = grid && grid->ndims() == plan.ndims();
  auto local_round = [&](const ir::Round& r) { return use_grid && wraps_to_self(r.shift, *grid); };
  // Values that the lowering receives straight into their recv block (final_home.h; every
  // entry performed, as on a torus): per phase, round and entry of a round to another process,
  // the home or -1. Slots that hold such a value are in their home: steps out of them are free.
  std::vector<std::vector<std::vector<int>>> home(plan.phases().size());
  {
    std::vector<Move> moves;
    std::vector<std::vector<std::vector<std::size_t>>> at(plan.phases().size());
    for (std::size_t p = 0; p < plan.phases().size(); ++p) {
      const ir::Phase& phase = plan.phases()[p];
      const int step = 2 * static_cast<int>(p);
      at[p].resize(phase.rounds.size());
      for (std::size_t ri = 0; ri < phase.rounds.size(); ++ri) {
        const ir::Round& r = phase.rounds[ri];
        for (std::size_t e = 0; e < r.send.size(); ++e) {
          if (local_round(r)) {
            moves.push_back(Move{step, r.send[e], r.recv[e]});
          } else {
            moves.push_back(Move{step, r.send[e], std::nullopt});
            at[p][ri].push_back(moves.size());
            moves.push_back(Move{step, std::nullopt, r.recv[e]});
          }
        }
      }
      for (const ir::Copy& copy : phase.copies) moves.push_back(Move{step + 1, copy.from, copy.to});
    }
    const int last = 2 * static_cast<int>(plan.phases().size());
    for (const ir::Copy& copy : plan.copies()) moves.push_back(Move{last, copy.from, copy.to});
    const std::vector<int> h = final_homes(moves, static_cast<int>(plan.temp_slots().size()), plan.num_recv_blocks());
    for (std::size_t p = 0; p < at.size(); ++p)
      for (const std::vector<std::size_t>& round : at[p]) {
        home[p].emplace_back();
        for (std::size_t i : round) home[p].back().push_back(h[i]);
      }
  }
  // The lowering's condition (lower.cc): the slot and its recv block have the same size.
  // Only alltoall's and allgather's lowering does it (reductions and rooted ops use scratch).
  const bool plain = !ir::is_reduction(plan.op()) && !ir::is_rooted(plan.op());
  auto received_home = [&](std::size_t p, std::size_t ri, std::size_t e, const ir::BufRef& r) {
    const int h = home[p][ri][e];
    if (!plain) return false;
    return h >= 0 && bytes(r) == bytes(ir::BufRef{ir::BufKind::kRecv, h, false});
  };
  const std::int64_t trailer_min = trailer_min_bytes_arg ? *trailer_min_bytes_arg : trailer_min_bytes(model);
  const std::int64_t home_limit = home_max_message_bytes(model, trailer_min);
  std::vector<char> in_home(plan.temp_slots().size(), 0);
  auto already_home = [&](const ir::BufRef& r) { return r.kind == ir::BufKind::kTemp && in_home[static_cast<std::size_t>(r.index)]; };
  std::optional<std::vector<std::vector<bool>>> runs;
  bool runs_asked = false;
  CostBreakdown c;
  // The process the counts are for (on a mesh: one in the middle, with the most peers), to tell
  // which rounds of a phase reach the same process and share its fast box.
  Coords middle;
  if (use_grid)
    for (int k = 0; k < grid->ndims(); ++k) middle.push_back(grid->dims()[k] / 2);
  for (std::size_t p = 0; p < plan.phases().size(); ++p) {
    const ir::Phase& phase = plan.phases()[p];
    bool any_message = false;
    // Bytes this phase's messages fill in each peer's fast box (cost_model.h, fragment_us): the
    // receiver has drained it by the end of the previous phase, which waited for all of them.
    // A peer is a rank (with a grid; rounds of different shifts may reach the same one on small
    // tori), keyed {rank, {}}, or else the shift itself, keyed {kNoRank, shift}, so that a rank
    // and a shift never share a key.
    std::map<std::pair<int, ir::Offset>, double> fast_box_used;  // doubles: predict() sees any block size
    for (std::size_t ri = 0; ri < phase.rounds.size(); ++ri) {
      const ir::Round& r = phase.rounds[ri];
      double b = 0, finals = 0;  // all entries; those received into a recv block (not forwarded)
      for (const ir::BufRef& ref : r.send) b += bytes(ref);
      int segments = 0, final_segments = 0;
      bool any_temp = false;
      const bool local = local_round(r);
      // The lowering homes blocks only in messages up to the limit (lower.h).
      const bool homes = !local && (home_limit < 0 || b <= static_cast<double>(home_limit));
      for (std::size_t e = 0; e < r.send.size(); ++e) {
        const double be = bytes(r.send[e]);
        segments += be > 0;
        if (local && already_home(r.send[e])) {
          if (r.recv[e].kind == ir::BufKind::kTemp) in_home[static_cast<std::size_t>(r.recv[e].index)] = 1;
          continue;  // the block is in its recv block already: no copy
        }
        const bool goes_home = homes && received_home(p, ri, e, r.recv[e]);
        if (!local && r.recv[e].kind == ir::BufKind::kTemp) in_home[static_cast<std::size_t>(r.recv[e].index)] = goes_home;
        if (local && r.recv[e].kind == ir::BufKind::kTemp) in_home[static_cast<std::size_t>(r.recv[e].index)] = 0;
        if (r.recv[e].kind != ir::BufKind::kTemp || goes_home) {
          finals += be;
          final_segments += be > 0;
        } else {
          any_temp = any_temp || be > 0;
        }
      }
      // The lowering's rule (lower.h): struct datatypes when the mean entry reaches the threshold.
      const bool by_struct = struct_min_bytes >= 0 && segments > 0 && b >= static_cast<double>(struct_min_bytes) * segments;
      if (local) {
        c.copy_bytes += finals;  // forwarded entries are aliased, final ones copied
        continue;
      }
      const double share = use_grid ? peer_share(r.shift, *grid) : 1.0;
      if (share == 0) continue;
      any_message = true;
      // The lowering's trailer (lower.h): one byte more, in a segment of its own on each side,
      // and the message is never one run of memory.
      const bool trailer = plain && trailer_min >= 0 && b > 0 && b >= static_cast<double>(trailer_min);
      const double wire = trailer ? b + 1 : b;
      c.messages += share;
      c.wire_bytes += share * wire;
      {
        const int rank = use_grid ? grid->relative_rank(middle, r.shift) : kNoRank;
        double& used = fast_box_used[rank != kNoRank ? std::pair{rank, ir::Offset{}} : std::pair{kNoRank, r.shift}];
        const double need = wire + static_cast<double>(CostModel::kFastBoxHeaderBytes);
        if (wire <= static_cast<double>(model.inline_limit_bytes) && used + need <= static_cast<double>(model.fast_box_bytes))
          used += need;
        else
          c.fragments += share;
      }
      // Packed at the sender, final entries unpacked at the receiver; by struct datatype no
      // copies, but the datatype engine walks every entry on both sides.
      if (r.send.size() > 1 && !by_struct) c.copy_bytes += share * (b + finals);
      // Segments: every entry at the sender; at the receiver every final entry (the caller's
      // scattered blocks) and one for the temp slots, which lie back to back in staging.
      if (r.send.size() > 1 && by_struct) {
        c.segments += share * (segments + final_segments + (any_temp ? 1 : 0));
        c.scatter_bytes += share * finals;
      }
      // Above the eager limit a contiguous message (one entry, or packed) is read with a single
      // copy, a struct datatype message is pipelined through fragments (cost_model.h), unless
      // its parts are one run of memory on both sides (runs_of).
      bool single_copy = r.send.size() > 1 ? !by_struct : contiguous_entry(r.send[0]);
      if (trailer) {
        c.segments += share * (r.send.size() > 1 && by_struct ? 2 : 4);
        single_copy = false;
      }
      if (wire > static_cast<double>(model.eager_limit_bytes)) {
        if (!trailer && r.send.size() > 1 && by_struct && use_grid) {
          if (!runs_asked) runs = runs_of(plan, block_bytes, *grid, struct_min_bytes, home_limit, contiguous);
          runs_asked = true;
          if (runs) single_copy = (*runs)[p][ri];
        }
        if (single_copy) {
          c.rendezvous += share;
          c.single_copy_bytes += share * wire;
        } else {
          c.pipelined += share;
          c.pipelined_bytes += share * wire;
        }
      }
    }
    if (any_message) ++c.phases;
    for (const ir::Copy& copy : phase.copies) c.copy_bytes += bytes(copy.to);
  }
  for (const ir::Copy& copy : plan.copies())
    if (!already_home(copy.from)) c.copy_bytes += bytes(copy.to);
  c.message_us = c.messages * model.alpha_us;
  c.phase_us = c.phases * model.phase_us;
  c.wire_us = c.wire_bytes * model.beta_us_per_byte;
  c.copy_us = c.copy_bytes * model.copy_us_per_byte;
  c.rendezvous_us = c.rendezvous * model.rendezvous_us;
  c.single_copy_us = c.single_copy_bytes * model.single_copy_us_per_byte;
  c.pipeline_us = c.pipelined * model.pipeline_us + c.pipelined_bytes * model.pipeline_us_per_byte;
  c.segment_us = c.segments * model.segment_us;
  c.fragment_us = c.fragments * model.fragment_us;
  c.scatter_us = c.scatter_bytes * model.scatter_us_per_byte;
  return c;
}

std::string explain(const CostBreakdown& c, const CostModel& model) {
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "messages %g x %.3f = %.3f | phases %d x %.3f = %.3f | wire %.0f B x %.6f = %.3f | "
                "copied %.0f B x %.6f = %.3f | rendezvous %g x %.3f = %.3f | single-copy %.0f B x %.6f = %.3f | "
                "pipelined %g x %.3f + %.0f B x %.6f = %.3f | "
                "segments %g x %.3f = %.3f | "
                "scattered %.0f B x %.6f = %.3f | fragments %g x %.3f = %.3f | total %.3f us",
                c.messages, model.alpha_us, c.message_us, c.phases, model.phase_us, c.phase_us, c.wire_bytes,
                model.beta_us_per_byte, c.wire_us, c.copy_bytes, model.copy_us_per_byte, c.copy_us, c.rendezvous,
                model.rendezvous_us, c.rendezvous_us, c.single_copy_bytes, model.single_copy_us_per_byte,
                c.single_copy_us, c.pipelined, model.pipeline_us, c.pipelined_bytes, model.pipeline_us_per_byte, c.pipeline_us, c.segments, model.segment_us, c.segment_us, c.scatter_bytes,
                model.scatter_us_per_byte, c.scatter_us, c.fragments, model.fragment_us, c.fragment_us, c.total_us());
  return buf;
}

}  // namespace cartplan::engine
