// final_homes(): values in temp slots whose only way on is local, into a recv block nothing
// else touches.
#include "engine/final_home.h"

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <numeric>

namespace cartplan::engine {

std::vector<int> final_homes(const std::vector<Move>& moves, int num_temp, int num_recv) {
  using ir::BufKind;
  const std::size_t n = moves.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return moves[a].step < moves[b].step; });

  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::vector<std::size_t> current(static_cast<std::size_t>(num_temp), kNone);  // the move whose value a slot holds
  std::vector<int> reads(n, 0);                 // per move: reads of the value it wrote
  std::vector<std::size_t> reader(n, kNone);    // the move that read it (when read once)
  std::vector<int> recv_writes(static_cast<std::size_t>(num_recv), 0), recv_reads(static_cast<std::size_t>(num_recv), 0);
  for (std::size_t i = 0; i < n;) {
    std::size_t end = i;
    while (end < n && moves[order[end]].step == moves[order[i]].step) ++end;
    // A step's reads see the values of earlier steps: all reads first, then all writes.
    for (std::size_t j = i; j < end; ++j) {
      const Move& m = moves[order[j]];
      if (m.to && m.to->kind == BufKind::kTemp && m.to->reduce) {  // a combine reads its target
        const std::size_t at = static_cast<std::size_t>(m.to->index);
        assert(at < current.size());
        if (current[at] != kNone) {
          ++reads[current[at]];
          reader[current[at]] = order[j];
        }
      }
      if (!m.from) continue;
      const std::size_t at = static_cast<std::size_t>(m.from->index);
      if (m.from->kind == BufKind::kTemp) {
        assert(at < current.size());
        if (current[at] != kNone) {
          ++reads[current[at]];
          reader[current[at]] = order[j];
        }
      } else if (m.from->kind == BufKind::kRecv) {
        assert(at < recv_reads.size());
        ++recv_reads[at];
      }
    }
    for (std::size_t j = i; j < end; ++j) {
      const Move& m = moves[order[j]];
      if (!m.to) continue;
      const std::size_t at = static_cast<std::size_t>(m.to->index);
      if (m.to->kind == BufKind::kTemp) {
        assert(at < current.size());
        current[at] = order[j];
      } else if (m.to->kind == BufKind::kRecv) {
        assert(at < recv_writes.size());
        ++recv_writes[at];
        if (m.to->reduce) ++recv_reads[at];  // a combine reads its target
      }
    }
    i = end;
  }

  constexpr int kUnknown = -2;
  std::vector<int> home(n, kUnknown);
  // A value's reader comes at a later step, so following readers ends.
  auto resolve = [&](auto& self, std::size_t w) -> int {
    if (home[w] != kUnknown) return home[w];
    int result = -1;
    const Move& m = moves[w];
    if (m.to && m.to->kind == BufKind::kTemp && !m.to->reduce && reads[w] == 1) {
      const Move& r = moves[reader[w]];
      if (r.from && r.to && !r.to->reduce) {
        const std::size_t j = static_cast<std::size_t>(r.to->index);
        if (r.to->kind == BufKind::kTemp)
          result = self(self, reader[w]);
        else if (r.to->kind == BufKind::kRecv && recv_writes[j] == 1 && recv_reads[j] == 0)
          result = r.to->index;
      }
    }
    home[w] = result;
    return result;
  };
  for (std::size_t w = 0; w < n; ++w) resolve(resolve, w);
  return home;
}

}  // namespace cartplan::engine
