// lower(): one rank's bound plan as a Program of messages over byte segments and local steps.
#include "engine/lower.h"

#include <algorithm>
#include <cassert>
#include <optional>
#include <string>

#include "engine/final_home.h"

namespace cartplan::engine {
namespace {

using ir::BufKind;
using ir::BufRef;

Loc user_loc(Loc::Kind kind, int index, const BlockLayout& b) { return Loc{kind, index, 0, b.bytes, b.contiguous}; }

// The arena grows by whole regions; a region is never reused within one run.
struct Arena {
  std::int64_t size = 0;
  std::int64_t take(std::int64_t bytes) {
    const std::int64_t at = size;
    size += bytes;
    return at;
  }
};

// Parts of a message in wire order, empty ones dropped (they carry nothing).
Message make_message(bool recv, int peer, const BoundRound& br, std::vector<Loc> parts) {
  Message m{recv, peer, br.tag, br.phase, br.round, {}, 0};
  for (Loc& l : parts)
    if (l.bytes > 0) {
      m.bytes += l.bytes;
      m.parts.push_back(l);
    }
  return m;
}

// Whether `locs` lie in order, back to back, in the staging arena (one region to send from).
bool staged_run(const std::vector<Loc>& locs) {
  std::optional<std::int64_t> next;
  for (const Loc& l : locs) {
    if (l.bytes == 0) continue;
    if (l.kind != Loc::Kind::kStaging || (next && *next != l.offset)) return false;
    next = l.offset + l.bytes;
  }
  return true;
}

Loc merge_run(const std::vector<Loc>& locs) {
  Loc run{Loc::Kind::kStaging, 0, -1, 0, true};
  for (const Loc& l : locs) {
    if (l.bytes == 0) continue;
    if (run.offset < 0) run.offset = l.offset;
    run.bytes += l.bytes;
  }
  if (run.offset < 0) run.offset = 0;
  return run;
}

// Parts of a struct message with staging regions that follow each other merged (fewer
// segments for MPI's datatype engine; the bytes on the wire are the same).
std::vector<Loc> merge_adjacent(const std::vector<Loc>& parts) {
  std::vector<Loc> out;
  for (const Loc& l : parts) {
    if (l.bytes == 0) continue;
    if (!out.empty() && out.back().kind == Loc::Kind::kStaging && l.kind == Loc::Kind::kStaging &&
        out.back().offset + out.back().bytes == l.offset) {
      out.back().bytes += l.bytes;
      continue;
    }
    out.push_back(l);
  }
  return out;
}

// Deliveries into the caller's recv blocks that nothing reads afterwards move from the phases
// to the end of the program, in block order. They read the caller's send blocks, which nothing
// writes, or staging, which the arena never hands out twice, so they can run any time after
// their source was filled: at the end they are off the path between a phase's arrivals and the
// next phase's sends, and blocks that lie side by side on both sides (the same block range of
// one received message, the blocks that never leave the process) become one memcpy in the
// executor instead of one per block (box d = 5 on 2x1x1x1x1: 243 copies of 4 bytes).
void defer_deliveries(Program& prog) {
  std::vector<char> read;  // recv blocks some step or sent message reads
  auto mark = [&](const Loc& l) {
    if (l.kind != Loc::Kind::kRecv) return;
    if (read.size() <= static_cast<std::size_t>(l.index)) read.resize(static_cast<std::size_t>(l.index) + 1, 0);
    read[static_cast<std::size_t>(l.index)] = 1;
  };
  auto mark_steps = [&](const std::vector<Step>& steps) {
    for (const Step& s : steps) {
      mark(s.from);
      if (s.combine) mark(s.to);  // a combine reads its target too
    }
  };
  for (const PhaseProgram& ph : prog.phases) {
    mark_steps(ph.before);
    mark_steps(ph.after);
    for (const Message& m : ph.messages)
      if (!m.recv)
        for (const Loc& l : m.parts) mark(l);
  }
  mark_steps(prog.final_steps);
  auto deferrable = [&](const Step& s) {
    return !s.combine && s.to.kind == Loc::Kind::kRecv && s.from.kind != Loc::Kind::kRecv &&
           (static_cast<std::size_t>(s.to.index) >= read.size() || !read[static_cast<std::size_t>(s.to.index)]);
  };
  // The final steps join the sort too (the zero offset's copy); those that read a recv block
  // (allgather's duplicates) stay after them in their order: what they read was filled in a
  // phase, and nothing deferred writes a block that anything reads.
  std::vector<std::vector<Step>*> lists;
  for (PhaseProgram& ph : prog.phases) lists.insert(lists.end(), {&ph.before, &ph.after});
  lists.push_back(&prog.final_steps);
  std::vector<Step> deferred;
  for (std::vector<Step>* list : lists) {
    std::vector<Step> kept;
    for (Step& s : *list) (deferrable(s) ? deferred : kept).push_back(std::move(s));
    *list = std::move(kept);
  }
  std::stable_sort(deferred.begin(), deferred.end(), [](const Step& a, const Step& b) { return a.to.index < b.to.index; });
  deferred.insert(deferred.end(), prog.final_steps.begin(), prog.final_steps.end());
  prog.final_steps = std::move(deferred);
}

// Per round of the bound plan (bound.rounds) and per entry it receives from another rank: the
// recv block the entry's value can be received into (final_home.h), or -1. Steps: a phase's
// rounds, then its copies, then the final copies.
std::vector<std::vector<int>> received_homes(const ir::Plan& plan, const BoundPlan& bound) {
  std::vector<Move> moves;
  std::vector<std::vector<std::size_t>> at(bound.rounds.size());  // the receives' moves
  for (std::size_t k = 0; k < bound.rounds.size(); ++k) {
    const BoundRound& br = bound.rounds[k];
    const ir::Round& round = plan.phases()[br.phase].rounds[br.round];
    const int step = 2 * br.phase;
    const bool local = br.send_peer == bound.rank;
    for (int e : br.send_entries)
      moves.push_back(Move{step, round.send[e], local ? std::optional(round.recv[e]) : std::nullopt});
    if (local) continue;
    for (int e : br.recv_entries) {
      at[k].push_back(moves.size());
      moves.push_back(Move{step, std::nullopt, round.recv[e]});
    }
  }
  for (std::size_t p = 0; p < bound.phase_copies.size(); ++p)
    for (const auto& [c, combine] : bound.phase_copies[p]) {
      const ir::Copy& copy = plan.phases()[p].copies[static_cast<std::size_t>(c)];
      moves.push_back(Move{2 * static_cast<int>(p) + 1, copy.from, copy.to});
    }
  const int last = 2 * static_cast<int>(plan.phases().size());
  for (int c : bound.copies) moves.push_back(Move{last, plan.copies()[c].from, plan.copies()[c].to});
  const std::vector<int> home = final_homes(moves, static_cast<int>(plan.temp_slots().size()), plan.num_recv_blocks());
  std::vector<std::vector<int>> out(bound.rounds.size());
  for (std::size_t k = 0; k < at.size(); ++k)
    for (std::size_t i : at[k]) out[k].push_back(home[i]);
  return out;
}

void receives_first(std::vector<Message>& messages) {
  // Receives first, so that a phase's messages find their receive posted when possible.
  std::stable_sort(messages.begin(), messages.end(), [](const Message& a, const Message& b) { return a.recv > b.recv; });
}

// Alltoall and allgather: temp slots live in the staging arena. One lowering per call of
// lower(); the member functions are its steps, in the order run() takes them.
class PlainLowering {
 public:
  PlainLowering(const ir::Plan& plan, const BoundPlan& bound, const Layout& layout, const LowerOptions& options)
      : plan_(plan), bound_(bound), layout_(layout), options_(options), temp_(plan.temp_slots().size()) {
    for (int i = 0; i < static_cast<int>(layout.send.size()); ++i) send_.push_back(user_loc(Loc::Kind::kSend, i, layout.send[i]));
    for (int i = 0; i < static_cast<int>(layout.recv.size()); ++i) recv_.push_back(user_loc(Loc::Kind::kRecv, i, layout.recv[i]));
    // Temp slots received from another rank that only local steps move on, into a recv block
    // nothing else touches, are received into that block (final_home.h): the steps after
    // them find the block in place and vanish.
    home_ = received_homes(plan, bound);
  }

