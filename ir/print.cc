// Text (per-phase round tables) and Graphviz DOT (routing graph from ir::trace) views of a plan.
#include "ir/print.h"

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ir/trace.h"

namespace cartplan::ir {
namespace {

// Widest line we aim for when packing several short cells (offsets, copies, entries) per line.
constexpr std::size_t kLineWidth = 80;
// Width of the wrapped "entries" column of a round table.
constexpr std::size_t kEntriesWidth = 64;

// Locale-independent enough for our numbers (digits, '.', 'e', '-'), and deterministic.
std::string num(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

std::string pad_right(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string pad_left(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string join_ints(const std::vector<int>& v, const char* sep = ",") {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s += sep;
    s += std::to_string(v[i]);
  }
  return s;
}

// Cells aligned in columns, as many per line as fit in kLineWidth, each line indented.
void append_packed(std::string& out, const std::vector<std::string>& cells, const std::string& indent) {
  std::size_t width = 0;
  for (const std::string& c : cells) width = std::max(width, c.size());
  const std::size_t per_line = std::max<std::size_t>(1, (kLineWidth - indent.size()) / (width + 3));
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const bool last_on_line = (i + 1) % per_line == 0 || i + 1 == cells.size();
    if (i % per_line == 0) out += indent;
    out += last_on_line ? cells[i] : pad_right(cells[i], width + 3);
    if (last_on_line) out += "\n";
  }
}

// "send[3] -> recv[3]" for entry e of a round; a missing side (malformed plan) prints as "?".
std::string entry_text(const Round& round, std::size_t e) {
  const std::string from = e < round.send.size() ? to_string(round.send[e]) : "?";
  const std::string to = e < round.recv.size() ? to_string(round.recv[e]) : "?";
  return from + (e < round.recv.size() && round.recv[e].reduce ? " +> " : " -> ") + to;
}

// The entries of a round as lines of at most kEntriesWidth characters (longer only if a single
// entry is), broken between entries.
std::vector<std::string> wrap_entries(const Round& round) {
  std::vector<std::string> lines(1);
  const std::size_t n = std::max(round.send.size(), round.recv.size());
  for (std::size_t e = 0; e < n; ++e) {
    const std::string item = entry_text(round, e) + (e + 1 < n ? "," : "");
    std::string& line = lines.back();
    if (!line.empty() && line.size() + 1 + item.size() > kEntriesWidth) {
      lines.push_back(item);
    } else {
      if (!line.empty()) line += " ";
      line += item;
    }
  }
  return lines;
}

void append_header(std::string& out, const Plan& plan) {
  const Stats& s = plan.stats();
  out += "plan " + std::string(to_string(plan.op())) + " " + to_string(plan.kind()) +
         ": ndims " + std::to_string(plan.ndims()) + ", t " + std::to_string(s.t) + ", rounds " +
         std::to_string(s.rounds) + ", volume " + std::to_string(s.volume) + "\n";
  out += "  dim_order [" + join_ints(plan.dim_order()) + "], temp slots " +
         std::to_string(plan.temp_slots().size()) + ", phase rounds [" + join_ints(s.phase_rounds) +
         "]\n";
  if (is_rooted(plan.op()))
    out += std::string("  rooted: runs the ") + to_string(symmetric_op(plan.op())) +
           " plan below; bind(root) keeps only data " + (root_is_origin(plan.op()) ? "from" : "for") + " the root\n";
  if (s.cutoff_ratio)
    out += "  cutoff ratio (t-C)/(V-t) = " + num(*s.cutoff_ratio) + "  (t = non-zero offsets)\n";
  if (s.cost) {
    const CostInfo& c = *s.cost;
    out += "  cost model: alpha " + num(c.alpha_us) + " us, beta " + num(c.beta_us_per_byte) +
           " us/byte, block " + std::to_string(c.block_bytes) + " bytes, combining C " +
           std::to_string(c.combining_rounds) + ", V " + std::to_string(c.combining_volume) + "\n";
    out += "  predicted: direct " + num(c.direct_us) + " us, combining " + num(c.combining_us) + " us\n";
    if (s.cutoff_ratio && c.beta_us_per_byte > 0) {
      const double m_star = c.alpha_us / c.beta_us_per_byte * *s.cutoff_ratio;
      out += "  cut-off m* = alpha/beta * ratio = " + num(m_star) + " bytes";
      out += m_star > 0 ? " (combining is cheaper for smaller blocks)\n" : " (combining is never cheaper)\n";
    } else {
      out += "  cut-off m*: none (no finite block size where the two costs cross)\n";
    }
  }
}

// "send[0] -> recv[2]", or "send[0] +> recv[0]" when the copy reduces.
std::string copy_text(const Copy& c) {
  return to_string(c.from) + (c.to.reduce ? " +> " : " -> ") + to_string(c.to);
}

void append_phase(std::string& out, int p, const Phase& phase) {
  const std::size_t n = phase.rounds.size();
  out += "phase " + std::to_string(p) + " (" +
         (phase.dim == Phase::kAllDims ? std::string("all dims") : "dim " + std::to_string(phase.dim)) +
         "): " + std::to_string(n) + (n == 1 ? " round\n" : " rounds\n");
  if (n == 0 && phase.copies.empty()) return;

  struct Row {
    std::string index, tag, shift, count;
    std::vector<std::string> entries;
  };
  std::vector<Row> rows;
  Row head{"round", "tag", "shift", "count", {"entries (sent -> received)"}};
  std::size_t w_index = head.index.size(), w_tag = head.tag.size(), w_shift = head.shift.size(),
              w_entries = head.entries[0].size(), w_count = head.count.size();
  for (std::size_t r = 0; r < n; ++r) {
    const Round& round = phase.rounds[r];
    Row row{std::to_string(r), std::to_string(round.tag), to_string(round.shift),
            std::to_string(round.send.size()), wrap_entries(round)};
    w_index = std::max(w_index, row.index.size());
    w_tag = std::max(w_tag, row.tag.size());
    w_shift = std::max(w_shift, row.shift.size());
    w_count = std::max(w_count, row.count.size());
    for (const std::string& line : row.entries) w_entries = std::max(w_entries, line.size());
    rows.push_back(std::move(row));
  }
  auto emit = [&](const Row& row) {
    for (std::size_t l = 0; l < row.entries.size(); ++l) {
      std::string line = "  ";
      if (l == 0) {
        line += pad_left(row.index, w_index) + "  " + pad_left(row.tag, w_tag) + "  " +
                pad_right(row.shift, w_shift) + "  " + pad_right(row.entries[l], w_entries) + "  " +
                pad_left(row.count, w_count);
      } else {
        line += std::string(w_index + 2 + w_tag + 2 + w_shift + 2, ' ') + row.entries[l];
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
  };
  emit(head);
  for (const Row& row : rows) emit(row);
  if (!phase.copies.empty()) {
    out += "  then local copies (" + std::to_string(phase.copies.size()) + "):\n";
    std::vector<std::string> cells;
    for (const Copy& c : phase.copies) cells.push_back(copy_text(c));
    append_packed(out, cells, "    ");
  }
}

// Quotes a string for DOT: backslashes and quotes escaped, newlines as the DOT "\n" escape.
std::string dot_quote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      q += '\\';
      q += c;
    } else if (c == '\n') {
      q += "\\n";
    } else {
      q += c;
    }
  }
  return q + "\"";
}

// What trace() requires: indices in range and matching send/recv list lengths.
bool traceable(const Plan& plan) {
  auto ok = [&](const BufRef& ref) {
    const int limit = ref.kind == BufKind::kSend   ? plan.num_send_blocks()
                      : ref.kind == BufKind::kRecv ? plan.num_recv_blocks()
                                                   : static_cast<int>(plan.temp_slots().size());
    return ref.index >= 0 && ref.index < limit;
  };
  for (const Phase& phase : plan.phases())
    for (const Round& round : phase.rounds) {
      if (round.send.size() != round.recv.size()) return false;
      for (const BufRef& b : round.send)
        if (!ok(b)) return false;
      for (const BufRef& b : round.recv)
        if (!ok(b)) return false;
    }
  for (const Copy& c : plan.copies())
    if (!ok(c.from) || !ok(c.to)) return false;
  for (const Phase& phase : plan.phases())
    for (const Copy& c : phase.copies)
      if (!ok(c.from) || !ok(c.to)) return false;
  for (const Offset& o : plan.neighborhood())
    if (static_cast<int>(o.size()) != plan.ndims()) return false;
  return plan.ndims() >= 0;
}

struct Edge {
  std::set<std::pair<int, int>> rounds;  // (phase, round)
  std::set<int> blocks;                  // alltoall: blocks carried; allgather: recv blocks fed
};

// The routing graph: positions (with the recv blocks that end there) and the transfers between
// them, built from the trace; `errors` and `undrawn` count what the header mentions.
struct DotGraph {
  std::map<Offset, std::vector<int>> nodes;
  std::map<std::pair<Offset, Offset>, Edge> edges;
  std::size_t errors = 0, undrawn = 0;

