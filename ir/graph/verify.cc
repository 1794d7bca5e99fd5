// Graph plan verification: structure and matching first, then symbolic execution of every rank.
#include "ir/graph/verify.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace cartplan::ir::graph {
namespace {

class Errors {
 public:
  explicit Errors(std::size_t max) : max_(max) {}
  void add(std::string e) {
    if (list_.size() < max_) list_.push_back(std::move(e));
    else ++more_;
  }
  bool empty() const { return list_.empty(); }
  std::vector<std::string> take() {
    if (more_ > 0) list_.push_back("... and " + std::to_string(more_) + " more errors");
    return std::move(list_);
  }

 private:
  std::size_t max_;
  std::size_t more_ = 0;
  std::vector<std::string> list_;
};

std::string where(int phase, int rank) { return "phase " + std::to_string(phase) + ", rank " + std::to_string(rank); }

std::string msg_where(int phase, int rank, bool recv, std::size_t i, int peer) {
  return where(phase, rank) + (recv ? ", recv " : ", send ") + std::to_string(i) + (recv ? " (from " : " (to ") +
         std::to_string(peer) + ")";
}

// Per-rank checks of one phase: peers, parts, which kinds a side may touch, temp identities,
// and the phase's hazards.
void check_phase_locally(const GraphPlan& plan, int rank, int f, Errors& errors) {
  const RankSchedule& s = plan.schedule(rank);
  const GraphPhase& ph = s.phases[f];
  std::set<Loc> written, read;
  for (int side = 0; side < 2; ++side) {
    const std::vector<Message>& msgs = side ? ph.recvs : ph.sends;
    for (std::size_t i = 0; i < msgs.size(); ++i) {
      const Message& m = msgs[i];
      const std::string at = msg_where(f, rank, side, i, m.peer);
      if (m.peer == rank) errors.add(at + ": a message to the rank itself (use a copy)");
      if (m.parts.empty()) errors.add(at + ": a message without parts");
      for (std::size_t k = 0; k < m.parts.size(); ++k) {
        const Part& p = m.parts[k];
        const std::string pat = at + ", part " + std::to_string(k);
        if (p.loc.kind == LocKind::kTemp && s.temps[p.loc.index] != p.block)
          errors.add(pat + ": " + to_string(p.loc) + " is declared for block " + to_string(s.temps[p.loc.index]) + ", not " + to_string(p.block));
        if (side == 1 && p.loc.kind == LocKind::kSend) errors.add(pat + ": receives into the send buffer");
        if (side == 1 && !written.insert(p.loc).second) errors.add(pat + ": " + to_string(p.loc) + " is written twice in this phase");
        if (side == 0) read.insert(p.loc);
      }
    }
  }
  for (const Loc& l : written) {
    if (read.count(l)) errors.add(where(f, rank) + ": " + to_string(l) + " is sent and received in the same phase");
  }
  for (std::size_t i = 0; i < ph.copies.size(); ++i) {
    const Copy& c = ph.copies[i];
    const std::string at = where(f, rank) + ", copy " + std::to_string(i);
    if (c.to.kind == LocKind::kSend) errors.add(at + ": writes the send buffer");
    if (c.from == c.to) errors.add(at + ": copies " + to_string(c.from) + " onto itself");
    for (const Loc& l : {c.from, c.to}) {
      if (l.kind == LocKind::kTemp && s.temps[l.index] != c.block)
        errors.add(at + ": " + to_string(l) + " is declared for block " + to_string(s.temps[l.index]) + ", not " + to_string(c.block));
    }
    if (!written.insert(c.to).second) errors.add(at + ": " + to_string(c.to) + " is written twice in this phase");
  }
}

// (phase, from, to) -> the messages `from` sends to `to` in that phase, in order.
using PairKey = std::tuple<int, int, int>;

void check_matching(const GraphPlan& plan, Errors& errors) {
  std::map<PairKey, std::vector<const Message*>> sent;
  for (int r = 0; r < plan.size(); ++r) {
    const auto& phases = plan.schedule(r).phases;
    for (int f = 0; f < static_cast<int>(phases.size()); ++f)
      for (const Message& m : phases[f].sends) sent[{f, r, m.peer}].push_back(&m);
  }
  std::map<PairKey, std::size_t> used;
  for (int r = 0; r < plan.size(); ++r) {
    const auto& phases = plan.schedule(r).phases;
    for (int f = 0; f < static_cast<int>(phases.size()); ++f) {
      for (std::size_t i = 0; i < phases[f].recvs.size(); ++i) {
        const Message& m = phases[f].recvs[i];
        const PairKey key{f, m.peer, r};
        const std::size_t k = used[key]++;
        const auto it = sent.find(key);
        const std::string at = msg_where(f, r, true, i, m.peer);
        if (it == sent.end() || k >= it->second.size()) {
          errors.add(at + ": rank " + std::to_string(m.peer) + " sends no matching message in this phase");
          continue;
        }
        const Message& s = *it->second[k];
        if (s.parts.size() != m.parts.size()) {
          errors.add(at + ": " + std::to_string(m.parts.size()) + " parts, but the matching send has " + std::to_string(s.parts.size()));
          continue;
        }
        for (std::size_t q = 0; q < m.parts.size(); ++q) {
          if (s.parts[q].block != m.parts[q].block)
            errors.add(at + ", part " + std::to_string(q) + ": block " + to_string(m.parts[q].block) + " does not match the sender's " +
                       to_string(s.parts[q].block));
        }
      }
    }
  }
  for (const auto& [key, msgs] : sent) {
    const std::size_t got = used.count(key) ? used[key] : 0;
    if (got < msgs.size())
      errors.add(where(std::get<0>(key), std::get<1>(key)) + ": sends " + std::to_string(msgs.size()) + " message(s) to rank " +
                 std::to_string(std::get<2>(key)) + " but it receives " + std::to_string(got));
  }
}

// Symbolic state of one rank: which block each written location holds.
class RankState {
 public:
  RankState(const GraphPlan& plan, int rank) : sends_(send_blocks_of(plan.op(), plan.topology(), rank)) {}