  Program run() {
    prog_.op = plan_.op();
    prog_.rank = bound_.rank;
    const std::size_t nphases = bound_.phase_begin.size() - 1;
    prog_.phases.resize(nphases);
    for (std::size_t p = 0; p < nphases; ++p) {
      PhaseProgram& ph = prog_.phases[p];
      // Rounds to this rank itself first: no place is read and written in one phase, and their
      // senders' and receivers' masks agree (the shift only moves along periodic dimensions).
      // Sends read locations as they were before this phase, so they are described before
      // the receives.
      for (int k = bound_.phase_begin[p]; k < bound_.phase_begin[p + 1]; ++k) self_round(k, ph);
      for (int k = bound_.phase_begin[p]; k < bound_.phase_begin[p + 1]; ++k) send_round(k, ph);
      for (int k = bound_.phase_begin[p]; k < bound_.phase_begin[p + 1]; ++k) recv_round(k, ph);
      receives_first(ph.messages);
    }
    for (int c : bound_.copies) {
      const ir::Copy& copy = plan_.copies()[c];
      const Loc from = loc_of(copy.from);
      if (from.bytes > 0 && from != loc_of(copy.to)) prog_.final_steps.push_back(Step{from, loc_of(copy.to), false});
    }
    place_trailers();
    prog_.staging_bytes = arena_.size;
    defer_deliveries(prog_);
    return std::move(prog_);
  }

