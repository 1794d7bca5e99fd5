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

// predict() for a lowering without trailers (Info cartplan_trailer_min_bytes = -1): most cases
// below are about which messages Open MPI reads with a single copy, and unit_model() prices the
// pipeline so far below it that its default lowering would trail every message above 100 bytes.
CostBreakdown untrailed(const ir::Plan& plan, const std::vector<std::int64_t>& block_bytes, const CostModel& model,
                        const std::optional<Grid>& grid, std::int64_t struct_min_bytes = LowerOptions::kDefaultStructMinBytes,
                        const std::vector<bool>& contiguous = {}) {
  return predict(plan, block_bytes, model, grid, struct_min_bytes, contiguous, -1);
}

TEST_CASE("direct Moore-9 alltoall: one phase, 8 single-entry messages, the zero offset copied") {
  const ir::Plan p = plan_direct(ir::Op::kAlltoall, testing::moore9());
  const CostBreakdown c = predict(p, {10}, unit_model(), std::nullopt);
  CHECK(c.messages == 8);
  CHECK(c.phases == 1);
  CHECK(c.wire_bytes == 80);
  CHECK(c.copy_bytes == 10);  // send[zero] -> recv[zero]; single entries move in place
  CHECK(c.rendezvous == 0);
  CHECK(c.total_us() == doctest::Approx(8 * 1 + 10 + 80 * 0.01 + 10 * 0.001));
}

TEST_CASE("combining Moore-9 alltoall: 2 phases, packed messages, a message above the eager limit") {
  const ir::Plan p = plan_combining(ir::Op::kAlltoall, testing::moore9(), {0, 1});
  // Rounds: dim 0: +-1 with 3 blocks each; dim 1: +-1 with 3 blocks each: volume 12.
  const CostBreakdown c = untrailed(p, {40}, unit_model(), std::nullopt);
  CHECK(c.messages == 4);
  CHECK(c.phases == 2);
  CHECK(c.wire_bytes == 12 * 40);
  // Pack every entry (12), unpack the final ones (phase 0: 1 per round, phase 1: all 6; the
  // forwarded ones stay in staging), and the zero offset.
  CHECK(c.copy_bytes == 12 * 40 + 8 * 40 + 40);
  CHECK(c.rendezvous == 4);                 // 120-byte messages, limit 100
  CHECK(c.rendezvous_us == doctest::Approx(4000));
  CHECK(c.total_us() == doctest::Approx(4 + 20 + 4.8 + 0.84 + 4000));
}

