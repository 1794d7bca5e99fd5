// Symbolic execution of a plan for one process (the second layer of verify, and the source of
// the routing facts that bind() and the DOT view use).
#include "ir/trace.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>

namespace cartplan::ir {
namespace {

// Bound on origin coordinates so that chains of shifts from a hostile plan cannot overflow.
constexpr std::int64_t kMaxOrigin = std::int64_t{1} << 30;
// Bound on (step, holder position) pairs visited when walking back from the recv blocks: a
// hostile reduction plan can fan data out and in again so that the number of distinct routes
// grows exponentially with the phases. Planner output is far below this.
constexpr std::size_t kMaxWalk = std::size_t{1} << 22;

using Multiset = std::vector<Content>;  // sorted

// Writers of a location's current content: transfer index >= 0, or local(l) for local step l.
int local_writer(int l) { return -1 - l; }
int local_of_writer(int w) { return -1 - w; }

struct Location {
  std::optional<Multiset> content;
  std::vector<int> writers;  // empty: initial content (the send buffer) or nothing
  bool written = false;      // recv blocks outside reductions: written at most once
};

std::string where(int phase, int round, const char* side, int entry) {
  return "phase " + std::to_string(phase) + ", round " + std::to_string(round) + ", " + side +
         " entry " + std::to_string(entry);
}

std::string describe(const Content& c) {
  return "block " + std::to_string(c.block) + " from " + to_string(c.origin);
}

std::string describe(const Multiset& m) {
  if (m.size() == 1) return describe(m[0]);
  std::string s = std::to_string(m.size()) + " contributions (";
  for (std::size_t i = 0; i < m.size() && i < 4; ++i) s += (i ? ", " : "") + describe(m[i]);
  return s + (m.size() > 4 ? ", ...)" : ")");
}

Multiset merged(const Multiset& a, const Multiset& b) {
  Multiset m;
  m.reserve(a.size() + b.size());
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(m));
  return m;
}

int clamp_int(std::int64_t v) {
  return static_cast<int>(std::clamp<std::int64_t>(v, std::numeric_limits<int>::min() + 1,
                                                   std::numeric_limits<int>::max()));
}

class Machine {
 public:
  explicit Machine(const Plan& plan) : plan_(plan), reduction_(is_reduction(plan.op())) {
    send_.resize(plan.num_send_blocks());
    for (int b = 0; b < plan.num_send_blocks(); ++b)
      send_[b].content = Multiset{Content{b, Offset(plan.ndims(), 0)}};
    recv_.resize(plan.num_recv_blocks());
    temp_.resize(plan.temp_slots().size());
    for (int i = 0; i < plan.num_recv_blocks(); ++i) {
      required_.push_back(required_contents(plan, i));
      counts_.emplace_back();
      if (required_.back())
        for (const Content& c : *required_.back()) ++counts_.back()[c];
    }
  }

  Location& at(const BufRef& ref) {
    switch (ref.kind) {
      case BufKind::kSend: return send_.at(ref.index);
      case BufKind::kRecv: return recv_.at(ref.index);
      case BufKind::kTemp: return temp_.at(ref.index);
    }
    assert(false);
    return send_.at(0);
  }

  std::string describe_required(int block) const {
    if (reduction_) {
      if (!required_[block]) return "contributions from more than 2^30 positions away";
      return describe(*required_[block]);
    }
    const int b = blocks_have_own_shape(plan_.op()) ? block : 0;
    if (required_[block]) return describe((*required_[block])[0]);
    return "block " + std::to_string(b) + " from minus " + to_string(plan_.neighborhood()[block]) +
           ", more than 2^30 positions away";
  }

