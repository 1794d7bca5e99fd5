// The simulator backend: every rank's bound plan executed in one process with real bytes.
#include "backends/sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <optional>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "backends/sim/expected.h"
#include "engine/bind.h"

namespace cartplan::sim {
namespace {

using engine::BoundPlan;
using engine::Grid;
using engine::kNoRank;

struct Slot {
  std::vector<std::uint8_t> bytes;
  std::vector<Label> labels;  // contributions, sorted (one outside reductions)
  bool written = false;
};

struct RankState {
  std::vector<Slot> send, recv, temp;
  Slot& at(const ir::BufRef& ref) {
    return ref.kind == ir::BufKind::kSend ? send[ref.index]
           : ref.kind == ir::BufKind::kRecv ? recv[ref.index]
                                            : temp[ref.index];
  }
};

struct Message {
  std::vector<std::uint8_t> bytes;
  std::vector<std::vector<Label>> labels;  // one multiset per entry
};

std::string labels_text(const std::vector<Label>& ls) {
  if (ls.size() == 1) return label_text(ls[0]);
  if (ls.empty()) return "nothing";
  std::string s = std::to_string(ls.size()) + " contributions";
  return s;
}

class Reporter {
 public:
  Reporter(SimReport& report, int max_errors) : report_(report), max_(max_errors) {}
  void error(std::string msg) {
    ++report_.error_count;
    if (static_cast<int>(report_.errors.size()) < max_) report_.errors.push_back(std::move(msg));
  }