 private:
  Loc& loc_of(const BufRef& ref) {
    return ref.kind == BufKind::kSend ? send_[ref.index] : ref.kind == BufKind::kRecv ? recv_[ref.index] : temp_[ref.index];
  }
  std::int64_t temp_bytes(const BufRef& ref) const {
    const std::vector<std::int64_t>& shapes = layout_.shape_bytes;
    const int shape = plan_.temp_slots()[ref.index].shape_of;
    const std::int64_t b = shapes.empty() ? bound_.temp_slot_bytes[ref.index] : shapes[shapes.size() == 1 ? 0 : shape];
    assert(b >= 0 && "a forwarded block's size is known wherever the plan forwards it");
    return b;
  }
  std::int64_t bytes_of(const BufRef& ref) { return ref.kind == BufKind::kTemp ? temp_bytes(ref) : loc_of(ref).bytes; }
  Loc staged(std::int64_t bytes) { return Loc{Loc::Kind::kStaging, 0, arena_.take(bytes), bytes, true}; }

  // Trailers (LowerOptions::trailer_min_bytes): one byte more at the end of the wire order,
  // decided by the message's size, which sender and receiver agree on, so both add it or
  // neither does. Each has its own byte (concurrent receives must not share memory), after the
  // whole arena and one byte apart from it: between the regions they would split runs that
  // forwarding sends from (staged_run), and right after a region they would extend its run
  // instead of breaking it. Until the arena is complete a trailer's offset is -(its number + 1).
  Message with_trailer(Message m) {
    if (options_.trailer_min_bytes >= 0 && m.bytes > 0 && m.bytes >= options_.trailer_min_bytes) {
      m.parts.push_back(Loc{Loc::Kind::kStaging, 0, -(++trailers_), 1, true});
      m.bytes += 1;
      m.trailer = true;
    }
    return m;
  }
  void place_trailers() {
    if (trailers_ == 0) return;
    const std::int64_t first = arena_.size + 1;
    for (PhaseProgram& ph : prog_.phases)
      for (Message& m : ph.messages)
        for (Loc& l : m.parts)
          if (l.kind == Loc::Kind::kStaging && l.offset < 0) l.offset = first + (-l.offset - 1);
    arena_.size = first + trailers_;
  }

  // Whether several contiguous parts go by struct datatype rather than through staging: when
  // their mean size reaches the threshold (a datatype costs per segment, a memcpy per byte).
  bool by_struct(const std::vector<std::int64_t>& sizes) const {
    if (options_.struct_min_bytes < 0) return false;
    std::int64_t total = 0, segments = 0;
    for (std::int64_t b : sizes)
      if (b > 0) {
        total += b;
        ++segments;
      }
    return segments > 0 && total >= options_.struct_min_bytes * segments;
  }

  // Round k's receive from another rank, entry by entry: each entry, or its home (in messages
  // up to the limit).
  std::vector<BufRef> received_as(int k) {
    const BoundRound& br = bound_.rounds[static_cast<std::size_t>(k)];
    const ir::Round& round = plan_.phases()[br.phase].rounds[br.round];
    std::vector<BufRef> refs;
    std::int64_t bytes = 0;
    for (int e : br.recv_entries) {
      refs.push_back(round.recv[e]);
      bytes += bytes_of(refs.back());
    }
    const std::int64_t limit = options_.home_max_message_bytes;
    if (limit >= 0 && bytes > limit) return refs;
    for (std::size_t j = 0; j < refs.size(); ++j) {
      const int r = home_[static_cast<std::size_t>(k)][j];
      if (r >= 0 && recv_[static_cast<std::size_t>(r)].bytes == temp_bytes(refs[j])) refs[j] = BufRef{BufKind::kRecv, r, false};
    }
    return refs;
  }

