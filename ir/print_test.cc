// Tests of the text and DOT views of plans (ir/print.h), on planner-built and hand-made plans.
#include "ir/print.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/planner.h"
#include "ir/json.h"
#include "tests/fixtures.h"

namespace cartplan::ir {
namespace {

using testing::moore9;
using testing::nbh;
using testing::recv;
using testing::send;
using testing::temp;

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

int count_lines_with(const std::string& s, const std::string& needle) {
  int n = 0;
  for (const std::string& line : lines_of(s)) n += contains(line, needle);
  return n;
}

int count_phase_headers(const std::string& text) {
  int n = 0;
  for (const std::string& line : lines_of(text)) n += line.rfind("phase ", 0) == 0;
  return n;
}

// The round-table row of a phase's round: the line that starts with "<round> <tag> <shift>".
std::string find_row(const std::string& text, int round, int tag, const std::string& shift) {
  for (const std::string& line : lines_of(text)) {
    const std::vector<std::string> w = words_of(line);
    if (w.size() >= 3 && w[0] == std::to_string(round) && w[1] == std::to_string(tag) && w[2] == shift) return line;
  }
  return "";
}

// DOT node declarations: lines with an attribute list that are not edges.
std::vector<std::string> node_lines(const std::string& dot) {
  std::vector<std::string> out;
  for (const std::string& line : lines_of(dot))
    if (contains(line, "[label=") && !contains(line, "->")) out.push_back(line);
  return out;
}

TEST_CASE("to_text of moore9 combining alltoall: header, 2 phases, 4 rounds, rows, copies") {
  const engine::Neighborhood n = moore9();
  const Plan plan = engine::plan_combining(Op::kAlltoall, n, engine::auto_dim_order(n));
  const std::string text = to_text(plan);
  INFO(text);

  CHECK(contains(text, "plan alltoall combining: ndims 2, t 8, rounds 4, volume 12\n"));
  CHECK(contains(text, "dim_order [0,1], temp slots 4, phase rounds [2,2]"));
  CHECK_FALSE(contains(text, "cutoff"));  // the planner alone sets no cost information
  CHECK(contains(text, "4: (0,0)"));
  CHECK(contains(text, "8: (1,1)"));

  CHECK(count_phase_headers(text) == 2);
  CHECK(contains(text, "phase 0 (dim 0): 2 rounds\n"));
  CHECK(contains(text, "phase 1 (dim 1): 2 rounds\n"));
  CHECK(count_lines_with(text, "round  tag  shift") == 2);

  // Phase 0, shift (-1,0): blocks 0, 1, 2 leave; 1 arrives, 0 and 2 go to their first temp slot.
  const std::string r0 = find_row(text, 0, 0, "(-1,0)");
  CHECK(contains(r0, "send[0] -> temp[0], send[1] -> recv[1], send[2] -> temp[1]"));
  CHECK(words_of(r0).back() == "3");
  // Phase 1, shift (0,1): the last hops of blocks 2 and 8 and the only hop of block 5.
  const std::string r3 = find_row(text, 1, 3, "(0,1)");
  CHECK(contains(r3, "temp[1] -> recv[2], send[5] -> recv[5], temp[3] -> recv[8]"));
  CHECK(words_of(r3).back() == "3");
  CHECK(find_row(text, 0, 2, "(0,-1)") != "");
  CHECK(find_row(text, 1, 1, "(1,0)") != "");

  CHECK(contains(text, "copies (1):\n  send[4] -> recv[4]\n"));
  CHECK(text == to_text(plan));
}

TEST_CASE("to_text of a direct plan: one all-dims phase with one row per offset") {
  const engine::Neighborhood n = moore9();
  const Plan plan = engine::plan_direct(Op::kAlltoall, n);
  const std::string text = to_text(plan);
  INFO(text);
  CHECK(contains(text, "plan alltoall direct: ndims 2, t 8, rounds 8, volume 8\n"));
  CHECK(contains(text, "phase 0 (all dims): 8 rounds\n"));
  CHECK(count_phase_headers(text) == 1);
  const std::string row = find_row(text, 7, 7, "(1,1)");
  CHECK(contains(row, "send[8] -> recv[8]"));
  CHECK(words_of(row).back() == "1");
  CHECK(find_row(text, 4, 4, "(0,1)") != "");  // block 4 (zero) has no round
  CHECK(contains(text, "copies (1):\n  send[4] -> recv[4]\n"));
}

TEST_CASE("to_text columns are aligned") {
  const engine::Neighborhood n = moore9();
  const std::string text = to_text(engine::plan_combining(Op::kAlltoall, n, {0, 1}));
  std::vector<std::string> table;
  for (const std::string& line : lines_of(text))
    if (contains(line, " -> ") && !contains(line, "copies") && line.rfind("  send[4]", 0) != 0) table.push_back(line);
  REQUIRE(table.size() == 6);  // per phase: header + 2 rounds
  // Count is right-aligned, so every row of a phase ends in the same column as its header.
  CHECK(table[0].size() == table[1].size());
  CHECK(table[1].size() == table[2].size());
  CHECK(table[3].size() == table[5].size());
  // The entries column starts at the same position in the header and the rows.
  CHECK(table[0].find("entries") == table[1].find("send[0]"));
  CHECK(table[3].find("entries") == table[4].find("temp[0]"));
}

TEST_CASE("to_text prints the optimizer's cut-off and predictions") {
  const engine::Neighborhood n = moore9();
  const Plan base = engine::plan_combining(Op::kAlltoall, n, {0, 1});
  Stats s = base.stats();
  s.cutoff_ratio = 0.5;  // (t - C) / (V - t) = (8 - 4) / (12 - 4)
  s.cost = CostInfo{1.0, 0.0005, 8, 4, 12, 8.032, 4.048};
  const std::string text = to_text(base.with_stats(s));
  INFO(text);
  CHECK(contains(text, "cutoff ratio (t-C)/(V-t) = 0.5"));
  CHECK(contains(text, "alpha 1 us, beta 0.0005 us/byte, block 8 bytes, combining C 4, V 12"));
  CHECK(contains(text, "predicted: direct 8.032 us, combining 4.048 us"));
  CHECK(contains(text, "cut-off m* = alpha/beta * ratio = 1000 bytes (combining is cheaper for smaller blocks)"));

  s.cutoff_ratio = -0.25;  // C > t: combining never wins
  CHECK(contains(to_text(base.with_stats(s)), "(combining is never cheaper)"));
  s.cutoff_ratio.reset();  // V <= t
  const std::string none = to_text(base.with_stats(s));
  CHECK_FALSE(contains(none, "cutoff ratio"));
  CHECK(contains(none, "cut-off m*: none"));
}

TEST_CASE("to_text wraps rounds with many entries") {
  std::vector<Offset> offsets;
  for (int b = -150; b <= 150; ++b) offsets.push_back({1, b});
  const engine::Neighborhood n = nbh(2, offsets);
  const Plan plan = engine::plan_combining(Op::kAlltoall, n, {0, 1});
  const std::string text = to_text(plan);
  std::size_t longest = 0;
  for (const std::string& line : lines_of(text)) longest = std::max(longest, line.size());
  CHECK(longest <= 110);
  // Every entry of the 301-entry round is printed exactly once.
  CHECK(contains(text, "send[0] -> temp[0],"));
  CHECK(contains(text, "send[300] -> temp["));
  CHECK(words_of(find_row(text, 0, 0, "(1,0)")).back() == "301");
}

TEST_CASE("to_text of a malformed plan does not crash") {
  PlanParts parts;
  parts.ndims = 1;
  parts.neighborhood = {{1}};
  parts.phases = {Phase{0, {Round{{1}, 0, {send(0), send(5)}, {recv(0)}}}}};
  const std::string text = to_text(Plan(parts));
  CHECK(contains(text, "send[5] -> ?"));
}

const std::vector<Offset> kFigure2 = {{-2, 1, 1}, {-1, 1, 1}, {1, 1, 1}, {2, 1, 1}};

TEST_CASE("to_dot of the Figure 2 allgather: one edge per tree edge") {
  const engine::Neighborhood n = nbh(3, kFigure2);
  const Plan auto_plan = engine::plan_combining(Op::kAllgather, n, engine::auto_dim_order(n));
  const Plan natural = engine::plan_combining(Op::kAllgather, n, engine::natural_dim_order(3));
  REQUIRE(auto_plan.stats().volume == 6);
  REQUIRE(natural.stats().volume == 12);

  const std::string dot = to_dot(auto_plan);
  INFO(dot);
  CHECK(dot.rfind("digraph", 0) == 0);
  CHECK(count_lines_with(dot, "->") == auto_plan.stats().volume);
  CHECK(count_lines_with(to_dot(natural), "->") == 12);
  CHECK(dot == to_dot(auto_plan));

  // Auto order routes dims 1, 2 (one value each), then 0: (0,0,0) -> (0,1,0) -> (0,1,1) -> leaves.
  CHECK(contains(dot, "\"(0,0,0)\" -> \"(0,1,0)\" [label=\"p0r0\\nfor recv 0,1,2,3\"];"));
  CHECK(contains(dot, "\"(0,1,1)\" -> \"(2,1,1)\" [label=\"p2r3\\nfor recv 3\"];"));
  CHECK(contains(dot, "\"(0,0,0)\" [label=\"(0,0,0)\\norigin\", shape=box];"));
  CHECK(contains(dot, "\"(-2,1,1)\" [label=\"(-2,1,1)\\nrecv 0\", peripheries=2];"));
  CHECK(node_lines(dot).size() == 7);  // root, two inner nodes, four leaves
  CHECK(contains(dot, "\n}\n"));
  CHECK_FALSE(contains(dot, "error"));
}

TEST_CASE("to_dot of alltoall: one node per distinct position, union of paths") {
  // Block 0 goes (0,0) -> (1,0) -> (1,1); block 1 goes (0,0) -> (-1,0) -> (-1,2).
  const engine::Neighborhood n = nbh(2, {{1, 1}, {-1, 2}});
  const Plan plan = engine::plan_combining(Op::kAlltoall, n, {0, 1});
  const std::string dot = to_dot(plan);
  INFO(dot);
  CHECK(dot.rfind("digraph", 0) == 0);
  const std::vector<std::string> nodes = node_lines(dot);
  CHECK(nodes.size() == 5);
  std::set<std::string> distinct(nodes.begin(), nodes.end());
  CHECK(distinct.size() == nodes.size());
  CHECK(count_lines_with(dot, "->") == 4);
  CHECK(contains(dot, "\"(1,0)\" -> \"(1,1)\" [label=\"p1r0\\nblocks 0\"];"));
  CHECK(contains(dot, "\"(1,1)\" [label=\"(1,1)\\nrecv 0\", peripheries=2];"));
  CHECK(contains(dot, "\"(1,0)\" [label=\"(1,0)\"];"));  // intermediate, not a target
  CHECK(dot == to_dot(plan));

  // Moore: every intermediate position is itself an offset, so 9 nodes.
  const engine::Neighborhood m = moore9();
  const Plan moore = engine::plan_combining(Op::kAlltoall, m, {0, 1});
  const std::string mdot = to_dot(moore);
  CHECK(node_lines(mdot).size() == 9);
  // Edges: (0,0) to its 2 dim-0 neighbours, and from each of (-1,0), (0,0), (1,0) to 2 dim-1 neighbours.
  CHECK(count_lines_with(mdot, "->") == 8);
  CHECK(contains(mdot, "\"(0,0)\" -> \"(1,0)\" [label=\"p0r1\\nblocks 6,7,8\"];"));
  CHECK(contains(mdot, "\"(0,0)\" [label=\"(0,0)\\norigin\\nrecv 4\", shape=box];"));
}

TEST_CASE("to_dot of direct plans draws one edge per round") {
  const engine::Neighborhood n = moore9();
  CHECK(count_lines_with(to_dot(engine::plan_direct(Op::kAlltoall, n)), "->") == 8);
  CHECK(count_lines_with(to_dot(engine::plan_direct(Op::kAllgather, n)), "->") == 8);
}

TEST_CASE("to_dot still draws a graph when the trace finds errors") {
  // Round 0 reads temp[0] before anything wrote it.
  PlanParts parts;
  parts.op = Op::kAlltoall;
  parts.kind = PlanKind::kCombining;
  parts.ndims = 1;
  parts.neighborhood = {{1}, {2}};
  parts.temp_slots = {TempSlot{1}};
  parts.phases = {Phase{0, {Round{{1}, 0, {send(0), temp(0)}, {recv(0), recv(1)}}}}};
  const std::string dot = to_dot(Plan(parts));
  INFO(dot);
  CHECK(dot.rfind("digraph", 0) == 0);
  CHECK(contains(dot, "// trace found 1 error(s)"));  // the read of temp[0] before any write
  CHECK(count_lines_with(dot, "->") == 1);
  CHECK(contains(dot, "// 1 transfer(s) not drawn (undefined data, or a position beyond int)"));

  // Out-of-range indices: trace() cannot run, but a graph with the targets comes out.
  parts.phases = {Phase{0, {Round{{1}, 0, {send(7)}, {recv(0)}}}}};
  const std::string bad = to_dot(Plan(parts));
  CHECK(bad.rfind("digraph", 0) == 0);
  CHECK(contains(bad, "structurally invalid"));
  CHECK(count_lines_with(bad, "->") == 0);
}

TEST_CASE("to_dot escapes quotes and backslashes in labels") {
  // Positions and numbers never contain quotes, so check the graph label stays one quoted string.
  const engine::Neighborhood n = moore9();
  const std::string dot = to_dot(engine::plan_direct(Op::kAllgather, n));
  for (const std::string& line : lines_of(dot)) {
    if (line.find("//") != std::string::npos) continue;
    CHECK(std::count(line.begin(), line.end(), '"') % 2 == 0);
  }
}

}  // namespace
}  // namespace cartplan::ir

