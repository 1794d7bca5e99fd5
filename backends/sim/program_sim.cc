// The program simulator: every rank's lowered Program executed in one process with real bytes.
#include "backends/sim/program_sim.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "backends/sim/expected.h"
#include "engine/lower.h"

namespace cartplan::sim {
namespace {

using engine::Loc;
using engine::Program;
using engine::Step;

std::string loc_text(const Loc& l) {
  switch (l.kind) {
    case Loc::Kind::kSend: return "send[" + std::to_string(l.index) + "]";
    case Loc::Kind::kRecv: return "recv[" + std::to_string(l.index) + "]";
    case Loc::Kind::kScratch: return "scratch[" + std::to_string(l.index) + "]";
    case Loc::Kind::kStaging: return "stage[" + std::to_string(l.offset) + "+" + std::to_string(l.bytes) + "]";
  }
  return "?";
}

class Reporter {
 public:
  Reporter(ProgramSimReport& report, int max_errors) : report_(report), max_(max_errors) {}
  void error(std::string msg) {
    ++report_.error_count;
    if (static_cast<int>(report_.errors.size()) < max_) report_.errors.push_back(std::move(msg));
  }

 private:
  ProgramSimReport& report_;
  int max_;
};

// One rank's memory. Whole blocks are "written" once anything is stored into them (a location
// of a block always covers the whole block); staging bytes are tracked one by one, since
// regions of one arena are written by different messages and steps.
struct Memory {
  std::vector<std::vector<std::uint8_t>> send, recv, scratch;
  std::vector<bool> recv_written, scratch_written;
  std::vector<std::uint8_t> staging;
  std::vector<bool> staging_written;
};

class Executor {
 public:
  Executor(bool reduction, Reporter& rep) : reduction_(reduction), rep_(rep) {}

  // The bytes of `loc` in `mem`, or nullptr (reported) when the location is not there.
  std::uint8_t* locate(Memory& mem, const Loc& loc, const std::string& ctx) {
    std::vector<std::uint8_t>* block = nullptr;
    std::vector<std::vector<std::uint8_t>>* list = loc.kind == Loc::Kind::kSend   ? &mem.send
                                                   : loc.kind == Loc::Kind::kRecv ? &mem.recv
                                                   : loc.kind == Loc::Kind::kScratch ? &mem.scratch
                                                                                     : nullptr;
    if (list) {
      if (loc.index < 0 || loc.index >= static_cast<int>(list->size())) {
        rep_.error(ctx + ": " + loc_text(loc) + " does not exist (" + std::to_string(list->size()) + " such blocks)");
        return nullptr;
      }
      block = &(*list)[static_cast<std::size_t>(loc.index)];
    } else {
      block = &mem.staging;
    }
    const std::int64_t size = static_cast<std::int64_t>(block->size());
    if (loc.offset < 0 || loc.bytes < 0 || loc.offset > size || loc.bytes > size - loc.offset) {
      rep_.error(ctx + ": " + loc_text(loc) + " (" + std::to_string(loc.bytes) + " bytes at offset " +
                 std::to_string(loc.offset) + ") lies outside its " + std::to_string(size) + " bytes");
      return nullptr;
    }
    return block->data() + loc.offset;
  }

  // Appends the bytes of `loc` to `out`; false if it is not there. Reading staging bytes or a
  // scratch block that nothing wrote in this run is an error: the MPI backend's memory would
  // hold garbage there.
  bool read(Memory& mem, const Loc& loc, const std::string& ctx, std::vector<std::uint8_t>& out) {
    const std::uint8_t* p = locate(mem, loc, ctx);
    if (!p) return false;
    if (loc.kind == Loc::Kind::kStaging) {
      const auto begin = mem.staging_written.begin() + loc.offset;
      if (!std::all_of(begin, begin + loc.bytes, [](bool w) { return w; }))
        rep_.error(ctx + ": reads " + loc_text(loc) + ", staging bytes never written in this run");
    } else if (loc.kind == Loc::Kind::kScratch && loc.bytes > 0 && !mem.scratch_written[static_cast<std::size_t>(loc.index)]) {
      rep_.error(ctx + ": reads " + loc_text(loc) + " before anything was written into it");
    }
    out.insert(out.end(), p, p + loc.bytes);
    return true;
  }

