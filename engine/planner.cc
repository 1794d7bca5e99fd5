// Direct and message-combining planners (seed 000, Sect. 3; Algorithms 1 and 2).
#include "engine/planner.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstdlib>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <utility>

namespace cartplan::engine {
namespace {

using ir::BufKind;
using ir::BufRef;

BufRef send_ref(int b) { return {BufKind::kSend, b}; }
BufRef recv_ref(int b) { return {BufKind::kRecv, b}; }
BufRef temp_ref(int s) { return {BufKind::kTemp, s}; }

// For each block, the index of the first block with the same offset (itself if first).
std::vector<int> first_occurrence(const Neighborhood& nbh) {
  std::map<Offset, int> first;
  std::vector<int> out(nbh.size());
  for (int i = 0; i < nbh.size(); ++i) out[i] = first.emplace(nbh[i], i).first->second;
  return out;
}

// Freezes the plan with the stats its own contents determine.
ir::Plan finish(ir::PlanParts parts) {
  parts.stats = ir::derived_stats(parts);
  return ir::Plan(std::move(parts));
}

ir::PlanParts start(ir::Op op, ir::PlanKind kind, const Neighborhood& nbh, std::vector<int> dim_order) {
  ir::PlanParts parts;
  parts.op = op;
  parts.kind = kind;
  parts.ndims = nbh.ndims();
  parts.neighborhood = nbh.offsets();
  parts.dim_order = std::move(dim_order);
  return parts;
}

// Zero offsets are local copies from the send buffer; in allgather a duplicate offset copies
// the recv block of its first occurrence (same source process, so same data).
void add_local_copies(ir::PlanParts& parts, const Neighborhood& nbh, const std::vector<int>& first) {
  const bool gather = parts.op == ir::Op::kAllgather;
  for (int i = 0; i < nbh.size(); ++i) {
    if (Neighborhood::is_zero(nbh[i]))
      parts.copies.push_back({send_ref(gather ? 0 : i), recv_ref(i)});
    else if (gather && first[i] != i)
      parts.copies.push_back({recv_ref(first[i]), recv_ref(i)});
  }
}

Offset unit(int ndims, int dim, int value) {
  Offset o(ndims, 0);
  o[dim] = value;
  return o;
}

BufRef reducing(BufRef r) {
  r.reduce = true;
  return r;
}

// The same plan under another op name (rooted ops run the plan of their symmetric op).
ir::Plan relabel(const ir::Plan& plan, ir::Op op) {
  ir::PlanParts parts = plan.parts();
  parts.op = op;
  return ir::Plan(std::move(parts));
}

// A phase along dimension k of `rounds` keyed by their shift along k, in shift order, tagged
// from `tag` on.
ir::Phase phase_along(int ndims, int k, std::map<int, ir::Round> rounds, int& tag) {
  ir::Phase phase;
  phase.dim = k;
  for (auto& [shift, round] : rounds) {
    round.shift = unit(ndims, k, shift);
    round.tag = tag++;
    phase.rounds.push_back(std::move(round));
  }
  return phase;
}

// A combining plan is a log-round plan when some dimension is log-routed.
ir::PlanKind kind_of(const std::vector<bool>& log_dims) {
  return std::find(log_dims.begin(), log_dims.end(), true) != log_dims.end() ? ir::PlanKind::kLogRound
                                                                             : ir::PlanKind::kCombining;
}

// Bits of |c| (positions 0..30), the hops of a log-routed coordinate.
bool has_bit(int c, int j) { return (std::abs(static_cast<long long>(c)) >> j & 1) != 0; }
int hop_count(int c, bool log) {
  return c == 0 ? 0 : log ? std::popcount(static_cast<unsigned long long>(std::abs(static_cast<long long>(c)))) : 1;
}

// Every block travels on its own, dimension by dimension (Algorithm 1). Block i makes z_i hops;
// hop h < z_i writes temp slot A (h odd) or B (h even), the last hop writes recv[i]. So no phase
// reads and writes one slot, and recv[i] is written once, with its final content (on meshes an
// early write could clobber a halo whose source is absent).
class AlltoallHops {
 public:
  AlltoallHops(const Neighborhood& nbh, const std::vector<int>& order, const std::vector<bool>& log_dims)
      : nbh_(nbh), order_(order), log_dims_(log_dims), parts_(start(ir::Op::kAlltoall, kind_of(log_dims), nbh, order)),
        where_(nbh.size()), total_(nbh.size(), 0), done_(nbh.size(), 0), slot_a_(nbh.size(), -1), slot_b_(nbh.size(), -1) {}

