// The strict edge-list reader.
#include "engine/graph/edge_list.h"

#include <string>
#include <vector>

#include "ir/parse_number.h"

namespace cartplan::engine::graph {
namespace {

constexpr std::int64_t kMaxEdges = std::int64_t{1} << 26;

// Splits on blanks, or on one comma with optional blanks around it.
std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  bool after_comma = false;
  while (i < line.size()) {
    while (i < line.size() && blank(line[i])) ++i;
    if (i == line.size()) break;
    if (line[i] == ',') {
      if (out.empty() || after_comma) {
        out.push_back("");  // an empty field: reported as "'' is not an integer"
      }
      after_comma = true;
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < line.size() && !blank(line[j]) && line[j] != ',') ++j;
    out.push_back(line.substr(i, j - i));
    after_comma = false;
    i = j;
  }
  if (after_comma) out.push_back("");
  return out;
}

std::string at_line(std::size_t n) { return "line " + std::to_string(n) + ": "; }

}  // namespace

Result<ir::graph::Topology> parse_edge_list(std::string_view text) {
  ir::graph::Topology t;
  bool have_ranks = false;
  std::int64_t edges = 0;
  std::size_t line_no = 0;
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    const std::vector<std::string_view> f = fields(line);
    if (f.empty() || f[0].starts_with('#')) continue;
    if (f[0] == "ranks") {
      if (have_ranks) return fail(at_line(line_no) + "a second 'ranks' line");
      if (f.size() != 2) return fail(at_line(line_no) + "expected 'ranks P'");
      Result<int> p = parse_int(f[1], 1, ir::graph::kMaxGraphRanks);
      if (!p) return fail(at_line(line_no) + "ranks: " + p.error());
      t.ranks.resize(*p);
      have_ranks = true;
      continue;
    }
    if (!have_ranks) return fail(at_line(line_no) + "an edge before the 'ranks P' line");
    if (f.size() != 2) return fail(at_line(line_no) + "expected 'SOURCE DESTINATION', got " + std::to_string(f.size()) + " field(s)");
    int ends[2];
    for (int k = 0; k < 2; ++k) {
      Result<int> r = parse_int(f[k], 0, t.size() - 1);
      if (!r) return fail(at_line(line_no) + (k == 0 ? "source: " : "destination: ") + r.error());
      ends[k] = *r;
    }
    if (++edges > kMaxEdges) return fail(at_line(line_no) + "more than " + std::to_string(kMaxEdges) + " edges");
    t.ranks[ends[0]].out.push_back(ends[1]);
    t.ranks[ends[1]].in.push_back(ends[0]);
    if (end == text.size()) break;
  }
  if (!have_ranks) return fail("no 'ranks P' line");
  return t;
}

}  // namespace cartplan::engine::graph