  void self_round(int k, PhaseProgram& ph) {
    const BoundRound& br = bound_.rounds[k];
    if (br.send_peer != bound_.rank) return;
    assert(br.recv_peer == bound_.rank && br.recv_entries == br.send_entries);
    const ir::Round& round = plan_.phases()[br.phase].rounds[br.round];
    std::vector<Loc> from;
    for (int e : br.send_entries) from.push_back(loc_of(round.send[e]));
    for (std::size_t j = 0; j < br.recv_entries.size(); ++j) {
      const BufRef& ref = round.recv[br.recv_entries[j]];
      if (ref.kind == BufKind::kTemp) {
        temp_[ref.index] = from[j];  // zero-copy: the slot is wherever the block is now
        continue;
      }
      if (from[j].bytes > 0 && from[j] != loc_of(ref)) ph.before.push_back(Step{from[j], loc_of(ref), false});
    }
  }

  void send_round(int k, PhaseProgram& ph) {
    const BoundRound& br = bound_.rounds[k];
    if (br.send_peer == kNoRank || br.send_peer == bound_.rank) return;
    const ir::Round& round = plan_.phases()[br.phase].rounds[br.round];
    std::vector<Loc> parts;
    std::vector<std::int64_t> sizes;
    bool all_contiguous = true;
    std::int64_t total = 0;
    for (int e : br.send_entries) {
      parts.push_back(loc_of(round.send[e]));
      sizes.push_back(parts.back().bytes);
      all_contiguous = all_contiguous && parts.back().contiguous;
      total += parts.back().bytes;
    }
    if (parts.size() > 1 && staged_run(parts)) {
      parts = {merge_run(parts)};  // forwarded as they arrived: no packing
    } else if (parts.size() > 1 && all_contiguous && !by_struct(sizes)) {
      const Loc buf = staged(total);
      std::int64_t off = buf.offset;
      for (const Loc& l : parts) {
        if (l.bytes > 0) ph.before.push_back(Step{l, Loc{Loc::Kind::kStaging, 0, off, l.bytes, true}, false});
        off += l.bytes;
      }
      parts = {buf};
    } else {
      parts = merge_adjacent(parts);
    }
    ph.messages.push_back(with_trailer(make_message(false, br.send_peer, br, std::move(parts))));
  }

  void recv_round(int k, PhaseProgram& ph) {
    const BoundRound& br = bound_.rounds[k];
    if (br.recv_peer == kNoRank || br.recv_peer == bound_.rank) return;
    const ir::Round& round = plan_.phases()[br.phase].rounds[br.round];
    const std::vector<BufRef> as = received_as(k);
    ph.messages.push_back(with_trailer(make_message(true, br.recv_peer, br, receive_parts(as, ph))));
    for (std::size_t j = 0; j < as.size(); ++j) {
      const BufRef& ref = round.recv[br.recv_entries[j]];
      if (as[j] != ref) temp_[ref.index] = loc_of(as[j]);  // the value is in its home from now on
    }
  }

  // Where a receive of `refs` lands: in place (one user block), one staging region (temp slots
  // stay where they arrive, user blocks are unpacked after the phase), or a struct datatype over
  // the user's blocks and staging regions for the temp slots. A receive of temp slots only is
  // staged either way (nothing to unpack).
  std::vector<Loc> receive_parts(const std::vector<BufRef>& refs, PhaseProgram& ph) {
    bool all_contiguous = true, any_temp = false, any_user = false;
    std::int64_t total = 0;
    std::vector<std::int64_t> sizes;
    for (const BufRef& ref : refs) {
      const bool is_temp = ref.kind == BufKind::kTemp;
      any_temp = any_temp || is_temp;
      any_user = any_user || !is_temp;
      all_contiguous = all_contiguous && (is_temp || loc_of(ref).contiguous);
      sizes.push_back(bytes_of(ref));
      total += sizes.back();
    }
    if (refs.size() == 1 && !any_temp) return {loc_of(refs[0])};
    if (all_contiguous && !(any_user && by_struct(sizes))) {
      const Loc buf = staged(total);
      std::int64_t off = buf.offset;
      for (std::size_t j = 0; j < refs.size(); ++j) {
        const Loc region{Loc::Kind::kStaging, 0, off, sizes[j], true};
        if (refs[j].kind == BufKind::kTemp)
          temp_[refs[j].index] = region;
        else if (sizes[j] > 0)
          ph.after.push_back(Step{region, loc_of(refs[j]), false});
        off += sizes[j];
      }
      return {buf};
    }
    std::vector<Loc> parts;
    for (const BufRef& ref : refs) {
      if (ref.kind == BufKind::kTemp) temp_[ref.index] = staged(temp_bytes(ref));
      parts.push_back(loc_of(ref));
    }
    return merge_adjacent(parts);
  }

