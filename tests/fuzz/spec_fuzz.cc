// libFuzzer target: arbitrary bytes as a stencil SPEC (engine::parse_spec).
//
// Inputs starting with '@' are skipped: they name files, and the fuzzer must not read
// arbitrary paths. Checks (any violation traps):
//  - parse_spec never crashes, throws or trips a sanitizer; errors are non-empty messages.
//  - An accepted neighbourhood respects Neighborhood's limits: ndims in [1, kMaxDims],
//    1..kMaxOffsets offsets of exactly ndims coordinates, |coordinate| <= kMaxCoordinate,
//    t = nonzero_count() <= size(), C_k = distinct_nonzero(k) <= t.
//  - Printing it back as an "offsets:" spec parses to the same offsets.
//  - With at most max_plan_offsets offsets: make_plan (auto, direct, combining) for both ops
//    succeeds, every plan verifies clean, stats.t == t, and its JSON round-trips.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "engine/optimizer.h"
#include "engine/planner.h"
#include "engine/spec.h"
#include "ir/json.h"
#include "ir/verify.h"

namespace {

using cartplan::engine::Neighborhood;

// Bounds the planning work per input. 256 keeps every input far below a second under the
// sanitizers on a loaded machine (test.sh); long sessions raise it with
// CARTPLAN_FUZZ_MAX_PLAN_OFFSETS (tests/fuzz/long.sh uses 2000).
int max_plan_offsets = 256;

[[noreturn]] void die(const char* what, std::string_view spec, const std::string& detail = "") {
  std::fprintf(stderr, "spec_fuzz: %s\nspec: '%.*s'\n%s\n", what, static_cast<int>(std::min<std::size_t>(spec.size(), 500)),
               spec.data(), detail.c_str());
  __builtin_trap();
}

std::string offsets_spec(const Neighborhood& n) {
  std::string s = "offsets:";
  for (int i = 0; i < n.size(); ++i) {
    if (i) s += ';';
    for (int k = 0; k < n.ndims(); ++k) {
      if (k) s += ',';
      s += std::to_string(n[i][k]);
    }
  }
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* v = std::getenv("CARTPLAN_FUZZ_MAX_PLAN_OFFSETS")) {
    const int n = std::atoi(v);
    if (n > 0) max_plan_offsets = n;
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cartplan;
  const std::string_view spec(reinterpret_cast<const char*>(data), size);
  if (!spec.empty() && spec[0] == '@') return 0;  // file specs: never read arbitrary files

  Result<Neighborhood> n = engine::parse_spec(spec);
  if (!n) {
    if (n.error().empty()) die("empty error message", spec);
    return 0;
  }

  const int d = n->ndims();
  if (d < 1 || d > Neighborhood::kMaxDims) die("ndims out of range", spec, std::to_string(d));
  if (n->size() < 1 || n->size() > Neighborhood::kMaxOffsets) die("offset count out of range", spec);
  for (const ir::Offset& o : n->offsets()) {
    if (static_cast<int>(o.size()) != d) die("offset length differs from ndims", spec);
    for (int x : o)
      if (x > Neighborhood::kMaxCoordinate || x < -Neighborhood::kMaxCoordinate)
        die("coordinate out of range", spec, std::to_string(x));
  }
  const int t = n->nonzero_count();
  if (t < 0 || t > n->size()) die("nonzero_count out of range", spec);
  for (int k = 0; k < d; ++k)
    if (n->distinct_nonzero(k) > t) die("C_k > t", spec, "k = " + std::to_string(k));

  if (n->size() > max_plan_offsets) return 0;

  // The offsets printed back as a spec mean the same neighbourhood.
  const std::string back = offsets_spec(*n);
  Result<Neighborhood> again = engine::parse_spec(back);
  if (!again) die("offsets: spec of an accepted neighbourhood does not parse", spec, again.error());
  if (again->ndims() != d || again->offsets() != n->offsets()) die("offsets: spec round-trip differs", spec, back);

  for (ir::Op op : {ir::Op::kAlltoall, ir::Op::kAllgather}) {
    for (engine::AlgoChoice algo :
         {engine::AlgoChoice::kAuto, engine::AlgoChoice::kDirect, engine::AlgoChoice::kCombining,
          engine::AlgoChoice::kHybrid}) {
      engine::PlanOptions o;
      o.algo = algo;
      Result<ir::Plan> plan = engine::make_plan(op, *n, o);
      // A neighbourhood with nothing to split has no hybrid plan (a documented error).
      if (!plan && algo == engine::AlgoChoice::kHybrid && plan.error().rfind("no hybrid plan", 0) == 0) continue;
      const std::string what = std::string(ir::to_string(op)) + " algo " + std::to_string(static_cast<int>(algo));
      if (!plan) die("make_plan failed", spec, what + ": " + plan.error());
      const std::vector<std::string> errors = ir::verify(*plan);
      if (!errors.empty()) die("plan does not verify", spec, what + ": " + errors.front());
      if (plan->stats().t != t) die("stats.t != nonzero_count", spec, what);
      const std::string json = ir::to_json_string(*plan);
      Result<ir::Plan> parsed = ir::plan_from_json_string(json);
      if (!parsed) die("plan JSON does not parse back", spec, what + ": " + parsed.error());
      if (!(*parsed == *plan) || ir::to_json_string(*parsed) != json) die("plan JSON round-trip differs", spec, what);
    }
  }
  return 0;
}