  ir::Plan build() {
    const int t = nbh_.size();
    for (int i = 0; i < t; ++i) place_block(i);
    for (int k : order_) {
      if (!log_dims_[k]) {
        std::map<int, std::vector<int>> by_value;  // one round per distinct non-zero value
        for (int i = 0; i < t; ++i)
          if (nbh_[i][k] != 0) by_value[nbh_[i][k]].push_back(i);
        add_phase(k, by_value);
        continue;
      }
      for (int j = 0; j < 31; ++j) {  // one phase per bit, one round per sign
        std::map<int, std::vector<int>> by_shift;
        for (int i = 0; i < t; ++i)
          if (has_bit(nbh_[i][k], j)) by_shift[(nbh_[i][k] > 0 ? 1 : -1) * (1 << j)].push_back(i);
        add_phase(k, by_shift);
      }
    }
    for (int i = 0; i < t; ++i) assert(done_[i] == total_[i]);
    add_local_copies(parts_, nbh_, std::vector<int>(t));  // alltoall: no duplicate copies
    return finish(std::move(parts_));
  }

 private:
  // Block i starts in the send buffer; its hop count decides the temp slots it needs.
  void place_block(int i) {
    where_[i] = send_ref(i);
    for (int k = 0; k < nbh_.ndims(); ++k) total_[i] += hop_count(nbh_[i][k], log_dims_[k]);
    if (total_[i] >= 2) slot_a_[i] = new_slot(i);
    if (total_[i] >= 3) slot_b_[i] = new_slot(i);
  }

  int new_slot(int shape_of) {
    parts_.temp_slots.push_back({shape_of});
    return static_cast<int>(parts_.temp_slots.size()) - 1;
  }

  // One phase along k of the blocks listed per shift (in increasing index): each makes a hop.
  void add_phase(int k, const std::map<int, std::vector<int>>& by_shift) {
    if (by_shift.empty()) return;
    std::map<int, ir::Round> rounds;
    for (const auto& [shift, blocks] : by_shift)
      for (int i : blocks) {
        const BufRef to = ++done_[i] == total_[i] ? recv_ref(i) : done_[i] % 2 == 1 ? temp_ref(slot_a_[i]) : temp_ref(slot_b_[i]);
        rounds[shift].send.push_back(where_[i]);
        rounds[shift].recv.push_back(to);
        where_[i] = to;
      }
    parts_.phases.push_back(phase_along(nbh_.ndims(), k, std::move(rounds), tag_));
  }

  const Neighborhood& nbh_;
  const std::vector<int>& order_;
  const std::vector<bool>& log_dims_;
  ir::PlanParts parts_;
  std::vector<BufRef> where_;
  std::vector<int> total_, done_, slot_a_, slot_b_;
  int tag_ = 0;
};

// Allgather routes positions, not blocks (Algorithm 2): a node of the prefix tree is a position
// reached by the blocks below it; level l branches by the coordinate order[l].
class AllgatherTree {
 public:
  AllgatherTree(const Neighborhood& nbh, const std::vector<int>& order, const std::vector<bool>& log_dims)
      : nbh_(nbh), order_(order), log_dims_(log_dims), first_(first_occurrence(nbh)),
        parts_(start(ir::Op::kAllgather, kind_of(log_dims), nbh, order)) {}

  ir::Plan build() {
    level_.assign(1, Node{send_ref(0), {}});
    for (int i = 0; i < nbh_.size(); ++i)
      if (first_[i] == i && !Neighborhood::is_zero(nbh_[i])) level_[0].blocks.push_back(i);
    if (level_[0].blocks.empty()) level_.clear();
    for (int l = 0; l < nbh_.ndims(); ++l) route_level(l);
    add_local_copies(parts_, nbh_, first_);
    return finish(std::move(parts_));
  }