  Edge& edge(const Offset& from, const Offset& to, const Transfer& x) {
    nodes[from];
    nodes[to];
    Edge& e = edges[{from, to}];
    e.rounds.insert({x.phase, x.round});
    return e;
  }
};

// The origin, and one node per block's final position (reductions: per source, relative to
// the result's holder); duplicates share a node.
void add_block_nodes(DotGraph& g, const Plan& plan, const Offset& origin) {
  const int d = plan.ndims();
  g.nodes[origin];
  for (int i = 0; i < plan.num_blocks(); ++i) {
    if (static_cast<int>(plan.neighborhood()[i].size()) != d) continue;
    if (is_reduction(plan.op())) {
      Offset src = plan.neighborhood()[i];
      for (int& x : src) x = x == std::numeric_limits<int>::min() ? x : -x;
      g.nodes[src];
    } else {
      g.nodes[plan.neighborhood()[i]].push_back(i);
    }
  }
}

// `v` as a drawing position, if it fits in an int (positions are sums of shifts, which a plan
// that does not verify may make arbitrarily large).
bool as_position(std::int64_t v, int* out) {
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) return false;
  *out = static_cast<int>(v);
  return true;
}

// Reductions: positions relative to the result's holder (the origin box), partial sums flow in.
void add_reduction_transfer(DotGraph& g, const Transfer& x, const Offset& shift, int d) {
  for (const Offset& h : x.holders) {
    if (static_cast<int>(h.size()) != d || static_cast<int>(shift.size()) != d) continue;
    Offset from(d), to(d);
    bool drawable = true;
    for (int k = 0; k < d; ++k) {
      drawable = drawable && as_position(-static_cast<std::int64_t>(h[k]), &to[k]) &&
                 as_position(static_cast<std::int64_t>(to[k]) - shift[k], &from[k]);
    }
    if (!drawable) {
      ++g.undrawn;
      continue;
    }
    Edge& e = g.edge(from, to, x);
    e.blocks.insert(x.targets.begin(), x.targets.end());
  }
}

// Other ops: positions relative to the block's origin.
void add_block_transfer(DotGraph& g, const Plan& plan, const Transfer& x, const Offset& shift, int d) {
  // Undefined content (a read before any write) has no position to draw it at.
  if (static_cast<int>(x.content.origin.size()) != d || static_cast<int>(shift.size()) != d) {
    ++g.undrawn;
    return;
  }
  Offset from(d), to(d);
  for (int k = 0; k < d; ++k) {
    if (!as_position(-static_cast<std::int64_t>(x.content.origin[k]), &from[k]) ||
        !as_position(static_cast<std::int64_t>(from[k]) + shift[k], &to[k])) {
      ++g.undrawn;  // a position beyond int (a plan with huge shifts): nowhere to draw it
      return;
    }
  }
  Edge& e = g.edge(from, to, x);
  if (blocks_have_own_shape(plan.op())) {
    e.blocks.insert(x.content.block);
  } else {
    e.blocks.insert(x.targets.begin(), x.targets.end());
  }
}

// Every transfer of the plan's trace as an edge.
void add_transfers(DotGraph& g, const Plan& plan) {
  const Trace tr = trace(plan);
  g.errors = tr.errors.size();
  for (const Transfer& x : tr.transfers) {
    const Offset& shift = plan.phases()[x.phase].rounds[x.round].shift;
    if (is_reduction(plan.op())) {
      add_reduction_transfer(g, x, shift, plan.ndims());
    } else {
      add_block_transfer(g, plan, x, shift, plan.ndims());
    }
  }
}

void append_dot_header(std::string& out, const Plan& plan, const DotGraph& g, bool sound) {
  const std::string title = std::string(to_string(plan.op())) + " " + to_string(plan.kind());
  out += "  // " + title + ": t " + std::to_string(plan.stats().t) + ", rounds " + std::to_string(plan.stats().rounds) +
         ", volume " + std::to_string(plan.stats().volume) +
         (is_reduction(plan.op()) ? "; nodes are positions relative to the result's holder (origin)\n"
                                  : "; nodes are positions relative to a block's origin\n");
  if (!sound) out += "  // plan is structurally invalid (index or list-length error): run verify; no edges drawn\n";
  if (g.errors) out += "  // trace found " + std::to_string(g.errors) + " error(s): run verify\n";
  if (g.undrawn) out += "  // " + std::to_string(g.undrawn) + " transfer(s) not drawn (undefined data, or a position beyond int)\n";
  out += "  graph [rankdir=LR, label=" + dot_quote(title + ", dim_order [" + join_ints(plan.dim_order()) + "]") + "];\n";
  out += "  node [fontname=\"monospace\", shape=ellipse];\n";
  out += "  edge [fontname=\"monospace\"];\n";
}

void append_dot_nodes(std::string& out, const DotGraph& g, const Offset& origin) {
  for (const auto& [pos, blocks] : g.nodes) {
    std::string label = to_string(pos);
    if (pos == origin) label += "\norigin";
    if (!blocks.empty()) label += "\nrecv " + join_ints(blocks);
    out += "  " + dot_quote(to_string(pos)) + " [label=" + dot_quote(label);
    if (pos == origin) out += ", shape=box";
    if (!blocks.empty() && pos != origin) out += ", peripheries=2";
    out += "];\n";
  }
}

void append_dot_edges(std::string& out, const DotGraph& g, const Plan& plan) {
  for (const auto& [ends, e] : g.edges) {
    std::string label;
    for (const auto& [p, r] : e.rounds) {
      if (!label.empty()) label += ",";
      label += "p" + std::to_string(p) + "r" + std::to_string(r);
    }
    std::vector<int> blocks(e.blocks.begin(), e.blocks.end());
    label += blocks_have_own_shape(plan.op()) ? "\nblocks " : "\nfor recv ";
    label += join_ints(blocks);
    out += "  " + dot_quote(to_string(ends.first)) + " -> " + dot_quote(to_string(ends.second)) +
           " [label=" + dot_quote(label) + "];\n";
  }
}

}  // namespace

