// Tests of the v2 cost model applied to plans: every term counted by hand for known plans.
#include "engine/predict.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include "engine/bind.h"
#include "engine/lower.h"
#include "engine/planner.h"
#include "engine/stencils.h"
#include "tests/fixtures.h"

namespace cartplan::engine {
namespace {

CostModel unit_model() {
  CostModel m;
  m.alpha_us = 1;
  m.phase_us = 10;
  m.beta_us_per_byte = 0.01;
  m.copy_us_per_byte = 0.001;
  m.eager_limit_bytes = 100;
  m.rendezvous_us = 1000;
  return m;
}

// predict() lowered without trailers and with blocks at home only in messages up to the eager
// limit (the lowering where the single copy is priced dearer than the pipeline: most cases below
// are about which messages are one run of memory, read with the single copy).
CostBreakdown untrailed(const ir::Plan& plan, const std::vector<std::int64_t>& block_bytes, const CostModel& model,
                        const std::optional<Grid>& grid, std::int64_t struct_min_bytes = LowerOptions::kDefaultStructMinBytes,
                        const std::vector<bool>& contiguous = {}) {
  PredictOptions o;
  o.lowering.struct_min_bytes = struct_min_bytes;
  o.lowering.home_max_message_bytes = model.eager_limit_bytes;
  o.contiguous = contiguous;
  return predict(plan, block_bytes, model, grid, o);
}

// The same with blocks at home in every message (the lowering where the single copy is cheap).
CostBreakdown homed_everywhere(const ir::Plan& plan, const std::vector<std::int64_t>& block_bytes, const CostModel& model,
                               const std::optional<Grid>& grid) {
  return predict(plan, block_bytes, model, grid);
}

// PredictOptions of a lowering with trailers from `trailer_min_bytes` on.
PredictOptions trailed_from(std::int64_t trailer_min_bytes) {
  PredictOptions o;
  o.lowering.trailer_min_bytes = trailer_min_bytes;
  return o;
}

TEST_CASE("direct Moore-9 alltoall: one phase, 8 single-entry messages, the zero offset copied") {
  const ir::Plan p = plan_direct(ir::Op::kAlltoall, testing::moore9());
  const CostBreakdown c = predict(p, {10}, unit_model(), std::nullopt);
  CHECK(c.counts.messages == 8);
  CHECK(c.counts.phases == 1);
  CHECK(c.counts.wire_bytes == 80);
  CHECK(c.counts.copy_bytes == 10);  // send[zero] -> recv[zero]; single entries move in place
  CHECK(c.counts.rendezvous == 0);
  CHECK(c.total_us() == doctest::Approx(8 * 1 + 10 + 80 * 0.01 + 10 * 0.001));
}

TEST_CASE("combining Moore-9 alltoall: 2 phases, packed messages, a message above the eager limit") {
  const ir::Plan p = plan_combining(ir::Op::kAlltoall, testing::moore9(), {0, 1});
  // Rounds: dim 0: +-1 with 3 blocks each; dim 1: +-1 with 3 blocks each: volume 12.
  const CostBreakdown c = untrailed(p, {40}, unit_model(), std::nullopt);
  CHECK(c.counts.messages == 4);
  CHECK(c.counts.phases == 2);
  CHECK(c.counts.wire_bytes == 12 * 40);
  // Pack every entry (12), unpack the final ones (phase 0: 1 per round, phase 1: all 6; the
  // forwarded ones stay in staging), and the zero offset.
  CHECK(c.counts.copy_bytes == 12 * 40 + 8 * 40 + 40);
  CHECK(c.counts.rendezvous == 4);                 // 120-byte messages, limit 100
  CHECK(c.us(&CostModel::rendezvous_us) == doctest::Approx(4000));
  CHECK(c.total_us() == doctest::Approx(4 + 20 + 4.8 + 0.84 + 4000));
}

TEST_CASE("above the eager limit: contiguous messages pay rendezvous, struct datatype messages pipeline") {
  // Combining Moore-9 alltoall with 400-byte blocks: every round carries 3 entries of 400 bytes
  // (mean above the struct threshold, 256), so all 4 messages go by struct datatype.
  const ir::Plan p = plan_combining(ir::Op::kAlltoall, testing::moore9(), {0, 1});
  CostModel m = unit_model();
  m.pipeline_us = 300;
  const CostBreakdown s = untrailed(p, {400}, m, std::nullopt);
  CHECK(s.counts.rendezvous == 0);
  CHECK(s.counts.pipelined == 4);
  CHECK(s.us(&CostModel::pipeline_us) + s.us(&CostModel::pipeline_us_per_byte) == doctest::Approx(1200));
  // Packed (no struct datatypes): the same messages are contiguous.
  const CostBreakdown packed = untrailed(p, {400}, m, std::nullopt, -1);
  CHECK(packed.counts.rendezvous == 4);
  CHECK(packed.counts.pipelined == 0);
  CHECK(packed.total_us() - packed.us(&CostModel::copy_us_per_byte) ==
        doctest::Approx(s.total_us() - s.us(&CostModel::copy_us_per_byte) + 2800));
  // Direct: single entries, contiguous.
  const CostBreakdown d = untrailed(plan_direct(ir::Op::kAlltoall, testing::moore9()), {400}, m, std::nullopt);
  CHECK(d.counts.rendezvous == 8);
  CHECK(d.counts.pipelined == 0);
  CHECK(s.counts.pipelined_bytes == 4 * 1200);
  CHECK(explain(s, m).find("| pipelined 4 x 300.000 = 1200.000 | pipelined 4800 B x 0.000000 = 0.000 |") != std::string::npos);
  // The pipeline's per-byte term: on top of beta, negative where pipelining beats an eager
  // message per byte; only pipelined messages pay it.
  m.pipeline_us_per_byte = -0.005;  // half of beta
  const CostBreakdown cheaper = untrailed(p, {400}, m, std::nullopt);
  CHECK(cheaper.us(&CostModel::pipeline_us) + cheaper.us(&CostModel::pipeline_us_per_byte) == doctest::Approx(1200 - 0.005 * 4800));
  CHECK(cheaper.total_us() == doctest::Approx(s.total_us() - 24));
  CHECK(untrailed(p, {400}, m, std::nullopt, -1).total_us() == doctest::Approx(packed.total_us()));
  m.pipeline_us_per_byte = 0;
  // The single copy's per-byte price: contiguous messages above the limit only.
  m.single_copy_us_per_byte = 0.5;
  CHECK(untrailed(p, {400}, m, std::nullopt).us(&CostModel::single_copy_us_per_byte) == 0);  // struct datatypes pipeline
  const CostBreakdown packed_bytes = untrailed(p, {400}, m, std::nullopt, -1);
  CHECK(packed_bytes.counts.single_copy_bytes == 4 * 1200);
  CHECK(packed_bytes.us(&CostModel::single_copy_us_per_byte) == doctest::Approx(2400));
  CHECK(packed_bytes.total_us() == doctest::Approx(packed.total_us() + 2400));
  const CostBreakdown d_bytes = untrailed(plan_direct(ir::Op::kAlltoall, testing::moore9()), {400}, m, std::nullopt);
  CHECK(d_bytes.counts.single_copy_bytes == 8 * 400);
  CHECK(explain(d_bytes, m).find("| single-copy 3200 B x 0.500000 = 1600.000 |") != std::string::npos);
  // Below the limit nothing is single-copy.
  CHECK(untrailed(plan_direct(ir::Op::kAlltoall, testing::moore9()), {40}, m, std::nullopt).counts.single_copy_bytes == 0);
  m.single_copy_us_per_byte = 0;
  // Strided caller blocks (a halo's subarrays): single-entry messages pipeline too.
  const CostBreakdown ds = untrailed(plan_direct(ir::Op::kAlltoall, testing::moore9()), {400}, m, std::nullopt,
                                   LowerOptions::kDefaultStructMinBytes, {false});
  CHECK(ds.counts.rendezvous == 0);
  CHECK(ds.counts.pipelined == 8);
  CHECK(ds.counts.single_copy_bytes == 0);
  std::vector<bool> faces_strided;
  const Neighborhood moore = testing::moore9();
  for (const ir::Offset& o : moore.offsets()) faces_strided.push_back(Neighborhood::nonzeros(o) != 1);
  const CostBreakdown dm = untrailed(plan_direct(ir::Op::kAlltoall, testing::moore9()), {400}, m, std::nullopt,
                                   LowerOptions::kDefaultStructMinBytes, faces_strided);
  CHECK(dm.counts.rendezvous == 4);  // the corners
  CHECK(dm.counts.pipelined == 4);   // the faces
  CHECK(dm.counts.single_copy_bytes == 4 * 400);
  // The lowering packs contiguous parts only (lower.h): strided blocks go by struct datatype
  // even where packing is asked for, so those messages pipeline and nothing is copied.
  const CostBreakdown strided_packed = untrailed(p, {400}, m, std::nullopt, -1, {false});
  CHECK(strided_packed.counts.rendezvous == 0);
  CHECK(strided_packed.counts.pipelined == 4);
  CHECK(strided_packed.counts.copy_bytes == 400);  // the zero offset
}

TEST_CASE("a struct message that is one run of memory on both sides takes the single copy") {
  // Box d=2 n=3 on a 2x1 torus, 2 KB blocks, so the dim-0 messages (3 entries, 6 KB) go by
  // struct datatype above the eager limit. Natural order: dimension 0 first, from send[0..2]
  // (one run) into a temp, a final block and a temp: not one run, pipelined. Reversed order:
  // dimension 1 wraps to the process itself and aliases its temps to the send blocks, then
  // dimension 0 sends send[0..2] into recv[0..2]: one run on both sides, the single copy
  // (what `cartplan lower --dim-order 1,0` shows).
  const Neighborhood n = *stencils::box(2, 3, -1);
  const Grid g = *Grid::create({2, 1}, {true, true});
  CostModel m = unit_model();
  m.eager_limit_bytes = 4064;
  m.pipeline_us = 300;
  m.single_copy_us_per_byte = 0.5;
  const CostBreakdown natural = untrailed(plan_combining(ir::Op::kAlltoall, n, {0, 1}), {2048}, m, g);
  CHECK(natural.counts.messages == 2);
  CHECK(natural.counts.pipelined == 2);
  CHECK(natural.counts.rendezvous == 0);
  const CostBreakdown reversed = untrailed(plan_combining(ir::Op::kAlltoall, n, {1, 0}), {2048}, m, g);
  CHECK(reversed.counts.messages == 2);
  CHECK(reversed.counts.pipelined == 0);
  CHECK(reversed.counts.rendezvous == 2);
  CHECK(reversed.counts.single_copy_bytes == 2 * 3 * 2048);
  CHECK(reversed.us(&CostModel::rendezvous_us) == doctest::Approx(2 * m.rendezvous_us));
  // Where the single copy is cheap, the natural order's temps, which only the round of
  // dimension 1 (to the process itself) moves on, are received into their recv blocks
  // (final_home.h): recv[0..2] again, one run, the single copy.
  CostModel cheap = m;
  cheap.rendezvous_us = 1;
  cheap.single_copy_us_per_byte = 0;
  const CostBreakdown homed = homed_everywhere(plan_combining(ir::Op::kAlltoall, n, {0, 1}), {2048}, cheap, g);
  CHECK(homed.counts.pipelined == 0);
  CHECK(homed.counts.rendezvous == 2);
  CHECK(homed.counts.copy_bytes == 3 * 2048);  // the blocks with x = 0 only
  // On a 3x3 torus the temps go on to other processes: not one run, pipelined.
  CHECK(homed_everywhere(plan_combining(ir::Op::kAlltoall, n, {0, 1}), {2048}, cheap, *Grid::create({3, 3}, {true, true})).counts.pipelined == 4);
  // The same plan over strided caller blocks is not one run: pipelined.
  const CostBreakdown strided = untrailed(plan_combining(ir::Op::kAlltoall, n, {1, 0}), {2048}, m, g,
                                        LowerOptions::kDefaultStructMinBytes, {false});
  CHECK(strided.counts.pipelined == 2);
  CHECK(strided.counts.rendezvous == 0);
  // Without a grid, a torus large enough that no round wraps: dimension 1 goes to other
  // processes, its temps are not aliased, and dimension 0's messages are not one run.
  CHECK(untrailed(plan_combining(ir::Op::kAlltoall, n, {1, 0}), {2048}, m, std::nullopt).counts.rendezvous == 0);
  // Below the eager limit the question does not arise.
  CHECK(untrailed(plan_combining(ir::Op::kAlltoall, n, {1, 0}), {1024}, m, g).counts.rendezvous == 0);
  // Sizes whose byte sums would overflow cannot be lowered (a block of INT64_MAX bytes is in the
  // invalid-input corpus; its caller refuses it later): no counts, an infinite price, no crash.
  const CostBreakdown huge =
      untrailed(plan_combining(ir::Op::kAlltoall, n, {1, 0}), {std::numeric_limits<std::int64_t>::max()}, m, g);
  CHECK(!huge.priced);
  CHECK(huge.counts.messages == 0);
  CHECK(huge.total_us() == std::numeric_limits<double>::infinity());
  CHECK(explain(huge, m) == "blocks too large to price | total inf us");
}

TEST_CASE("trailers: messages from the threshold on pipeline, one byte more") {
  // Box d=2 n=3 on a 2x1 torus. A model whose pipeline is far cheaper than the single copy,
  // lowered with a trailer on every message above the eager limit, so nothing is read with the single
  // copy: not direct's contiguous 4096-byte blocks, not the reversed order's struct messages
  // that are one run on both sides (the case above).
  const Neighborhood n = *stencils::box(2, 3, -1);
  const Grid g = *Grid::create({2, 1}, {true, true});
  CostModel m = unit_model();
  m.eager_limit_bytes = 4064;
  m.pipeline_us = 300;
  // Trailers from the first rendezvous size on (the pipeline is priced far below the single
  // copy); then no message above the limit is one run: homes everywhere.
  const PredictOptions trailed = trailed_from(m.eager_limit_bytes + 1);
  const CostBreakdown d = predict(plan_direct(ir::Op::kAlltoall, n), {4096}, m, g, trailed);
  CHECK(d.counts.messages == 6);  // the two offsets along dimension 1 wrap to the process itself
  CHECK(d.counts.rendezvous == 0);
  CHECK(d.counts.pipelined == 6);
  CHECK(d.counts.wire_bytes == 6 * 4097);
  CHECK(d.counts.pipelined_bytes == 6 * 4097);
  const CostBreakdown untrailed_d = untrailed(plan_direct(ir::Op::kAlltoall, n), {4096}, m, g);
  CHECK(untrailed_d.counts.rendezvous == 6);
  CHECK(d.total_us() < untrailed_d.total_us());
  const CostBreakdown reversed = predict(plan_combining(ir::Op::kAlltoall, n, {1, 0}), {2048}, m, g, trailed);
  CHECK(reversed.counts.rendezvous == 0);
  CHECK(reversed.counts.pipelined == 2);
  CHECK(untrailed(plan_combining(ir::Op::kAlltoall, n, {1, 0}), {2048}, m, g).counts.rendezvous == 2);
  // An explicit threshold above the messages: as without trailers.
  CHECK(predict(plan_direct(ir::Op::kAlltoall, n), {4096}, m, g, trailed_from(4098)).counts.rendezvous == 6);
  // Below the threshold eager messages with a trailer only carry its byte.
  const CostBreakdown small = predict(plan_direct(ir::Op::kAlltoall, n), {100}, m, g, trailed_from(0));
  CHECK(small.counts.pipelined == 0);
  CHECK(small.counts.wire_bytes == 6 * 101);
  // Reductions are lowered without trailers.
  const CostBreakdown reduce = predict(plan_direct(ir::Op::kAllreduce, n), {8192}, m, g, trailed);
  CHECK(reduce.counts.wire_bytes == 6 * 8192);
}

TEST_CASE("predict counts the program a torus rank runs, whatever rule of the lowering made it") {
  // predict() has no layout rule of its own: packing, struct datatypes, homes, trailers, self
  // rounds and the reductions' scratch blocks reach it only through lower(). So its counts equal
  // those of the program that a real rank of a torus runs (Binder::bind at rank 0, where every
  // process runs the same program up to peers), for every choice lower() leaves to its options:
  // a rule added to lower() is priced without touching predict().
  struct Case {
    Neighborhood n;
    std::vector<int> dims;
  };
  const std::vector<Case> cases = {
      {*stencils::box(2, 3, -1), {2, 1}}, {*stencils::box(2, 3, -1), {3, 3}}, {*stencils::box(3, 3, -1), {2, 1, 1}},
      {*stencils::box(3, 3, -1), {2, 2, 2}}, {*stencils::box(3, 5, -2), {4, 1, 1}},
      // Planners reuse temp slots from d = 4 on.
      {*stencils::box(4, 3, -1), {2, 1, 2, 1}},
  };
  CostModel model = unit_model();
  model.eager_limit_bytes = 1000;
  for (const Case& c : cases)
    for (ir::Op op : {ir::Op::kAlltoall, ir::Op::kAllgather, ir::Op::kAllreduce}) {
      const Grid g = *Grid::create(c.dims, std::vector<bool>(c.dims.size(), true));
      std::vector<int> order(c.dims.size());
      for (std::size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int>(k);
      std::vector<ir::Plan> plans = {plan_direct(op, c.n)};
      do plans.push_back(plan_combining(op, c.n, order));
      while (std::next_permutation(order.begin(), order.end()));
      for (const ir::Plan& plan : plans)
        for (std::int64_t b : {8, 400, 4000})
          for (std::int64_t struct_min : {std::int64_t{-1}, LowerOptions::kDefaultStructMinBytes, std::int64_t{0}})
            for (std::int64_t trailer : {std::int64_t{-1}, std::int64_t{1}, std::int64_t{1001}}) {
              CAPTURE(ir::to_string(op));
              CAPTURE(c.dims);
              CAPTURE(plan.dim_order());
              CAPTURE(b);
              CAPTURE(struct_min);
              CAPTURE(trailer);
              const Result<BoundPlan> bound = Binder::create(plan)->bind(g, g.coords(0), {b});
              REQUIRE(bound.ok());
              LowerOptions lo;
              lo.struct_min_bytes = struct_min;
              lo.trailer_min_bytes = trailer;
              lo.home_max_message_bytes = trailer == 1001 ? model.eager_limit_bytes : -1;
              const Result<Program> prog = lower(plan, *bound, contiguous_layout(plan, *bound), lo);
              REQUIRE(prog.ok());
              const ProgramCounts runs = count(*prog);
              const CostBreakdown priced = predict(plan, {b}, model, g, PredictOptions{lo, {}});
              REQUIRE(priced.priced);
              CHECK(2 * priced.counts.messages == static_cast<double>(runs.messages));  // a send and a receive each
              CHECK(priced.counts.wire_bytes == static_cast<double>(runs.sent_bytes));    // trailers included
              CHECK(priced.counts.copy_bytes == static_cast<double>(runs.copied_bytes + runs.combined_bytes));
            }
    }
}

TEST_CASE("blocks received straight into their recv block: no copy after") {
  // Box d=3 on 2x1x1 with 400-byte blocks (struct datatypes): dimension 0's two messages bring
  // 9 blocks each, all of which only local rounds move on: received into their recv blocks.
  // What is copied: the 8 non-zero blocks with x = 0 (rounds to the process itself) and the
  // zero offset.
  const Neighborhood n = *stencils::box(3, 3, -1);
  const Grid g = *Grid::create({2, 1, 1}, {true, true, true});
  CostModel m = unit_model();
  m.eager_limit_bytes = 4096;  // the 3600-byte messages are eager: homes whatever the single copy costs
  const CostBreakdown c = untrailed(plan_combining(ir::Op::kAlltoall, n, {0, 1, 2}), {400}, m, g);
  CHECK(c.counts.messages == 2);
  CHECK(c.counts.copy_bytes == (8 + 1) * 400);
  // Above a limit (unit_model: 100 bytes, single copy dearer) the temps stay in staging and
  // are copied home at the end: 16 more blocks copied.
  const CostBreakdown limited = untrailed(plan_combining(ir::Op::kAlltoall, n, {0, 1, 2}), {400}, unit_model(), g);
  CHECK(limited.counts.copy_bytes == (8 + 16 + 1) * 400);
}

TEST_CASE("real per-block sizes: corners small, faces large") {
  // Moore-9 halo of a 100x100 block of doubles: faces 800 bytes, corners 8, centre 0.
  const Neighborhood n = testing::moore9();
  std::vector<std::int64_t> sizes;
  for (const ir::Offset& o : n.offsets()) {
    const int z = Neighborhood::nonzeros(o);
    sizes.push_back(z == 0 ? 0 : z == 1 ? 800 : 8);
  }
  const ir::Plan direct = plan_direct(ir::Op::kAlltoall, n);
  CostModel m = unit_model();
  m.eager_limit_bytes = 4096;
  const CostBreakdown c = predict(direct, sizes, m, std::nullopt);
  CHECK(c.counts.wire_bytes == 4 * 800 + 4 * 8);
  // The mean (3232 / 9) would put 9 x 359 bytes on the wire instead.
  CHECK(c.counts.wire_bytes != predict(direct, {3232 / 9}, m, std::nullopt).counts.wire_bytes);
}

TEST_CASE("rounds that wrap to the process itself are copies, not messages") {
  const Neighborhood n = *stencils::box(3, 3, -1);
  const ir::Plan p = plan_combining(ir::Op::kAlltoall, n, {0, 1, 2});
  const Grid g = *Grid::create({2, 1, 1}, {true, true, true});
  const CostBreakdown c = predict(p, {4}, unit_model(), g);
  CHECK(c.counts.messages == 2);  // the two rounds of dimension 0
  CHECK(c.counts.phases == 1);
  // Volume 54: the dim-0 rounds carry 18 entries (9 each, packed; 2 final ones unpacked), the
  // other 36 are self moves, of which the 24 final ones copy and the forwarded 12 are aliased;
  // and the zero offset. The same count as engine/lower_test's program for this case.
  CHECK(c.counts.wire_bytes == 18 * 4);
  CHECK(c.counts.copy_bytes == (18 + 2 + 24 + 1) * 4);
  const std::string line = explain(c, unit_model());
  CHECK(line.find("messages 2 x 1.000 = 2.000") == 0);
  CHECK(line.find("phases 1 x 10.000 = 10.000") != std::string::npos);
}

TEST_CASE("blocks of struct_min bytes or more go by struct datatype: no copies") {
  const ir::Plan p = plan_combining(ir::Op::kAlltoall, testing::moore9(), {0, 1});
  const std::int64_t big = LowerOptions::kDefaultStructMinBytes;
  const CostBreakdown c = untrailed(p, {big}, unit_model(), std::nullopt);
  CHECK(c.counts.copy_bytes == big);  // the zero offset only
  CHECK(untrailed(p, {big - 1}, unit_model(), std::nullopt).counts.copy_bytes == 21 * (big - 1));
}

TEST_CASE("on a mesh, rounds count for the share of processes that have the peer") {
  const Neighborhood n = *stencils::moore(2, 1);  // 8 offsets and the zero offset
  const ir::Plan direct = plan_direct(ir::Op::kAlltoall, n);
  // A 2x2 mesh: every process is a corner with 3 of its 8 neighbours (faces 1/2, corners 1/4).
  const Grid mesh = *Grid::create({2, 2}, {false, false});
  const CostBreakdown c = predict(direct, {8}, unit_model(), mesh);
  CHECK(c.counts.messages == doctest::Approx(3.0));
  CHECK(c.counts.wire_bytes == doctest::Approx(3.0 * 8));
  // The same plan on the torus sends all 8.
  CHECK(predict(direct, {8}, unit_model(), *Grid::create({4, 4}, {true, true})).counts.messages == 8);
}

TEST_CASE("the linear model reproduces seed 000's two sides of the cut-off") {
  const Neighborhood n = *stencils::box(3, 3, -1);
  const CostModel m = CostModel::linear(2, 0.001);
  CHECK(predict(plan_direct(ir::Op::kAlltoall, n), {100}, m, std::nullopt).total_us() ==
        doctest::Approx(26 * (2 + 0.1)));
  CHECK(predict(plan_combining(ir::Op::kAlltoall, n, {0, 1, 2}), {100}, m, std::nullopt).total_us() ==
        doctest::Approx(6 * 2 + 54 * 0.1));
}

}  // namespace
}  // namespace cartplan::engine
