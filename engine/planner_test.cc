// Planner tests: shapes of direct and combining plans, and the papers' formulas (seed 000,
// Prop. 3.2 and 3.3, Table 1, Figure 2).
#include "engine/planner.h"

#include <doctest/doctest.h>

#include <set>

#include "engine/stencils.h"
#include "ir/verify.h"
#include "tests/fixtures.h"

namespace cartplan::engine {
namespace {

using testing::nbh;
using testing::recv;
using testing::send;
using testing::temp;

Neighborhood box_nbh(int d, int n, int f) { return *stencils::box(d, n, f); }

int sum_z(const Neighborhood& n) {
  int v = 0;
  for (const Offset& o : n.offsets()) v += Neighborhood::nonzeros(o);
  return v;
}

int sum_c(const Neighborhood& n) {
  int c = 0;
  for (int k = 0; k < n.ndims(); ++k) c += n.distinct_nonzero(k);
  return c;
}

TEST_CASE("direct alltoall: one round per non-zero offset, zero offset copied") {
  const Neighborhood n = nbh(2, {{1, 0}, {0, 0}, {0, -1}});
  const ir::Plan p = plan_direct(ir::Op::kAlltoall, n);
  CHECK(ir::verify(p).empty());
  REQUIRE(p.phases().size() == 1);
  CHECK(p.phases()[0].dim == ir::Phase::kAllDims);
  REQUIRE(p.phases()[0].rounds.size() == 2);
  CHECK(p.phases()[0].rounds[0].shift == Offset{1, 0});
  CHECK(p.phases()[0].rounds[0].send == std::vector<ir::BufRef>{send(0)});
  CHECK(p.phases()[0].rounds[0].recv == std::vector<ir::BufRef>{recv(0)});
  CHECK(p.phases()[0].rounds[1].shift == Offset{0, -1});
  CHECK(p.phases()[0].rounds[1].recv == std::vector<ir::BufRef>{recv(2)});
  REQUIRE(p.copies().size() == 1);
  CHECK(p.copies()[0].from == send(1));
  CHECK(p.copies()[0].to == recv(1));
  CHECK(p.stats().t == 2);
  CHECK(p.stats().rounds == 2);
  CHECK(p.stats().volume == 2);
}

TEST_CASE("plan_direct and plan_combining name their kind for every op") {
  const Neighborhood n = testing::moore9();
  for (ir::Op op : {ir::Op::kAlltoall, ir::Op::kAllgather, ir::Op::kAllreduce, ir::Op::kReduceScatter, ir::Op::kBcast,
                    ir::Op::kGather, ir::Op::kScatter, ir::Op::kReduce}) {
    CAPTURE(ir::to_string(op));
    CHECK(plan_direct(op, n).kind() == ir::PlanKind::kDirect);
    CHECK(plan_direct(op, n).algorithm() == ir::Algorithm::kDirect);
    CHECK(plan_combining(op, n, {0, 1}).kind() == ir::PlanKind::kCombining);
    CHECK(plan_combining(op, n, {0, 1}).algorithm() == ir::Algorithm::kCombining);
  }
}

TEST_CASE("direct: duplicates share a round (alltoall) or are copied (allgather)") {
  const Neighborhood n = nbh(1, {{2}, {-1}, {2}});
  const ir::Plan a = plan_direct(ir::Op::kAlltoall, n);
  CHECK(ir::verify(a).empty());
  CHECK(a.stats().rounds == 2);
  CHECK(a.stats().volume == 3);
  CHECK(a.phases()[0].rounds[0].recv == std::vector<ir::BufRef>{recv(0), recv(2)});
  const ir::Plan g = plan_direct(ir::Op::kAllgather, n);
  CHECK(ir::verify(g).empty());
  CHECK(g.stats().volume == 2);
  REQUIRE(g.copies().size() == 1);
  CHECK(g.copies()[0].from == recv(0));
  CHECK(g.copies()[0].to == recv(2));
}

TEST_CASE("combining alltoall on the 9-point stencil: 4 rounds, volume 12, ping-pong through temp") {
  const Neighborhood n = testing::moore9();
  const ir::Plan p = plan_combining(ir::Op::kAlltoall, n, {0, 1});
  CHECK(ir::verify(p).empty());
  CHECK(p.stats().rounds == 4);
  CHECK(p.stats().volume == 12);
  CHECK(p.stats().phase_rounds == std::vector<int>{2, 2});
  REQUIRE(p.phases().size() == 2);
  CHECK(p.phases()[0].dim == 0);
  CHECK(p.phases()[0].rounds[0].shift == Offset{-1, 0});
  // Offsets (-1,-1), (-1,0), (-1,1) are blocks 0, 1, 2: corners go to a temp slot first,
  // the edge block straight to its recv block.
  CHECK(p.phases()[0].rounds[0].send == std::vector<ir::BufRef>{send(0), send(1), send(2)});
  CHECK(p.phases()[0].rounds[0].recv == std::vector<ir::BufRef>{temp(0), recv(1), temp(1)});
  // Second phase: the corner leaves the temp slot for its recv block.
  CHECK(p.phases()[1].rounds[0].shift == Offset{0, -1});
  CHECK(p.phases()[1].rounds[0].send.front() == temp(0));
  CHECK(p.phases()[1].rounds[0].recv.front() == recv(0));
  CHECK(p.temp_slots().size() == 4);  // one per corner (two hops each)
}

TEST_CASE("combining alltoall with three hops uses two temp slots per block") {
  const Neighborhood n = nbh(3, {{1, 1, 1}});
  const ir::Plan p = plan_combining(ir::Op::kAlltoall, n, {0, 1, 2});
  CHECK(ir::verify(p).empty());
  REQUIRE(p.temp_slots().size() == 2);
  CHECK(p.phases()[0].rounds[0].recv[0] == temp(0));
  CHECK(p.phases()[1].rounds[0].send[0] == temp(0));
  CHECK(p.phases()[1].rounds[0].recv[0] == temp(1));
  CHECK(p.phases()[2].rounds[0].send[0] == temp(1));
  CHECK(p.phases()[2].rounds[0].recv[0] == recv(0));
}

TEST_CASE("seed 000 Table 1: box neighbourhoods give t, C and both volumes") {
  struct Row { int d, n, t, C, gather_v, alltoall_v; };
  const Row rows[] = {
      {2, 3, 8, 4, 8, 12},        {2, 4, 15, 6, 15, 24},       {2, 5, 24, 8, 24, 40},
      {3, 3, 26, 6, 26, 54},      {3, 4, 63, 9, 63, 144},      {3, 5, 124, 12, 124, 300},
      {4, 3, 80, 8, 80, 216},     {4, 4, 255, 12, 255, 768},   {4, 5, 624, 16, 624, 2000},
      {5, 3, 242, 10, 242, 810},  {5, 4, 1023, 15, 1023, 3840}, {5, 5, 3124, 20, 3124, 12500},
  };
  for (const Row& row : rows) {
    CAPTURE(row.d);
    CAPTURE(row.n);
    const Neighborhood n = box_nbh(row.d, row.n, -1);
    const ir::Plan a = plan_combining(ir::Op::kAlltoall, n, auto_dim_order(n));
    const ir::Plan g = plan_combining(ir::Op::kAllgather, n, auto_dim_order(n));
    CHECK(a.stats().t == row.t);
    CHECK(a.stats().rounds == row.C);
    CHECK(a.stats().volume == row.alltoall_v);
    CHECK(g.stats().rounds == row.C);
    CHECK(g.stats().volume == row.gather_v);
    if (row.t <= 700) {  // verify is cheap, but keep the test quick
      CHECK(ir::verify(a).empty());
      CHECK(ir::verify(g).empty());
    }
  }
}

TEST_CASE("Prop. 3.2: combining alltoall has sum C_k rounds and sum z_i volume in every order") {
  const Neighborhood n = nbh(3, {{1, 2, 0}, {0, -1, 3}, {2, 2, 2}, {0, 0, 0}, {1, 2, 0}, {-3, 0, 1}});
  for (const std::vector<int>& order : {std::vector<int>{0, 1, 2}, {2, 1, 0}, {1, 0, 2}}) {
    const ir::Plan p = plan_combining(ir::Op::kAlltoall, n, order);
    CHECK(ir::verify(p).empty());
    CHECK(p.stats().rounds == sum_c(n));
    CHECK(p.stats().volume == sum_z(n));
  }
}

TEST_CASE("Figure 2: allgather volume 12 in natural order, 6 in increasing C_k order") {
  const Neighborhood n = nbh(3, {{-2, 1, 1}, {-1, 1, 1}, {1, 1, 1}, {2, 1, 1}});
  CHECK(auto_dim_order(n) == std::vector<int>{1, 2, 0});
  const ir::Plan natural = plan_combining(ir::Op::kAllgather, n, natural_dim_order(3));
  const ir::Plan sorted = plan_combining(ir::Op::kAllgather, n, auto_dim_order(n));
  CHECK(ir::verify(natural).empty());
  CHECK(ir::verify(sorted).empty());
  CHECK(natural.stats().volume == 12);
  CHECK(sorted.stats().volume == 6);
  CHECK(sorted.stats().rounds == 6);
}


TEST_CASE("Prop. 3.3: allgather volume equals the non-zero tree edges; Moore gives n^d - 1") {
  const Neighborhood irregular = nbh(3, {{1, 2, 0}, {0, -1, 3}, {2, 2, 2}, {0, 0, 0}, {1, 2, 0}, {-3, 0, 1}, {1, 0, 0}});
  for (const std::vector<int>& order : {std::vector<int>{0, 1, 2}, {2, 1, 0}, {1, 2, 0}}) {
    const ir::Plan p = plan_combining(ir::Op::kAllgather, irregular, order);
    CHECK(ir::verify(p).empty());
    CHECK(p.stats().volume == testing::tree_edges(irregular, order));
    CHECK(p.stats().rounds == sum_c(irregular));
  }
  for (int d = 1; d <= 4; ++d)
    for (int r = 1; r <= 2; ++r) {
      const Neighborhood m = *stencils::moore(d, r);
      int nd = 1;
      for (int k = 0; k < d; ++k) nd *= 2 * r + 1;
      CHECK(plan_combining(ir::Op::kAllgather, m, auto_dim_order(m)).stats().volume == nd - 1);
    }
}

TEST_CASE("allgather tree: intermediate positions that are offsets live in their recv block") {
  // (1,0) is both a target and the intermediate on the way to (1,1).
  const Neighborhood n = nbh(2, {{1, 1}, {1, 0}});
  const ir::Plan p = plan_combining(ir::Op::kAllgather, n, {0, 1});
  CHECK(ir::verify(p).empty());
  CHECK(p.temp_slots().empty());
  CHECK(p.phases()[0].rounds[0].recv == std::vector<ir::BufRef>{recv(1)});
  CHECK(p.phases()[1].rounds[0].send == std::vector<ir::BufRef>{recv(1)});
  CHECK(p.phases()[1].rounds[0].recv == std::vector<ir::BufRef>{recv(0)});
}

TEST_CASE("only zero offsets: no communication at all") {
  const Neighborhood n = nbh(2, {{0, 0}, {0, 0}});
  for (ir::Op op : {ir::Op::kAlltoall, ir::Op::kAllgather}) {
    for (const ir::Plan& p : {plan_direct(op, n), plan_combining(op, n, {0, 1})}) {
      CHECK(ir::verify(p).empty());
      CHECK(p.phases().empty());
      CHECK(p.copies().size() == 2);
      CHECK(p.stats().t == 0);
    }
  }
}

TEST_CASE("dimension orders: auto sorts by C_k with ties by index; bad orders are errors") {
  const Neighborhood n = nbh(3, {{1, 1, 5}, {2, 1, 0}, {3, 0, 0}});
  CHECK(auto_dim_order(n) == std::vector<int>{1, 2, 0});
  CHECK(check_dim_order({0, 2, 1}, 3).ok());
  CHECK(check_dim_order({0, 1}, 3).error() == "dimension order has 2 entries, expected 3");
  CHECK(check_dim_order({0, 1, 1}, 3).error() == "dimension order repeats dimension 1");
  CHECK(check_dim_order({0, 1, 3}, 3).error() == "dimension order entry 3 is out of range [0, 3)");
}

}  // namespace
}  // namespace cartplan::engine

