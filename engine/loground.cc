// Log-round (Bruck-style) routing inside combining alltoall and allgather plans.
#include "engine/loground.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <map>
#include <set>

#include "engine/planner.h"

namespace cartplan::engine {
namespace {

using ir::BufKind;
using ir::BufRef;

// Bits set in |c|, lowest first.
std::vector<int> bits_of(int c) {
  std::vector<int> out;
  const unsigned a = static_cast<unsigned>(std::abs(static_cast<long long>(c)));
  for (int j = 0; j < 32; ++j)
    if (a >> j & 1u) out.push_back(j);
  return out;
}

// Hops of block coordinate c along a dimension routed linearly or by log rounds.
int hops(int c, bool log) { return c == 0 ? 0 : log ? static_cast<int>(bits_of(c).size()) : 1; }

}  // namespace

bool supports_log_rounds(ir::Op op) {
  return ir::symmetric_op(op) == ir::Op::kAlltoall || ir::symmetric_op(op) == ir::Op::kAllgather;
}

int linear_rounds(const Neighborhood& nbh, int k) { return nbh.distinct_nonzero(k); }

int log_rounds(const Neighborhood& nbh, int k) {
  std::set<std::pair<int, int>> used;  // (sign, bit)
  for (const Offset& o : nbh.offsets())
    for (int j : bits_of(o[k])) used.emplace(o[k] > 0 ? 1 : -1, j);
  return static_cast<int>(used.size());
}

std::vector<bool> log_round_dims(const Neighborhood& nbh) {
  std::vector<bool> out(nbh.ndims());
  for (int k = 0; k < nbh.ndims(); ++k) {
    bool small = true;  // shifts of 2^j stay in int range
    for (const Offset& o : nbh.offsets()) small = small && std::abs(static_cast<long long>(o[k])) < (1LL << 30);
    out[k] = small && log_rounds(nbh, k) < linear_rounds(nbh, k);
  }
  return out;
}

ir::Plan plan_log_round(ir::Op op, const Neighborhood& nbh, const std::vector<int>& order, const std::vector<bool>& log_dims) {
  assert(supports_log_rounds(op));
  assert(check_dim_order(order, nbh.ndims()).ok());
  assert(static_cast<int>(log_dims.size()) == nbh.ndims());
  [[maybe_unused]] bool in_range = true;  // shifts of 2^j stay in int range
  for (int k = 0; k < nbh.ndims(); ++k)
    for (const Offset& o : nbh.offsets()) in_range = in_range && (!log_dims[k] || std::abs(static_cast<long long>(o[k])) < (1LL << 30));
  assert(in_range);
  if (ir::symmetric_op(op) == ir::Op::kAllgather) {
    ir::PlanParts gather = allgather_tree(nbh, order, log_dims).parts();
    gather.op = op;  // bcast and gather run the allgather plan
    return ir::Plan(std::move(gather));
  }
  const int t = nbh.size(), d = nbh.ndims();
  ir::PlanParts parts;
  parts.op = op;
  parts.algorithm = ir::Algorithm::kCombining;
  parts.ndims = d;
  parts.neighborhood = nbh.offsets();
  parts.dim_order = order;
  // As plan_combining: hop h < last writes temp slot A (h odd) or B (h even), the last hop
  // writes recv[i], so no phase reads and writes one slot and recv[i] is written once.
  std::vector<BufRef> where(t);
  std::vector<int> total(t, 0), done(t, 0), slot_a(t, -1), slot_b(t, -1);
  for (int i = 0; i < t; ++i) {
    where[i] = {BufKind::kSend, i};
    for (int k = 0; k < d; ++k) total[i] += hops(nbh[i][k], log_dims[k]);
    if (total[i] >= 2) {
      slot_a[i] = static_cast<int>(parts.temp_slots.size());
      parts.temp_slots.push_back({i});
    }
    if (total[i] >= 3) {
      slot_b[i] = static_cast<int>(parts.temp_slots.size());
      parts.temp_slots.push_back({i});
    }
  }
  int tag = 0;
  // One phase of rounds keyed by shift value along k; blocks listed in increasing index.
  auto emit = [&](int k, const std::map<int, std::vector<int>>& by_shift) {
    if (by_shift.empty()) return;
    ir::Phase phase;
    phase.dim = k;
    for (const auto& [shift, blocks] : by_shift) {
      ir::Round round;
      round.shift.assign(d, 0);
      round.shift[k] = shift;
      round.tag = tag++;
      for (int i : blocks) {
        ++done[i];
        const BufRef to = done[i] == total[i] ? BufRef{BufKind::kRecv, i}
                          : done[i] % 2 == 1  ? BufRef{BufKind::kTemp, slot_a[i]}
                                              : BufRef{BufKind::kTemp, slot_b[i]};
        round.send.push_back(where[i]);
        round.recv.push_back(to);
        where[i] = to;
      }
      phase.rounds.push_back(std::move(round));
    }
    parts.phases.push_back(std::move(phase));
  };
  for (int k : order) {
    if (!log_dims[k]) {
      std::map<int, std::vector<int>> by_value;
      for (int i = 0; i < t; ++i)
        if (nbh[i][k] != 0) by_value[nbh[i][k]].push_back(i);
      emit(k, by_value);
      continue;
    }
    for (int j = 0; j < 31; ++j) {
      std::map<int, std::vector<int>> by_shift;
      for (int i = 0; i < t; ++i) {
        const int c = nbh[i][k];
        const std::vector<int> b = bits_of(c);
        if (std::find(b.begin(), b.end(), j) != b.end()) by_shift[(c > 0 ? 1 : -1) * (1 << j)].push_back(i);
      }
      emit(k, by_shift);
    }
  }
  for (int i = 0; i < t; ++i) {
    assert(done[i] == total[i]);
    if (Neighborhood::is_zero(nbh[i])) parts.copies.push_back({{BufKind::kSend, i}, {BufKind::kRecv, i}});
  }
  parts.stats = ir::derived_stats(parts);
  return ir::Plan(std::move(parts));
}

}  // namespace cartplan::engine
