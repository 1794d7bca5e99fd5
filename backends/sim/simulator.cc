// The simulator backend: every rank's bound plan executed in one process with real bytes.
#include "backends/sim/simulator.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "engine/bind.h"

namespace cartplan::sim {
namespace {

using engine::BoundPlan;
using engine::Grid;
using engine::kNoRank;

constexpr std::uint8_t kSentinel = 0xA5;

// Bytes of block `block` of rank `rank`: depends on both, so data from a wrong source or of
// a wrong block shows up (the labels below catch the rare byte collisions, e.g. 1-byte blocks).
std::uint8_t pattern(int rank, int block, std::int64_t j) {
  std::uint64_t h = (static_cast<std::uint64_t>(rank) + 1) * 0x9E3779B97F4A7C15ull;
  h ^= (static_cast<std::uint64_t>(block) + 1) * 0xC2B2AE3D27D4EB4Full;
  h ^= static_cast<std::uint64_t>(j) * 0x165667B19E3779F9ull;
  h ^= h >> 29;
  return static_cast<std::uint8_t>(h);
}

// Where a piece of data came from: the simulator carries this next to the bytes.
struct Label {
  int rank = -1;
  int block = -1;
  friend bool operator==(const Label&, const Label&) = default;
};

struct Slot {
  std::vector<std::uint8_t> bytes;
  Label label;
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
  std::vector<Label> labels;  // one per entry
};

std::string label_text(const Label& l) {
  if (l.rank < 0) return "nothing";
  return "block " + std::to_string(l.block) + " of rank " + std::to_string(l.rank);
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
  Result<engine::Binder> binder = engine::Binder::create(plan);
  if (!binder) return fail(binder.error());
  const int p = grid.size();
  std::vector<BoundPlan> bound;
  bound.reserve(p);
  for (int r = 0; r < p; ++r) {
    Result<BoundPlan> b = binder->bind(grid, grid.coords(r), options.block_bytes);
    if (!b) return fail("rank " + std::to_string(r) + ": " + b.error());
    bound.push_back(std::move(*b));
  }

  SimReport report;
  report.ranks = p;
  Reporter rep(report, options.max_errors);
  const int t = plan.num_blocks();
  const bool gather = plan.op() == ir::Op::kAllgather;

  std::vector<RankState> state(p);
  for (int r = 0; r < p; ++r) {
    RankState& s = state[r];
    const BoundPlan& b = bound[r];
    s.send.resize(plan.num_send_blocks());
    for (int i = 0; i < plan.num_send_blocks(); ++i) {
      s.send[i].bytes.resize(b.block_bytes[i]);
      for (std::int64_t j = 0; j < b.block_bytes[i]; ++j) s.send[i].bytes[j] = pattern(r, i, j);
      s.send[i].label = Label{r, i};
    }
    s.recv.resize(t);
    for (int i = 0; i < t; ++i) s.recv[i].bytes.assign(b.block_bytes[i], kSentinel);
    s.temp.resize(b.temp_slot_bytes.size());
    for (std::size_t k = 0; k < b.temp_slot_bytes.size(); ++k) s.temp[k].bytes.assign(b.temp_slot_bytes[k], kSentinel);
  }

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
          m.labels.push_back(from.label);
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
            std::copy(m.bytes.begin() + pos, m.bytes.begin() + pos + static_cast<std::int64_t>(to.bytes.size()),
                      to.bytes.begin());
            pos += static_cast<std::int64_t>(to.bytes.size());
            to.label = m.labels[e];
            to.written = true;
          }
        }
        in_flight.erase(it);
      }
    }
    for (const auto& [key, m] : in_flight)
      rep.error("phase " + std::to_string(ph) + ": message from rank " + std::to_string(std::get<1>(key)) +
                " to rank " + std::to_string(std::get<0>(key)) + " with tag " + std::to_string(std::get<2>(key)) +
                " is never received");
  }

  for (int r = 0; r < p; ++r) {
    for (int c : bound[r].copies) {
      const ir::Copy& copy = plan.copies()[c];
      Slot from = state[r].at(copy.from);
      Slot& to = state[r].at(copy.to);
      if (from.bytes.size() != to.bytes.size()) {
        rep.error("rank " + std::to_string(r) + ", copy " + std::to_string(c) + ": sizes differ");
        continue;
      }
      to.bytes = from.bytes;
      to.label = from.label;
      to.written = true;
      ++report.copies;
    }
  }

  if (options.fault == SimOptions::Fault::kWriteOutsideMesh) {
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

  // Every recv block holds block i (alltoall) or the send block (allgather) of the process at
  // -offset[i]; where that process is outside the mesh, the block is untouched.
  for (int r = 0; r < p; ++r) {
    const engine::Coords coords = grid.coords(r);
    for (int i = 0; i < t; ++i) {
      ir::Offset back = plan.neighborhood()[i];
      for (int& x : back) x = -x;
      const int source = grid.relative_rank(coords, back);
      const Slot& got = state[r].recv[i];
      const std::string ctx = "rank " + std::to_string(r) + ", recv block " + std::to_string(i);
      if (source == kNoRank) {
        const bool pristine = std::all_of(got.bytes.begin(), got.bytes.end(), [](std::uint8_t x) { return x == kSentinel; });
        if (got.written || !pristine)
          rep.error(ctx + ": written although its source (offset " + ir::to_string(back) + ") is outside the mesh");
        continue;
      }
      const Label want{source, gather ? 0 : i};
      if (!got.written) {
        rep.error(ctx + ": never written (expected " + label_text(want) + ")");
        continue;
      }
      bool same = got.label == want;
      for (std::size_t j = 0; same && j < got.bytes.size(); ++j) same = got.bytes[j] == pattern(want.rank, want.block, j);
      if (!same)
        rep.error(ctx + ": holds " + label_text(got.label) + (got.label == want ? " with corrupted bytes" : "") +
                  ", expected " + label_text(want));
    }
  }
  report.model_time_us = p > 0 ? *std::max_element(time_us.begin(), time_us.end()) : 0.0;
  report.ok = report.error_count == 0;
  return report;
}

}  // namespace cartplan::sim
