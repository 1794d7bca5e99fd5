// Tests of halo plan verification: correct plans pass; each kind of mistake is named with its
// phase, message, part and cell.
#include "ir/halo/verify.h"

#include <doctest/doctest.h>

#include "ir/halo/test_plans.h"
#include "ir/halo/trace.h"

namespace cartplan::ir::halo {
namespace {

HaloPlan with_stats(HaloPlanParts p) {
  p.stats = derived_stats(p);
  return HaloPlan(std::move(p));
}

bool has(const std::vector<std::string>& errors, const std::string& text) {
  for (const std::string& e : errors) {
    if (e.find(text) != std::string::npos) return true;
  }
  INFO("errors: " << (errors.empty() ? std::string("(none)") : errors[0]));
  return false;
}

}  // namespace

TEST_CASE("hand-built plans verify, and their traces name origins and holders") {
  for (const HaloPlan& plan : {test_plans::line_direct(), test_plans::moore2_dimwise(), test_plans::moore2_with_temp()}) {
    CHECK(verify(plan).empty());
  }
  const TraceResult t = trace_halo(test_plans::moore2_dimwise());
  REQUIRE(t.errors.empty());
  // Phase 1, message 0 (shift (0,-1)), part 0: the sender's low ghost row, from the process at
  // (-1,0); it ends at the receiver, (0,-1) from the sender.
  CHECK(t.parts[1][0][0].origin == Offset{-1, 0});
  CHECK(t.parts[1][0][0].holders == std::vector<Offset>{{0, -1}});
  // Phase 0, message 0 (shift (-1,0)): the interior rows end at the receiver and, forwarded in
  // phase 1, at the receiver's neighbours along dimension 1.
  CHECK(t.parts[0][0][0].origin == Offset{0, 0});
  CHECK(t.parts[0][0][0].holders == std::vector<Offset>{{-1, -1}, {-1, 0}, {-1, 1}});
}

TEST_CASE("structure: bounds, interior writes, hazards, tags, stats") {
  HaloPlanParts p = test_plans::moore2_dimwise().parts();
  p.phases[0].messages[0].parts[0].to.lo = {2, 0};
  CHECK(has(verify(with_stats(p)), "phase 0, message 0 (shift (-1,0), tag 0), part 0: writes interior cells [2,3)x[0,4) of the array"));
  p = test_plans::moore2_dimwise().parts();
  p.phases[0].messages[0].parts[0].extent = {3, 4};
  CHECK(has(verify(with_stats(p)), "to box [3,6)x[0,4) leaves array [-1,5)x[-2,5)"));
  p = test_plans::moore2_dimwise().parts();
  p.phases[1].messages[1].tag = 2;
  CHECK(has(verify(with_stats(p)), "tag 2 is used twice"));
  p = test_plans::moore2_dimwise().parts();
  p.phases[1].messages[0].parts[0].from.lo = {-1, 4};  // reads what message 0 writes
  CHECK(has(verify(with_stats(p)), "that phase 1, message 0 (shift (0,-1), tag 2), part 0 sends in the same phase"));
  p = test_plans::moore2_dimwise().parts();
  p.phases[0].messages[0].shift = {0, -1};
  CHECK(has(verify(with_stats(p)), "the phase routes dimension 0, the shift moves along 1"));
  p = test_plans::moore2_dimwise().parts();
  p.stats.wire_cells += 1;
  CHECK(has(verify(HaloPlan(p)), "stats say messages 4, phases 2, wire_cells 31, ghost_cells 30, temp_cells 0; the plan has messages 4, phases 2, wire_cells 30"));
  p = test_plans::moore2_dimwise().parts();
  p.neighborhood = {{1, 0}, {0, 1}};
  CHECK(has(verify(with_stats(p)), "offsets must be distinct and in increasing lexicographic order"));
  p.neighborhood = {{2, 0}};
  CHECK(has(verify(with_stats(p)), "is not a sign vector"));
  p = test_plans::moore2_dimwise().parts();
  p.array.ghost_hi = {4, 1};  // wider than the interior of 3 rows
  CHECK(has(verify(with_stats(p)), "ghost_hi[0] = 4 is wider than the interior (3 cells)"));
}

TEST_CASE("symbolic execution: read before write, wrong values, extra and missing cells") {
  HaloPlanParts p = test_plans::moore2_dimwise().parts();
  std::swap(p.phases[0], p.phases[1]);  // extended faces before the rows they extend over
  p.phases[0].dim = 1, p.phases[1].dim = 0;
  CHECK(has(verify(with_stats(p)), "phase 0, message 0 (shift (0,-1), tag 2), part 0: sends array cell (-1,0) before it holds a value"));
  p = test_plans::moore2_dimwise().parts();
  p.phases[0].messages[0].parts[0].from.lo = {1, 0};  // the rows one further in
  CHECK(has(verify(with_stats(p)), "writes array cell (3,0) with the value of cell (1,0) of the process at (1,0); it must hold cell (0,0) of the process at (1,0)"));
  p = test_plans::moore2_dimwise().parts();
  p.neighborhood.erase(p.neighborhood.begin());  // (-1,-1) is no longer needed
  CHECK(has(verify(with_stats(p)), "phase 1, message 1 (shift (0,1), tag 3), part 0: writes array cell (-1,-2), which no ghost region of the neighbourhood holds"));
  p = test_plans::moore2_dimwise().parts();
  p.phases[1].messages[1].parts.pop_back();
  CHECK(has(verify(with_stats(p)), "ghost region (1,-1): 4 cell(s) are never written, the first is array cell (3,-2)"));
  p = test_plans::moore2_dimwise().parts();
  // One part over the ghost row and the interior: two origins.
  p.phases[1].messages[0].parts[0].extent = {4, 1};
  p.phases[1].messages[0].parts.erase(p.phases[1].messages[0].parts.begin() + 1);
  CHECK(has(verify(with_stats(p)), "part 0: mixes cells of the processes at (-1,0) and (0,0)"));
  p = test_plans::moore2_dimwise().parts();
  p.phases.push_back(Phase{0, {Message{{-1, 0}, 9, {p.phases[0].messages[0].parts[0]}}}});
  CHECK(has(verify(with_stats(p)), "phase 2, message 0 (shift (-1,0), tag 9), part 0: writes array cell (3,0) a second time (phase 0, message 0"));
}

TEST_CASE("a temp may be overwritten; a temp read before it is written is an error") {
  HaloPlanParts p = test_plans::moore2_with_temp().parts();
  p.phases[0].messages[0].parts.pop_back();
  CHECK(has(verify(with_stats(p)), "sends temp[0] cell (0,0) before it holds a value"));
}

}  // namespace cartplan::ir::halo

