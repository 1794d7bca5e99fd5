// libFuzzer target: arbitrary bytes as a plan JSON document.
//
// Checks (any violation traps):
//  - plan_from_json_string never crashes, throws or trips a sanitizer; errors are normal results.
//  - For every plan it accepts: to_json_string round-trips (print -> parse -> print is identical
//    and the re-parsed plan equals the first one), and verify(), to_text(), to_dot() do not
//    crash (the printers are documented to cope with plans that do not verify).
//  - For plans that verify clean: engine::Binder::create succeeds, and on small grids
//    (ndims <= 3, at most 27 ranks) the simulator runs the plan: on a torus it must succeed
//    and deliver every block; on a mesh bind may refuse a route through a missing rank (an
//    error result), but if it runs, every block must be right.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "backends/sim/simulator.h"
#include "engine/bind.h"
#include "engine/grid.h"
#include "ir/json.h"
#include "ir/print.h"
#include "ir/verify.h"

namespace {

[[noreturn]] void die(const char* what, const std::string& detail) {
  std::fprintf(stderr, "plan_json_fuzz: %s\n%s\n", what, detail.c_str());
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cartplan;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Result<ir::Plan> plan = ir::plan_from_json_string(text);
  if (!plan) {
    if (plan.error().empty()) die("empty error message", std::string(text));
    return 0;
  }

  // Canonical form: print -> parse -> print is byte-identical, and parsing gives the same plan.
  const std::string printed = ir::to_json_string(*plan);
  Result<ir::Plan> again = ir::plan_from_json_string(printed);
  if (!again) die("printed plan does not parse back", again.error() + "\n" + printed);
  const std::string reprinted = ir::to_json_string(*again);
  if (reprinted != printed) die("print -> parse -> print differs", printed + "\n----\n" + reprinted);
  if (!(*again == *plan)) die("parse(print(plan)) != plan", printed);

  const std::vector<std::string> errors = ir::verify(*plan);
  // The printers must cope with any parsed plan (they report problems instead of asserting).
  (void)ir::to_text(*plan);
  (void)ir::to_dot(*plan);
  if (!errors.empty()) return 0;

  // verify_structure is a layer of verify: a clean plan is structurally clean.
  if (!ir::verify_structure(*plan).empty()) die("verify clean but verify_structure is not", printed);
  Result<engine::Binder> binder = engine::Binder::create(*plan);
  if (!binder) die("Binder::create failed on a verified plan", binder.error() + "\n" + printed);

  // Simulate small plans on a 3^d torus and a 3^d mesh (a 2-wide grid when d = 3).
  const int d = plan->ndims();
  std::size_t entries = 0;
  for (const ir::Phase& ph : plan->phases())
    for (const ir::Round& r : ph.rounds) entries += r.send.size();
  if (d > 3 || entries > 200 || plan->num_blocks() > 64) return 0;
  for (bool periodic : {true, false}) {
    Result<engine::Grid> grid = engine::Grid::create(std::vector<int>(d, d == 3 ? 2 : 3), std::vector<bool>(d, periodic));
    if (!grid) die("Grid::create failed", grid.error());
    sim::SimOptions so;
    so.block_bytes = {3};
    Result<sim::SimReport> r = sim::simulate(*plan, *grid, so);
    if (!r) {
      if (periodic) die("simulate failed on a torus", r.error() + "\n" + printed);
      continue;
    }
    if (!r->ok)
      die(periodic ? "wrong blocks on a torus" : "wrong blocks on a mesh",
          (r->errors.empty() ? std::string("?") : r->errors.front()) + "\n" + printed);
  }
  return 0;
}
