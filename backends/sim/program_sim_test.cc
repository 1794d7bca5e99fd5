// Program simulator tests: lowered programs of every op and algorithm deliver exactly what the
// plan simulator delivers, over random neighbourhoods on tori and meshes, with the same traffic
// (minus rounds to the rank itself); broken programs fail with messages that name the fault.
//
// CARTPLAN_PROPERTY_SEED=<n> and CARTPLAN_PROPERTY_CASES=<n> change the random run (defaults 1, 80).
#include "backends/sim/program_sim.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <utility>

#include "backends/sim/simulator.h"
#include "engine/optimizer.h"
#include "engine/planner.h"
#include "engine/stencils.h"
#include "tests/fixtures.h"

namespace cartplan::sim {
namespace {

using engine::Grid;
using engine::kNoRank;
using engine::Loc;

long env_or(const char* name, long fallback) {
  const char* v = std::getenv(name);
  return v ? std::strtol(v, nullptr, 10) : fallback;
}

std::string first(const std::vector<std::string>& errors) { return errors.empty() ? "" : errors.front(); }

// Runs the programs and the plan simulator on the same input and checks that both deliver,
// and that the programs' traffic is the plan's minus its rounds to the rank itself (those are
// local steps in a program). Per rank, the program's messages are its bound rounds with a peer.

void check_same_as_plan_sim(const ir::Plan& plan, const Grid& grid, const ProgramSimOptions& o) {
  const Result<LoweredGrid> lowered = lower_grid(plan, grid, o);
  REQUIRE_MESSAGE(lowered.ok(), (lowered.ok() ? "" : lowered.error()));
  const Result<ProgramSimReport> r = run_programs(plan, grid, *lowered, o);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error()));
  CHECK_MESSAGE(r->ok, first(r->errors));
  CHECK(r->error_count == 0);
  CHECK(r->ranks == grid.size());

  SimOptions so;
  so.block_bytes = o.block_bytes;
  so.root = o.root;
  const Result<SimReport> s = simulate(plan, grid, so);
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error()));
  CHECK_MESSAGE(s->ok, first(s->errors));

  std::int64_t self_messages = 0, self_bytes = 0, trailers = 0;
  for (int rank = 0; rank < grid.size(); ++rank) {
    const engine::BoundPlan& b = lowered->bound[static_cast<std::size_t>(rank)];
    std::int64_t messages = 0, sent = 0, received = 0;
    for (const engine::BoundRound& br : b.rounds) {
      if (br.send_peer == rank) {
        ++self_messages;
        self_bytes += br.send_bytes;
      } else if (br.send_peer != kNoRank) {
        ++messages;
        sent += br.send_bytes;
      }
      if (br.recv_peer != rank && br.recv_peer != kNoRank) {
        ++messages;
        received += br.recv_bytes;
      }
    }
    const engine::Program& prog = lowered->programs[static_cast<std::size_t>(rank)];
    const engine::ProgramCounts c = engine::count(prog);
    CAPTURE(rank);
    // Trailers (engine::LowerOptions::trailer_min_bytes): one byte more per message from the
    // threshold on, alltoall and allgather only.
    std::int64_t sent_trailers = 0, received_trailers = 0;
    for (const engine::PhaseProgram& ph : prog.phases)
      for (const engine::Message& m : ph.messages) {
        const std::int64_t data = m.bytes - (m.trailer ? 1 : 0);
        CHECK(m.trailer == (!ir::is_reduction_or_rooted(plan.op()) && o.trailer_min_bytes >= 0 && data > 0 && data >= o.trailer_min_bytes));
        (m.recv ? received_trailers : sent_trailers) += m.trailer ? 1 : 0;
      }
    trailers += sent_trailers;
    CHECK(c.messages == messages);
    CHECK(c.sent_bytes == sent + sent_trailers);
    CHECK(c.received_bytes == received + received_trailers);
  }
  CHECK(r->messages == s->messages - self_messages);
  CHECK(r->bytes == s->bytes - self_bytes + trailers);
}

