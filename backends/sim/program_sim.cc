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

using Reporter = ErrorList<ProgramSimReport>;

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
      add_elements(p, data, loc.bytes);
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

namespace {

// One run of every rank's program: their memory, the messages of the current phase, the report.
class ProgramRun {
 public:
  ProgramRun(const ir::Plan& plan, const engine::Grid& grid, const LoweredGrid& lowered, const ProgramSimOptions& options)
      : plan_(plan), grid_(grid), lowered_(lowered), options_(options), p_(grid.size()),
        reduction_(ir::is_reduction(plan.op())), rep_(report_, options.max_errors), ex_(reduction_, rep_),
        mem_(static_cast<std::size_t>(p_)) {}

  ProgramSimReport run() {
    report_.ranks = p_;
    std::size_t nphases = 0;
    for (int r = 0; r < p_; ++r) nphases = std::max(nphases, init_rank(r));
    for (std::size_t ph = 0; ph < nphases; ++ph) run_phase(ph);
    for (int r = 0; r < p_; ++r) run_steps(r, program(r).final_steps, "final");
    // Results: significant recv blocks hold what the collective delivers; the others (rooted
    // ops) are the caller's memory that this rank must not touch.
    for (int r = 0; r < p_; ++r)
      for (int i = 0; i < plan_.num_recv_blocks(); ++i) check_block(r, i);
    report_.ok = report_.error_count == 0;
    return std::move(report_);
  }

 private:
  struct InFlight {
    std::vector<std::uint8_t> bytes;
    int round = 0;
  };
  using Messages = std::map<std::tuple<int, int, int>, InFlight>;  // (dest, source, tag)

  const Program& program(int r) const { return lowered_.programs[static_cast<std::size_t>(r)]; }
  Memory& memory(int r) { return mem_[static_cast<std::size_t>(r)]; }
  static std::string rank_text(int r) { return "rank " + std::to_string(r); }

  // Rank r's memory (send blocks hold their data, everything else the sentinel) and the checks
  // of its program against the plan; returns the program's number of phases.
  std::size_t init_rank(int r) {
    const engine::BoundPlan& b = lowered_.bound[static_cast<std::size_t>(r)];
    const Program& prog = program(r);
    Memory& m = memory(r);
    for (int i = 0; i < plan_.num_send_blocks(); ++i)
      m.send.push_back(expected_bytes(reduction_, {Label{r, i}}, b.block_bytes[static_cast<std::size_t>(i)]));
    for (int i = 0; i < plan_.num_recv_blocks(); ++i)
      m.recv.emplace_back(static_cast<std::size_t>(b.block_bytes[static_cast<std::size_t>(i)]), kSentinel);
    m.recv_written.assign(m.recv.size(), false);
    for (std::int64_t bytes : prog.scratch_bytes)
      m.scratch.emplace_back(static_cast<std::size_t>(std::max<std::int64_t>(bytes, 0)), kSentinel);
    m.scratch_written.assign(m.scratch.size(), false);
    m.staging.assign(static_cast<std::size_t>(std::max<std::int64_t>(prog.staging_bytes, 0)), kSentinel);
    m.staging_written.assign(m.staging.size(), false);
    report_.max_staging_bytes = std::max(report_.max_staging_bytes, prog.staging_bytes);
    if (prog.rank != r) rep_.error(rank_text(r) + ": its program is rank " + std::to_string(prog.rank) + "'s");
    if (prog.phases.size() != plan_.phases().size())
      rep_.error(rank_text(r) + ": program has " + std::to_string(prog.phases.size()) + " phases, the plan " +
                 std::to_string(plan_.phases().size()));
    return prog.phases.size();
  }

  const engine::PhaseProgram* phase_of(int r, std::size_t ph) const {
    const Program& prog = program(r);
    return ph < prog.phases.size() ? &prog.phases[ph] : nullptr;
  }