TEST_CASE("above the eager limit: contiguous messages pay rendezvous, struct datatype messages pipeline") {
  // Combining Moore-9 alltoall with 400-byte blocks: every round carries 3 entries of 400 bytes
  // (mean above the struct threshold, 256), so all 4 messages go by struct datatype.
  const ir::Plan p = plan_combining(ir::Op::kAlltoall, testing::moore9(), {0, 1});
  CostModel m = unit_model();
  m.pipeline_us = 300;
  const CostBreakdown s = untrailed(p, {400}, m, std::nullopt);
  CHECK(s.rendezvous == 0);
  CHECK(s.pipelined == 4);
  CHECK(s.pipeline_us == doctest::Approx(1200));
  // Packed (no struct datatypes): the same messages are contiguous.
  const CostBreakdown packed = untrailed(p, {400}, m, std::nullopt, -1);
  CHECK(packed.rendezvous == 4);
  CHECK(packed.pipelined == 0);
  CHECK(packed.total_us() - packed.copy_us == doctest::Approx(s.total_us() - s.copy_us - s.segment_us - s.scatter_us + 2800));
  // Direct: single entries, contiguous.
  const CostBreakdown d = untrailed(plan_direct(ir::Op::kAlltoall, testing::moore9()), {400}, m, std::nullopt);
  CHECK(d.rendezvous == 8);
  CHECK(d.pipelined == 0);
  CHECK(s.pipelined_bytes == 4 * 1200);
  CHECK(explain(s, m).find("| pipelined 4 x 300.000 + 4800 B x 0.000000 = 1200.000 |") != std::string::npos);
  // The pipeline's per-byte term: on top of beta, negative where pipelining beats an eager
  // message per byte; only pipelined messages pay it.
  m.pipeline_us_per_byte = -0.005;  // half of beta
  const CostBreakdown cheaper = untrailed(p, {400}, m, std::nullopt);
  CHECK(cheaper.pipeline_us == doctest::Approx(1200 - 0.005 * 4800));
  CHECK(cheaper.total_us() == doctest::Approx(s.total_us() - 24));
  CHECK(untrailed(p, {400}, m, std::nullopt, -1).total_us() == doctest::Approx(packed.total_us()));
  m.pipeline_us_per_byte = 0;
  // The single copy's per-byte price: contiguous messages above the limit only.
  m.single_copy_us_per_byte = 0.5;
  CHECK(untrailed(p, {400}, m, std::nullopt).single_copy_us == 0);  // struct datatypes pipeline
  const CostBreakdown packed_bytes = untrailed(p, {400}, m, std::nullopt, -1);
  CHECK(packed_bytes.single_copy_bytes == 4 * 1200);
  CHECK(packed_bytes.single_copy_us == doctest::Approx(2400));
  CHECK(packed_bytes.total_us() == doctest::Approx(packed.total_us() + 2400));
  const CostBreakdown d_bytes = untrailed(plan_direct(ir::Op::kAlltoall, testing::moore9()), {400}, m, std::nullopt);
  CHECK(d_bytes.single_copy_bytes == 8 * 400);
  CHECK(explain(d_bytes, m).find("| single-copy 3200 B x 0.500000 = 1600.000 |") != std::string::npos);
  // Below the limit nothing is single-copy.
  CHECK(untrailed(plan_direct(ir::Op::kAlltoall, testing::moore9()), {40}, m, std::nullopt).single_copy_bytes == 0);
  m.single_copy_us_per_byte = 0;
  // Strided caller blocks (a halo's subarrays): single-entry messages pipeline too; packed
  // messages stay contiguous.
  const CostBreakdown ds = untrailed(plan_direct(ir::Op::kAlltoall, testing::moore9()), {400}, m, std::nullopt,
                                   LowerOptions::kDefaultStructMinBytes, {false});
  CHECK(ds.rendezvous == 0);
  CHECK(ds.pipelined == 8);
  CHECK(ds.single_copy_bytes == 0);
  std::vector<bool> faces_strided;
  const Neighborhood moore = testing::moore9();
  for (const ir::Offset& o : moore.offsets()) faces_strided.push_back(Neighborhood::nonzeros(o) != 1);
  const CostBreakdown dm = untrailed(plan_direct(ir::Op::kAlltoall, testing::moore9()), {400}, m, std::nullopt,
                                   LowerOptions::kDefaultStructMinBytes, faces_strided);
  CHECK(dm.rendezvous == 4);  // the corners
  CHECK(dm.pipelined == 4);   // the faces
  CHECK(dm.single_copy_bytes == 4 * 400);
  CHECK(untrailed(p, {400}, m, std::nullopt, -1, {false}).rendezvous == 4);
}