namespace cartplan::ir {

TEST_CASE("to_dot of a plan whose positions leave int (fuzz finding): drawn in part, no overflow") {
  // Shifts of 2^30, -2^31 and 2^31-1: the second transfer's position is beyond int.
  const std::string text = R"({"schema": "cartplan.plan/1", "op": "alltoall", "algorithm": "combining", "ndims": 1,
 "neighborhood": [[1073741823]], "dim_order": [0], "temp_slots": [{"shape_of": 0}, {"shape_of": 0}],
 "phases": [
  {"dim": 0, "rounds": [{"shift": [1073741824], "tag": 0, "send": [{"buf": "send", "block": 0}], "recv": [{"buf": "temp", "slot": 0}]}]},
  {"dim": 0, "rounds": [{"shift": [-2147483648], "tag": 1, "send": [{"buf": "temp", "slot": 0}], "recv": [{"buf": "temp", "slot": 1}]}]},
  {"dim": 0, "rounds": [{"shift": [2147483647], "tag": 2, "send": [{"buf": "temp", "slot": 0}], "recv": [{"buf": "recv", "block": 0}]}]}],
 "copies": [],
 "stats": {"t": 1, "rounds": 3, "volume": 3, "phase_rounds": [1, 1, 1], "cutoff_ratio": null, "cost": null, "predicted_us": null}})";
  Result<Plan> plan = plan_from_json_string(text);
  REQUIRE(plan);
  const std::string dot = to_dot(*plan);
  CHECK(dot.find("digraph") != std::string::npos);
  CHECK(dot.find("not drawn") != std::string::npos);
}

}  // namespace cartplan::ir