  void run_steps(int r, const std::vector<Step>& steps, const std::string& where) {
    for (std::size_t k = 0; k < steps.size(); ++k)
      ex_.step(memory(r), steps[k], rank_text(r) + ", " + where + " step " + std::to_string(k), report_);
  }

  // Every rank's `before` steps, then every send reads its parts before any receive of the
  // phase lands (the phase's messages are concurrent; check_overlaps makes sure that the order
  // cannot matter), then the receives, then every rank's `after` steps.
  void run_phase(std::size_t ph) {
    const std::string phase_text = "phase " + std::to_string(ph);
    for (int r = 0; r < p_; ++r)
      if (const engine::PhaseProgram* pp = phase_of(r, ph)) run_steps(r, pp->before, phase_text + ", before");
    Messages in_flight;
    for (int r = 0; r < p_; ++r)
      if (const engine::PhaseProgram* pp = phase_of(r, ph)) {
        check_overlaps(*pp, rank_text(r) + ", " + phase_text, rep_);
        for (const engine::Message& m : pp->messages)
          if (!m.recv) send(r, phase_text, m, in_flight);
      }
    for (int r = 0; r < p_; ++r)
      if (const engine::PhaseProgram* pp = phase_of(r, ph))
        for (const engine::Message& m : pp->messages)
          if (m.recv) receive(r, phase_text, m, in_flight);
    for (const auto& [key, f] : in_flight)
      rep_.error(rank_text(std::get<1>(key)) + ", " + phase_text + ", round " + std::to_string(f.round) +
                 ": send to rank " + std::to_string(std::get<0>(key)) + " (tag " + std::to_string(std::get<2>(key)) +
                 ", " + std::to_string(f.bytes.size()) + " bytes) has no matching receive");
    for (int r = 0; r < p_; ++r)
      if (const engine::PhaseProgram* pp = phase_of(r, ph)) run_steps(r, pp->after, phase_text + ", after");
  }

  // Packs send `m` of rank r from its parts and puts it in flight.
  void send(int r, const std::string& phase_text, const engine::Message& m, Messages& in_flight) {
    const std::string ctx = rank_text(r) + ", " + phase_text + ", round " + std::to_string(m.round) + ": send to rank " +
                            std::to_string(m.peer) + " (tag " + std::to_string(m.tag) + ")";
    if (m.peer < 0 || m.peer >= p_ || m.peer == r) return rep_.error(ctx + ": the peer is not another rank of the grid");
    InFlight f{{}, m.round};
    for (std::size_t i = 0; i < m.parts.size(); ++i) {
      // A trailer carries no data: nothing wrote its byte (the backend's arena holds a zero).
      if (m.trailer && i + 1 == m.parts.size() && m.parts[i].bytes == 1 && m.parts[i].kind == Loc::Kind::kStaging)
        f.bytes.push_back(0);
      else
        ex_.read(memory(r), m.parts[i], ctx, f.bytes);
    }
    if (static_cast<std::int64_t>(f.bytes.size()) != m.bytes)
      rep_.error(ctx + ": says " + std::to_string(m.bytes) + " bytes, its parts hold " + std::to_string(f.bytes.size()));
    ++report_.messages;
    report_.bytes += static_cast<std::int64_t>(f.bytes.size());
    if (!in_flight.emplace(std::make_tuple(m.peer, r, m.tag), std::move(f)).second)
      rep_.error(ctx + ": a second message with this tag to the same rank in this phase");
  }

