// Executes graph plans for every rank with real bytes and checks every delivered block.
#include "backends/sim/graph/graph_sim.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <tuple>
#include <utility>

#include "ir/graph/verify.h"

namespace cartplan::sim::graph {
namespace {

using ir::graph::BlockId;
using ir::graph::Loc;
using ir::graph::LocKind;

constexpr unsigned char kSentinel = 0xA5;

// The byte at position i of a block: a hash of the identity, so that a block from the wrong
// origin, edge or position differs.
unsigned char content(const BlockId& b, std::int64_t i) {
  std::uint64_t x = (static_cast<std::uint64_t>(b.origin) * 0x9E3779B1u) ^ (static_cast<std::uint64_t>(b.target + 1) << 21) ^
                    (static_cast<std::uint64_t>(b.nth) << 41) ^ static_cast<std::uint64_t>(i) * 0x85EBCA6Bu;
  x ^= x >> 17;
  x *= 0xED5AD4BBu;
  x ^= x >> 11;
  return static_cast<unsigned char>(x & 0xFF);
}

using Bytes = std::vector<unsigned char>;

struct RankMemory {
  std::vector<Bytes> send, recv, temp;
  Bytes& at(const Loc& l) { return l.kind == LocKind::kSend ? send[l.index] : l.kind == LocKind::kRecv ? recv[l.index] : temp[l.index]; }
};

class Sim {
 public:
  Sim(const ir::graph::GraphPlan& plan, const engine::graph::BlockSizes& sizes, const GraphSimOptions& o)
      : plan_(plan), sizes_(sizes), o_(o), mem_(plan.size()), sent_(plan.size(), 0), sent_bytes_(plan.size(), 0) {}

  void fill() {
    for (int r = 0; r < plan_.size(); ++r) {
      for (const BlockId& b : ir::graph::send_blocks_of(plan_.op(), plan_.topology(), r)) mem_[r].send.push_back(block_bytes(b));
      for (const BlockId& b : ir::graph::required_blocks_of(plan_.op(), plan_.topology(), r))
        mem_[r].recv.emplace_back(sizes_.bytes(b), kSentinel);
      for (const BlockId& b : plan_.schedule(r).temps) mem_[r].temp.emplace_back(sizes_.bytes(b), kSentinel);
    }
  }

  void run_phase(int f) {
    std::map<std::tuple<int, int>, std::deque<Bytes>> wire;  // (from, to) -> messages in order
    for (int r = 0; r < plan_.size(); ++r) {
      const auto& phases = plan_.schedule(r).phases;
      if (f >= static_cast<int>(phases.size())) continue;
      for (const ir::graph::Message& m : phases[f].sends) {
        Bytes packed;
        for (const ir::graph::Part& p : m.parts) {
          const Bytes& src = mem_[r].at(p.loc);
          packed.insert(packed.end(), src.begin(), src.end());
        }
        ++report.messages;
        report.bytes += static_cast<std::int64_t>(packed.size());
        ++sent_[r], ++sent_[m.peer];
        sent_bytes_[r] += static_cast<std::int64_t>(packed.size());
        sent_bytes_[m.peer] += static_cast<std::int64_t>(packed.size());
        if (o_.fault == GraphSimOptions::Fault::kCorruptByte && !faulted_ && !packed.empty()) packed[0] ^= 0xFF, faulted_ = true;
        if (o_.fault == GraphSimOptions::Fault::kDropMessage && !faulted_) {
          faulted_ = true;
          continue;
        }
        wire[{r, m.peer}].push_back(std::move(packed));
      }
    }
    for (int r = 0; r < plan_.size(); ++r) {
      const auto& phases = plan_.schedule(r).phases;
      if (f >= static_cast<int>(phases.size())) continue;
      for (std::size_t i = 0; i < phases[f].recvs.size(); ++i) receive(f, r, i, wire);
      for (const ir::graph::Copy& c : phases[f].copies) {
        mem_[r].at(c.to) = mem_[r].at(c.from);
        report.copied_bytes += static_cast<std::int64_t>(mem_[r].at(c.to).size());
      }
    }
  }

