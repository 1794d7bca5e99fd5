// Direct and message-combining planners (seed 000, Sect. 3; Algorithms 1 and 2).
#include "engine/planner.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>

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

ir::PlanParts start(ir::Op op, ir::Algorithm algo, const Neighborhood& nbh, std::vector<int> dim_order) {
  ir::PlanParts parts;
  parts.op = op;
  parts.algorithm = algo;
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

ir::Plan combining_alltoall(const Neighborhood& nbh, const std::vector<int>& order) {
  ir::PlanParts parts = start(ir::Op::kAlltoall, ir::Algorithm::kCombining, nbh, order);
  const int t = nbh.size(), d = nbh.ndims();
  // Block i makes z_i hops. Hop h < z_i writes temp slot A (h odd) or B (h even); the last hop
  // writes recv[i]. So no phase reads and writes one slot, and recv[i] is written once, with
  // its final content (on meshes an early write could clobber a halo whose source is absent).
  std::vector<BufRef> where(t);
  std::vector<int> hops_left(t), slot_a(t, -1), slot_b(t, -1);
  for (int i = 0; i < t; ++i) {
    where[i] = send_ref(i);
    hops_left[i] = Neighborhood::nonzeros(nbh[i]);
    if (hops_left[i] >= 2) {
      slot_a[i] = static_cast<int>(parts.temp_slots.size());
      parts.temp_slots.push_back({i});
    }
    if (hops_left[i] >= 3) {
      slot_b[i] = static_cast<int>(parts.temp_slots.size());
      parts.temp_slots.push_back({i});
    }
  }
  std::vector<int> hops_done(t, 0);
  int tag = 0;
  for (int k : order) {
    // Blocks grouped by their k-th coordinate: one round per distinct non-zero value.
    std::vector<std::pair<int, int>> by_value;  // (value, block)
    for (int i = 0; i < t; ++i)
      if (nbh[i][k] != 0) by_value.emplace_back(nbh[i][k], i);
    if (by_value.empty()) continue;
    std::stable_sort(by_value.begin(), by_value.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    ir::Phase phase;
    phase.dim = k;
    for (std::size_t j = 0; j < by_value.size(); ++j) {
      if (j == 0 || by_value[j].first != by_value[j - 1].first)
        phase.rounds.push_back(ir::Round{unit(d, k, by_value[j].first), tag++, {}, {}});
      ir::Round& round = phase.rounds.back();
      const int i = by_value[j].second;
      ++hops_done[i];
      const BufRef to = hops_done[i] == hops_left[i] ? recv_ref(i)
                        : hops_done[i] % 2 == 1      ? temp_ref(slot_a[i])
                                                     : temp_ref(slot_b[i]);
      round.send.push_back(where[i]);
      round.recv.push_back(to);
      where[i] = to;
    }
    parts.phases.push_back(std::move(phase));
  }
  add_local_copies(parts, nbh, std::vector<int>(t));  // alltoall: no duplicate copies
  for (int i = 0; i < t; ++i) assert(hops_done[i] == hops_left[i]);
  return finish(std::move(parts));
}

}  // namespace

ir::Plan allgather_tree(const Neighborhood& nbh, const std::vector<int>& order, const std::vector<bool>& log_dims) {
  assert(static_cast<int>(log_dims.size()) == nbh.ndims());
  [[maybe_unused]] bool in_range = true;  // bits 0..29 reach every log-routed value
  for (int k = 0; k < nbh.ndims(); ++k)
    for (const Offset& o : nbh.offsets()) in_range = in_range && (!log_dims[k] || std::abs(static_cast<long long>(o[k])) < (1LL << 30));
  assert(in_range);
  ir::PlanParts parts = start(ir::Op::kAllgather, ir::Algorithm::kCombining, nbh, order);
  const int t = nbh.size(), d = nbh.ndims();
  const std::vector<int> first = first_occurrence(nbh);

  // A node of the prefix tree: where it lives and the (distinct, non-zero) blocks below it.
  struct Node {
    BufRef where;
    std::vector<int> blocks;
  };
  std::vector<Node> level(1, Node{send_ref(0), {}});
  for (int i = 0; i < t; ++i)
    if (first[i] == i && !Neighborhood::is_zero(nbh[i])) level[0].blocks.push_back(i);
  if (level[0].blocks.empty()) level.clear();

  int tag = 0;
  for (int l = 0; l < d; ++l) {
    const int k = order[l];
    // True iff block i's offset is zero in every dimension routed after level l, i.e. the
    // child node reached in this phase is block i's own position.
    auto ends_here = [&](int i) {
      for (int m = l + 1; m < d; ++m)
        if (nbh[i][order[m]] != 0) return false;
      return true;
    };
    // Children of every node by their value of coordinate k.
    std::vector<std::map<int, std::vector<int>>> children(level.size());
    for (std::size_t n = 0; n < level.size(); ++n)
      for (int i : level[n].blocks) children[n][nbh[i][k]].push_back(i);
    // Where each node's positions along k live: value 0 is the node itself. A linear dimension
    // reaches value c in one hop (one phase, one round per value). A log-routed one reaches it
    // through the partial sums of c's bits, lowest first (one phase per bit, one round per
    // sign); a partial sum is a position too, received once and shared by every value that
    // passes it (for {1..s} every partial sum is itself a value), so it lands in the recv block
    // of a block that ends there, else in a temp slot.
    std::vector<std::map<int, BufRef>> at(level.size());
    for (std::size_t n = 0; n < level.size(); ++n) at[n][0] = level[n].where;
    const int bits = log_dims[k] ? 31 : 1;
    for (int j = 0; j < bits; ++j) {
      std::map<int, ir::Round> rounds;  // shift -> round, ordered by shift
      for (std::size_t n = 0; n < level.size(); ++n) {
        for (const auto& [value, blocks] : children[n]) {
          if (value == 0) continue;
          const long long a = std::abs(static_cast<long long>(value));
          const int sign = value > 0 ? 1 : -1;
          if (log_dims[k] && !(a >> j & 1)) continue;
          const int from = log_dims[k] ? sign * static_cast<int>(a & ((1LL << j) - 1)) : 0;
          const int to_value = log_dims[k] ? from + sign * (1 << j) : value;
          if (at[n].count(to_value)) continue;  // reached already, by a value with the same low bits
          const auto child = children[n].find(to_value);  // the node at to_value, if a value
          const std::vector<int>& here = child != children[n].end() ? child->second : blocks;
          BufRef to;
          auto own = child != children[n].end() ? std::find_if(here.begin(), here.end(), ends_here) : here.end();
          if (own != here.end()) {
            to = recv_ref(*own);
          } else {
            to = temp_ref(static_cast<int>(parts.temp_slots.size()));
            parts.temp_slots.push_back({here.front()});
          }
          ir::Round& round = rounds[to_value - from];
          round.send.push_back(at[n].at(from));
          round.recv.push_back(to);
          at[n][to_value] = to;
        }
      }
      if (rounds.empty()) continue;
      ir::Phase phase;
      phase.dim = k;
      for (auto& [shift, round] : rounds) {
        round.shift = unit(d, k, shift);
        round.tag = tag++;
        phase.rounds.push_back(std::move(round));
      }
      parts.phases.push_back(std::move(phase));
    }
    std::vector<Node> next;
    for (std::size_t n = 0; n < level.size(); ++n)
      for (auto& [value, blocks] : children[n]) next.push_back(Node{at[n].at(value), std::move(blocks)});
    level = std::move(next);
  }
  add_local_copies(parts, nbh, first);
  return finish(std::move(parts));
}

namespace {

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

ir::Plan direct_reduction(ir::Op op, const Neighborhood& nbh) {
  ir::PlanParts parts = start(op, ir::Algorithm::kDirect, nbh, natural_dim_order(nbh.ndims()));
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
  ir::PlanParts parts = start(ir::Op::kAllreduce, ir::Algorithm::kCombining, nbh, order);
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
ir::Plan tree_reduction(ir::Op op, const Neighborhood& nbh, const std::vector<int>& order) {
  ir::PlanParts parts = start(op, ir::Algorithm::kCombining, nbh, order);
  const int t = nbh.size(), d = nbh.ndims();
  struct Node {
    std::vector<int> route;  // coordinates still to travel, in routing order
    std::vector<BufRef> locs;
  };
  std::vector<Node> level;
  for (int i = 0; i < t; ++i) {
    Node n;
    for (int k : order) n.route.push_back(nbh[i][k]);
    n.locs.push_back(send_ref(op == ir::Op::kReduceScatter ? i : 0));
    level.push_back(std::move(n));
  }
  int tag = 0;
  for (int l = 0; l < d; ++l) {
    const int k = order[l];
    const bool last = l == d - 1;
    // Parent route -> children (first coordinate of the child's route, locations), in order.
    std::map<std::vector<int>, std::vector<std::pair<int, std::vector<BufRef>>>> groups;
    for (Node& n : level) {
      const int c = n.route.front();
      n.route.erase(n.route.begin());
      groups[n.route].emplace_back(c, std::move(n.locs));
    }
    std::map<int, ir::Round> rounds;
    std::vector<ir::Copy> local;
    std::vector<Node> next;
    for (auto& [route, children] : groups) {
      Node parent{route, {}};
      const bool all_stay = std::all_of(children.begin(), children.end(), [](const auto& ch) { return ch.first == 0; });
      if (all_stay && !last) {
        for (auto& ch : children) parent.locs.insert(parent.locs.end(), ch.second.begin(), ch.second.end());
      } else {
        BufRef to = recv_ref(0);
        if (!last) {
          to = temp_ref(static_cast<int>(parts.temp_slots.size()));
          parts.temp_slots.push_back({0});
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
      }
      next.push_back(std::move(parent));
    }
    if (!rounds.empty()) {
      ir::Phase phase;
      phase.dim = k;
      for (auto& [value, round] : rounds) {
        round.shift = unit(d, k, value);
        round.tag = tag++;
        phase.rounds.push_back(std::move(round));
      }
      phase.copies = std::move(local);
      parts.phases.push_back(std::move(phase));
    } else {
      // Only the last level can merge without a round (everything stayed): the result is
      // complete after the last phase, so these are the plan's final copies.
      assert(last || local.empty());
      parts.copies.insert(parts.copies.end(), local.begin(), local.end());
    }
    level = std::move(next);
  }
  return finish(std::move(parts));
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
  ir::PlanParts parts = start(op, ir::Algorithm::kDirect, nbh, natural_dim_order(nbh.ndims()));
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
    case ir::Op::kAlltoall: return combining_alltoall(nbh, dim_order);
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