  // Stores or (combine) adds `data` into `loc`.
  void write(Memory& mem, const Loc& loc, const std::uint8_t* data, bool combine, const std::string& ctx) {
    if (loc.kind == Loc::Kind::kSend) {
      rep_.error(ctx + ": writes into " + loc_text(loc) + ", the caller's send buffer");
      return;
    }
    std::uint8_t* p = locate(mem, loc, ctx);
    if (!p) return;
    auto staging_bits = [&]() {
      const auto begin = mem.staging_written.begin() + loc.offset;
      return std::make_pair(begin, begin + loc.bytes);
    };
    if (!combine) {
      std::memcpy(p, data, static_cast<std::size_t>(loc.bytes));
    } else {
      // bind() turns a write into a combine only where the location already holds data.
      bool holds = false;
      if (loc.kind == Loc::Kind::kStaging) {
        const auto [begin, end] = staging_bits();
        holds = std::all_of(begin, end, [](bool w) { return w; });
      } else {
        holds = (loc.kind == Loc::Kind::kRecv ? mem.recv_written : mem.scratch_written)[static_cast<std::size_t>(loc.index)];
      }
      if (!holds) rep_.error(ctx + ": combines into " + loc_text(loc) + ", which holds nothing yet");
      if (!reduction_ || loc.bytes % 8 != 0) {
        rep_.error(ctx + ": combines " + std::to_string(loc.bytes) + " bytes into " + loc_text(loc) +
                   (reduction_ ? ", not whole 8-byte elements" : " although the op is no reduction"));
        return;
      }
      for (std::int64_t e = 0; e < loc.bytes; e += 8) {
        std::uint64_t a, b;  // unsigned: wrapping, never undefined
        std::memcpy(&a, p + e, 8);
        std::memcpy(&b, data + e, 8);
        a += b;
        std::memcpy(p + e, &a, 8);
      }
    }
    if (loc.kind == Loc::Kind::kStaging) {
      const auto [begin, end] = staging_bits();
      std::fill(begin, end, true);
    } else {
      (loc.kind == Loc::Kind::kRecv ? mem.recv_written : mem.scratch_written)[static_cast<std::size_t>(loc.index)] = true;
    }
  }

  void step(Memory& mem, const Step& s, const std::string& ctx, ProgramSimReport& report) {
    if (s.from.bytes != s.to.bytes) {
      rep_.error(ctx + ": " + loc_text(s.from) + " has " + std::to_string(s.from.bytes) + " bytes, " + loc_text(s.to) +
                 " " + std::to_string(s.to.bytes));
      return;
    }
    std::vector<std::uint8_t> data;  // a copy: source and target may overlap
    if (!read(mem, s.from, ctx, data)) return;
    write(mem, s.to, data.data(), s.combine, ctx);
    ++report.steps;
    (s.combine ? report.combined_bytes : report.copied_bytes) += s.from.bytes;
  }

 private:
  bool reduction_;
  Reporter& rep_;
};

// One byte range of a location, for the overlap check of a phase's messages.
struct Range {
  Loc::Kind kind;
  int index;
  std::int64_t begin, end;
  bool written;  // a receive's part (else a send's)
  int round;
};

// A phase's messages run concurrently: no byte may be received twice, or be received while it
// is sent from (MPI leaves both undefined).
void check_overlaps(const engine::PhaseProgram& ph, const std::string& ctx, Reporter& rep) {
  std::vector<Range> ranges;
  for (const engine::Message& m : ph.messages)
    for (const Loc& l : m.parts)
      if (l.bytes > 0) ranges.push_back(Range{l.kind, l.index, l.offset, l.offset + l.bytes, m.recv, m.round});
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
    return std::tie(a.kind, a.index, a.begin) < std::tie(b.kind, b.index, b.begin);
  });
  for (std::size_t i = 0; i < ranges.size(); ++i)
    for (std::size_t j = i + 1; j < ranges.size(); ++j) {
      const Range &a = ranges[i], &b = ranges[j];
      if (b.kind != a.kind || b.index != a.index || b.begin >= a.end) break;
      if (!a.written && !b.written) continue;  // two sends may read the same bytes
      const Loc la{a.kind, a.index, a.begin, a.end - a.begin, true}, lb{b.kind, b.index, b.begin, b.end - b.begin, true};
      rep.error(ctx + ": round " + std::to_string(a.round) + (a.written ? " receives into " : " sends from ") +
                loc_text(la) + ", which round " + std::to_string(b.round) + (b.written ? " receives into" : " sends from") +
                " in the same phase (" + loc_text(lb) + ")");
    }
}

}  // namespace