  const ir::Plan& plan_;
  const BoundPlan& bound_;
  const Layout& layout_;
  const LowerOptions& options_;
  Program prog_;
  Arena arena_;
  std::vector<Loc> send_, recv_, temp_;
  std::vector<std::vector<int>> home_;
  std::int64_t trailers_ = 0;
};

// Reductions and rooted ops: temp slots, foreign recv blocks and staged combines are scratch
// blocks in the layout of one block of the call. Scratch is made when a location is first used
// (in plan order) and kept.
class ExtendedLowering {
 public:
  ExtendedLowering(const ir::Plan& plan, const BoundPlan& bound, const Layout& layout)
      : plan_(plan), bound_(bound), layout_(layout), recv_(layout.recv.size()), temp_(plan.temp_slots().size()) {
    for (int i = 0; i < static_cast<int>(layout.send.size()); ++i) send_.push_back(user_loc(Loc::Kind::kSend, i, layout.send[i]));
    for (std::size_t j = 0; j < layout.recv.size(); ++j)
      if (layout.recv_user[j]) recv_[j] = user_loc(Loc::Kind::kRecv, static_cast<int>(j), layout.recv[j]);
  }

  Program run() {
    prog_.op = plan_.op();
    prog_.rank = bound_.rank;
    const std::size_t nphases = bound_.phase_begin.size() - 1;
    prog_.phases.resize(nphases);
    for (std::size_t p = 0; p < nphases; ++p) {
      PhaseProgram& ph = prog_.phases[p];
      for (int k = bound_.phase_begin[p]; k < bound_.phase_begin[p + 1]; ++k) lower_round(bound_.rounds[k], ph);
      for (const auto& [c, combine] : bound_.phase_copies[p]) {
        const ir::Copy& copy = plan_.phases()[p].copies[static_cast<std::size_t>(c)];
        const Loc from = loc_of(copy.from), to = loc_of(copy.to);  // in this order: scratch numbering
        add(ph.after, from, to, combine);
      }
      receives_first(ph.messages);
    }
    for (std::size_t q = 0; q < bound_.copies.size(); ++q) {
      const ir::Copy& copy = plan_.copies()[static_cast<std::size_t>(bound_.copies[q])];
      const Loc from = loc_of(copy.from), to = loc_of(copy.to);
      add(prog_.final_steps, from, to, bound_.copy_combine[q]);
    }
    return std::move(prog_);
  }

 private:
  // A scratch block for a location shaped like block `shape` (scatter's blocks may differ).
  std::int64_t shape_bytes(int shape) const {
    const std::vector<std::int64_t>& shapes = layout_.shape_bytes;
    return shapes.empty() ? bound_.block_bytes[static_cast<std::size_t>(shape)] : shapes[shapes.size() == 1 ? 0 : shape];
  }
  Loc scratch(std::int64_t bytes) {
    if (bytes == 0) return Loc{Loc::Kind::kScratch, 0, 0, 0, true};
    prog_.scratch_bytes.push_back(bytes);
    return Loc{Loc::Kind::kScratch, static_cast<int>(prog_.scratch_bytes.size()) - 1, 0, bytes, layout_.unit.contiguous};
  }
  Loc loc_of(const BufRef& ref) {
    if (ref.kind == BufKind::kSend) return send_.at(static_cast<std::size_t>(ref.index));
    std::optional<Loc>& l = ref.kind == BufKind::kRecv ? recv_.at(static_cast<std::size_t>(ref.index))
                                                       : temp_.at(static_cast<std::size_t>(ref.index));
    if (!l) l = scratch(shape_bytes(ref.kind == BufKind::kTemp ? plan_.temp_slots()[ref.index].shape_of : ref.index));
    return *l;
  }
  static void add(std::vector<Step>& list, const Loc& from, const Loc& to, bool combine) {
    if (from.bytes > 0) list.push_back(Step{from, to, combine});
  }