TEST_CASE("a struct message that is one run of memory on both sides takes the single copy") {
  // Box d=2 n=3 on a 2x1 torus, 2 KB blocks, so the dim-0 messages (3 entries, 6 KB) go by
  // struct datatype above the eager limit. Natural order: dimension 0 first, from send[0..2]
  // (one run) into a temp, a final block and a temp: not one run, pipelined. Reversed order:
  // dimension 1 wraps to the process itself and aliases its temps to the send blocks, then
  // dimension 0 sends send[0..2] into recv[0..2]: one run on both sides, Open MPI's single copy
  // (what `cartplan lower --dim-order 1,0` shows).
  const Neighborhood n = *stencils::box(2, 3, -1);
  const Grid g = *Grid::create({2, 1}, {true, true});
  CostModel m = unit_model();
  m.eager_limit_bytes = 4064;
  m.pipeline_us = 300;
  m.single_copy_us_per_byte = 0.5;
  REQUIRE(home_max_message_bytes(m, -1) == 4064);  // the single copy is dearer: no homes above the limit
  {
    // Unless the pipeline's per-byte price outweighs it: 300 + (0.8 + 0.001) x 4065 us pipelined
    // against 1000 + 0.5 x 4065 us by single copy (unit_model copies at 0.001 us per byte).
    CostModel dear_pipeline = m;
    dear_pipeline.pipeline_us_per_byte = 0.8;
    CHECK(home_max_message_bytes(dear_pipeline, -1) == -1);
  }
  const CostBreakdown natural = untrailed(plan_combining(ir::Op::kAlltoall, n, {0, 1}), {2048}, m, g);
  CHECK(natural.messages == 2);
  CHECK(natural.pipelined == 2);
  CHECK(natural.rendezvous == 0);
  const CostBreakdown reversed = untrailed(plan_combining(ir::Op::kAlltoall, n, {1, 0}), {2048}, m, g);
  CHECK(reversed.messages == 2);
  CHECK(reversed.pipelined == 0);
  CHECK(reversed.rendezvous == 2);
  CHECK(reversed.single_copy_bytes == 2 * 3 * 2048);
  CHECK(reversed.rendezvous_us == doctest::Approx(2 * m.rendezvous_us));
  // Where the single copy is cheap, the natural order's temps, which only the round of
  // dimension 1 (to the process itself) moves on, are received into their recv blocks
  // (final_home.h): recv[0..2] again, one run, the single copy.
  CostModel cheap = m;
  cheap.rendezvous_us = 1;
  cheap.single_copy_us_per_byte = 0;
  REQUIRE(home_max_message_bytes(cheap, -1) == -1);
  const CostBreakdown homed = untrailed(plan_combining(ir::Op::kAlltoall, n, {0, 1}), {2048}, cheap, g);
  CHECK(homed.pipelined == 0);
  CHECK(homed.rendezvous == 2);
  CHECK(homed.copy_bytes == 3 * 2048);  // the blocks with x = 0 only
  // On a 3x3 torus the temps go on to other processes: not one run, pipelined.
  CHECK(untrailed(plan_combining(ir::Op::kAlltoall, n, {0, 1}), {2048}, cheap, *Grid::create({3, 3}, {true, true})).pipelined == 4);
  // The same plan over strided caller blocks is not one run: pipelined.
  const CostBreakdown strided = untrailed(plan_combining(ir::Op::kAlltoall, n, {1, 0}), {2048}, m, g,
                                        LowerOptions::kDefaultStructMinBytes, {false});
  CHECK(strided.pipelined == 2);
  CHECK(strided.rendezvous == 0);
  // Without a grid nothing is lowered: struct messages pipeline, as before.
  CHECK(untrailed(plan_combining(ir::Op::kAlltoall, n, {1, 0}), {2048}, m, std::nullopt).rendezvous == 0);
  // Below the eager limit the question does not arise.
  CHECK(untrailed(plan_combining(ir::Op::kAlltoall, n, {1, 0}), {1024}, m, g).rendezvous == 0);
  // Sizes whose byte sums would overflow are not lowered (a block of INT64_MAX bytes is in the
  // invalid-input corpus; its caller refuses it later): struct messages pipeline, no crash.
  const CostBreakdown huge =
      untrailed(plan_combining(ir::Op::kAlltoall, n, {1, 0}), {std::numeric_limits<std::int64_t>::max()}, m, g);
  CHECK(huge.pipelined == 2);
  CHECK(huge.rendezvous == 0);
}