Result<LoweredGrid> lower_grid(const ir::Plan& plan, const engine::Grid& grid, const ProgramSimOptions& options) {
  Result<std::optional<engine::Coords>> checked = check_simulation(plan.op(), grid, options.block_bytes, options.root);
  if (!checked) return fail(checked.error());
  const std::optional<engine::Coords> root = *checked;
  Result<engine::Binder> binder = engine::Binder::create(plan);
  if (!binder) return fail(binder.error());
  LoweredGrid out;
  for (int r = 0; r < grid.size(); ++r) {
    Result<engine::BoundPlan> b = binder->bind(grid, grid.coords(r), options.block_bytes, root);
    if (!b) return fail("rank " + std::to_string(r) + ": " + b.error());
    engine::LowerOptions lo;
    lo.struct_min_bytes = options.struct_min_bytes;
    lo.home_max_message_bytes = options.home_max_message_bytes;
    lo.trailer_min_bytes = options.trailer_min_bytes;
    Result<Program> prog = engine::lower(plan, *b, engine::contiguous_layout(plan, *b), lo);
    if (!prog) return fail("rank " + std::to_string(r) + ": lower: " + prog.error());
    out.bound.push_back(std::move(*b));
    out.programs.push_back(std::move(*prog));
  }
  return out;
}

