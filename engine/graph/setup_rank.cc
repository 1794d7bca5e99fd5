// One rank's state machine of seed 003's distributed pattern construction (Alg. 1 and 2).
#include "engine/graph/setup_rank.h"

#include <algorithm>
#include <cassert>
#include <utility>

namespace cartplan::engine::graph {
namespace {

constexpr int kNoteNone = 0, kNoteOn = 1, kNoteOff = 2, kNoteDone = 3;
constexpr int kSearching = 0, kPaired = 1, kTerminal = 2;

// Mailbox key: kind (3 bits), iteration + 1 (13 bits), sub-round (12 bits), sender (21 bits).
std::uint64_t key(SetupKind kind, int iteration, int sub, int from) {
  return (static_cast<std::uint64_t>(kind) << 61) | (static_cast<std::uint64_t>(iteration + 1) << 48) |
         (static_cast<std::uint64_t>(sub) << 32) | static_cast<std::uint64_t>(from);
}

std::map<int, int> counts(const std::vector<int>& list, int self) {
  std::map<int, int> c;
  for (int v : list) {
    if (v != self) ++c[v];
  }
  return c;
}

}  // namespace

std::int64_t SetupMessage::bytes() const {
  const std::size_t ints = kind == SetupKind::kInList || kind == SetupKind::kHandover ? payload.size()
                           : kind == SetupKind::kNote                                  ? 2
                                                                                       : 1;
  return 4 * static_cast<std::int64_t>(ints);
}

RankBuilder::RankBuilder(int rank, const std::vector<int>& out, const std::vector<int>& in, PairingOptions options)
    : rank_(rank), options_(options) {
  assert(options.max_iterations < 4000 && options.max_match_rounds < 4000);
  for (auto [n, edges] : counts(out, rank)) active_[n] = {Item{rank, edges}};
  for (auto [q, edges] : counts(in, rank)) incoming_[q] = {Item{q, edges}};
  pattern_.rank = rank;
}

SetupMessage RankBuilder::make(SetupKind kind, int to, int iteration, int sub) const {
  SetupMessage m;
  m.from = rank_;
  m.to = to;
  m.kind = kind;
  m.iteration = iteration;
  m.sub = sub;
  return m;
}

bool RankBuilder::has(SetupKind kind, int iteration, int sub, int from) const {
  return mailbox_.count(key(kind, iteration, sub, from)) > 0;
}

const SetupMessage& RankBuilder::get(SetupKind kind, int iteration, int sub, int from) const {
  return mailbox_.at(key(kind, iteration, sub, from));
}

void RankBuilder::drop(SetupKind kind, int iteration, int sub, int from) { mailbox_.erase(key(kind, iteration, sub, from)); }

void RankBuilder::send_in_list(int iteration, std::vector<SetupMessage>& out) const {
  std::vector<int> list;
  for (const auto& [q, items] : incoming_) list.push_back(q);
  for (const auto& [q, items] : incoming_) {
    SetupMessage m = make(SetupKind::kInList, q, iteration);
    m.payload = list;
    out.push_back(std::move(m));
  }
}

std::vector<SetupMessage> RankBuilder::start() {
  std::vector<SetupMessage> out;
  send_in_list(-1, out);
  while (advance_sender(out) || advance_receiver(out)) {
  }
  return out;
}

std::vector<SetupMessage> RankBuilder::step(std::vector<SetupMessage> inbox) {
  for (SetupMessage& m : inbox) {
    assert(m.to == rank_);
    const std::uint64_t k = key(m.kind, m.iteration, m.sub, m.from);
    mailbox_.emplace(k, std::move(m));
  }
  std::vector<SetupMessage> out;
  while (advance_sender(out) || advance_receiver(out)) {
  }
  return out;
}

bool RankBuilder::advance_sender(std::vector<SetupMessage>& out) {
  switch (sender_) {
    case SenderStep::kWaitLists: return take_lists(out);
    case SenderStep::kChoose: choose(out); return true;
    case SenderStep::kWaitChoices: return take_choices(out);
    case SenderStep::kWaitStates: return take_states(out);
    case SenderStep::kWaitHandover: return take_handover(out);
    case SenderStep::kDone: return false;
  }
  return false;
}

// Alg. 1 lines 1-2 and 23-24: the rows of M from the active out-neighbours, then the friends.
bool RankBuilder::take_lists(std::vector<SetupMessage>& out) {
  for (const auto& [n, items] : active_) {
    if (!has(SetupKind::kInList, t_ - 1, 0, n)) return false;
  }
  weight_.clear();
  for (const auto& [n, items] : active_) {
    rows_[n] = get(SetupKind::kInList, t_ - 1, 0, n).payload;
    drop(SetupKind::kInList, t_ - 1, 0, n);
    for (int q : rows_[n]) {
      if (q != rank_) ++weight_[q];
    }
  }
  std::set<int> friends;
  for (const auto& [q, w] : weight_) {
    if (w >= options_.theta) friends.insert(q);
  }
  if (friends.empty() || t_ >= options_.max_iterations) {
    leave_loop(out);
    return true;
  }
  friends_active_ = friends;
  candidates_ = std::move(friends);
  sub_ = 0;
  chose_.clear();
  choice_ = previous_choice_ = -1;
  paired_ = terminal_ = false;
  sender_ = SenderStep::kChoose;
  return true;
}

// Alg. 1 lines 26-27: the remaining out-neighbours get their bundles directly.
void RankBuilder::leave_loop(std::vector<SetupMessage>& out) {
  for (const auto& [n, items] : active_) {
    SetupMessage m = make(SetupKind::kNote, n, t_);
    m.value = kNoteDone;
    out.push_back(std::move(m));
    pattern_.sends.push_back(PatternSend{n, final_phase(options_, t_), items});
  }
  active_.clear();
  rows_.clear();
  pattern_.iterations = t_;
  sender_ = SenderStep::kDone;
}

// The friend with the most common neighbours (ties: the lowest rank) among those not dropped.
int RankBuilder::best_candidate() const {
  int best = -1;
  for (int q : candidates_) {
    if (!friends_active_.count(q)) continue;
    if (best < 0 || weight_.at(q) > weight_.at(best)) best = q;
  }
  return best;
}

// Alg. 2 lines 3-22 and 23.
void RankBuilder::choose(std::vector<SetupMessage>& out) {
  if (sub_ == 0) {
    choice_ = best_candidate();
  } else if (friends_active_.count(previous_choice_) && rank_ < previous_choice_) {
    choice_ = previous_choice_;  // line 8: retry; the lower rank sticks, so cycles cannot form
  } else {
    int g = -1;  // line 11: a lower friend that chose this rank will choose it again
    for (int q : friends_active_) {
      if (q < rank_ && chose_.count(q) && chose_.at(q) == rank_ && (g < 0 || weight_.at(q) > weight_.at(g))) g = q;
    }
    if (g >= 0) {
      choice_ = g;
    } else {
      candidates_.erase(previous_choice_);  // line 13
      choice_ = best_candidate();           // line 18, or terminal (line 15)
    }
  }
  if (choice_ < 0) terminal_ = true;
  previous_choice_ = choice_;
  for (int q : friends_active_) {
    SetupMessage m = make(SetupKind::kChoice, q, t_, sub_);
    m.value = choice_;
    out.push_back(std::move(m));
  }
  sender_ = SenderStep::kWaitChoices;
}

// Alg. 2 lines 24-27: mutual choices pair; the last allowed sub-round makes the rest terminal.
bool RankBuilder::take_choices(std::vector<SetupMessage>& out) {
  for (int q : friends_active_) {
    if (!has(SetupKind::kChoice, t_, sub_, q)) return false;
  }
  chose_.clear();
  for (int q : friends_active_) {
    chose_[q] = get(SetupKind::kChoice, t_, sub_, q).value;
    drop(SetupKind::kChoice, t_, sub_, q);
  }
  paired_ = !terminal_ && chose_.count(choice_) && chose_.at(choice_) == rank_;
  if (!paired_ && sub_ + 1 >= options_.max_match_rounds) terminal_ = true;
  for (int q : friends_active_) {
    SetupMessage m = make(SetupKind::kState, q, t_, sub_);
    m.value = paired_ ? kPaired : terminal_ ? kTerminal : kSearching;
    out.push_back(std::move(m));
  }
  sender_ = SenderStep::kWaitStates;
  return true;
}

// Alg. 2 line 28: paired and terminal friends leave the matching.
bool RankBuilder::take_states(std::vector<SetupMessage>& out) {
  for (int q : friends_active_) {
    if (!has(SetupKind::kState, t_, sub_, q)) return false;
  }
  std::set<int> still;
  for (int q : friends_active_) {
    if (get(SetupKind::kState, t_, sub_, q).value == kSearching) still.insert(q);
    drop(SetupKind::kState, t_, sub_, q);
  }
  friends_active_ = std::move(still);
  if (paired_ || terminal_) {
    finish_matching(out);
  } else {
    ++sub_;
    sender_ = SenderStep::kChoose;
  }
  return true;
}

// Alg. 1 lines 8-17: the common neighbours, sorted by rank, split in halves; the lower rank of
// the pair keeps the first half. Both compute the same list, so the halves are consistent.
void RankBuilder::finish_matching(std::vector<SetupMessage>& out) {
  on_.clear();
  off_.clear();
  if (!paired_) {
    for (const auto& [n, items] : active_) {
      SetupMessage m = make(SetupKind::kNote, n, t_);
      m.value = kNoteNone;
      out.push_back(std::move(m));
    }
    ++t_;
    sender_ = SenderStep::kWaitLists;
    return;
  }
  std::vector<int> common;
  for (const auto& [n, row] : rows_) {
    if (active_.count(n) && std::binary_search(row.begin(), row.end(), choice_)) common.push_back(n);
  }
  assert(!common.empty());
  const std::size_t half = (common.size() + 1) / 2;
  auto mid = common.begin() + static_cast<std::ptrdiff_t>(half);
  on_ = rank_ < choice_ ? std::vector<int>(common.begin(), mid) : std::vector<int>(mid, common.end());
  off_ = rank_ < choice_ ? std::vector<int>(mid, common.end()) : std::vector<int>(common.begin(), mid);
  SetupMessage m = make(SetupKind::kHandover, choice_, t_);
  for (int n : off_) {
    m.payload.push_back(n);
    m.payload.push_back(static_cast<int>(active_[n].size()));
    for (auto [origin, edges] : active_[n]) {
      m.payload.push_back(origin);
      m.payload.push_back(edges);
    }
  }
  out.push_back(std::move(m));
  sender_ = SenderStep::kWaitHandover;
}

// Alg. 1 lines 18-22: record the stage, notify the out-neighbours, drop the covered ones.
bool RankBuilder::take_handover(std::vector<SetupMessage>& out) {
  if (!has(SetupKind::kHandover, t_, 0, choice_)) return false;
  const std::vector<int> in = get(SetupKind::kHandover, t_, 0, choice_).payload;
  drop(SetupKind::kHandover, t_, 0, choice_);
  Stage stage{t_, choice_, exchange_phase(options_, t_), {}, {}};
  for (std::size_t i = 0; i < in.size();) {
    Bundle b{in[i], {}};
    const int n_items = in[i + 1];
    for (int k = 0; k < n_items; ++k) b.items.emplace_back(in[i + 2 + 2 * k], in[i + 3 + 2 * k]);
    i += 2 + 2 * static_cast<std::size_t>(n_items);
    stage.handed_in.push_back(std::move(b));
  }
  for (int n : off_) stage.handed_out.push_back(Bundle{n, active_[n]});
  const std::set<int> on(on_.begin(), on_.end()), off(off_.begin(), off_.end());
  std::size_t next_in = 0;
  for (auto it = active_.begin(); it != active_.end();) {
    const int n = it->first;
    SetupMessage m = make(SetupKind::kNote, n, t_);
    m.value = on.count(n) ? kNoteOn : off.count(n) ? kNoteOff : kNoteNone;
    m.value2 = choice_;
    out.push_back(std::move(m));
    if (on.count(n)) {
      assert(next_in < stage.handed_in.size() && stage.handed_in[next_in].target == n);
      it->second = merge_items(it->second, stage.handed_in[next_in++].items);
      if (!options_.cumulative) pattern_.sends.push_back(PatternSend{n, combined_phase(options_, t_), it->second});
    }
    const bool keep = !off.count(n) && !(on.count(n) && !options_.cumulative);
    if (!keep) rows_.erase(n);
    it = keep ? std::next(it) : active_.erase(it);
  }
  pattern_.stages.push_back(std::move(stage));
  ++t_;
  sender_ = SenderStep::kWaitLists;
  return true;
}

// The receiver role: one note per iteration from every active in-neighbour.
bool RankBuilder::advance_receiver(std::vector<SetupMessage>& out) {
  if (receiver_done_) return false;
  if (incoming_.empty()) {
    receiver_done_ = true;
    return true;
  }
  const int t = receiver_t_;
  for (const auto& [q, items] : incoming_) {
    if (!has(SetupKind::kNote, t, 0, q)) return false;
  }
  std::map<int, std::vector<Item>> next;
  for (const auto& [q, items] : incoming_) {
    const SetupMessage& note = get(SetupKind::kNote, t, 0, q);
    if (note.value == kNoteOn) {
      // q carries its partner's items too; the partner sent kNoteOff in the same iteration.
      const std::vector<Item> merged = merge_items(items, incoming_.at(note.value2));
      if (options_.cumulative) next[q] = merged;
      else pattern_.recvs.push_back(PatternRecv{q, combined_phase(options_, t), merged});
    } else if (note.value == kNoteDone) {
      pattern_.recvs.push_back(PatternRecv{q, final_phase(options_, t), items});
    } else if (note.value == kNoteNone) {
      next[q] = items;
    }
  }
  for (const auto& [q, items] : incoming_) drop(SetupKind::kNote, t, 0, q);
  incoming_ = std::move(next);
  ++receiver_t_;
  if (!incoming_.empty()) send_in_list(t, out);
  return true;
}

RankPattern RankBuilder::pattern() const {
  RankPattern p = pattern_;
  std::sort(p.sends.begin(), p.sends.end(), [](const PatternSend& a, const PatternSend& b) {
    return std::pair(a.phase, a.target) < std::pair(b.phase, b.target);
  });
  std::sort(p.recvs.begin(), p.recvs.end(), [](const PatternRecv& a, const PatternRecv& b) {
    return std::pair(a.phase, a.source) < std::pair(b.phase, b.source);
  });
  return p;
}

}  // namespace cartplan::engine::graph