  void receive(int f, int r, std::size_t i, std::map<std::tuple<int, int>, std::deque<Bytes>>& wire) {
    const ir::graph::Message& m = plan_.schedule(r).phases[f].recvs[i];
    const std::string at = "phase " + std::to_string(f) + ", rank " + std::to_string(r) + ", recv " + std::to_string(i) + " (from " +
                           std::to_string(m.peer) + ")";
    auto& queue = wire[{m.peer, r}];
    if (queue.empty()) return error(at + ": no message arrived");
    Bytes data = std::move(queue.front());
    queue.pop_front();
    std::int64_t want = 0;
    for (const ir::graph::Part& p : m.parts) want += sizes_.bytes(p.block);
    if (want != static_cast<std::int64_t>(data.size()))
      return error(at + ": " + std::to_string(data.size()) + " bytes arrived, the parts hold " + std::to_string(want));
    std::size_t offset = 0;
    for (const ir::graph::Part& p : m.parts) {
      Bytes& dst = mem_[r].at(p.loc);
      dst.assign(data.begin() + static_cast<std::ptrdiff_t>(offset), data.begin() + static_cast<std::ptrdiff_t>(offset + dst.size()));
      offset += dst.size();
    }
  }

  void check() {
    for (int r = 0; r < plan_.size(); ++r) {
      const std::vector<BlockId> need = ir::graph::required_blocks_of(plan_.op(), plan_.topology(), r);
      for (std::size_t j = 0; j < need.size(); ++j) {
        if (mem_[r].recv[j] != block_bytes(need[j]))
          error("rank " + std::to_string(r) + ", recv[" + std::to_string(j) + "]: does not hold the bytes of block " + ir::graph::to_string(need[j]));
      }
    }
    for (int r = 0; r < plan_.size(); ++r) {
      report.max_rank_messages = std::max(report.max_rank_messages, sent_[r]);
      report.max_rank_bytes = std::max(report.max_rank_bytes, sent_bytes_[r]);
    }
    report.ok = report.error_count == 0;
  }

  GraphSimReport report;

 private:
  Bytes block_bytes(const BlockId& b) const {
    Bytes out(sizes_.bytes(b));
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = content(b, static_cast<std::int64_t>(i));
    return out;
  }
  void error(const std::string& e) {
    if (static_cast<int>(report.errors.size()) < o_.max_errors) report.errors.push_back(e);
    ++report.error_count;
  }

  const ir::graph::GraphPlan& plan_;
  const engine::graph::BlockSizes& sizes_;
  const GraphSimOptions& o_;
  std::vector<RankMemory> mem_;
  std::vector<std::int64_t> sent_, sent_bytes_;  // messages and bytes a rank sends + receives
  bool faulted_ = false;
};

double memory_bytes(const ir::graph::GraphPlan& plan, const engine::graph::BlockSizes& sizes) {
  double b = 0;
  for (int r = 0; r < plan.size(); ++r) {
    for (const BlockId& s : ir::graph::send_blocks_of(plan.op(), plan.topology(), r)) b += 2.0 * static_cast<double>(sizes.bytes(s));
    for (const BlockId& t : plan.schedule(r).temps) b += static_cast<double>(sizes.bytes(t));
  }
  return b;
}

}  // namespace

Result<GraphSimReport> simulate_graph(const ir::graph::GraphPlan& plan, const engine::graph::BlockSizes& sizes, const GraphSimOptions& options) {
  if (sizes.op() != plan.op()) return fail("block sizes are for another collective");
  std::vector<std::string> errors = ir::graph::verify_structure(plan, 5);
  if (!errors.empty()) return fail("the plan is not well-formed: " + errors.front());
  if (memory_bytes(plan, sizes) > 8.0 * (1 << 30)) return fail("the simulation would need more than 8 GiB of buffers");
  Sim sim(plan, sizes, options);
  sim.fill();
  for (int f = 0; f < plan.phases(); ++f) sim.run_phase(f);
  sim.check();
  sim.report.cost = engine::graph::price_plan(plan, sizes, options.model);
  sim.report.ranks = plan.size();
  sim.report.phases = plan.phases();
  return std::move(sim.report);
}

}  // namespace cartplan::sim::graph
