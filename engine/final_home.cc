// final_homes(): values in temp slots whose only way on is local, into a recv block nothing
// else touches.
#include "engine/final_home.h"

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <numeric>

namespace cartplan::engine {
namespace {

using ir::BufKind;

constexpr std::size_t kNone = static_cast<std::size_t>(-1);
constexpr int kUnknown = -2;

// The values the moves write: who reads each value written into a temp slot (and how often),
// how often each recv block is written and read, and from that each value's home.
class ValueFlow {
 public:
  ValueFlow(const std::vector<Move>& moves, int num_temp, int num_recv)
      : moves_(moves), current_(static_cast<std::size_t>(num_temp), kNone), reads_(moves.size(), 0),
        reader_(moves.size(), kNone), recv_writes_(static_cast<std::size_t>(num_recv), 0),
        recv_reads_(static_cast<std::size_t>(num_recv), 0), home_(moves.size(), kUnknown) {}

  std::vector<int> homes() {
    const std::size_t n = moves_.size();
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return moves_[a].step < moves_[b].step; });
    for (std::size_t i = 0; i < n;) {
      std::size_t end = i;
      while (end < n && moves_[order[end]].step == moves_[order[i]].step) ++end;
      // A step's reads see the values of earlier steps: all reads first, then all writes.
      for (std::size_t j = i; j < end; ++j) read(order[j]);
      for (std::size_t j = i; j < end; ++j) write(order[j]);
      i = end;
    }
    for (std::size_t w = 0; w < n; ++w) resolve(w);
    return home_;
  }

 private:
  void read(std::size_t m) {
    const Move& move = moves_[m];
    if (move.to && move.to->kind == BufKind::kTemp && move.to->reduce) read_slot(move.to->index, m);  // a combine reads its target
    if (!move.from) return;
    if (move.from->kind == BufKind::kTemp) {
      read_slot(move.from->index, m);
    } else if (move.from->kind == BufKind::kRecv) {
      assert(static_cast<std::size_t>(move.from->index) < recv_reads_.size());
      ++recv_reads_[static_cast<std::size_t>(move.from->index)];
    }
  }

  // Move m reads the value temp slot `slot` holds (if any).
  void read_slot(int slot, std::size_t m) {
    const std::size_t at = static_cast<std::size_t>(slot);
    assert(at < current_.size());
    if (current_[at] == kNone) return;
    ++reads_[current_[at]];
    reader_[current_[at]] = m;
  }

  void write(std::size_t m) {
    const Move& move = moves_[m];
    if (!move.to) return;
    const std::size_t at = static_cast<std::size_t>(move.to->index);
    if (move.to->kind == BufKind::kTemp) {
      assert(at < current_.size());
      current_[at] = m;
    } else if (move.to->kind == BufKind::kRecv) {
      assert(at < recv_writes_.size());
      ++recv_writes_[at];
      if (move.to->reduce) ++recv_reads_[at];  // a combine reads its target
    }
  }

  // The home of the value move w writes. A value's reader comes at a later step, so following
  // readers ends.
  int resolve(std::size_t w) {
    if (home_[w] != kUnknown) return home_[w];
    int result = -1;
    const Move& m = moves_[w];
    if (m.to && m.to->kind == BufKind::kTemp && !m.to->reduce && reads_[w] == 1) {
      const Move& r = moves_[reader_[w]];
      if (r.from && r.to && !r.to->reduce) {
        const std::size_t j = static_cast<std::size_t>(r.to->index);
        if (r.to->kind == BufKind::kTemp)
          result = resolve(reader_[w]);
        else if (r.to->kind == BufKind::kRecv && recv_writes_[j] == 1 && recv_reads_[j] == 0)
          result = r.to->index;
      }
    }
    home_[w] = result;
    return result;
  }

  const std::vector<Move>& moves_;
  std::vector<std::size_t> current_;  // per temp slot: the move whose value it holds
  std::vector<int> reads_;            // per move: reads of the value it wrote
  std::vector<std::size_t> reader_;   // per move: the move that read it (when read once)
  std::vector<int> recv_writes_, recv_reads_;
  std::vector<int> home_;
};

}  // namespace

std::vector<int> final_homes(const std::vector<Move>& moves, int num_temp, int num_recv) {
  return ValueFlow(moves, num_temp, num_recv).homes();
}

}  // namespace cartplan::engine