  // Stores (or, with ref.reduce, adds) content. Outside reductions a recv block must be written
  // once and only with its final content; in reductions every contribution written into a
  // recv block must be required there, and not more often than required.
  // `ctx` names the writer; it is only called when there is an error to report.
  template <class Context>
  void write(const BufRef& ref, const std::optional<Multiset>& content, int writer, const Context& ctx,
             std::vector<std::string>& errors) {
    Location& loc = at(ref);
    if (ref.kind == BufKind::kRecv && !reduction_) {
      if (loc.written) errors.push_back(ctx() + ": writes " + to_string(ref) + " a second time");
      if (content && !(content == required_[ref.index]))
        errors.push_back(ctx() + ": writes " + to_string(ref) + " with " + describe(*content) +
                         ", but its final content is " + describe_required(ref.index));
    }
    if (ref.kind == BufKind::kRecv && reduction_ && content) {
      std::map<Content, int> have;
      if (ref.reduce && loc.content)
        for (const Content& c : *loc.content) ++have[c];
      std::set<Content> reported;
      for (const Content& c : *content) {
        const auto want = counts_[ref.index].find(c);
        const int limit = want == counts_[ref.index].end() ? 0 : want->second;
        if (++have[c] > limit && reported.insert(c).second) {
          if (limit == 0)
            errors.push_back(ctx() + ": brings " + describe(c) + " into " + to_string(ref) +
                             ", which does not belong there");
          else
            errors.push_back(ctx() + ": counts " + describe(c) + " in " + to_string(ref) + " " +
                             std::to_string(have[c]) + " times (double counting; required " +
                             std::to_string(limit) + ")");
        }
      }
    }
    if (ref.reduce && loc.content && content) {
      loc.content = merged(*loc.content, *content);
      loc.writers.push_back(writer);
    } else if (ref.reduce && !content) {
      loc.writers.push_back(writer);  // undefined data was already reported at its read
    } else {  // an overwrite, or a reduce into a location that holds nothing yet
      loc.content = content;
      loc.writers.assign(1, writer);
    }
    loc.written = true;
  }

  std::vector<Location> send_, recv_, temp_;
  std::vector<std::optional<Multiset>> required_;
  std::vector<std::map<Content, int>> counts_;

 private:
  const Plan& plan_;
  bool reduction_;
};

}  // namespace