 private:
  // A node of the prefix tree: where it lives and the (distinct, non-zero) blocks below it.
  struct Node {
    BufRef where;
    std::vector<int> blocks;
  };
  using Children = std::map<int, std::vector<int>>;  // a node's blocks by their coordinate k
  using Positions = std::map<int, BufRef>;           // where a node's positions along k live

  // Where each node's positions along k live: value 0 is the node itself. A linear dimension
  // reaches value c in one hop (one phase, one round per value). A log-routed one reaches it
  // through the partial sums of c's bits, lowest first (one phase per bit, one round per
  // sign); a partial sum is a position too, received once and shared by every value that
  // passes it (for {1..s} every partial sum is itself a value).
  void route_level(int l) {
    const int k = order_[l];
    std::vector<Children> children(level_.size());
    std::vector<Positions> at(level_.size());
    for (std::size_t n = 0; n < level_.size(); ++n) {
      for (int i : level_[n].blocks) children[n][nbh_[i][k]].push_back(i);
      at[n][0] = level_[n].where;
    }
    for (int j = 0; j < (log_dims_[k] ? 31 : 1); ++j) route_step(l, j, children, at);
    std::vector<Node> next;
    for (std::size_t n = 0; n < level_.size(); ++n)
      for (auto& [value, blocks] : children[n]) next.push_back(Node{at[n].at(value), std::move(blocks)});
    level_ = std::move(next);
  }

  // One phase of level l: step j of a log-routed dimension, or every hop of a linear one.
  void route_step(int l, int j, const std::vector<Children>& children, std::vector<Positions>& at) {
    const int k = order_[l];
    std::map<int, ir::Round> rounds;  // shift -> round
    for (std::size_t n = 0; n < level_.size(); ++n)
      for (const auto& [value, blocks] : children[n]) {
        if (value == 0) continue;
        const std::optional<std::pair<int, int>> hop = hop_in_step(value, j, log_dims_[k]);
        if (!hop || at[n].count(hop->second)) continue;  // reached already, by a value with the same low bits
        const BufRef to = position(l, children[n], hop->second, blocks);
        ir::Round& round = rounds[hop->second - hop->first];
        round.send.push_back(at[n].at(hop->first));
        round.recv.push_back(to);
        at[n][hop->second] = to;
      }
    if (!rounds.empty()) parts_.phases.push_back(phase_along(nbh_.ndims(), k, std::move(rounds), tag_));
  }

  // The hop (from, to) towards `value` in step j: linear, 0 -> value; log-routed, from the
  // partial sum of the bits below j to the one including bit j (none if bit j is not set).
  static std::optional<std::pair<int, int>> hop_in_step(int value, int j, bool log) {
    if (!log) return std::pair(0, value);
    if (!has_bit(value, j)) return std::nullopt;
    const int sign = value > 0 ? 1 : -1;
    const int from = sign * static_cast<int>(std::abs(static_cast<long long>(value)) & ((1LL << j) - 1));
    return std::pair(from, from + sign * (1 << j));
  }

  // Where position `to_value` of a node lives: the recv block of a block that ends there (its
  // offset is zero in every dimension routed after level l), else a new temp slot shaped like
  // the first block below it (`blocks`, the blocks of the value being routed, if the position
  // is only a partial sum).
  BufRef position(int l, const Children& children, int to_value, const std::vector<int>& blocks) {
    const auto child = children.find(to_value);
    if (child != children.end())
      for (int i : child->second)
        if (ends_after(i, l)) return recv_ref(i);
    parts_.temp_slots.push_back({child != children.end() ? child->second.front() : blocks.front()});
    return temp_ref(static_cast<int>(parts_.temp_slots.size()) - 1);
  }

  bool ends_after(int i, int l) const {
    for (int m = l + 1; m < nbh_.ndims(); ++m)
      if (nbh_[i][order_[m]] != 0) return false;
    return true;
  }