TEST_CASE("moore9 alltoall and allgather on a 4x4 torus: delivered, same traffic as the plan") {
  for (ir::Op op : {ir::Op::kAlltoall, ir::Op::kAllgather})
    for (const ir::Plan& p : {engine::plan_direct(op, testing::moore9()), engine::plan_combining(op, testing::moore9(), {0, 1})}) {
      const std::string op_name = ir::to_string(op);
      CAPTURE(op_name);
      const std::string algo = ir::to_string(p.algorithm());
      CAPTURE(algo);
      ProgramSimOptions o;
      o.block_bytes = {10};
      check_same_as_plan_sim(p, *Grid::create({4, 4}, {true, true}), o);
      const Result<ProgramSimReport> r = simulate_programs(p, *Grid::create({4, 4}, {true, true}), o);
      REQUIRE(r.ok());
      // No round wraps around to the rank itself on a 4x4 torus: every block transfer is a message's.
      CHECK(r->bytes == 16 * p.stats().volume * 10);
      CHECK(r->messages == 16 * p.stats().rounds);
    }
}

TEST_CASE("a 1x1 grid and a size-2 ring: every round is to the rank itself or wraps twice") {
  const engine::Neighborhood n = testing::nbh(2, {{1, 0}, {-1, 0}, {0, 1}, {2, 1}, {0, 0}});
  for (const std::vector<int>& dims : {std::vector<int>{1, 1}, std::vector<int>{2, 1}, std::vector<int>{1, 3}})
    for (ir::Op op : {ir::Op::kAlltoall, ir::Op::kAllgather, ir::Op::kAllreduce, ir::Op::kReduceScatter})
      for (const ir::Plan& p : {engine::plan_direct(op, n), engine::plan_combining(op, n, {1, 0})}) {
        CAPTURE(dims[0]);
        CAPTURE(dims[1]);
        const std::string op_name = ir::to_string(op);
      CAPTURE(op_name);
        const std::string algo = ir::to_string(p.algorithm());
      CAPTURE(algo);
        ProgramSimOptions o;
        o.block_bytes = {16};
        check_same_as_plan_sim(p, *Grid::create(dims, {true, true}), o);
        check_same_as_plan_sim(p, *Grid::create(dims, {false, true}), o);
      }
}

struct Case {
  engine::Neighborhood nbh;
  Grid grid;
  std::vector<int> order;
  std::string text;
};

// Random neighbourhoods with duplicates and the zero offset, d = 1..3, dims 1..3 (1..5 for
// d = 1), periodic, non-periodic or mixed.
Case random_case(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int d = pick(1, 3);
  std::vector<ir::Offset> offsets;
  const int distinct = pick(1, 7);
  for (int i = 0; i < distinct; ++i) {
    ir::Offset o(static_cast<std::size_t>(d));
    for (int& x : o) x = pick(0, 2) == 0 ? 0 : pick(-3, 3);
    offsets.push_back(o);
  }
  if (pick(0, 2) == 0) offsets.push_back(ir::Offset(static_cast<std::size_t>(d), 0));
  for (int dup = pick(0, 2); dup > 0; --dup) offsets.push_back(offsets[static_cast<std::size_t>(pick(0, distinct - 1))]);
  std::shuffle(offsets.begin(), offsets.end(), rng);
  std::vector<int> dims(static_cast<std::size_t>(d));
  std::vector<bool> periods(static_cast<std::size_t>(d));
  const int kind = pick(0, 2);  // all periodic, none, mixed
  for (int k = 0; k < d; ++k) {
    dims[static_cast<std::size_t>(k)] = d == 1 ? pick(1, 5) : pick(1, 3);
    periods[static_cast<std::size_t>(k)] = kind == 0 ? true : kind == 1 ? false : pick(0, 1) == 1;
  }
  std::vector<int> order = engine::natural_dim_order(d);
  std::shuffle(order.begin(), order.end(), rng);
  std::string text = "offsets:";
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    for (int k = 0; k < d; ++k) text += (k ? "," : "") + std::to_string(offsets[i][static_cast<std::size_t>(k)]);
    text += i + 1 < offsets.size() ? ";" : "";
  }
  text += " dims";
  for (int k = 0; k < d; ++k)
    text += " " + std::to_string(dims[static_cast<std::size_t>(k)]) + (periods[static_cast<std::size_t>(k)] ? "p" : "m");
  return Case{testing::nbh(d, offsets), *Grid::create(dims, periods), order, text};
}