  std::optional<BlockId> holds(const Loc& l) const {
    if (l.kind == LocKind::kSend) return sends_[l.index];
    auto it = held_.find(l);
    if (it == held_.end()) return std::nullopt;
    return it->second;
  }
  // Error text, or "" if the write is the location's first.
  std::string write(const Loc& l, const BlockId& b) {
    auto [it, fresh] = held_.emplace(l, b);
    if (!fresh) return to_string(l) + " is written a second time (it holds " + to_string(it->second) + ")";
    return "";
  }

 private:
  std::vector<BlockId> sends_;
  std::map<Loc, BlockId> held_;
};

std::string read_error(const RankState& st, const Loc& l, const BlockId& b) {
  std::optional<BlockId> h = st.holds(l);
  if (!h) return to_string(l) + " holds nothing yet (read before write)";
  if (*h != b) return to_string(l) + " holds block " + to_string(*h) + ", not " + to_string(b);
  return "";
}

void execute_rank(const GraphPlan& plan, int r, Errors& errors) {
  RankState st(plan, r);
  const auto& phases = plan.schedule(r).phases;
  for (int f = 0; f < static_cast<int>(phases.size()); ++f) {
    const GraphPhase& ph = phases[f];
    for (std::size_t i = 0; i < ph.sends.size(); ++i) {
      for (std::size_t k = 0; k < ph.sends[i].parts.size(); ++k) {
        const Part& p = ph.sends[i].parts[k];
        if (std::string e = read_error(st, p.loc, p.block); !e.empty())
          errors.add(msg_where(f, r, false, i, ph.sends[i].peer) + ", part " + std::to_string(k) + ": " + e);
      }
    }
    for (std::size_t i = 0; i < ph.recvs.size(); ++i) {
      for (std::size_t k = 0; k < ph.recvs[i].parts.size(); ++k) {
        const Part& p = ph.recvs[i].parts[k];
        if (std::string e = st.write(p.loc, p.block); !e.empty())
          errors.add(msg_where(f, r, true, i, ph.recvs[i].peer) + ", part " + std::to_string(k) + ": " + e);
      }
    }
    for (std::size_t i = 0; i < ph.copies.size(); ++i) {
      const Copy& c = ph.copies[i];
      std::string e = read_error(st, c.from, c.block);
      if (e.empty()) e = st.write(c.to, c.block);
      if (!e.empty()) errors.add(where(f, r) + ", copy " + std::to_string(i) + ": " + e);
    }
  }
  const std::vector<BlockId> required = required_blocks_of(plan.op(), plan.topology(), r);  // the k-th edge rule
  for (std::size_t j = 0; j < required.size(); ++j) {
    const BlockId& want = required[j];
    std::optional<BlockId> got = st.holds(Loc{LocKind::kRecv, static_cast<int>(j)});
    if (!got)
      errors.add("rank " + std::to_string(r) + ", recv[" + std::to_string(j) + "]: never written (expects block " + to_string(want) + ")");
    else if (*got != want)
      errors.add("rank " + std::to_string(r) + ", recv[" + std::to_string(j) + "]: holds block " + to_string(*got) + ", expects " + to_string(want));
  }
}

}  // namespace

std::vector<std::string> verify_structure(const GraphPlan& plan, std::size_t max_errors) {
  Errors errors(max_errors);
  for (int r = 0; r < plan.size(); ++r) {
    for (int f = 0; f < static_cast<int>(plan.schedule(r).phases.size()); ++f) check_phase_locally(plan, r, f, errors);
  }
  check_matching(plan, errors);
  return errors.take();
}

std::vector<std::string> verify(const GraphPlan& plan, std::size_t max_errors) {
  std::vector<std::string> errors = verify_structure(plan, max_errors);
  if (!errors.empty()) return errors;
  Errors sym(max_errors);
  for (int r = 0; r < plan.size(); ++r) execute_rank(plan, r, sym);
  return sym.take();
}

}  // namespace cartplan::ir::graph
