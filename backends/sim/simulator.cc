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

// -o: where the source of a recv block of offset o sits.
ir::Offset minus(ir::Offset o) {
  for (int& x : o) x = -x;
  return o;
}

// One run of a plan on every rank: their bound plans and memory, and the report being built.
class Simulation {
 public:
  using InFlight = std::map<std::tuple<int, int, int>, Message>;  // (dest, source, tag)

  Simulation(const ir::Plan& plan, const Grid& grid, const SimOptions& options, std::vector<BoundPlan> bound)
      : plan_(plan), grid_(grid), o_(options), bound_(std::move(bound)), p_(grid.size()),
        reduction_(ir::is_reduction(plan.op())), doubles_(options.values == SimOptions::Values::kDouble),
        rep_(report_, options.max_errors), time_us_(p_, 0.0) {}

  SimReport run() {
    report_.ranks = p_;
    init_memory();
    for (int ph = 0; ph < static_cast<int>(plan_.phases().size()); ++ph) run_phase(ph);
    run_final_copies();
    if (o_.fault == SimOptions::Fault::kWriteOutsideMesh && !reduction_) write_outside_mesh();
    for (int r = 0; r < p_; ++r)
      for (int i = 0; i < plan_.num_recv_blocks(); ++i)
        if (bound_[r].recv_result[i]) check_block(r, i);  // others: not significant here (rooted ops)
    report_.model_time_us = p_ > 0 ? *std::max_element(time_us_.begin(), time_us_.end()) : 0.0;
    report_.ok = report_.error_count == 0;
    return std::move(report_);
  }

 private:
  // Fills a send block of rank r with its data.
  void fill(Slot& slot, int r, int block, std::int64_t bytes) const {
    slot.bytes.resize(bytes);
    if (!reduction_) {
      for (std::int64_t j = 0; j < bytes; ++j) slot.bytes[j] = pattern(r, block, j);
    } else {
      for (std::int64_t e = 0; e < bytes / 8; ++e) {
        if (doubles_) {
          const double v = double_value(r, block, e);
          std::memcpy(&slot.bytes[e * 8], &v, 8);
        } else {
          const std::int64_t v = int_value(r, block, e);
          std::memcpy(&slot.bytes[e * 8], &v, 8);
        }
      }
    }
    slot.labels = {Label{r, block}};
  }

  // Stores (or, with `add`, sums) `bytes` with their contributions into `to`.
  void write(Slot& to, const std::uint8_t* bytes, const std::vector<Label>& labels, bool add) const {
    if (add) {
      add_elements(to.bytes.data(), bytes, static_cast<std::int64_t>(to.bytes.size()), doubles_);
      std::vector<Label> merged;
      std::merge(to.labels.begin(), to.labels.end(), labels.begin(), labels.end(), std::back_inserter(merged));
      to.labels = std::move(merged);
    } else {
      std::copy(bytes, bytes + to.bytes.size(), to.bytes.begin());
      to.labels = labels;
    }
    to.written = true;
  }

  // Send blocks hold their data; recv blocks and temp slots the sentinel.
  void init_memory() {
    state_.resize(p_);
    for (int r = 0; r < p_; ++r) {
      RankState& s = state_[r];
      const BoundPlan& b = bound_[r];
      s.send.resize(plan_.num_send_blocks());
      for (int i = 0; i < plan_.num_send_blocks(); ++i) fill(s.send[i], r, i, b.block_bytes[i]);
      s.recv.resize(plan_.num_recv_blocks());
      for (int i = 0; i < plan_.num_recv_blocks(); ++i) s.recv[i].bytes.assign(b.block_bytes[i], kSentinel);
      s.temp.resize(b.temp_slot_bytes.size());
      for (std::size_t k = 0; k < b.temp_slot_bytes.size(); ++k) s.temp[k].bytes.assign(b.temp_slot_bytes[k], kSentinel);
    }
  }

  void run_copy(int r, const ir::Copy& copy, bool add, const std::string& ctx) {
    const Slot from = state_[r].at(copy.from);
    Slot& to = state_[r].at(copy.to);
    if (from.bytes.size() != to.bytes.size()) {
      rep_.error("rank " + std::to_string(r) + ", " + ctx + ": sizes differ");
      return;
    }
    write(to, from.bytes.data(), from.labels, add);
    ++report_.copies;
  }