TEST_CASE("trailers: messages from the threshold on pipeline, one byte and a segment more on each side") {
  // Box d=2 n=3 on a 2x1 torus. A model whose pipeline is far cheaper than the single copy
  // trails every message above the eager limit (lower.h), so nothing is read with the single
  // copy: not direct's contiguous 4096-byte blocks, not the reversed order's struct messages
  // that are one run on both sides (the case above).
  const Neighborhood n = *stencils::box(2, 3, -1);
  const Grid g = *Grid::create({2, 1}, {true, true});
  CostModel m = unit_model();
  m.eager_limit_bytes = 4064;
  m.pipeline_us = 300;
  REQUIRE(trailer_min_bytes(m) == 4065);
  REQUIRE(home_max_message_bytes(m) == -1);  // no message above the limit is one run: homes everywhere
  const CostBreakdown d = predict(plan_direct(ir::Op::kAlltoall, n), {4096}, m, g);
  CHECK(d.messages == 6);  // the two offsets along dimension 1 wrap to the process itself
  CHECK(d.rendezvous == 0);
  CHECK(d.pipelined == 6);
  CHECK(d.wire_bytes == 6 * 4097);
  CHECK(d.pipelined_bytes == 6 * 4097);
  CHECK(d.segments == 6 * 4);  // body and trailer, on both sides
  const CostBreakdown untrailed_d = untrailed(plan_direct(ir::Op::kAlltoall, n), {4096}, m, g);
  CHECK(untrailed_d.rendezvous == 6);
  CHECK(untrailed_d.segments == 0);
  CHECK(d.total_us() < untrailed_d.total_us());
  const CostBreakdown reversed = predict(plan_combining(ir::Op::kAlltoall, n, {1, 0}), {2048}, m, g);
  CHECK(reversed.rendezvous == 0);
  CHECK(reversed.pipelined == 2);
  CHECK(untrailed(plan_combining(ir::Op::kAlltoall, n, {1, 0}), {2048}, m, g).rendezvous == 2);
  // An explicit threshold above the messages: as without trailers.
  CHECK(predict(plan_direct(ir::Op::kAlltoall, n), {4096}, m, g, LowerOptions::kDefaultStructMinBytes, {}, 4098).rendezvous == 6);
  // Below the threshold nothing changes; eager messages with a trailer only pay its segments.
  const CostBreakdown small = predict(plan_direct(ir::Op::kAlltoall, n), {100}, m, g, LowerOptions::kDefaultStructMinBytes, {}, 0);
  CHECK(small.pipelined == 0);
  CHECK(small.wire_bytes == 6 * 101);
  CHECK(small.segments == 6 * 4);
  // Reductions are lowered without trailers.
  const CostBreakdown reduce = predict(plan_direct(ir::Op::kAllreduce, n), {8192}, m, g);
  CHECK(reduce.wire_bytes == 6 * 8192);
}