constexpr ir::Op kOps[] = {ir::Op::kAlltoall,      ir::Op::kAllgather, ir::Op::kAllreduce, ir::Op::kReduceScatter,
                           ir::Op::kBcast,         ir::Op::kGather,    ir::Op::kScatter,   ir::Op::kReduce};

TEST_CASE("random neighbourhoods x every op x direct/combining/optimizer's plans x tori/meshes") {
  std::mt19937 rng(static_cast<unsigned>(env_or("CARTPLAN_PROPERTY_SEED", 1)));
  const long cases = env_or("CARTPLAN_PROPERTY_CASES", 80);
  long runs = 0, meshes = 0, dups = 0, zeros = 0, roots = 0, structs = 0, trailed = 0;
  for (long c = 0; c < cases; ++c) {
    const Case k = random_case(rng);
    CAPTURE(c);
    CAPTURE(k.text);
    const std::set<ir::Offset> distinct(k.nbh.offsets().begin(), k.nbh.offsets().end());
    dups += static_cast<int>(distinct.size()) < k.nbh.size();
    zeros += k.nbh.nonzero_count() < k.nbh.size();
    bool mesh = false;
    for (bool p : k.grid.periods()) mesh = mesh || !p;
    meshes += mesh;
    for (ir::Op op : kOps) {
      const std::string op_name = ir::to_string(op);
      CAPTURE(op_name);
      engine::PlanOptions po;
      po.block_bytes = 8 * std::uniform_int_distribution<int>(0, 64)(rng);
      po.grid = k.grid;
      const Result<ir::Plan> chosen = engine::make_plan(op, k.nbh, po);
      REQUIRE(chosen.ok());
      const ir::Plan direct = engine::plan_direct(op, k.nbh), combining = engine::plan_combining(op, k.nbh, k.order);
      for (const ir::Plan* plan : {&direct, &combining, &*chosen}) {
        const std::string algo = ir::to_string(plan->algorithm());
        CAPTURE(algo);
        ProgramSimOptions o;
        o.block_bytes = {8 * std::uniform_int_distribution<int>(1, 3)(rng)};
        // v-style blocks, some empty (the ops whose blocks have their own shapes).
        if (ir::blocks_have_own_shape(op) && c % 2 == 0) {
          o.block_bytes.clear();
          for (int i = 0; i < k.nbh.size(); ++i) o.block_bytes.push_back(std::uniform_int_distribution<int>(0, 9)(rng));
        }
        std::vector<int> rs = {-1};
        if (ir::is_rooted(op)) {
          rs = {std::uniform_int_distribution<int>(0, k.grid.size() - 1)(rng)};
          if (k.grid.size() <= 6)
            for (int r = 0; r < k.grid.size(); ++r) rs.push_back(r);
        }
        // Packed and struct datatype messages both: with struct_min_bytes 0 every message of
        // several parts scatters into the caller's blocks and staging (temps received into
        // their recv blocks included), whatever the block size.
        o.struct_min_bytes = c % 3 == 0 ? 0 : engine::LowerOptions::kDefaultStructMinBytes;
        structs += o.struct_min_bytes == 0;
        // Trailers on every message, from 16 bytes on (some messages of a phase), or none.
        o.trailer_min_bytes = c % 4 == 1 ? 0 : c % 4 == 2 ? 16 : -1;
        trailed += o.trailer_min_bytes >= 0;
        for (int root : rs) {
          CAPTURE(root);
          CAPTURE(o.struct_min_bytes);
          CAPTURE(o.trailer_min_bytes);
          o.root = root;
          check_same_as_plan_sim(*plan, k.grid, o);
          ++runs;
          roots += root >= 0;
        }
      }
    }
  }
  CHECK(meshes > cases / 2);
  CHECK(dups > cases / 5);
  CHECK(zeros > cases / 5);
  CHECK(roots > cases);
  CHECK(structs > cases / 4);
  CHECK(trailed > cases / 4);
  MESSAGE("ran " << runs << " lowered grids (" << roots << " with a root); " << meshes << " meshes, " << dups
                 << " with duplicates, " << zeros << " with the zero offset");
}