  const Neighborhood& nbh_;
  const std::vector<int>& order_;
  const std::vector<bool>& log_dims_;
  const std::vector<int> first_;
  ir::PlanParts parts_;
  std::vector<Node> level_;
  int tag_ = 0;
};

// Asserts what log-routed dimensions need: |value| < 2^30, so shifts of 2^j stay in int range.
void assert_log_range([[maybe_unused]] const Neighborhood& nbh, [[maybe_unused]] const std::vector<bool>& log_dims) {
  assert(static_cast<int>(log_dims.size()) == nbh.ndims());
#ifndef NDEBUG
  for (int k = 0; k < nbh.ndims(); ++k)
    for (const Offset& o : nbh.offsets()) assert(!log_dims[k] || std::abs(static_cast<long long>(o[k])) < (1LL << 30));
#endif
}

}  // namespace

ir::Plan alltoall_hops(const Neighborhood& nbh, const std::vector<int>& order, const std::vector<bool>& log_dims) {
  assert_log_range(nbh, log_dims);
  return AlltoallHops(nbh, order, log_dims).build();
}

ir::Plan allgather_tree(const Neighborhood& nbh, const std::vector<int>& order, const std::vector<bool>& log_dims) {
  assert_log_range(nbh, log_dims);
  return AllgatherTree(nbh, order, log_dims).build();
}

namespace {

ir::Plan direct_reduction(ir::Op op, const Neighborhood& nbh) {
  ir::PlanParts parts = start(op, ir::PlanKind::kDirect, nbh, natural_dim_order(nbh.ndims()));
  const bool scatter = op == ir::Op::kReduceScatter;
  const std::vector<int> first = first_occurrence(nbh);
  ir::Phase phase;
  std::map<int, int> round_of_first;
  for (int i = 0; i < nbh.size(); ++i) {
    const BufRef from = send_ref(scatter ? i : 0);
    if (Neighborhood::is_zero(nbh[i])) {
      parts.copies.push_back({from, reducing(recv_ref(0))});
      continue;
    }
    auto [it, fresh] = round_of_first.emplace(first[i], static_cast<int>(phase.rounds.size()));
    if (fresh) phase.rounds.push_back(ir::Round{nbh[i], static_cast<int>(phase.rounds.size()), {}, {}});
    // A duplicate offset is one more contribution from the same process: one more entry.
    phase.rounds[it->second].send.push_back(from);
    phase.rounds[it->second].recv.push_back(reducing(recv_ref(0)));
  }
  if (!phase.rounds.empty()) parts.phases.push_back(std::move(phase));
  return finish(std::move(parts));
}

// Allreduce on N = S_0 x ... x S_{d-1}: after the phase of dimension k every process holds the
// sum over its sources' offsets restricted to the dimensions routed so far.
ir::Plan product_allreduce(const Neighborhood& nbh, const std::vector<int>& order) {
  ir::PlanParts parts = start(ir::Op::kAllreduce, ir::PlanKind::kCombining, nbh, order);
  const int d = nbh.ndims();
  std::vector<std::set<int>> values(d);
  for (const Offset& o : nbh.offsets())
    for (int k = 0; k < d; ++k) values[k].insert(o[k]);
  std::vector<int> dims;
  for (int k : order)
    if (values[k] != std::set<int>{0}) dims.push_back(k);
  BufRef cur = send_ref(0);
  int tag = 0;
  for (std::size_t l = 0; l < dims.size(); ++l) {
    const int k = dims[l];
    BufRef acc = recv_ref(0);
    if (l + 1 < dims.size()) {
      acc = temp_ref(static_cast<int>(parts.temp_slots.size()));
      parts.temp_slots.push_back({0});
    }
    ir::Phase phase;
    phase.dim = k;
    for (int c : values[k]) {
      if (c == 0) continue;
      phase.rounds.push_back(ir::Round{unit(d, k, c), tag++, {cur}, {reducing(acc)}});
    }
    if (values[k].count(0)) phase.copies.push_back({cur, reducing(acc)});
    parts.phases.push_back(std::move(phase));
    cur = acc;
  }
  if (dims.empty()) parts.copies.push_back({send_ref(0), reducing(recv_ref(0))});  // N = {0}
  return finish(std::move(parts));
}

// Partial sums along the prefix tree: a node at level l is a set of contributions that still
// have the same route (their coordinates in order[l+1..]) and are at the same place, so they
// can travel as one vector. Its data lives in one or more locations: several while nodes are
// only carried along (all of them took a zero step; duplicates of one offset), one once merged.
class TreeReduction {
 public:
  TreeReduction(ir::Op op, const Neighborhood& nbh, const std::vector<int>& order)
      : nbh_(nbh), order_(order), parts_(start(op, ir::PlanKind::kCombining, nbh, order)) {}