  // Matches receive `m` of rank r with its message and unpacks it into the parts.
  void receive(int r, const std::string& phase_text, const engine::Message& m, Messages& in_flight) {
    const std::string ctx = rank_text(r) + ", " + phase_text + ", round " + std::to_string(m.round) +
                            ": receive from rank " + std::to_string(m.peer) + " (tag " + std::to_string(m.tag) + ")";
    auto it = in_flight.find(std::make_tuple(r, m.peer, m.tag));
    if (it == in_flight.end()) return rep_.error(ctx + ": rank " + std::to_string(m.peer) + " sends no such message in this phase");
    const std::vector<std::uint8_t>& data = it->second.bytes;
    std::int64_t parts = 0;
    for (const Loc& l : m.parts) parts += l.bytes;
    if (parts != static_cast<std::int64_t>(data.size()) || m.bytes != parts) {
      rep_.error(ctx + ": expects " + std::to_string(parts) + " bytes (message says " + std::to_string(m.bytes) +
                 "), rank " + std::to_string(m.peer) + " sends " + std::to_string(data.size()) + " in round " +
                 std::to_string(it->second.round));
    } else {
      std::int64_t pos = 0;
      for (const Loc& l : m.parts) {
        ex_.write(memory(r), l, data.data() + pos, false, ctx);
        pos += l.bytes;
      }
    }
    in_flight.erase(it);
  }

  // Recv block i of rank r against what the collective delivers (or, where it is not
  // significant, against being untouched).
  void check_block(int r, int i) {
    const Memory& m = memory(r);
    const std::vector<std::uint8_t>& got = m.recv[static_cast<std::size_t>(i)];
    const std::string ctx = rank_text(r) + ", recv block " + std::to_string(i);
    const bool written = m.recv_written[static_cast<std::size_t>(i)];
    if (!lowered_.bound[static_cast<std::size_t>(r)].recv_result[static_cast<std::size_t>(i)]) {
      if (written) rep_.error(ctx + ": written although not significant on this rank");
      return;
    }
    const std::vector<Label> want = expected_labels(plan_, grid_, r, i);
    const bool right = got == expected_bytes(reduction_, want, static_cast<std::int64_t>(got.size()));
    if (want.empty()) {
      if (written || !right) rep_.error(ctx + ": written although none of its sources is in the mesh");
      return;
    }
    if (right) return;
    const std::string expect = want.size() == 1 ? label_text(want[0]) : std::to_string(want.size()) + " contributions";
    if (!written) return rep_.error(ctx + ": never written (expected " + expect + ")");
    const std::optional<Label> instead = send_block_holding(got);
    rep_.error(ctx + ": holds " + (instead ? label_text(*instead) : std::string(reduction_ ? "wrong values" : "wrong bytes")) +
               ", expected " + (reduction_ ? "the sum of " : "") + expect);
  }

  // The send block of some rank that holds exactly `got` (what arrived instead of the right
  // data), searched only while errors are still listed and outside reductions.
  std::optional<Label> send_block_holding(const std::vector<std::uint8_t>& got) {
    if (reduction_ || static_cast<int>(report_.errors.size()) >= options_.max_errors) return std::nullopt;
    for (int s = 0; s < p_; ++s)
      for (int j = 0; j < plan_.num_send_blocks(); ++j)
        if (memory(s).send[static_cast<std::size_t>(j)] == got) return Label{s, j};
    return std::nullopt;
  }

  const ir::Plan& plan_;
  const engine::Grid& grid_;
  const LoweredGrid& lowered_;
  const ProgramSimOptions& options_;
  const int p_;
  const bool reduction_;
  ProgramSimReport report_;
  Reporter rep_;
  Executor ex_;
  std::vector<Memory> mem_;
};

}  // namespace

Result<ProgramSimReport> run_programs(const ir::Plan& plan, const engine::Grid& grid, const LoweredGrid& lowered,
                                      const ProgramSimOptions& options) {
  const int p = grid.size();
  if (static_cast<int>(lowered.programs.size()) != p || static_cast<int>(lowered.bound.size()) != p)
    return fail("lowered for " + std::to_string(lowered.programs.size()) + " ranks, the grid has " + std::to_string(p));
  return ProgramRun(plan, grid, lowered, options).run();
}

Result<ProgramSimReport> simulate_programs(const ir::Plan& plan, const engine::Grid& grid,
                                           const ProgramSimOptions& options) {
  Result<LoweredGrid> lowered = lower_grid(plan, grid, options);
  if (!lowered) return fail(lowered.error());
  return run_programs(plan, grid, *lowered, options);
}

}  // namespace cartplan::sim
