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

Trace trace(const Plan& plan) {
  Trace tr;
  Machine m(plan);
  std::vector<std::vector<int>> transfer_parents;  // per transfer: writers of the location it read
  std::vector<std::vector<int>> local_parents;     // per local step

  auto run_copy = [&](int phase, int c, const Copy& copy) {
    const int l = static_cast<int>(tr.locals.size());
    auto ctx = [&] {
      return phase < 0 ? "copy " + std::to_string(c)
                       : "phase " + std::to_string(phase) + ", copy " + std::to_string(c);
    };
    const Location& from = m.at(copy.from);
    if (!from.content) tr.errors.push_back(ctx() + ": reads " + to_string(copy.from) + " before it holds data");
    LocalStep step;
    step.phase = phase;
    step.copy = c;
    if (from.content) {
      step.contents = *from.content;
      if (!step.contents.empty()) step.content = step.contents.front();
    }
    tr.locals.push_back(step);
    local_parents.push_back(from.writers);
    const std::optional<Multiset> content = from.content;
    m.write(copy.to, content, local_writer(l), ctx, tr.errors);
    return content;
  };

  for (int p = 0; p < static_cast<int>(plan.phases().size()); ++p) {
    const Phase& phase = plan.phases()[p];
    tr.round_start.emplace_back();
    // All rounds of a phase run concurrently: every send reads the state before the phase,
    // and only then are the receives applied (reduce entries in plan order), then the copies.
    const int phase_first = static_cast<int>(tr.transfers.size());
    std::vector<std::optional<Multiset>> sent;
    for (int r = 0; r < static_cast<int>(phase.rounds.size()); ++r) {
      const Round& round = phase.rounds[r];
      tr.round_start[p].push_back(static_cast<int>(tr.transfers.size()));
      for (int e = 0; e < static_cast<int>(round.send.size()); ++e) {
        const Location& loc = m.at(round.send[e]);
        if (!loc.content)
          tr.errors.push_back(where(p, r, "send", e) + ": reads " + to_string(round.send[e]) +
                              " before it holds data");
        Transfer x;
        x.phase = p;
        x.round = r;
        x.entry = e;
        if (loc.content) {
          x.contents = *loc.content;
          if (!x.contents.empty()) x.content = x.contents.front();
        }
        tr.transfers.push_back(std::move(x));
        sent.push_back(loc.content);
        transfer_parents.push_back(loc.writers);
      }
    }
    for (int r = 0; r < static_cast<int>(phase.rounds.size()); ++r) {
      const Round& round = phase.rounds[r];
      for (int e = 0; e < static_cast<int>(round.recv.size()); ++e) {
        const int x = tr.round_start[p][r] + e;
        std::optional<Multiset> arrived = sent[x - phase_first];
        if (arrived) {
          // The sender is at -shift from the receiver, so an origin o seen by the sender is
          // o - shift seen by the receiver.
          for (Content& c : *arrived) {
            for (std::size_t k = 0; k < c.origin.size() && k < round.shift.size(); ++k) {
              const std::int64_t o = std::int64_t{c.origin[k]} - round.shift[k];
              if (o > kMaxOrigin || o < -kMaxOrigin) {
                tr.errors.push_back(where(p, r, "recv", e) + ": block travels more than 2^30 positions away");
                arrived.reset();
                break;
              }
              c.origin[k] = static_cast<int>(o);
            }
            if (!arrived) break;
          }
          if (arrived) std::sort(arrived->begin(), arrived->end());
        }
        m.write(round.recv[e], arrived, x, [&] { return where(p, r, "recv", e); }, tr.errors);
      }
    }
    tr.phase_copy_start.push_back(static_cast<int>(tr.locals.size()));
    for (int c = 0; c < static_cast<int>(phase.copies.size()); ++c) run_copy(p, c, phase.copies[c]);
  }

  tr.final_copy_start = static_cast<int>(tr.locals.size());
  for (int c = 0; c < static_cast<int>(plan.copies().size()); ++c) {
    const std::optional<Multiset> content = run_copy(-1, c, plan.copies()[c]);
    tr.copy_content.push_back(content && !content->empty() ? std::optional<Content>(content->front()) : std::nullopt);
  }

  const bool reduction = is_reduction(plan.op());
  std::size_t walked = 0;
  for (int i = 0; i < plan.num_recv_blocks(); ++i) {
    const Location& loc = m.recv_[i];
    tr.final_contents.push_back(loc.content);
    tr.final_recv.push_back(loc.content && !loc.content->empty() ? std::optional<Content>(loc.content->front())
                                                                 : std::nullopt);
    if (!loc.written) {
      tr.errors.push_back("recv[" + std::to_string(i) + "] is never written (expected " + m.describe_required(i) + ")");
      continue;
    }
    if (reduction && loc.content && m.required_[i]) {
      // Excess contributions were reported where they were written; here what is missing.
      std::map<Content, int> have;
      for (const Content& c : *loc.content) ++have[c];
      for (const auto& [c, want] : m.counts_[i]) {
        const int got = have.count(c) ? have[c] : 0;
        if (got < want)
          tr.errors.push_back("recv[" + std::to_string(i) + "] misses " + describe(c) + " (holds it " +
                              std::to_string(got) + " times, required " + std::to_string(want) + ")");
      }
    }
    // Walk the writers back to the send buffer: every transfer and local step on the way feeds
    // block i. `rel` is the final holder's position relative to the process at the step.
    std::set<std::pair<int, Offset>> seen;
    std::vector<std::pair<int, Offset>> pending;
    const Offset zero(plan.ndims(), 0);
    for (int w : loc.writers) pending.emplace_back(w, zero);
    while (!pending.empty()) {
      auto [w, rel] = std::move(pending.back());
      pending.pop_back();
      if (!seen.insert({w, rel}).second) continue;
      if (++walked > kMaxWalk) {
        tr.errors.push_back("recv[" + std::to_string(i) + "]: more than " + std::to_string(kMaxWalk) +
                            " (step, position) pairs lead to the recv blocks; the plan is too entangled to trace");
        return tr;
      }
      Flow& f = w >= 0 ? static_cast<Flow&>(tr.transfers[w]) : tr.locals[local_of_writer(w)];
      if (f.targets.empty() || f.targets.back() != i) f.targets.push_back(i);
      if (std::find(f.holders.begin(), f.holders.end(), rel) == f.holders.end()) f.holders.push_back(rel);
      if (w >= 0) {
        const Offset& shift = plan.phases()[tr.transfers[w].phase].rounds[tr.transfers[w].round].shift;
        Offset up(rel.size());
        for (std::size_t k = 0; k < rel.size(); ++k)
          up[k] = clamp_int(std::int64_t{rel[k]} + (k < shift.size() ? shift[k] : 0));
        for (int parent : transfer_parents[w]) pending.emplace_back(parent, up);
      } else {
        for (int parent : local_parents[local_of_writer(w)]) pending.emplace_back(parent, rel);
      }
    }
  }
  return tr;
}

}  // namespace cartplan::ir