  // A round to this rank itself stores at the phase start and combines after the phase in plan
  // order; a combined receive lands in scratch and is combined after the phase.
  void lower_round(const BoundRound& br, PhaseProgram& ph) {
    const ir::Round& round = plan_.phases()[br.phase].rounds[br.round];
    if (br.send_peer == bound_.rank) {
      assert(br.recv_peer == bound_.rank && br.recv_entries == br.send_entries);
      for (std::size_t j = 0; j < br.recv_entries.size(); ++j) {
        const int e = br.recv_entries[j];
        const Loc from = loc_of(round.send[e]), to = loc_of(round.recv[e]);
        add(br.recv_combine[j] ? ph.after : ph.before, from, to, br.recv_combine[j]);
      }
      return;
    }
    if (br.send_peer != kNoRank) {
      std::vector<Loc> parts;
      for (int e : br.send_entries) parts.push_back(loc_of(round.send[e]));
      ph.messages.push_back(make_message(false, br.send_peer, br, std::move(parts)));
    }
    if (br.recv_peer == kNoRank) return;
    std::vector<Loc> parts;
    for (std::size_t j = 0; j < br.recv_entries.size(); ++j) {
      const Loc to = loc_of(round.recv[br.recv_entries[j]]);
      if (!br.recv_combine[j]) {
        parts.push_back(to);
        continue;
      }
      const Loc staged = scratch(to.bytes);
      add(ph.after, staged, to, true);
      parts.push_back(staged);
    }
    ph.messages.push_back(make_message(true, br.recv_peer, br, std::move(parts)));
  }

  const ir::Plan& plan_;
  const BoundPlan& bound_;
  const Layout& layout_;
  Program prog_;
  std::vector<Loc> send_;
  std::vector<std::optional<Loc>> recv_, temp_;
};

bool extended(ir::Op op) { return ir::is_reduction(op) || ir::is_rooted(op); }

}  // namespace

Result<Program> lower(const ir::Plan& plan, const BoundPlan& bound, const Layout& layout, const LowerOptions& options) {
  if (static_cast<int>(layout.send.size()) != plan.num_send_blocks())
    return fail("layout has " + std::to_string(layout.send.size()) + " send blocks, the plan " +
                std::to_string(plan.num_send_blocks()));
  if (static_cast<int>(layout.recv.size()) != plan.num_recv_blocks())
    return fail("layout has " + std::to_string(layout.recv.size()) + " recv blocks, the plan " +
                std::to_string(plan.num_recv_blocks()));
  for (const auto* side : {&layout.send, &layout.recv})
    for (std::size_t i = 0; i < side->size(); ++i)
      if ((*side)[i].bytes < 0)
        return fail(std::string(side == &layout.send ? "send" : "recv") + " block " + std::to_string(i) + " has " +
                    std::to_string((*side)[i].bytes) + " bytes");
  if (!layout.shape_bytes.empty() && layout.shape_bytes.size() != 1 &&
      static_cast<int>(layout.shape_bytes.size()) != plan.num_blocks())
    return fail("layout has " + std::to_string(layout.shape_bytes.size()) + " block shapes, expected 1 or " +
                std::to_string(plan.num_blocks()));
  if (bound.phase_begin.size() != plan.phases().size() + 1 || bound.temp_slot_bytes.size() != plan.temp_slots().size())
    return fail("the bound plan was not bound from this plan");
  if (extended(plan.op())) {
    if (layout.recv_user.size() != layout.recv.size())
      return fail("layout.recv_user has " + std::to_string(layout.recv_user.size()) + " entries, expected " +
                  std::to_string(layout.recv.size()));
    if (layout.unit.bytes < 0) return fail("the unit block has " + std::to_string(layout.unit.bytes) + " bytes");
    return ExtendedLowering(plan, bound, layout).run();
  }
  return PlainLowering(plan, bound, layout, options).run();
}

Layout contiguous_layout(const ir::Plan& plan, const BoundPlan& bound) {
  Layout l;
  auto bytes = [&](int i) { return bound.block_bytes[bound.block_bytes.size() == 1 ? 0 : static_cast<std::size_t>(i)]; };
  for (int i = 0; i < plan.num_send_blocks(); ++i) l.send.push_back({std::max<std::int64_t>(bytes(i), 0), true});
  for (int i = 0; i < plan.num_recv_blocks(); ++i) l.recv.push_back({std::max<std::int64_t>(bytes(i), 0), true});
  if (extended(plan.op())) {
    l.unit = {std::max<std::int64_t>(bytes(0), 0), true};
    for (int i = 0; i < plan.num_recv_blocks(); ++i) l.recv_user.push_back(bound.recv_result[static_cast<std::size_t>(i)]);
  }
  return l;
}

}  // namespace cartplan::engine