  ir::Plan build() {
    for (int i = 0; i < nbh_.size(); ++i) {
      Node n;
      for (int k : order_) n.route.push_back(nbh_[i][k]);
      n.locs.push_back(send_ref(parts_.op == ir::Op::kReduceScatter ? i : 0));
      level_.push_back(std::move(n));
    }
    for (int l = 0; l < nbh_.ndims(); ++l) reduce_level(l);
    return finish(std::move(parts_));
  }

 private:
  struct Node {
    std::vector<int> route;  // coordinates still to travel, in routing order
    std::vector<BufRef> locs;
  };
  // The children of one parent route: (first coordinate of the child's route, locations).
  using Children = std::vector<std::pair<int, std::vector<BufRef>>>;

  // One level: every node takes its step along order[l]; children of one parent merge into it.
  void reduce_level(int l) {
    const bool last = l == nbh_.ndims() - 1;
    std::map<std::vector<int>, Children> groups;  // parent route -> children, in order
    for (Node& n : level_) {
      const int c = n.route.front();
      n.route.erase(n.route.begin());
      groups[n.route].emplace_back(c, std::move(n.locs));
    }
    std::map<int, ir::Round> rounds;
    std::vector<ir::Copy> local;
    std::vector<Node> next;
    for (auto& [route, children] : groups) next.push_back(merge(route, children, last, rounds, local));
    if (!rounds.empty()) {
      ir::Phase phase = phase_along(nbh_.ndims(), order_[l], std::move(rounds), tag_);
      phase.copies = std::move(local);
      parts_.phases.push_back(std::move(phase));
    } else {
      // Only the last level can merge without a round (everything stayed): the result is
      // complete after the last phase, so these are the plan's final copies.
      assert(last || local.empty());
      parts_.copies.insert(parts_.copies.end(), local.begin(), local.end());
    }
    level_ = std::move(next);
  }

  // The parent of `children`: carried along where all of them stay (not at the last level),
  // else merged into one location (recv[0] at the last level, a new temp slot before) by
  // reduce entries of `rounds` (keyed by the step) and local reductions for those that stay.
  Node merge(const std::vector<int>& route, Children& children, bool last, std::map<int, ir::Round>& rounds,
             std::vector<ir::Copy>& local) {
    Node parent{route, {}};
    const bool all_stay = std::all_of(children.begin(), children.end(), [](const auto& ch) { return ch.first == 0; });
    if (all_stay && !last) {
      for (auto& ch : children) parent.locs.insert(parent.locs.end(), ch.second.begin(), ch.second.end());
      return parent;
    }
    BufRef to = recv_ref(0);
    if (!last) {
      to = temp_ref(static_cast<int>(parts_.temp_slots.size()));
      parts_.temp_slots.push_back({0});
    }
    for (const auto& [c, locs] : children)
      for (const BufRef& from : locs) {
        if (c == 0) {
          local.push_back({from, reducing(to)});
        } else {
          rounds[c].send.push_back(from);
          rounds[c].recv.push_back(reducing(to));
        }
      }
    parent.locs.push_back(to);
    return parent;
  }

