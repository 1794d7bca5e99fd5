// Seed 003's Alg. 1 and 2 over the whole graph, sequentially.
#include "engine/graph/sequential_pairing.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace cartplan::engine::graph {
namespace {

struct Rank {
  std::map<int, std::vector<Item>> active;    // Oa with bundles
  std::map<int, std::vector<Item>> incoming;  // Ia with the items each carries here
  bool in_loop = true;
  RankPattern pattern;
};

// One rank's matching state (Alg. 2).
// One rank's matching state (Alg. 2). Its friends are a sorted array with their weights; a
// friend that left the matching is marked in the shared `gone` array (not erased), one dropped
// by line 13 in `dropped`, so that a sub-round costs one pass over the friends.
struct Matcher {
  std::vector<int> friends, weight;
  std::vector<char> dropped;
  int choice = -1, previous = -1;
  bool paired = false, terminal = false, finished = false;

  // The still-searching, not dropped friend with the most common neighbours (ties: lowest rank).
  int best(const std::vector<char>& gone) const {
    int b = -1, bw = 0;
    for (std::size_t k = 0; k < friends.size(); ++k) {
      if (!gone[friends[k]] && !dropped[k] && (b < 0 || weight[k] > bw)) b = friends[k], bw = weight[k];
    }
    return b;
  }
  void drop(int q) {
    auto it = std::lower_bound(friends.begin(), friends.end(), q);
    if (it != friends.end() && *it == q) dropped[it - friends.begin()] = 1;
  }
};

class Reference {
 public:
  Reference(const ir::graph::Topology& t, const PairingOptions& o) : o_(o), ranks_(t.size()) {
    for (int r = 0; r < t.size(); ++r) {
      ranks_[r].pattern.rank = r;
      for (int n : t.ranks[r].out) {
        if (n != r) ranks_[r].active[n] = {Item{r, ir::graph::count_of(t.ranks[r].out, n)}};
      }
      for (int q : t.ranks[r].in) {
        if (q != r) ranks_[r].incoming[q] = {Item{q, ir::graph::count_of(t.ranks[r].in, q)}};
      }
    }
  }