// Broken programs: each change below must make the run fail, with a message naming the fault.
struct Broken {
  ir::Plan plan;
  Grid grid;
  ProgramSimOptions options;
  LoweredGrid lowered;
};

Broken lowered(ir::Plan plan, Grid grid, std::vector<std::int64_t> block_bytes, int root = -1) {
  ProgramSimOptions o;
  o.block_bytes = std::move(block_bytes);
  o.root = root;
  Result<LoweredGrid> l = lower_grid(plan, grid, o);
  REQUIRE(l.ok());
  REQUIRE(run_programs(plan, grid, *l, o)->ok);  // fine before the change
  return Broken{std::move(plan), std::move(grid), o, std::move(*l)};
}

std::vector<std::string> errors_of(const Broken& b) {
  const Result<ProgramSimReport> r = run_programs(b.plan, b.grid, b.lowered, b.options);
  REQUIRE(r.ok());
  CHECK_FALSE(r->ok);
  CHECK(r->error_count > 0);
  return r->errors;
}

TEST_CASE("dropped steps: unpacking a received message, packing before a phase, a final copy") {
  // Combining alltoall on a torus: blocks forwarded together are received into staging and
  // unpacked into the caller's blocks by final steps (deliveries move to the end); the zero
  // offset is a final copy.
  Broken b = lowered(engine::plan_combining(ir::Op::kAlltoall, testing::moore9(), {0, 1}),
                     *Grid::create({4, 4}, {true, true}), {8});
  std::vector<engine::Step>& finals = b.lowered.programs[5].final_steps;
  auto unpack = std::find_if(finals.begin(), finals.end(), [](const engine::Step& st) {
    return st.from.kind == Loc::Kind::kStaging && st.to.kind == Loc::Kind::kRecv;
  });
  REQUIRE(unpack != finals.end());
  const engine::Step dropped = *unpack;
  finals.erase(unpack);
  CHECK(testing::has_error(errors_of(b), "rank 5, recv block " + std::to_string(dropped.to.index) + ": never written"));

  Broken f = lowered(engine::plan_direct(ir::Op::kAllgather, testing::moore9()), *Grid::create({3, 3}, {true, true}), {4});
  REQUIRE(!f.lowered.programs[0].final_steps.empty());
  f.lowered.programs[0].final_steps.clear();
  CHECK(testing::has_error(errors_of(f), "rank 0, recv block 4: never written (expected block 0 of rank 0)"));

  // Packing: a send of several blocks on a ring of 2 in dimension 0 goes through staging; drop
  // the rank's `before` steps and the send reads staging bytes that nothing wrote.
  Broken s = lowered(engine::plan_combining(ir::Op::kAlltoall, testing::moore9(), {1, 0}),
                     *Grid::create({3, 3}, {true, true}), {8});
  bool cleared = false;
  for (engine::PhaseProgram& pp : s.lowered.programs[2].phases)
    for (const engine::Step& st : pp.before)
      if (st.to.kind == Loc::Kind::kStaging && !cleared) {
        pp.before.clear();
        cleared = true;
        break;
      }
  REQUIRE(cleared);
  CHECK(testing::has_error(errors_of(s), "staging bytes never written in this run"));
}