TEST_CASE("on a torus the copied bytes are the lowering's, blocks received into their home included") {
  // predict() repeats the lowering's copy rules (packing, unpacking, aliases, struct datatypes,
  // temps received straight into their recv block); lower() is the reference. On a torus
  // every process runs the same program up to peers, so process 0 stands for all.
  std::vector<std::pair<Neighborhood, std::vector<std::vector<int>>>> cases = {
      {*stencils::box(2, 3, -1), {{1, 1}, {2, 1}, {1, 2}, {3, 3}, {4, 2}}},
      {*stencils::box(3, 3, -1), {{2, 1, 1}, {1, 2, 1}, {1, 1, 2}, {2, 2, 2}, {3, 1, 2}}},
      {*stencils::box(3, 5, -2), {{2, 1, 1}, {4, 1, 1}, {2, 3, 1}}},
      // Planners reuse temp slots from d = 4 on (120 slots for 136 temp writes).
      {*stencils::box(4, 3, -1), {{2, 1, 1, 1}, {1, 1, 2, 1}, {2, 2, 1, 1}}},
  };
  for (const auto& [n, grids] : cases)
    for (const std::vector<int>& dims : grids) {
      const Grid g = *Grid::create(dims, std::vector<bool>(dims.size(), true));
      std::vector<int> order(dims.size());
      for (std::size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int>(k);
      std::vector<ir::Plan> plans = {plan_direct(ir::Op::kAlltoall, n)};
      do plans.push_back(plan_combining(ir::Op::kAlltoall, n, order));
      while (std::next_permutation(order.begin(), order.end()));
      for (const ir::Plan& plan : plans)
        for (std::int64_t b : {8, 400, 4000}) {
          CAPTURE(dims);
          CAPTURE(plan.dim_order());
          CAPTURE(b);
          const Result<Binder> binder = Binder::create(plan);
          REQUIRE(binder.ok());
          const Result<BoundPlan> bound = binder->bind(g, g.coords(0), {b});
          REQUIRE(bound.ok());
          // Both models: homes in messages up to 100 bytes (unit_model), and in every message.
          CostModel no_limit = unit_model();
          no_limit.rendezvous_us = 0;
          for (const CostModel& model : {unit_model(), no_limit}) {
            LowerOptions lo;
            lo.home_max_message_bytes = home_max_message_bytes(model);
            lo.trailer_min_bytes = trailer_min_bytes(model);  // unit_model: from 101 bytes on
            const Result<Program> prog = lower(plan, *bound, contiguous_layout(plan, *bound), lo);
            REQUIRE(prog.ok());
            const CostBreakdown c = predict(plan, {b}, model, g);
            CHECK(c.copy_bytes == static_cast<double>(count(*prog).copied_bytes));
            CHECK(c.wire_bytes == static_cast<double>(count(*prog).sent_bytes));  // trailers included
          }
        }
    }
}

TEST_CASE("blocks received straight into their recv block: no copy after, and the message scatters them") {
  // Box d=3 on 2x1x1 with 400-byte blocks (struct datatypes): dimension 0's two messages bring
  // 9 blocks each, all of which only local rounds move on: received into their recv blocks.
  // What is copied: the 8 non-zero blocks with x = 0 (rounds to the process itself) and the
  // zero offset.
  const Neighborhood n = *stencils::box(3, 3, -1);
  const Grid g = *Grid::create({2, 1, 1}, {true, true, true});
  CostModel m = unit_model();
  m.eager_limit_bytes = 4096;  // the 3600-byte messages are eager: homes whatever the single copy costs
  const CostBreakdown c = untrailed(plan_combining(ir::Op::kAlltoall, n, {0, 1, 2}), {400}, m, g);
  CHECK(c.messages == 2);
  CHECK(c.copy_bytes == (8 + 1) * 400);
  CHECK(c.scatter_bytes == 18 * 400);
  CHECK(c.segments == 2 * (9 + 9));  // 9 entries at the sender, 9 final ones at the receiver
  // Above a limit (unit_model: 100 bytes, single copy dearer) the temps stay in staging and
  // are copied home at the end: 16 more blocks copied, one staging segment per message.
  const CostBreakdown limited = untrailed(plan_combining(ir::Op::kAlltoall, n, {0, 1, 2}), {400}, unit_model(), g);
  CHECK(limited.copy_bytes == (8 + 16 + 1) * 400);
  CHECK(limited.segments == 2 * (9 + 1 + 1));
}

TEST_CASE("fragments: small messages share one peer's fast box, larger ones miss it") {
  CostModel m = unit_model();
  m.eager_limit_bytes = 100000;  // no rendezvous here
  m.fragment_us = 0.5;
  const ir::Plan moore = plan_direct(ir::Op::kAlltoall, testing::moore9());
  // Without a grid every shift is a peer of its own: 8 messages, 8 fast boxes.
  CHECK(predict(moore, {200}, m, std::nullopt).fragments == 0);
  // Above the inline limit (256 bytes) no message uses the fast box.
  const CostBreakdown big = predict(moore, {300}, m, std::nullopt);
  CHECK(big.fragments == 8);
  CHECK(big.fragment_us == doctest::Approx(4.0));
  CostModel unpriced = m;
  unpriced.fragment_us = 0;
  CHECK(big.total_us() == doctest::Approx(predict(moore, {300}, unpriced, std::nullopt).total_us() + 4.0));

  // Box d=2 n=9 on 2x1: the 36 offsets with an odd x all reach the other process in the one
  // phase of the direct plan (even x wraps to the process itself). With 100-byte blocks each
  // message takes 132 bytes of the 4096-byte fast box: 31 fit, 5 are fragments.
  const ir::Plan deep = plan_direct(ir::Op::kAlltoall, *stencils::box(2, 9, -4));
  const Grid g = *Grid::create({2, 1}, {true, true});
  CHECK(predict(deep, {4}, m, g).fragments == 0);
  CHECK(predict(deep, {100}, m, g).fragments == 5);
  CHECK(predict(deep, {257}, m, g).fragments == 36);
  // A larger fast box (--mca btl_vader_fbox_size 65536) takes them all.
  CostModel roomy = m;
  roomy.fast_box_bytes = 65536;
  CHECK(predict(deep, {100}, roomy, g).fragments == 0);
  // On a 4x2 torus the shifts reach 7 different processes, at most 12 messages each (x = 0 mod
  // 4, y odd): every fast box has room for them.
  const Grid wide = *Grid::create({4, 2}, {true, true});
  CHECK(predict(deep, {100}, m, wide).fragments == 0);
  // On a mesh a round counts for the share of processes that have its peer, like its message.
  const Grid mesh = *Grid::create({2, 1}, {false, false});
  const CostBreakdown edge = predict(deep, {300}, m, mesh);
  CHECK(edge.fragments == doctest::Approx(edge.messages));
}

TEST_CASE("fragments: a fast box per rank reached, not per shift") {
  // Offsets +1 and +3 in one dimension, 200-byte messages, a fast box of 300 bytes: each
  // message fits alone (232 bytes with headers), two to one rank do not.
  const ir::Plan p = plan_direct(ir::Op::kAlltoall, *Neighborhood::create(1, {{1}, {3}}));
  CostModel m = unit_model();
  m.eager_limit_bytes = 100000;
  m.fast_box_bytes = 300;
  // A ring of 2: both shifts reach the other process, whose box holds only the first.
  CHECK(predict(p, {200}, m, *Grid::create({2}, {true})).fragments == 1);
  // A ring of 4: two processes, a box each.
  CHECK(predict(p, {200}, m, *Grid::create({4}, {true})).fragments == 0);
  // A mesh of 4: from the middle process (coordinate 2) +1 reaches rank 3 and +3 leaves the
  // mesh; the round still counts for the processes that have that peer, in a box of its own.
  CHECK(predict(p, {200}, m, *Grid::create({4}, {false})).fragments == 0);
}

TEST_CASE("fragments: combining's messages of several blocks, in every phase") {
  // Combining box d=2 n=9 on 3x3: each phase sends 6 messages of 9 blocks (shifts +-1, +-2, +-4
  // of its dimension; +-3 wraps to the process itself), 3 to each neighbour. 9 x 8 = 72 bytes
  // fit in the fast box; 9 x 40 = 360 bytes are above the inline limit.
  CostModel m = unit_model();
  m.eager_limit_bytes = 100000;
  const ir::Plan comb = plan_combining(ir::Op::kAlltoall, *stencils::box(2, 9, -4), {0, 1});
  const Grid g = *Grid::create({3, 3}, {true, true});
  const CostBreakdown small = predict(comb, {8}, m, g);
  const CostBreakdown large = predict(comb, {40}, m, g);
  CHECK(large.fragments == large.messages);
  CHECK(small.fragments == 0);
  CHECK(small.phases == 2);
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
  CHECK(c.wire_bytes == 4 * 800 + 4 * 8);
  // The mean (3232 / 9) would put 9 x 359 bytes on the wire instead.
  CHECK(c.wire_bytes != predict(direct, {3232 / 9}, m, std::nullopt).wire_bytes);
}

TEST_CASE("rounds that wrap to the process itself are copies, not messages") {
  const Neighborhood n = *stencils::box(3, 3, -1);
  const ir::Plan p = plan_combining(ir::Op::kAlltoall, n, {0, 1, 2});
  const Grid g = *Grid::create({2, 1, 1}, {true, true, true});
  const CostBreakdown c = predict(p, {4}, unit_model(), g);
  CHECK(c.messages == 2);  // the two rounds of dimension 0
  CHECK(c.phases == 1);
  // Volume 54: the dim-0 rounds carry 18 entries (9 each, packed; 2 final ones unpacked), the
  // other 36 are self moves, of which the 24 final ones copy and the forwarded 12 are aliased;
  // and the zero offset. The same count as engine/lower_test's program for this case.
  CHECK(c.wire_bytes == 18 * 4);
  CHECK(c.copy_bytes == (18 + 2 + 24 + 1) * 4);
  const std::string line = explain(c, unit_model());
  CHECK(line.find("messages 2 x 1.000 = 2.000") == 0);
  CHECK(line.find("phases 1 x 10.000 = 10.000") != std::string::npos);
}

TEST_CASE("blocks of struct_min bytes or more go by struct datatype: no copies") {
  const ir::Plan p = plan_combining(ir::Op::kAlltoall, testing::moore9(), {0, 1});
  const std::int64_t big = LowerOptions::kDefaultStructMinBytes;
  const CostBreakdown c = untrailed(p, {big}, unit_model(), std::nullopt);
  CHECK(c.copy_bytes == big);  // the zero offset only
  // Phase 0: 2 messages of 3 entries, received as 1 final block and the 2 temps back to back;
  // phase 1: 2 messages of 3 entries, all final. Senders walk every entry.
  CHECK(c.segments == 2 * (3 + 1 + 1) + 2 * (3 + 3));
  CHECK(c.segment_us == doctest::Approx(22 * unit_model().segment_us));
  CHECK(c.scatter_bytes == (2 * 1 + 2 * 3) * big);  // the final blocks received in place
  CHECK(untrailed(p, {big - 1}, unit_model(), std::nullopt).copy_bytes == 21 * (big - 1));
}

TEST_CASE("on a mesh, rounds count for the share of processes that have the peer") {
  const Neighborhood n = *stencils::moore(2, 1);  // 8 offsets and the zero offset
  const ir::Plan direct = plan_direct(ir::Op::kAlltoall, n);
  // A 2x2 mesh: every process is a corner with 3 of its 8 neighbours (faces 1/2, corners 1/4).
  const Grid mesh = *Grid::create({2, 2}, {false, false});
  const CostBreakdown c = predict(direct, {8}, unit_model(), mesh);
  CHECK(c.messages == doctest::Approx(3.0));
  CHECK(c.wire_bytes == doctest::Approx(3.0 * 8));
  CHECK(peer_share({1, 0}, mesh) == doctest::Approx(0.5));
  CHECK(peer_share({2, 0}, mesh) == 0);
  // A 4x4 mesh: a face shift reaches a peer from 3 of 4 columns.
  CHECK(peer_share({1, 0}, *Grid::create({4, 4}, {false, false})) == doctest::Approx(0.75));
  CHECK(peer_share({1, 1}, *Grid::create({4, 4}, {true, false})) == doctest::Approx(0.75));
  // The same plan on the torus sends all 8.
  CHECK(predict(direct, {8}, unit_model(), *Grid::create({4, 4}, {true, true})).messages == 8);
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