  std::vector<RankPattern> run() {
    for (int t = 0; std::any_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return r.in_loop || !r.incoming.empty(); }); ++t)
      iteration(t);
    std::vector<RankPattern> out;
    for (Rank& r : ranks_) {
      auto by_phase = [](const auto& a, const auto& b) { return a.phase != b.phase ? a.phase < b.phase : a.target < b.target; };
      std::sort(r.pattern.sends.begin(), r.pattern.sends.end(), by_phase);
      std::sort(r.pattern.recvs.begin(), r.pattern.recvs.end(),
                [](const PatternRecv& a, const PatternRecv& b) { return a.phase != b.phase ? a.phase < b.phase : a.source < b.source; });
      out.push_back(r.pattern);
    }
    return out;
  }

 private:
  // Common active out-neighbours of p with every other rank: via the in-lists of p's targets.
  // Friends of p with their number of common active out-neighbours, counted in a dense
  // scratch array (a rank of a large random graph has thousands of candidates).
  std::unordered_map<int, int> friend_weights(int p) {
    std::vector<int> touched;
    for (const auto& [n, items] : ranks_[p].active)
      for (int q : rows_[n])
        if (q != p && count_[q]++ == 0) touched.push_back(q);
    std::unordered_map<int, int> w;
    for (int q : touched) {
      if (count_[q] >= o_.theta) w[q] = count_[q];
      count_[q] = 0;
    }
    return w;
  }

  void iteration(int t) {
    // M's rows: every rank's active in-neighbours, as arrays (the maps are slow to walk).
    for (std::size_t n = 0; n < ranks_.size(); ++n) {
      rows_[n].clear();
      for (const auto& [q, items] : ranks_[n].incoming) rows_[n].push_back(q);
    }
    std::map<int, Matcher> m;
    for (int p = 0; p < static_cast<int>(ranks_.size()); ++p) {
      if (!ranks_[p].in_loop) continue;
      Matcher mt;
      const std::unordered_map<int, int> weights = friend_weights(p);
      std::vector<std::pair<int, int>> fw(weights.begin(), weights.end());
      std::sort(fw.begin(), fw.end());
      for (auto [q, w] : fw) mt.friends.push_back(q), mt.weight.push_back(w);
      mt.dropped.assign(fw.size(), 0);
      if (mt.friends.empty() || t >= o_.max_iterations) {
        notes_[p] = {};  // done: every active target gets a direct send
        ranks_[p].in_loop = false;
        ranks_[p].pattern.iterations = t;
        for (const auto& [n, items] : ranks_[p].active) ranks_[p].pattern.sends.push_back(PatternSend{n, final_phase(o_, t), items});
        continue;
      }
      m[p] = std::move(mt);
    }
    match(m);
    apply_pairs(t, m);
    receive(t);
    notes_.clear();
  }

  // Alg. 2 for every rank at once; `last` holds the previous sub-round's choices (what a rank
  // heard from its friends), `gone` the ranks that left the matching in earlier sub-rounds.
  void match(std::map<int, Matcher>& m) {
    std::vector<int> last(ranks_.size(), -1);
    std::vector<char> gone(ranks_.size(), 0);
    for (int i = 0;; ++i) {
      bool any = false;
      for (auto& [p, mt] : m) {
        if (mt.finished) continue;
        any = true;
        choose(p, mt, i, last, gone);
      }
      if (!any) return;
      for (auto& [p, mt] : m) {
        if (!mt.finished) last[p] = mt.choice;
      }
      for (auto& [p, mt] : m) {
        if (mt.finished) continue;
        mt.paired = !mt.terminal && mt.choice >= 0 && !gone[mt.choice] && m.at(mt.choice).choice == p;
        if (!mt.paired && i + 1 >= o_.max_match_rounds) mt.terminal = true;
      }
      for (auto& [p, mt] : m) {
        if (!mt.finished && (mt.paired || mt.terminal)) mt.finished = true, gone[p] = 1;
      }
    }
  }

  void choose(int p, Matcher& mt, int i, const std::vector<int>& last, const std::vector<char>& gone) const {
    if (i == 0) {
      mt.choice = mt.best(gone);
    } else if (mt.previous >= 0 && !gone[mt.previous] && p < mt.previous) {
      mt.choice = mt.previous;
    } else {
      int g = -1, gw = 0;
      for (std::size_t k = 0; k < mt.friends.size(); ++k) {
        const int q = mt.friends[k];
        if (q < p && !gone[q] && last[q] == p && (g < 0 || mt.weight[k] > gw)) g = q, gw = mt.weight[k];
      }
      if (g >= 0) {
        mt.choice = g;
      } else {
        mt.drop(mt.previous);
        mt.choice = mt.best(gone);
      }
    }
    if (mt.choice < 0) mt.terminal = true;
    mt.previous = mt.choice;
  }

  void apply_pairs(int t, const std::map<int, Matcher>& m) {
    std::map<int, std::pair<std::vector<int>, std::vector<int>>> halves;  // p -> (on, off)
    for (const auto& [p, mt] : m) {
      notes_[p] = {};
      if (!mt.paired) continue;
      std::vector<int> common;
      for (const auto& [n, items] : ranks_[p].active)
        if (ranks_[n].incoming.count(mt.choice)) common.push_back(n);
      const auto mid = common.begin() + static_cast<std::ptrdiff_t>((common.size() + 1) / 2);
      std::vector<int> first(common.begin(), mid), second(mid, common.end());
      halves[p] = p < mt.choice ? std::pair(first, second) : std::pair(second, first);
    }
    std::map<int, std::map<int, std::vector<Item>>> before;  // bundles before this iteration's merges
    for (const auto& [p, h] : halves) before[p] = ranks_[p].active;
    for (const auto& [p, h] : halves) {
      const int partner = m.at(p).choice;
      Stage st{t, partner, exchange_phase(o_, t), {}, {}};
      for (int n : h.second) st.handed_out.push_back(Bundle{n, before[p].at(n)});
      for (int n : h.first) st.handed_in.push_back(Bundle{n, before[partner].at(n)});
      for (int n : h.first) {
        notes_[p][n] = 1;
        auto merged = merge_items(before[p].at(n), before[partner].at(n));
        if (o_.cumulative) ranks_[p].active[n] = merged;
        else {
          ranks_[p].pattern.sends.push_back(PatternSend{n, combined_phase(o_, t), merged});
          ranks_[p].active.erase(n);
        }
      }
      for (int n : h.second) {
        notes_[p][n] = 2;
        ranks_[p].active.erase(n);
      }
      partner_[p] = partner;
      ranks_[p].pattern.stages.push_back(std::move(st));
    }
  }

  // The receiver side of iteration t: what each in-neighbour's note means.
  void receive(int t) {
    for (int n = 0; n < static_cast<int>(ranks_.size()); ++n) {
      Rank& r = ranks_[n];
      std::map<int, std::vector<Item>> next;
      for (const auto& [q, items] : r.incoming) {
        const auto note_it = notes_.find(q);
        const int code = !ranks_[q].in_loop && note_it != notes_.end() && note_it->second.empty() && ranks_[q].pattern.iterations == t
                             ? 3
                             : (note_it != notes_.end() && note_it->second.count(n) ? note_it->second.at(n) : 0);
        if (code == 1) {
          const auto merged = merge_items(items, r.incoming.at(partner_.at(q)));
          if (o_.cumulative) next[q] = merged;
          else r.pattern.recvs.push_back(PatternRecv{q, combined_phase(o_, t), merged});
        } else if (code == 3) {
          r.pattern.recvs.push_back(PatternRecv{q, final_phase(o_, t), items});
        } else if (code == 0) {
          next[q] = items;
        }
      }
      r.incoming = std::move(next);
    }
  }

  PairingOptions o_;
  std::vector<Rank> ranks_;
  std::vector<int> count_ = std::vector<int>(ranks_.size(), 0);
  std::vector<std::vector<int>> rows_ = std::vector<std::vector<int>>(ranks_.size());
  std::map<int, std::map<int, int>> notes_;  // this iteration: sender -> target -> code (1 on, 2 off)
  std::map<int, int> partner_;
};

}  // namespace

std::vector<RankPattern> sequential_patterns(const ir::graph::Topology& topology, const PairingOptions& options) {
  return Reference(topology, options).run();
}

}  // namespace cartplan::engine::graph