TEST_CASE("a trailer received in front of the data shifts every byte of the message") {
  // Direct alltoall with 8-byte blocks and a trailer on every message: rank 4's first receive
  // gets the trailer part first, so the block's bytes start one late.
  ProgramSimOptions o;
  o.block_bytes = {8};
  o.trailer_min_bytes = 0;
  const ir::Plan plan = engine::plan_direct(ir::Op::kAlltoall, testing::moore9());
  const Grid grid = *Grid::create({3, 3}, {true, true});
  Result<LoweredGrid> l = lower_grid(plan, grid, o);
  REQUIRE(l.ok());
  REQUIRE(run_programs(plan, grid, *l, o)->ok);
  engine::Message& m = l->programs[4].phases[0].messages[0];
  REQUIRE(m.recv);
  REQUIRE(m.trailer);
  REQUIRE(m.parts.size() == 2);
  std::swap(m.parts[0], m.parts[1]);
  const Result<ProgramSimReport> r = run_programs(plan, grid, *l, o);
  REQUIRE(r.ok());
  CHECK_FALSE(r->ok);
  CHECK(testing::has_error(r->errors, "rank 4, recv block"));
}

TEST_CASE("swapped parts of a message deliver the wrong blocks") {
  // Direct reduce_scatter... has one entry per round; combining reduce_scatter forwards several
  // partial sums per round: a struct message of several scratch/send parts.
  Broken b = lowered(engine::plan_combining(ir::Op::kReduceScatter, testing::moore9(), {0, 1}),
                     *Grid::create({4, 4}, {true, true}), {16});
  bool swapped = false;
  for (engine::PhaseProgram& pp : b.lowered.programs[0].phases)
    for (engine::Message& m : pp.messages)
      if (!swapped && !m.recv && m.parts.size() >= 2) {
        std::swap(m.parts[0], m.parts[1]);
        swapped = true;
      }
  REQUIRE(swapped);
  CHECK(testing::has_error(errors_of(b), "holds wrong values, expected the sum of"));

  // Alltoall: swap the two receive parts of a struct message on a v-style layout made by hand.
  Broken a = lowered(engine::plan_direct(ir::Op::kAlltoall, testing::moore9()), *Grid::create({3, 3}, {true, true}), {8});
  engine::Message& m = a.lowered.programs[4].phases[0].messages[0];
  REQUIRE(m.recv);
  REQUIRE(m.parts.size() == 1);
  engine::Message& other = a.lowered.programs[4].phases[0].messages[1];
  REQUIRE(other.recv);
  std::swap(m.parts[0], other.parts[0]);  // two receives write each other's blocks
  CHECK(testing::has_error(errors_of(a), "rank 4, recv block"));
  CHECK(testing::has_error(errors_of(a), ": holds block"));
}