Result<ProgramSimReport> run_programs(const ir::Plan& plan, const engine::Grid& grid, const LoweredGrid& lowered,
                                      const ProgramSimOptions& options) {
  const int p = grid.size();
  if (static_cast<int>(lowered.programs.size()) != p || static_cast<int>(lowered.bound.size()) != p)
    return fail("lowered for " + std::to_string(lowered.programs.size()) + " ranks, the grid has " + std::to_string(p));
  const bool reduction = ir::is_reduction(plan.op());
  ProgramSimReport report;
  report.ranks = p;
  Reporter rep(report, options.max_errors);
  Executor ex(reduction, rep);
  const std::string r_ = "rank ";

  // Memory: send blocks hold their data, everything else the sentinel.
  std::vector<Memory> mem(static_cast<std::size_t>(p));
  std::size_t nphases = 0;
  for (int r = 0; r < p; ++r) {
    const engine::BoundPlan& b = lowered.bound[static_cast<std::size_t>(r)];
    const Program& prog = lowered.programs[static_cast<std::size_t>(r)];
    Memory& m = mem[static_cast<std::size_t>(r)];
    for (int i = 0; i < plan.num_send_blocks(); ++i)
      m.send.push_back(expected_bytes(reduction, {Label{r, i}}, b.block_bytes[static_cast<std::size_t>(i)]));
    for (int i = 0; i < plan.num_recv_blocks(); ++i)
      m.recv.emplace_back(static_cast<std::size_t>(b.block_bytes[static_cast<std::size_t>(i)]), kSentinel);
    m.recv_written.assign(m.recv.size(), false);
    for (std::int64_t bytes : prog.scratch_bytes)
      m.scratch.emplace_back(static_cast<std::size_t>(std::max<std::int64_t>(bytes, 0)), kSentinel);
    m.scratch_written.assign(m.scratch.size(), false);
    m.staging.assign(static_cast<std::size_t>(std::max<std::int64_t>(prog.staging_bytes, 0)), kSentinel);
    m.staging_written.assign(m.staging.size(), false);
    report.max_staging_bytes = std::max(report.max_staging_bytes, prog.staging_bytes);
    if (prog.rank != r) rep.error(r_ + std::to_string(r) + ": its program is rank " + std::to_string(prog.rank) + "'s");
    if (prog.phases.size() != plan.phases().size())
      rep.error(r_ + std::to_string(r) + ": program has " + std::to_string(prog.phases.size()) + " phases, the plan " +
                std::to_string(plan.phases().size()));
    nphases = std::max(nphases, prog.phases.size());
  }

  auto phase_of = [&](int r, std::size_t ph) -> const engine::PhaseProgram* {
    const Program& prog = lowered.programs[static_cast<std::size_t>(r)];
    return ph < prog.phases.size() ? &prog.phases[ph] : nullptr;
  };
  auto run_steps = [&](int r, const std::vector<Step>& steps, const std::string& where) {
    for (std::size_t k = 0; k < steps.size(); ++k)
      ex.step(mem[static_cast<std::size_t>(r)], steps[k],
              r_ + std::to_string(r) + ", " + where + " step " + std::to_string(k), report);
  };

  struct InFlight {
    std::vector<std::uint8_t> bytes;
    int round = 0;
  };
  for (std::size_t ph = 0; ph < nphases; ++ph) {
    const std::string phase_text = "phase " + std::to_string(ph);
    for (int r = 0; r < p; ++r)
      if (const engine::PhaseProgram* pp = phase_of(r, ph)) run_steps(r, pp->before, phase_text + ", before");

    // Every send reads its parts before any receive of the phase lands (the phase's messages
    // are concurrent; check_overlaps makes sure that the order cannot matter).
    std::map<std::tuple<int, int, int>, InFlight> in_flight;  // (dest, source, tag)
    for (int r = 0; r < p; ++r) {
      const engine::PhaseProgram* pp = phase_of(r, ph);
      if (!pp) continue;
      check_overlaps(*pp, r_ + std::to_string(r) + ", " + phase_text, rep);
      for (const engine::Message& m : pp->messages) {
        if (m.recv) continue;
        const std::string ctx = r_ + std::to_string(r) + ", " + phase_text + ", round " + std::to_string(m.round) +
                                ": send to rank " + std::to_string(m.peer) + " (tag " + std::to_string(m.tag) + ")";
        if (m.peer < 0 || m.peer >= p || m.peer == r) {
          rep.error(ctx + ": the peer is not another rank of the grid");
          continue;
        }
        InFlight f{{}, m.round};
        for (std::size_t i = 0; i < m.parts.size(); ++i) {
          // A trailer carries no data: nothing wrote its byte (the backend's arena holds a zero).
          if (m.trailer && i + 1 == m.parts.size() && m.parts[i].bytes == 1 && m.parts[i].kind == Loc::Kind::kStaging)
            f.bytes.push_back(0);
          else
            ex.read(mem[static_cast<std::size_t>(r)], m.parts[i], ctx, f.bytes);
        }
        if (static_cast<std::int64_t>(f.bytes.size()) != m.bytes)
          rep.error(ctx + ": says " + std::to_string(m.bytes) + " bytes, its parts hold " + std::to_string(f.bytes.size()));
        ++report.messages;
        report.bytes += static_cast<std::int64_t>(f.bytes.size());
        if (!in_flight.emplace(std::make_tuple(m.peer, r, m.tag), std::move(f)).second)
          rep.error(ctx + ": a second message with this tag to the same rank in this phase");
      }
    }
    for (int r = 0; r < p; ++r) {
      const engine::PhaseProgram* pp = phase_of(r, ph);
      if (!pp) continue;
      for (const engine::Message& m : pp->messages) {
        if (!m.recv) continue;
        const std::string ctx = r_ + std::to_string(r) + ", " + phase_text + ", round " + std::to_string(m.round) +
                                ": receive from rank " + std::to_string(m.peer) + " (tag " + std::to_string(m.tag) + ")";
        auto it = in_flight.find(std::make_tuple(r, m.peer, m.tag));
        if (it == in_flight.end()) {
          rep.error(ctx + ": rank " + std::to_string(m.peer) + " sends no such message in this phase");
          continue;
        }
        const std::vector<std::uint8_t>& data = it->second.bytes;
        std::int64_t parts = 0;
        for (const Loc& l : m.parts) parts += l.bytes;
        if (parts != static_cast<std::int64_t>(data.size()) || m.bytes != parts) {
          rep.error(ctx + ": expects " + std::to_string(parts) + " bytes (message says " + std::to_string(m.bytes) +
                    "), rank " + std::to_string(m.peer) + " sends " + std::to_string(data.size()) + " in round " +
                    std::to_string(it->second.round));
        } else {
          std::int64_t pos = 0;
          for (const Loc& l : m.parts) {
            ex.write(mem[static_cast<std::size_t>(r)], l, data.data() + pos, false, ctx);
            pos += l.bytes;
          }
        }
        in_flight.erase(it);
      }
    }
    for (const auto& [key, f] : in_flight)
      rep.error(r_ + std::to_string(std::get<1>(key)) + ", " + phase_text + ", round " + std::to_string(f.round) +
                ": send to rank " + std::to_string(std::get<0>(key)) + " (tag " + std::to_string(std::get<2>(key)) +
                ", " + std::to_string(f.bytes.size()) + " bytes) has no matching receive");

    for (int r = 0; r < p; ++r)
      if (const engine::PhaseProgram* pp = phase_of(r, ph)) run_steps(r, pp->after, phase_text + ", after");
  }
  for (int r = 0; r < p; ++r) run_steps(r, lowered.programs[static_cast<std::size_t>(r)].final_steps, "final");

  // Results: significant recv blocks hold what the collective delivers; the others (rooted
  // ops) are the caller's memory that this rank must not touch.
  for (int r = 0; r < p; ++r) {
    const Memory& m = mem[static_cast<std::size_t>(r)];
    for (int i = 0; i < plan.num_recv_blocks(); ++i) {
      const std::vector<std::uint8_t>& got = m.recv[static_cast<std::size_t>(i)];
      const std::string ctx = r_ + std::to_string(r) + ", recv block " + std::to_string(i);
      const bool written = m.recv_written[static_cast<std::size_t>(i)];
      if (!lowered.bound[static_cast<std::size_t>(r)].recv_result[static_cast<std::size_t>(i)]) {
        if (written) rep.error(ctx + ": written although not significant on this rank");
        continue;
      }
      const std::vector<Label> want = expected_labels(plan, grid, r, i);
      if (want.empty()) {
        if (written || got != expected_bytes(reduction, want, static_cast<std::int64_t>(got.size())))
          rep.error(ctx + ": written although none of its sources is in the mesh");
        continue;
      }
      if (got == expected_bytes(reduction, want, static_cast<std::int64_t>(got.size()))) continue;
      const std::string expect = want.size() == 1 ? label_text(want[0]) : std::to_string(want.size()) + " contributions";
      if (!written) {
        rep.error(ctx + ": never written (expected " + expect + ")");
        continue;
      }
      // Name the data that arrived instead, where it is some process's send block.
      std::optional<Label> instead;
      const bool listed = static_cast<int>(report.errors.size()) < options.max_errors;
      for (int s = 0; s < p && listed && !instead && !reduction; ++s)
        for (int j = 0; j < plan.num_send_blocks() && !instead; ++j)
          if (mem[static_cast<std::size_t>(s)].send[static_cast<std::size_t>(j)] == got) instead = Label{s, j};
      rep.error(ctx + ": holds " + (instead ? label_text(*instead) : std::string(reduction ? "wrong values" : "wrong bytes")) +
                ", expected " + (reduction ? "the sum of " : "") + expect);
    }
  }
  report.ok = report.error_count == 0;
  return report;
}

Result<ProgramSimReport> simulate_programs(const ir::Plan& plan, const engine::Grid& grid,
                                           const ProgramSimOptions& options) {
  Result<LoweredGrid> lowered = lower_grid(plan, grid, options);
  if (!lowered) return fail(lowered.error());
  return run_programs(plan, grid, *lowered, options);
}

}  // namespace cartplan::sim