 private:
  SimReport& report_;
  int max_;
};

}  // namespace

Result<SimReport> simulate(const ir::Plan& plan, const Grid& grid, const SimOptions& options) {
  const ir::Op op = plan.op();
  const bool reduction = ir::is_reduction(op);
  Result<std::optional<engine::Coords>> checked = check_simulation(op, grid, options.block_bytes, options.root);
  if (!checked) return fail(checked.error());
  const std::optional<engine::Coords> root = *checked;
  Result<engine::Binder> binder = engine::Binder::create(plan);
  if (!binder) return fail(binder.error());
  const int p = grid.size();
  std::vector<BoundPlan> bound;
  bound.reserve(p);
  for (int r = 0; r < p; ++r) {
    Result<BoundPlan> b = binder->bind(grid, grid.coords(r), options.block_bytes, root);
    if (!b) return fail("rank " + std::to_string(r) + ": " + b.error());
    bound.push_back(std::move(*b));
  }

  SimReport report;
  report.ranks = p;
  Reporter rep(report, options.max_errors);
  const int t = plan.num_blocks();
  const int nrecv = plan.num_recv_blocks();
  const bool doubles = options.values == SimOptions::Values::kDouble;

  // Fills a send block of rank r with its data.
  auto fill = [&](Slot& slot, int r, int block, std::int64_t bytes) {
    slot.bytes.resize(bytes);
    if (!reduction) {
      for (std::int64_t j = 0; j < bytes; ++j) slot.bytes[j] = pattern(r, block, j);
    } else {
      for (std::int64_t e = 0; e < bytes / 8; ++e) {
        if (doubles) {
          const double v = double_value(r, block, e);
          std::memcpy(&slot.bytes[e * 8], &v, 8);
        } else {
          const std::int64_t v = int_value(r, block, e);
          std::memcpy(&slot.bytes[e * 8], &v, 8);
        }
      }
    }
    slot.labels = {Label{r, block}};
  };
  // Element-wise sum of `from` into `to` (the collective's op in the simulator).
  auto combine = [&](std::vector<std::uint8_t>& to, const std::uint8_t* from) {
    for (std::size_t e = 0; e + 8 <= to.size(); e += 8) {
      if (doubles) {
        double a, b;
        std::memcpy(&a, &to[e], 8);
        std::memcpy(&b, from + e, 8);
        a += b;
        std::memcpy(&to[e], &a, 8);
      } else {
        std::uint64_t a, b;  // unsigned: wrapping, never undefined
        std::memcpy(&a, &to[e], 8);
        std::memcpy(&b, from + e, 8);
        a += b;
        std::memcpy(&to[e], &a, 8);
      }
    }
  };
  auto write = [&](Slot& to, const std::uint8_t* bytes, const std::vector<Label>& labels, bool add) {
    if (add) {
      combine(to.bytes, bytes);
      std::vector<Label> merged;
      std::merge(to.labels.begin(), to.labels.end(), labels.begin(), labels.end(), std::back_inserter(merged));
      to.labels = std::move(merged);
    } else {
      std::copy(bytes, bytes + to.bytes.size(), to.bytes.begin());
      to.labels = labels;
    }
    to.written = true;
  };

  std::vector<RankState> state(p);
  for (int r = 0; r < p; ++r) {
    RankState& s = state[r];
    const BoundPlan& b = bound[r];
    s.send.resize(plan.num_send_blocks());
    for (int i = 0; i < plan.num_send_blocks(); ++i) fill(s.send[i], r, i, b.block_bytes[i]);
    s.recv.resize(nrecv);
    for (int i = 0; i < nrecv; ++i) s.recv[i].bytes.assign(b.block_bytes[i], kSentinel);
    s.temp.resize(b.temp_slot_bytes.size());
    for (std::size_t k = 0; k < b.temp_slot_bytes.size(); ++k) s.temp[k].bytes.assign(b.temp_slot_bytes[k], kSentinel);
  }

  auto run_copy = [&](int r, const ir::Copy& copy, bool add, const std::string& ctx) {
    const Slot from = state[r].at(copy.from);
    Slot& to = state[r].at(copy.to);
    if (from.bytes.size() != to.bytes.size()) {
      rep.error("rank " + std::to_string(r) + ", " + ctx + ": sizes differ");
      return;
    }
    write(to, from.bytes.data(), from.labels, add);
    ++report.copies;
  };

  std::vector<double> time_us(p, 0.0);
  bool fault_done = false;
  for (int ph = 0; ph < static_cast<int>(plan.phases().size()); ++ph) {
    // Like the MPI backend, all sends of a phase are packed before any receive is unpacked.
    std::map<std::tuple<int, int, int>, Message> in_flight;  // (dest, source, tag)
    for (int r = 0; r < p; ++r) {
      const BoundPlan& b = bound[r];
      for (int k = b.phase_begin[ph]; k < b.phase_begin[ph + 1]; ++k) {
        const engine::BoundRound& br = b.rounds[k];
        time_us[r] += (br.send_peer != kNoRank || br.recv_peer != kNoRank)
                          ? options.model.message_us(std::max(br.send_bytes, br.recv_bytes))
                          : 0.0;
        if (br.send_peer == kNoRank) continue;
        const ir::Round& round = plan.phases()[ph].rounds[br.round];
        Message m;
        for (int e : br.send_entries) {
          const Slot& from = state[r].at(round.send[e]);
          m.bytes.insert(m.bytes.end(), from.bytes.begin(), from.bytes.end());
          m.labels.push_back(from.labels);
        }
        ++report.messages;
        report.bytes += static_cast<std::int64_t>(m.bytes.size());
        if (options.fault == SimOptions::Fault::kDropMessage && !fault_done) {
          fault_done = true;
          continue;
        }
        if (options.fault == SimOptions::Fault::kCorruptByte && !fault_done && !m.bytes.empty()) {
          fault_done = true;
          m.bytes[0] ^= 0xFF;
        }
        auto [it, fresh] = in_flight.emplace(std::make_tuple(br.send_peer, r, br.tag), std::move(m));
        if (!fresh)
          rep.error("phase " + std::to_string(ph) + ": rank " + std::to_string(r) + " sends two messages with tag " +
                    std::to_string(br.tag) + " to rank " + std::to_string(br.send_peer));
      }
    }
    for (int r = 0; r < p; ++r) {
      const BoundPlan& b = bound[r];
      for (int k = b.phase_begin[ph]; k < b.phase_begin[ph + 1]; ++k) {
        const engine::BoundRound& br = b.rounds[k];
        if (br.recv_peer == kNoRank) continue;
        const std::string ctx = "phase " + std::to_string(ph) + ", round " + std::to_string(br.round) + ", rank " +
                                std::to_string(r);
        auto it = in_flight.find(std::make_tuple(r, br.recv_peer, br.tag));
        if (it == in_flight.end()) {
          rep.error(ctx + ": no message from rank " + std::to_string(br.recv_peer) + " with tag " + std::to_string(br.tag));
          continue;
        }
        const Message& m = it->second;
        if (static_cast<std::int64_t>(m.bytes.size()) != br.recv_bytes || m.labels.size() != br.recv_entries.size()) {
          rep.error(ctx + ": message from rank " + std::to_string(br.recv_peer) + " has " +
                    std::to_string(m.bytes.size()) + " bytes in " + std::to_string(m.labels.size()) +
                    " entries, expected " + std::to_string(br.recv_bytes) + " bytes in " +
                    std::to_string(br.recv_entries.size()));
        } else {
          const ir::Round& round = plan.phases()[ph].rounds[br.round];
          std::int64_t pos = 0;
          for (std::size_t e = 0; e < br.recv_entries.size(); ++e) {
            Slot& to = state[r].at(round.recv[br.recv_entries[e]]);
            write(to, m.bytes.data() + pos, m.labels[e], br.recv_combine[e]);
            pos += static_cast<std::int64_t>(to.bytes.size());
          }
        }
        in_flight.erase(it);
      }
      for (const auto& [c, add] : b.phase_copies[ph])
        run_copy(r, plan.phases()[ph].copies[c], add, "phase " + std::to_string(ph) + ", copy " + std::to_string(c));
    }
    for (const auto& [key, m] : in_flight)
      rep.error("phase " + std::to_string(ph) + ": message from rank " + std::to_string(std::get<1>(key)) +
                " to rank " + std::to_string(std::get<0>(key)) + " with tag " + std::to_string(std::get<2>(key)) +
                " is never received");
  }

  for (int r = 0; r < p; ++r)
    for (std::size_t q = 0; q < bound[r].copies.size(); ++q) {
      const int c = bound[r].copies[q];
      run_copy(r, plan.copies()[c], bound[r].copy_combine[q], "copy " + std::to_string(c));
    }

  if (options.fault == SimOptions::Fault::kWriteOutsideMesh && !reduction) {
    for (int r = 0; r < p && !fault_done; ++r)
      for (int i = 0; i < t && !fault_done; ++i) {
        ir::Offset back = plan.neighborhood()[i];
        for (int& x : back) x = -x;
        if (grid.relative_rank(grid.coords(r), back) != kNoRank) continue;
        Slot& s = state[r].recv[i];
        std::fill(s.bytes.begin(), s.bytes.end(), 0);
        s.written = true;
        fault_done = true;
      }
  }

  for (int r = 0; r < p; ++r) {
    for (int i = 0; i < nrecv; ++i) {
      if (!bound[r].recv_result[i]) continue;  // not significant here (rooted ops)
      const Slot& got = state[r].recv[i];
      const std::string ctx = "rank " + std::to_string(r) + ", recv block " + std::to_string(i);
      const std::vector<Label> want = expected_labels(plan, grid, r, i);
      if (want.empty()) {
        const bool pristine = std::all_of(got.bytes.begin(), got.bytes.end(), [](std::uint8_t x) { return x == kSentinel; });
        if (got.written || !pristine) {
          if (reduction) {
            rep.error(ctx + ": written although none of its sources is in the mesh");
          } else {
            ir::Offset back = plan.neighborhood()[i];
            for (int& x : back) x = -x;
            rep.error(ctx + ": written although its source (offset " + ir::to_string(back) + ") is outside the mesh");
          }
        }
        continue;
      }
      if (!got.written) {
        rep.error(ctx + ": never written (expected " + labels_text(want) + ")");
        continue;
      }
      if (got.labels != want) {
        // Name the first contribution that is missing or extra.
        std::string what = "holds " + labels_text(got.labels) + ", expected " + labels_text(want);
        std::map<std::pair<int, int>, int> diff;
        for (const Label& l : want) ++diff[{l.rank, l.block}];
        for (const Label& l : got.labels) --diff[{l.rank, l.block}];
        for (const auto& [l, n] : diff)
          if (n != 0) {
            what += n > 0 ? "; misses " : "; has an extra ";
            what += label_text(Label{l.first, l.second});
            break;
          }
        rep.error(ctx + ": " + what);
        continue;
      }
      bool same = true;
      if (!reduction) {
        for (std::size_t j = 0; same && j < got.bytes.size(); ++j) same = got.bytes[j] == pattern(want[0].rank, want[0].block, j);
      } else {
        for (std::size_t e = 0; same && e + 8 <= got.bytes.size(); e += 8) {
          if (doubles) {
            double sum = 0, have = 0;
            for (const Label& l : want) sum += double_value(l.rank, l.block, static_cast<std::int64_t>(e / 8));
            std::memcpy(&have, &got.bytes[e], 8);
            same = std::fabs(have - sum) <= options.tolerance * std::max(1.0, std::fabs(sum));
          } else {
            std::uint64_t sum = 0, have = 0;
            for (const Label& l : want) sum += static_cast<std::uint64_t>(int_value(l.rank, l.block, static_cast<std::int64_t>(e / 8)));
            std::memcpy(&have, &got.bytes[e], 8);
            same = have == sum;
          }
        }
      }
      if (!same) rep.error(ctx + ": holds " + labels_text(got.labels) + " with corrupted " + (reduction ? "values" : "bytes") +
                           ", expected " + labels_text(want));
    }
  }
  report.model_time_us = p > 0 ? *std::max_element(time_us.begin(), time_us.end()) : 0.0;
  report.ok = report.error_count == 0;
  return report;
}

}  // namespace cartplan::sim