TEST_CASE("messages without partner, of the wrong size, and overlapping receives") {
  const ir::Plan p = engine::plan_direct(ir::Op::kAllgather, testing::moore9());
  const Grid g = *Grid::create({3, 3}, {false, false});

  Broken drop = lowered(p, g, {8});
  auto& msgs = drop.lowered.programs[4].phases[0].messages;
  auto send = std::find_if(msgs.begin(), msgs.end(), [](const engine::Message& m) { return !m.recv; });
  REQUIRE(send != msgs.end());
  const int peer = send->peer, tag = send->tag, round = send->round;
  msgs.erase(send);
  CHECK(testing::has_error(errors_of(drop), "rank " + std::to_string(peer) + ", phase 0, round " + std::to_string(round) +
                                                ": receive from rank 4 (tag " + std::to_string(tag) +
                                                "): rank 4 sends no such message in this phase"));

  Broken orphan = lowered(p, g, {8});
  auto& recvs = orphan.lowered.programs[4].phases[0].messages;
  REQUIRE(recvs.front().recv);
  recvs.erase(recvs.begin());
  CHECK(testing::has_error(errors_of(orphan), "has no matching receive"));

  Broken size = lowered(p, g, {8});
  engine::Message& m = size.lowered.programs[4].phases[0].messages.back();
  REQUIRE(!m.recv);
  m.parts[0].bytes = 4;
  m.bytes = 4;
  CHECK(testing::has_error(errors_of(size), "expects 8 bytes (message says 8), rank 4 sends 4"));

  Broken twice = lowered(p, g, {8});
  auto& ms = twice.lowered.programs[4].phases[0].messages;
  REQUIRE(ms[0].recv);
  REQUIRE(ms[1].recv);
  ms[1].parts = ms[0].parts;
  CHECK(testing::has_error(errors_of(twice), "in the same phase"));

  Broken outside = lowered(p, g, {8});
  outside.lowered.programs[4].phases[0].messages[0].parts[0].index = 99;
  CHECK(testing::has_error(errors_of(outside), "recv[99] does not exist (9 such blocks)"));
}

TEST_CASE("rooted ops: recv blocks that are not significant stay untouched") {
  const engine::Neighborhood n = *engine::stencils::box(2, 3, -1);
  const Grid g = *Grid::create({3, 4}, {true, false});
  int redirects = 0;
  for (ir::Op op : {ir::Op::kBcast, ir::Op::kGather, ir::Op::kScatter, ir::Op::kReduce}) {
    const std::string op_name = ir::to_string(op);
      CAPTURE(op_name);
    Broken b = lowered(engine::plan_combining(op, n, {0, 1}), g, {8}, /*root=*/5);
    // Redirect a scratch write into the caller's recv block of a rank where it is not a result.
    bool redirected = false;
    for (int r = 0; r < g.size() && !redirected; ++r)
      for (engine::PhaseProgram& pp : b.lowered.programs[static_cast<std::size_t>(r)].phases)
        for (engine::Message& m : pp.messages)
          for (Loc& part : m.parts)
            if (!redirected && m.recv && part.kind == Loc::Kind::kScratch) {
              for (int i = 0; i < b.plan.num_recv_blocks() && !redirected; ++i)
                if (!b.lowered.bound[static_cast<std::size_t>(r)].recv_result[static_cast<std::size_t>(i)]) {
                  part = Loc{Loc::Kind::kRecv, i, 0, part.bytes, true};
                  redirected = true;
                }
            }
    if (!redirected) continue;  // no rank forwards through scratch in this op
    ++redirects;
    CHECK(testing::has_error(errors_of(b), "written although not significant on this rank"));
  }
  CHECK(redirects >= 2);
}

TEST_CASE("bad arguments are errors, not reports") {
  const Grid g = *Grid::create({3, 3}, {true, true});
  ProgramSimOptions o;
  o.block_bytes = {12};
  CHECK(simulate_programs(engine::plan_direct(ir::Op::kAllreduce, testing::moore9()), g, o).error().find(
            "not a multiple of 8") != std::string::npos);
  o.block_bytes = {8};
  CHECK(simulate_programs(engine::plan_direct(ir::Op::kReduce, testing::moore9()), g, o).error() ==
        "root -1 is not a rank of the grid (0..8)");
  o.root = 0;
  CHECK(simulate_programs(engine::plan_direct(ir::Op::kAlltoall, testing::moore9()), g, o).error() ==
        "alltoall takes no root");
  o.root = -1;
  CHECK(simulate_programs(engine::plan_direct(ir::Op::kAlltoall, testing::moore9()), *Grid::create({3}, {true}), o)
            .error() == "rank 0: grid has 1 dimensions, the plan 2");
}

}  // namespace
}  // namespace cartplan::sim
