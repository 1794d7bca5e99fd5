// libFuzzer target: small random cases run through every planner and the simulator.
//
// The bytes choose d in 1..4, 1..10 offsets with coordinates in [-3, 3] (duplicates and the
// zero offset allowed), dims 1..4 and a period per dimension, the op, a block size 0..16 and a
// dimension order (a permutation of 0..d-1). The case is planned with plan_direct,
// plan_combining (that order) and make_plan (auto, with the grid, sometimes with the order);
// every plan must verify clean and simulate correctly (sim::simulate ok, report.ok, no errors)
// with the uniform block size and, for alltoall, with per-block sizes from the bytes.
// Any violation prints the case on stderr and traps.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/sim/simulator.h"
#include "engine/grid.h"
#include "engine/neighborhood.h"
#include "engine/optimizer.h"
#include "engine/planner.h"
#include "ir/verify.h"

namespace {

using namespace cartplan;

std::string join(const std::vector<int>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

struct Case {
  ir::Op op = ir::Op::kAlltoall;
  std::vector<ir::Offset> offsets;
  std::vector<int> dims;
  std::vector<bool> periods;
  std::vector<int> order;
  std::int64_t block = 8;
  std::vector<std::int64_t> per_block;

  std::string describe() const {
    std::string s = std::string("op ") + ir::to_string(op) + " --stencil 'offsets:";
    for (std::size_t i = 0; i < offsets.size(); ++i) s += (i ? ";" : "") + join(offsets[i]);
    std::vector<int> per(periods.begin(), periods.end());
    s += "' --dims " + join(dims) + " --periods " + join(per) + " --dim-order " + join(order) +
         " --block-bytes " + std::to_string(block) + " per-block [";
    for (std::size_t i = 0; i < per_block.size(); ++i) s += (i ? "," : "") + std::to_string(per_block[i]);
    return s + "]";
  }
};

[[noreturn]] void die(const Case& c, const std::string& what) {
  std::fprintf(stderr, "differential_fuzz: %s\ncase: %s\n", what.c_str(), c.describe().c_str());
  __builtin_trap();
}

void check(const Case& c, const ir::Plan& plan, const engine::Grid& grid, const std::string& name) {
  const std::vector<std::string> errors = ir::verify(plan);
  if (!errors.empty()) die(c, name + ": verify: " + errors.front());
  if (plan.num_blocks() != static_cast<int>(c.offsets.size())) die(c, name + ": wrong block count");
  std::vector<std::vector<std::int64_t>> sizes = {{c.block}};
  if (c.op == ir::Op::kAlltoall) sizes.push_back(c.per_block);
  for (const auto& bytes : sizes) {
    sim::SimOptions so;
    so.block_bytes = bytes;
    const Result<sim::SimReport> r = sim::simulate(plan, grid, so);
    const std::string which = name + (bytes.size() == 1 ? " (uniform)" : " (per-block)");
    if (!r) die(c, which + ": simulate error: " + r.error());
    if (!r->ok || r->error_count != 0 || !r->errors.empty())
      die(c, which + ": simulation wrong (" + std::to_string(r->error_count) + " errors; first: " +
                 (r->errors.empty() ? std::string("none listed") : r->errors.front()) + ")");
    if (r->ranks != grid.size()) die(c, which + ": wrong rank count");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider fdp(data, size);
  Case c;
  const int d = fdp.ConsumeIntegralInRange<int>(1, 4);
  const int t = fdp.ConsumeIntegralInRange<int>(1, 10);
  c.op = fdp.ConsumeBool() ? ir::Op::kAllgather : ir::Op::kAlltoall;
  for (int i = 0; i < t; ++i) {
    ir::Offset o(d);
    for (int& x : o) x = fdp.ConsumeIntegralInRange<int>(-3, 3);
    c.offsets.push_back(std::move(o));
  }
  for (int k = 0; k < d; ++k) {
    c.dims.push_back(fdp.ConsumeIntegralInRange<int>(1, 4));
    c.periods.push_back(fdp.ConsumeBool());
  }
  c.block = fdp.ConsumeIntegralInRange<std::int64_t>(0, 16);
  c.order = engine::natural_dim_order(d);
  for (int k = d - 1; k > 0; --k) std::swap(c.order[k], c.order[fdp.ConsumeIntegralInRange<int>(0, k)]);
  for (int i = 0; i < t; ++i) c.per_block.push_back(fdp.ConsumeIntegralInRange<std::int64_t>(0, 16));
  const bool pass_order = fdp.ConsumeBool();

  Result<engine::Neighborhood> nbh = engine::Neighborhood::create(d, c.offsets);
  if (!nbh) die(c, "Neighborhood::create: " + nbh.error());
  Result<engine::Grid> grid = engine::Grid::create(c.dims, c.periods);
  if (!grid) die(c, "Grid::create: " + grid.error());
  if (!engine::check_dim_order(c.order, d)) die(c, "check_dim_order rejects a permutation");

  check(c, engine::plan_direct(c.op, *nbh), *grid, "direct");
  check(c, engine::plan_combining(c.op, *nbh, c.order), *grid, "combining");
  engine::PlanOptions o;
  o.block_bytes = c.block;
  o.grid = *grid;
  if (pass_order) o.dim_order = c.order;
  Result<ir::Plan> autoplan = engine::make_plan(c.op, *nbh, o);
  if (!autoplan) die(c, "make_plan auto: " + autoplan.error());
  check(c, *autoplan, *grid, "auto");
  return 0;
}