namespace cartplan::ir::halo {

TEST_CASE("limits: a phase of too many parts is refused, not checked for hours") {
  HaloPlanParts p;
  p.algorithm = HaloAlgorithm::kDirect;
  p.array = ArrayShape{1, {20000}, {0}, {20000}, 1, Order::kC};
  p.neighborhood = {{1}};
  p.dim_order = {0};
  Message m{{-1}, 0, {}};
  for (int i = 0; i < 20000; ++i) m.parts.push_back(Part{Place{Buffer::kArray, 0, {i}}, Place{Buffer::kArray, 0, {20000 + i}}, {1}});
  p.phases = {Phase{0, {m}}};
  p.stats = derived_stats(p);
  const std::vector<std::string> errors = verify(HaloPlan(p));
  REQUIRE(errors.size() == 1);
  CHECK(errors[0] == "phase 0 has 20000 parts; verify checks phases of at most 16384");
  // Half as many, each one cell: fine (and every cell a class of its own).
  p.array.interior = {10000};
  p.array.ghost_hi = {10000};
  p.phases[0].messages[0].parts.resize(10000);
  for (int i = 0; i < 10000; ++i) p.phases[0].messages[0].parts[i].to.lo = {10000 + i};
  p.stats = derived_stats(p);
  CHECK(verify(HaloPlan(p)).front().find("verify gives up") != std::string::npos);  // 10^4 cuts: above the cut limit
}

}  // namespace cartplan::ir::halo
