// verify(): the structural layer (indices, lengths, shapes, per-phase hazards, stats) and then
// the symbolic layer (trace()).
#include "ir/verify.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "ir/trace.h"

namespace cartplan::ir {
namespace {

class Checker {
 public:
  explicit Checker(const Plan& plan) : plan_(plan) {}

  void error(std::string msg) { errors.push_back(std::move(msg)); }

  bool in_range(const BufRef& ref) const {
    int n = 0;
    switch (ref.kind) {
      case BufKind::kSend: n = plan_.num_send_blocks(); break;
      case BufKind::kRecv: n = plan_.num_recv_blocks(); break;
      case BufKind::kTemp: n = static_cast<int>(plan_.temp_slots().size()); break;
    }
    return ref.index >= 0 && ref.index < n;
  }

  // Blocks of the same shape may be exchanged. In allgather every block is a copy of the one
  // send block and reductions combine vectors of one size, so all share a shape; in alltoall
  // (and scatter) block i has its own shape.
  int shape(const BufRef& ref) const {
    if (!blocks_have_own_shape(plan_.op())) return 0;
    return ref.kind == BufKind::kTemp ? plan_.temp_slots()[ref.index].shape_of : ref.index;
  }

  // `ctx` names the entry; it is only called when there is an error to report.
  template <class Context>
  void check_ref(const BufRef& ref, const Context& ctx, bool is_write) {
    if (!in_range(ref)) {
      error(ctx() + ": " + to_string(ref) + " is out of range");
    } else if (is_write && ref.kind == BufKind::kSend) {
      error(ctx() + ": writes " + to_string(ref) + ", but the send buffer is read-only");
    }
    const bool reduction = is_reduction(plan_.op());
    if (ref.reduce && !is_write) {
      error(ctx() + ": " + to_string(ref) + " is read, so it cannot reduce");
    } else if (ref.reduce && !reduction) {
      error(ctx() + ": reduces into " + to_string(ref) + ", but " + to_string(plan_.op()) +
            " is not a reduction (reduce entries belong to allreduce, reduce_scatter and reduce)");
    } else if (is_write && reduction && ref.kind == BufKind::kRecv && !ref.reduce) {
      error(ctx() + ": overwrites " + to_string(ref) + "; reduction plans must reduce into recv blocks");
    }
  }

  // Local steps of a phase or of the plan's end.
  void check_copies(const std::vector<Copy>& copies, const std::string& prefix) {
    for (int c = 0; c < static_cast<int>(copies.size()); ++c) {
      const Copy& copy = copies[c];
      auto ctx = [&] { return prefix + "copy " + std::to_string(c); };
      check_ref(copy.from, ctx, false);
      check_ref(copy.to, ctx, true);
      if (in_range(copy.from) && in_range(copy.to) && shape(copy.from) != shape(copy.to))
        error(ctx() + ": copies " + to_string(copy.from) + " into " + to_string(copy.to) + " of another shape");
    }
  }

  void run() {
    check_dims_and_slots();
    if (!errors.empty()) return;  // the rest indexes by these
    std::set<int> tags;
    for (int p = 0; p < static_cast<int>(plan_.phases().size()); ++p) check_phase(p, tags);
    check_copies(plan_.copies(), "");
    check_stats();
  }

  std::vector<std::string> errors;

 private:
  // ndims, the neighbourhood's coordinates, dim_order and the temp slots' shapes.
  void check_dims_and_slots() {
    const int d = plan_.ndims();
    const int t = plan_.num_blocks();
    if (d < 1) error("ndims is " + std::to_string(d) + ", expected at least 1");
    for (int i = 0; i < t; ++i)
      if (static_cast<int>(plan_.neighborhood()[i].size()) != d)
        error("neighborhood[" + std::to_string(i) + "] has " + std::to_string(plan_.neighborhood()[i].size()) +
              " coordinates, expected " + std::to_string(d));
    std::set<int> dims(plan_.dim_order().begin(), plan_.dim_order().end());
    if (static_cast<int>(plan_.dim_order().size()) != d || static_cast<int>(dims.size()) != d ||
        (d > 0 && (*dims.begin() != 0 || *dims.rbegin() != d - 1)))
      error("dim_order is not a permutation of 0.." + std::to_string(d - 1));
    for (int s = 0; s < static_cast<int>(plan_.temp_slots().size()); ++s) {
      const int of = plan_.temp_slots()[s].shape_of;
      if (of < 0 || of >= t)
        error("temp_slots[" + std::to_string(s) + "].shape_of = " + std::to_string(of) + " is out of range");
    }
  }

  // Who touches each location in one phase: (kind, index) -> the (round, entry) that writes or
  // reads it, and whether all its writes reduce. Several reduce entries may write one location
  // in a phase (they are combined after the phase's messages complete); an overwrite must be
  // its location's only write.
  struct PhaseAccess {
    std::map<std::pair<int, int>, std::pair<int, int>> written, read;
    std::map<std::pair<int, int>, bool> all_reduce;
  };

  // Context strings are built only for errors: verify runs on every bind of large plans.
  static std::string entry_ctx(int p, int r, const char* side, int e) {
    return "phase " + std::to_string(p) + ", round " + std::to_string(r) + ", " + side + " entry " + std::to_string(e);
  }