  // Like the MPI backend, all sends of a phase are packed before any receive is unpacked; each
  // rank then runs its phase copies after its receives.
  void run_phase(int ph) {
    InFlight in_flight;
    for (int r = 0; r < p_; ++r)
      for (int k = bound_[r].phase_begin[ph]; k < bound_[r].phase_begin[ph + 1]; ++k) send(ph, r, bound_[r].rounds[k], in_flight);
    for (int r = 0; r < p_; ++r) {
      const BoundPlan& b = bound_[r];
      for (int k = b.phase_begin[ph]; k < b.phase_begin[ph + 1]; ++k) receive(ph, r, b.rounds[k], in_flight);
      for (const auto& [c, add] : b.phase_copies[ph])
        run_copy(r, plan_.phases()[ph].copies[c], add, "phase " + std::to_string(ph) + ", copy " + std::to_string(c));
    }
    for (const auto& [key, m] : in_flight)
      rep_.error("phase " + std::to_string(ph) + ": message from rank " + std::to_string(std::get<1>(key)) + " to rank " +
                 std::to_string(std::get<0>(key)) + " with tag " + std::to_string(std::get<2>(key)) + " is never received");
  }

  // Rank r's part of a round: its model time, and its message (if it sends one) packed.
  void send(int ph, int r, const engine::BoundRound& br, InFlight& in_flight) {
    if (br.send_peer != kNoRank || br.recv_peer != kNoRank)
      time_us_[r] += o_.model.message_us(std::max(br.send_bytes, br.recv_bytes));
    if (br.send_peer == kNoRank) return;
    const ir::Round& round = plan_.phases()[ph].rounds[br.round];
    Message m;
    for (int e : br.send_entries) {
      const Slot& from = state_[r].at(round.send[e]);
      m.bytes.insert(m.bytes.end(), from.bytes.begin(), from.bytes.end());
      m.labels.push_back(from.labels);
    }
    ++report_.messages;
    report_.bytes += static_cast<std::int64_t>(m.bytes.size());
    if (!deliver_despite_faults(m)) return;
    if (!in_flight.emplace(std::make_tuple(br.send_peer, r, br.tag), std::move(m)).second)
      rep_.error("phase " + std::to_string(ph) + ": rank " + std::to_string(r) + " sends two messages with tag " +
                 std::to_string(br.tag) + " to rank " + std::to_string(br.send_peer));
  }

  // The injected message faults, once per run: false for a dropped message.
  bool deliver_despite_faults(Message& m) {
    if (o_.fault == SimOptions::Fault::kDropMessage && !fault_done_) {
      fault_done_ = true;
      return false;
    }
    if (o_.fault == SimOptions::Fault::kCorruptByte && !fault_done_ && !m.bytes.empty()) {
      fault_done_ = true;
      m.bytes[0] ^= 0xFF;
    }
    return true;
  }

  // Rank r's receive of a round: the matching message, checked for size, unpacked.
  void receive(int ph, int r, const engine::BoundRound& br, InFlight& in_flight) {
    if (br.recv_peer == kNoRank) return;
    const std::string ctx =
        "phase " + std::to_string(ph) + ", round " + std::to_string(br.round) + ", rank " + std::to_string(r);
    auto it = in_flight.find(std::make_tuple(r, br.recv_peer, br.tag));
    if (it == in_flight.end()) {
      rep_.error(ctx + ": no message from rank " + std::to_string(br.recv_peer) + " with tag " + std::to_string(br.tag));
      return;
    }
    const Message& m = it->second;
    if (static_cast<std::int64_t>(m.bytes.size()) != br.recv_bytes || m.labels.size() != br.recv_entries.size()) {
      rep_.error(ctx + ": message from rank " + std::to_string(br.recv_peer) + " has " + std::to_string(m.bytes.size()) +
                 " bytes in " + std::to_string(m.labels.size()) + " entries, expected " + std::to_string(br.recv_bytes) +
                 " bytes in " + std::to_string(br.recv_entries.size()));
    } else {
      const ir::Round& round = plan_.phases()[ph].rounds[br.round];
      std::int64_t pos = 0;
      for (std::size_t e = 0; e < br.recv_entries.size(); ++e) {
        Slot& to = state_[r].at(round.recv[br.recv_entries[e]]);
        write(to, m.bytes.data() + pos, m.labels[e], br.recv_combine[e]);
        pos += static_cast<std::int64_t>(to.bytes.size());
      }
    }
    in_flight.erase(it);
  }

  void run_final_copies() {
    for (int r = 0; r < p_; ++r)
      for (std::size_t q = 0; q < bound_[r].copies.size(); ++q) {
        const int c = bound_[r].copies[q];
        run_copy(r, plan_.copies()[c], bound_[r].copy_combine[q], "copy " + std::to_string(c));
      }
  }

  // The injected fault kWriteOutsideMesh: zeroes the first recv block whose source is outside.
  void write_outside_mesh() {
    for (int r = 0; r < p_ && !fault_done_; ++r)
      for (int i = 0; i < plan_.num_blocks() && !fault_done_; ++i) {
        if (grid_.relative_rank(grid_.coords(r), minus(plan_.neighborhood()[i])) != kNoRank) continue;
        Slot& s = state_[r].recv[i];
        std::fill(s.bytes.begin(), s.bytes.end(), 0);
        s.written = true;
        fault_done_ = true;
      }
  }