std::optional<std::vector<Content>> required_contents(const Plan& plan, int block) {
  const Op op = symmetric_op(plan.op());
  auto origin_of = [&](int i) -> std::optional<Offset> {
    Offset o = plan.neighborhood()[i];
    for (int& x : o) {
      if (x > kMaxOrigin || x < -kMaxOrigin) return std::nullopt;
      x = -x;
    }
    return o;
  };
  std::vector<Content> out;
  if (!is_reduction(op)) {
    const std::optional<Offset> o = origin_of(block);
    if (!o) return std::nullopt;
    out.push_back(Content{blocks_have_own_shape(op) ? block : 0, *o});
    return out;
  }
  for (int i = 0; i < plan.num_blocks(); ++i) {
    const std::optional<Offset> o = origin_of(i);
    if (!o) return std::nullopt;
    out.push_back(Content{op == Op::kReduceScatter ? i : 0, *o});
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// Runs the plan on one symbolic process: phases (sends, then receives, then copies), the final
// copies, then per recv block the checks of its final content and the walk back to the send
// buffer that names every step feeding it.
class Tracer {
 public:
  explicit Tracer(const Plan& plan) : plan_(plan), m_(plan) {}

  Trace run() {
    for (int p = 0; p < static_cast<int>(plan_.phases().size()); ++p) run_phase(p);
    run_final_copies();
    std::size_t walked = 0;
    for (int i = 0; i < plan_.num_recv_blocks(); ++i) {
      record_final(i);
      if (!check_final(i)) continue;
      if (!walk_back(i, walked)) break;
    }
    return std::move(tr_);
  }

 private:
  // All rounds of a phase run concurrently: every send reads the state before the phase, and
  // only then are the receives applied (reduce entries in plan order), then the copies.
  void run_phase(int p) {
    const Phase& phase = plan_.phases()[p];
    tr_.round_start.emplace_back();
    const int phase_first = static_cast<int>(tr_.transfers.size());
    std::vector<std::optional<Multiset>> sent;
    for (int r = 0; r < static_cast<int>(phase.rounds.size()); ++r) {
      tr_.round_start[p].push_back(static_cast<int>(tr_.transfers.size()));
      for (int e = 0; e < static_cast<int>(phase.rounds[r].send.size()); ++e) sent.push_back(read_send(p, r, e));
    }
    for (int r = 0; r < static_cast<int>(phase.rounds.size()); ++r)
      for (int e = 0; e < static_cast<int>(phase.rounds[r].recv.size()); ++e) {
        const int x = tr_.round_start[p][r] + e;
        receive(p, r, e, x, sent[x - phase_first]);
      }
    tr_.phase_copy_start.push_back(static_cast<int>(tr_.locals.size()));
    for (int c = 0; c < static_cast<int>(phase.copies.size()); ++c) run_copy(p, c, phase.copies[c]);
  }

  // Records the transfer of send entry e of round r in phase p; returns what it carries.
  std::optional<Multiset> read_send(int p, int r, int e) {
    const BufRef& ref = plan_.phases()[p].rounds[r].send[e];
    const Location& loc = m_.at(ref);
    if (!loc.content) tr_.errors.push_back(where(p, r, "send", e) + ": reads " + to_string(ref) + " before it holds data");
    Transfer x;
    x.phase = p;
    x.round = r;
    x.entry = e;
    set_contents(x, loc.content);
    tr_.transfers.push_back(std::move(x));
    transfer_parents_.push_back(loc.writers);
    return loc.content;
  }

  // Applies recv entry e of round r in phase p (transfer x), which brings `arrived`.
  void receive(int p, int r, int e, int x, std::optional<Multiset> arrived) {
    const Round& round = plan_.phases()[p].rounds[r];
    if (arrived && !shift_origins(*arrived, round.shift)) {
      tr_.errors.push_back(where(p, r, "recv", e) + ": block travels more than 2^30 positions away");
      arrived.reset();
    }
    m_.write(round.recv[e], arrived, x, [&] { return where(p, r, "recv", e); }, tr_.errors);
  }

  // The sender is at -shift from the receiver, so an origin o seen by the sender is o - shift
  // seen by the receiver. False when an origin would leave the bound kMaxOrigin.
  static bool shift_origins(Multiset& contents, const Offset& shift) {
    for (Content& c : contents)
      for (std::size_t k = 0; k < c.origin.size() && k < shift.size(); ++k) {
        const std::int64_t o = std::int64_t{c.origin[k]} - shift[k];
        if (o > kMaxOrigin || o < -kMaxOrigin) return false;
        c.origin[k] = static_cast<int>(o);
      }
    std::sort(contents.begin(), contents.end());
    return true;
  }

  // A local step (phase < 0: the plan's final copy c); returns what it moves.
  std::optional<Multiset> run_copy(int phase, int c, const Copy& copy) {
    const int l = static_cast<int>(tr_.locals.size());
    auto ctx = [&] {
      return phase < 0 ? "copy " + std::to_string(c) : "phase " + std::to_string(phase) + ", copy " + std::to_string(c);
    };
    const Location& from = m_.at(copy.from);
    if (!from.content) tr_.errors.push_back(ctx() + ": reads " + to_string(copy.from) + " before it holds data");
    LocalStep step;
    step.phase = phase;
    step.copy = c;
    set_contents(step, from.content);
    tr_.locals.push_back(step);
    local_parents_.push_back(from.writers);
    const std::optional<Multiset> content = from.content;
    m_.write(copy.to, content, local_writer(l), ctx, tr_.errors);
    return content;
  }

  void run_final_copies() {
    tr_.final_copy_start = static_cast<int>(tr_.locals.size());
    for (int c = 0; c < static_cast<int>(plan_.copies().size()); ++c)
      tr_.copy_content.push_back(first_of(run_copy(-1, c, plan_.copies()[c])));
  }

  static void set_contents(Flow& f, const std::optional<Multiset>& content) {
    if (!content) return;
    f.contents = *content;
    if (!f.contents.empty()) f.content = f.contents.front();
  }

  static std::optional<Content> first_of(const std::optional<Multiset>& m) {
    return m && !m->empty() ? std::optional<Content>(m->front()) : std::nullopt;
  }

  void record_final(int i) {
    const Location& loc = m_.recv_[i];
    tr_.final_contents.push_back(loc.content);
    tr_.final_recv.push_back(first_of(loc.content));
  }

  // Reports a recv block never written, or (reductions) missing contributions; excess ones were
  // reported where they were written. False when there is nothing to walk back from.
  bool check_final(int i) {
    const Location& loc = m_.recv_[i];
    if (!loc.written) {
      tr_.errors.push_back("recv[" + std::to_string(i) + "] is never written (expected " + m_.describe_required(i) + ")");
      return false;
    }
    if (!is_reduction(plan_.op()) || !loc.content || !m_.required_[i]) return true;
    std::map<Content, int> have;
    for (const Content& c : *loc.content) ++have[c];
    for (const auto& [c, want] : m_.counts_[i]) {
      const int got = have.count(c) ? have[c] : 0;
      if (got < want)
        tr_.errors.push_back("recv[" + std::to_string(i) + "] misses " + describe(c) + " (holds it " +
                             std::to_string(got) + " times, required " + std::to_string(want) + ")");
    }
    return true;
  }

  // Walks the writers of recv block i back to the send buffer: every transfer and local step on
  // the way feeds block i. `rel` is the final holder's position relative to the process at the
  // step. False (reported) once `walked` exceeds kMaxWalk over all blocks.
  bool walk_back(int i, std::size_t& walked) {
    std::set<std::pair<int, Offset>> seen;
    std::vector<std::pair<int, Offset>> pending;
    const Offset zero(plan_.ndims(), 0);
    for (int w : m_.recv_[i].writers) pending.emplace_back(w, zero);
    while (!pending.empty()) {
      auto [w, rel] = std::move(pending.back());
      pending.pop_back();
      if (!seen.insert({w, rel}).second) continue;
      if (++walked > kMaxWalk) {
        tr_.errors.push_back("recv[" + std::to_string(i) + "]: more than " + std::to_string(kMaxWalk) +
                             " (step, position) pairs lead to the recv blocks; the plan is too entangled to trace");
        return false;
      }
      mark_feeds(w, i, rel);
      if (w >= 0) {
        const Offset up = holder_before(w, rel);
        for (int parent : transfer_parents_[w]) pending.emplace_back(parent, up);
      } else {
        for (int parent : local_parents_[local_of_writer(w)]) pending.emplace_back(parent, rel);
      }
    }
    return true;
  }

  // Notes on writer w's flow that it feeds recv block i, held at `rel` from its process.
  void mark_feeds(int w, int i, const Offset& rel) {
    Flow& f = w >= 0 ? static_cast<Flow&>(tr_.transfers[w]) : tr_.locals[local_of_writer(w)];
    if (f.targets.empty() || f.targets.back() != i) f.targets.push_back(i);
    if (std::find(f.holders.begin(), f.holders.end(), rel) == f.holders.end()) f.holders.push_back(rel);
  }

  // The holder's position seen from the sender of transfer w (the receiver sees it at `rel`).
  Offset holder_before(int w, const Offset& rel) const {
    const Offset& shift = plan_.phases()[tr_.transfers[w].phase].rounds[tr_.transfers[w].round].shift;
    Offset up(rel.size());
    for (std::size_t k = 0; k < rel.size(); ++k) up[k] = clamp_int(std::int64_t{rel[k]} + (k < shift.size() ? shift[k] : 0));
    return up;
  }

  const Plan& plan_;
  Machine m_;
  Trace tr_;
  std::vector<std::vector<int>> transfer_parents_;  // per transfer: writers of the location it read
  std::vector<std::vector<int>> local_parents_;     // per local step
};

}  // namespace

Trace trace(const Plan& plan) { return Tracer(plan).run(); }

}  // namespace cartplan::ir