  void check_phase(int p, std::set<int>& tags) {
    const Phase& phase = plan_.phases()[p];
    if (phase.dim < Phase::kAllDims || phase.dim >= plan_.ndims())
      error("phase " + std::to_string(p) + ": dim " + std::to_string(phase.dim) + " is out of range");
    PhaseAccess access;
    for (int r = 0; r < static_cast<int>(phase.rounds.size()); ++r) {
      check_round(p, r, tags);
      check_sends(p, r, access);
      check_receives(p, r, access);
    }
    check_races(p, access);
    check_copies(phase.copies, "phase " + std::to_string(p) + ", ");
  }

  // The round's shift (length, non-zero, inside the phase's dimension), tag and entry counts.
  void check_round(int p, int r, std::set<int>& tags) {
    const Phase& phase = plan_.phases()[p];
    const Round& round = phase.rounds[r];
    const int d = plan_.ndims();
    const std::string rctx = "phase " + std::to_string(p) + ", round " + std::to_string(r);
    if (static_cast<int>(round.shift.size()) != d) {
      error(rctx + ": shift has " + std::to_string(round.shift.size()) + " coordinates, expected " + std::to_string(d));
    } else {
      if (std::all_of(round.shift.begin(), round.shift.end(), [](int x) { return x == 0; }))
        error(rctx + ": shift is zero (local moves belong in copies)");
      if (phase.dim != Phase::kAllDims)
        for (int k = 0; k < d; ++k)
          if (k != phase.dim && round.shift[k] != 0)
            error(rctx + ": shift " + to_string(round.shift) + " leaves the phase's dimension " + std::to_string(phase.dim));
    }
    if (round.tag < 0) error(rctx + ": tag " + std::to_string(round.tag) + " is negative");
    if (!tags.insert(round.tag).second)
      error(rctx + ": tag " + std::to_string(round.tag) + " is used by another round (tags are per round)");
    if (round.send.size() != round.recv.size())
      error(rctx + ": sends " + std::to_string(round.send.size()) + " entries but receives " +
            std::to_string(round.recv.size()));
    if (round.send.empty()) error(rctx + ": has no entries");
  }

  void check_sends(int p, int r, PhaseAccess& access) {
    const Round& round = plan_.phases()[p].rounds[r];
    for (int e = 0; e < static_cast<int>(round.send.size()); ++e) {
      check_ref(round.send[e], [&] { return entry_ctx(p, r, "send", e); }, false);
      if (in_range(round.send[e])) access.read.emplace(key(round.send[e]), std::pair(r, e));
    }
  }

  // Each recv entry: its reference, its location's other writes in the phase, and its shape
  // against the entry it receives.
  void check_receives(int p, int r, PhaseAccess& access) {
    const Round& round = plan_.phases()[p].rounds[r];
    for (int e = 0; e < static_cast<int>(round.recv.size()); ++e) {
      const BufRef& to = round.recv[e];
      auto ctx = [&] { return entry_ctx(p, r, "recv", e); };
      check_ref(to, ctx, true);
      if (!in_range(to)) continue;
      auto [it, fresh] = access.written.emplace(key(to), std::pair(r, e));
      const auto mode = access.all_reduce.emplace(key(to), to.reduce).first;
      if (!fresh && !(mode->second && to.reduce))
        error(ctx() + ": writes " + to_string(to) + ", also written by " +
              entry_ctx(p, it->second.first, "recv", it->second.second) + " in the same phase" +
              (is_reduction(plan_.op()) ? " (only reduce entries may share a location)" : ""));
      mode->second = mode->second && to.reduce;
      if (e < static_cast<int>(round.send.size()) && in_range(round.send[e]) && shape(round.send[e]) != shape(to))
        error(ctx() + ": receives " + to_string(to) + " (shape of block " + std::to_string(shape(to)) + ") for " +
              to_string(round.send[e]) + " (shape of block " + std::to_string(shape(round.send[e])) + ")");
    }
  }

  // Rounds of a phase run concurrently, so a location read and written in one phase races.
  void check_races(int p, const PhaseAccess& access) {
    for (const auto& [loc, w] : access.written) {
      auto it = access.read.find(loc);
      if (it != access.read.end())
        error(entry_ctx(p, w.first, "recv", w.second) + ": writes " + to_string(BufRef{BufKind(loc.first), loc.second}) +
              ", which " + entry_ctx(p, it->second.first, "send", it->second.second) + " reads in the same phase");
    }
  }

  void check_stats() {
    const Stats want = derived_stats(plan_.parts());
    const Stats& s = plan_.stats();
    if (s.t != want.t)
      error("stats.t = " + std::to_string(s.t) + ", but the neighbourhood has " + std::to_string(want.t) +
            " non-zero offsets");
    if (s.rounds != want.rounds)
      error("stats.rounds = " + std::to_string(s.rounds) + ", but the plan has " + std::to_string(want.rounds) + " rounds");
    if (s.volume != want.volume)
      error("stats.volume = " + std::to_string(s.volume) + ", but the plan sends " + std::to_string(want.volume) +
            " entries");
    if (s.phase_rounds != want.phase_rounds) error("stats.phase_rounds does not match the rounds of each phase");
  }

  static std::pair<int, int> key(const BufRef& ref) { return {static_cast<int>(ref.kind), ref.index}; }
  const Plan& plan_;
};

}  // namespace

std::vector<std::string> verify_structure(const Plan& plan) {
  Checker c(plan);
  c.run();
  return c.errors;
}

std::vector<std::string> verify(const Plan& plan) {
  std::vector<std::string> errors = verify_structure(plan);
  if (!errors.empty()) return errors;  // symbolic execution needs a well-formed plan
  return trace(plan).errors;
}

}  // namespace cartplan::ir