  // A significant recv block against what the collective delivers into it.
  void check_block(int r, int i) {
    const Slot& got = state_[r].recv[i];
    const std::string ctx = "rank " + std::to_string(r) + ", recv block " + std::to_string(i);
    const std::vector<Label> want = expected_labels(plan_, grid_, r, i);
    if (want.empty()) return check_untouched(got, ctx, i);
    if (!got.written) return rep_.error(ctx + ": never written (expected " + labels_text(want) + ")");
    if (got.labels != want) return rep_.error(ctx + ": " + label_difference(got.labels, want));
    if (!holds_values_of(got, want))
      rep_.error(ctx + ": holds " + labels_text(got.labels) + " with corrupted " + (reduction_ ? "values" : "bytes") +
                 ", expected " + labels_text(want));
  }

  // A block none of whose sources is in the mesh must keep its sentinel.
  void check_untouched(const Slot& got, const std::string& ctx, int i) {
    const bool pristine = std::all_of(got.bytes.begin(), got.bytes.end(), [](std::uint8_t x) { return x == kSentinel; });
    if (!got.written && pristine) return;
    if (reduction_) {
      rep_.error(ctx + ": written although none of its sources is in the mesh");
    } else {
      rep_.error(ctx + ": written although its source (offset " + ir::to_string(minus(plan_.neighborhood()[i])) +
                 ") is outside the mesh");
    }
  }

  // "holds X, expected Y; misses Z" naming the first contribution that is missing or extra.
  static std::string label_difference(const std::vector<Label>& got, const std::vector<Label>& want) {
    std::string what = "holds " + labels_text(got) + ", expected " + labels_text(want);
    std::map<std::pair<int, int>, int> diff;
    for (const Label& l : want) ++diff[{l.rank, l.block}];
    for (const Label& l : got) --diff[{l.rank, l.block}];
    for (const auto& [l, n] : diff)
      if (n != 0) return what + (n > 0 ? "; misses " : "; has an extra ") + label_text(Label{l.first, l.second});
    return what;
  }

  // The bytes (or, in reductions, the sums) of the contributions `want`.
  bool holds_values_of(const Slot& got, const std::vector<Label>& want) const {
    if (!reduction_) {
      for (std::size_t j = 0; j < got.bytes.size(); ++j)
        if (got.bytes[j] != pattern(want[0].rank, want[0].block, j)) return false;
      return true;
    }
    for (std::size_t e = 0; e + 8 <= got.bytes.size(); e += 8) {
      const std::int64_t element = static_cast<std::int64_t>(e / 8);
      if (doubles_) {
        double sum = 0, have = 0;
        for (const Label& l : want) sum += double_value(l.rank, l.block, element);
        std::memcpy(&have, &got.bytes[e], 8);
        if (!(std::fabs(have - sum) <= o_.tolerance * std::max(1.0, std::fabs(sum)))) return false;
      } else {
        std::uint64_t sum = 0, have = 0;
        for (const Label& l : want) sum += static_cast<std::uint64_t>(int_value(l.rank, l.block, element));
        std::memcpy(&have, &got.bytes[e], 8);
        if (have != sum) return false;
      }
    }
    return true;
  }

  const ir::Plan& plan_;
  const Grid& grid_;
  const SimOptions& o_;
  const std::vector<BoundPlan> bound_;
  const int p_;
  const bool reduction_, doubles_;
  SimReport report_;
  ErrorList<SimReport> rep_;
  std::vector<RankState> state_;
  std::vector<double> time_us_;
  bool fault_done_ = false;
};

// Every rank's bound plan (errors name the rank).
Result<std::vector<BoundPlan>> bind_all(const ir::Plan& plan, const Grid& grid, const SimOptions& options,
                                        const std::optional<engine::Coords>& root) {
  Result<engine::Binder> binder = engine::Binder::create(plan);
  if (!binder) return fail(binder.error());
  std::vector<BoundPlan> bound;
  bound.reserve(grid.size());
  for (int r = 0; r < grid.size(); ++r) {
    Result<BoundPlan> b = binder->bind(grid, grid.coords(r), options.block_bytes, root);
    if (!b) return fail("rank " + std::to_string(r) + ": " + b.error());
    bound.push_back(std::move(*b));
  }
  return bound;
}

}  // namespace

Result<SimReport> simulate(const ir::Plan& plan, const Grid& grid, const SimOptions& options) {
  Result<std::optional<engine::Coords>> root = check_simulation(plan.op(), grid, options.block_bytes, options.root);
  if (!root) return fail(root.error());
  Result<std::vector<BoundPlan>> bound = bind_all(plan, grid, options, *root);
  if (!bound) return fail(bound.error());
  return Simulation(plan, grid, options, std::move(*bound)).run();
}

}  // namespace cartplan::sim