std::string to_text(const Plan& plan) {
  std::string out;
  append_header(out, plan);

  out += "neighborhood (" + std::to_string(plan.num_blocks()) + " blocks, index: offset):\n";
  std::vector<std::string> cells;
  for (int i = 0; i < plan.num_blocks(); ++i)
    cells.push_back(std::to_string(i) + ": " + to_string(plan.neighborhood()[i]));
  append_packed(out, cells, "  ");

  for (std::size_t p = 0; p < plan.phases().size(); ++p) append_phase(out, static_cast<int>(p), plan.phases()[p]);

  out += "copies (" + std::to_string(plan.copies().size()) + "):\n";
  cells.clear();
  for (const Copy& c : plan.copies()) cells.push_back(copy_text(c));
  if (is_reduction(plan.op())) out += "(a +> b: b combines a into itself with the collective's op)\n";
  append_packed(out, cells, "  ");
  return out;
}

std::string to_dot(const Plan& plan) {
  const Offset origin(std::max(plan.ndims(), 0), 0);
  DotGraph g;
  add_block_nodes(g, plan, origin);
  const bool sound = traceable(plan);
  if (sound) add_transfers(g, plan);
  std::string out = "digraph cartplan {\n";
  append_dot_header(out, plan, g, sound);
  append_dot_nodes(out, g, origin);
  append_dot_edges(out, g, plan);
  out += "}\n";
  return out;
}

}  // namespace cartplan::ir