  const Neighborhood& nbh_;
  const std::vector<int>& order_;
  ir::PlanParts parts_;
  std::vector<Node> level_;
  int tag_ = 0;
};

ir::Plan tree_reduction(ir::Op op, const Neighborhood& nbh, const std::vector<int>& order) {
  return TreeReduction(op, nbh, order).build();
}

}  // namespace

bool is_product(const Neighborhood& nbh) {
  std::set<Offset> distinct(nbh.offsets().begin(), nbh.offsets().end());
  if (static_cast<int>(distinct.size()) != nbh.size()) return false;
  double product = 1;
  for (int k = 0; k < nbh.ndims(); ++k) {
    std::set<int> values;
    for (const Offset& o : nbh.offsets()) values.insert(o[k]);
    product *= static_cast<double>(values.size());
  }
  return product == static_cast<double>(nbh.size());
}

ir::Plan plan_direct(ir::Op op, const Neighborhood& nbh) {
  if (ir::is_rooted(op)) return relabel(plan_direct(ir::symmetric_op(op), nbh), op);
  if (ir::is_reduction(op)) return direct_reduction(op, nbh);
  ir::PlanParts parts = start(op, ir::PlanKind::kDirect, nbh, natural_dim_order(nbh.ndims()));
  const bool gather = op == ir::Op::kAllgather;
  const std::vector<int> first = first_occurrence(nbh);
  // One round per distinct non-zero offset. Alltoall duplicates are different blocks to the
  // same process and share that round; allgather duplicates are copied locally afterwards.
  ir::Phase phase;
  std::map<int, int> round_of_first;  // first block of an offset -> its round
  for (int i = 0; i < nbh.size(); ++i) {
    if (Neighborhood::is_zero(nbh[i]) || (gather && first[i] != i)) continue;
    auto [it, fresh] = round_of_first.emplace(first[i], static_cast<int>(phase.rounds.size()));
    if (fresh) phase.rounds.push_back(ir::Round{nbh[i], static_cast<int>(phase.rounds.size()), {}, {}});
    ir::Round& round = phase.rounds[it->second];
    round.send.push_back(send_ref(gather ? 0 : i));
    round.recv.push_back(recv_ref(i));
  }
  if (!phase.rounds.empty()) parts.phases.push_back(std::move(phase));
  add_local_copies(parts, nbh, first);
  return finish(std::move(parts));
}

ir::Plan plan_combining(ir::Op op, const Neighborhood& nbh, const std::vector<int>& dim_order) {
  assert(check_dim_order(dim_order, nbh.ndims()).ok());
  if (ir::is_rooted(op)) return relabel(plan_combining(ir::symmetric_op(op), nbh, dim_order), op);
  switch (op) {
    case ir::Op::kAlltoall: return alltoall_hops(nbh, dim_order, std::vector<bool>(nbh.ndims(), false));
    case ir::Op::kAllgather: return allgather_tree(nbh, dim_order, std::vector<bool>(nbh.ndims(), false));
    case ir::Op::kAllreduce:
      return is_product(nbh) ? product_allreduce(nbh, dim_order) : tree_reduction(op, nbh, dim_order);
    default: return tree_reduction(op, nbh, dim_order);
  }
}

std::vector<int> natural_dim_order(int ndims) {
  std::vector<int> order(ndims);
  std::iota(order.begin(), order.end(), 0);
  return order;
}

std::vector<int> auto_dim_order(const Neighborhood& nbh) {
  std::vector<int> order = natural_dim_order(nbh.ndims());
  std::vector<int> c(nbh.ndims());
  for (int k = 0; k < nbh.ndims(); ++k) c[k] = nbh.distinct_nonzero(k);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return c[a] < c[b]; });
  return order;
}

std::vector<int> auto_dim_order(ir::Op op, const Neighborhood& nbh) {
  std::vector<int> order = auto_dim_order(nbh);
  if (ir::is_reduction(op)) std::reverse(order.begin(), order.end());
  return order;
}

Result<std::vector<int>> check_dim_order(const std::vector<int>& order, int ndims) {
  if (static_cast<int>(order.size()) != ndims)
    return fail("dimension order has " + std::to_string(order.size()) + " entries, expected " +
                std::to_string(ndims));
  std::set<int> seen;
  for (int k : order) {
    if (k < 0 || k >= ndims)
      return fail("dimension order entry " + std::to_string(k) + " is out of range [0, " + std::to_string(ndims) + ")");
    if (!seen.insert(k).second) return fail("dimension order repeats dimension " + std::to_string(k));
  }
  return order;
}

}  // namespace cartplan::engine