namespace cartplan::engine {
namespace {

TEST_CASE("allreduce on box:d,n: C = sum of per-dimension distinct non-zero values rounds, one vector each") {
  for (int d = 1; d <= 5; ++d)
    for (int n = 2; n <= 4; ++n)
      for (int f : {-1, 0, -n + 1}) {
        CAPTURE(d);
        CAPTURE(n);
        CAPTURE(f);
        const Neighborhood nb = *stencils::box(d, n, f);
        REQUIRE(is_product(nb));
        int c = 0;
        for (int k = 0; k < d; ++k) c += nb.distinct_nonzero(k);
        const bool has_zero = f <= 0 && f + n - 1 >= 0;
        CHECK(c == d * (has_zero ? n - 1 : n));
        for (ir::Op op : {ir::Op::kAllreduce, ir::Op::kReduce}) {
          const ir::Plan p = plan_combining(op, nb, auto_dim_order(op, nb));
          CHECK(p.stats().rounds == c);
          CHECK(p.stats().volume == c);
          CHECK(p.phases().size() == static_cast<std::size_t>(d));
          CHECK(ir::verify(p).empty());
          const ir::Plan direct = plan_direct(op, nb);
          CHECK(direct.stats().rounds == nb.nonzero_count());
          CHECK(direct.stats().volume == nb.nonzero_count());
          CHECK(direct.copies().size() == (has_zero ? 1u : 0u));  // the own vector: a local reduction
        }
      }
}

TEST_CASE("allreduce on a general neighbourhood: partial sums along the tree merge contributions") {
  // Moore and Figure 2's offsets ({-2,-1,1,2} x {1} x {1}) are products; g is not.
  CHECK(is_product(*stencils::moore(2, 1)));
  CHECK(is_product(nbh(3, {{-2, 1, 1}, {-1, 1, 1}, {1, 1, 1}, {2, 1, 1}})));
  const Neighborhood g = nbh(2, {{1, 0}, {0, 1}, {1, 1}, {2, 1}, {0, 0}, {1, 0}});
  CHECK(!is_product(g));
  const std::vector<int> order = auto_dim_order(ir::Op::kAllreduce, g);
  CHECK(order == std::vector<int>{0, 1});  // decreasing C_k: C_0 = 2, C_1 = 1 (reverse of allgather's)
  const ir::Plan p = plan_combining(ir::Op::kAllreduce, g, order);
  CHECK(ir::verify(p).empty());
  CHECK(p.stats().rounds == 3);
  // Dimension 0: (1,0) twice and (1,1) share shift 1 -> merged per remaining route: routes (0)
  // [two (1,0) entries] and (1) [(1,1)]: 3 entries; (2,1): 1 entry. Dimension 1: route (1) of
  // level 0 ((1,1), (2,1), own (0,1)) is one vector: 1 entry. Volume 5 < sum z_i = 7.
  CHECK(p.stats().volume == 5);
  const ir::Plan rs = plan_combining(ir::Op::kReduceScatter, g, order);
  CHECK(ir::verify(rs).empty());
  CHECK(rs.stats().volume == 5);
}

TEST_CASE("rooted ops run the plan of their symmetric op") {
  const Neighborhood m = testing::moore9();
  for (auto [rooted, sym] : {std::pair{ir::Op::kBcast, ir::Op::kAllgather}, std::pair{ir::Op::kGather, ir::Op::kAllgather},
                             std::pair{ir::Op::kScatter, ir::Op::kAlltoall}, std::pair{ir::Op::kReduce, ir::Op::kAllreduce}}) {
    const ir::Plan a = plan_combining(rooted, m, {0, 1}), b = plan_combining(sym, m, {0, 1});
    CHECK(a.op() == rooted);
    CHECK(a.phases() == b.phases());
    CHECK(a.copies() == b.copies());
    CHECK(plan_direct(rooted, m).phases() == plan_direct(sym, m).phases());
  }
}

}  // namespace
}  // namespace cartplan::engine
