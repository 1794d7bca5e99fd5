// Non-blocking graph v calls that reuse the previous call's sizes (graph_sized_chain.h):
// Cart_graph_ineighbor_alltoallv and _allgatherv against Open MPI's MPI_Ineighbor_alltoallv /
// allgatherv in the same run, byte for byte (sentinels in the gaps), on random multigraphs with
// parallel and self edges and a periodic Moore graph, pairing, cumulative and grid forced: counts that
// stay the same, change on one rank, come back; new buffers; empty blocks; several calls in
// flight completed in reverse order or by rank-dependent test loops with sleeps, their counts
// alternating; non-blocking calls mixed with blocking calls of the same op; counts that differ
// between the two ends of an edge in the steady state; a call with a bad argument on every rank
// between two calls in flight (the chain forgets there). The process counters show that steady
// calls start no size pass and send nothing with sizes, so the test cannot pass by always
// taking the slow path; reuse switched off shows the size pass is what they replace.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/graph/generators.h"
#include "tests/graph/random_graphs.h"
#include "tests/mpi/graph_v_fixture.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;
using namespace cartplan::mpitest::graph_v;
namespace graph = cartplan::engine::graph;

// One call in flight: cartplan's request, Open MPI's reference request, their buffers.
struct Flight {
  Sides s;
  std::vector<int> send, mine, ref;
  Cart_Request req = CART_REQUEST_NULL;
  MPI_Request ref_req = MPI_REQUEST_NULL;
  int rc = MPI_SUCCESS;
};

// Starts cartplan's call and Open MPI's on `f` (send data carries the call's serial number, so
// a call that received another call's messages differs from Open MPI's).
// Without `reference` (an erroneous call) only cartplan's.
void start(Harness& h, const Graph& g, Flight* f, const Sides& s, bool reference = true) {
  static int serial = 0;
  ++serial;
  f->s = s;
  f->send.assign(static_cast<std::size_t>(s.sbytes) + 1, 0);
  for (std::size_t i = 0; i < f->send.size(); ++i) f->send[i] = serial * 10000000 + h.rank * 100000 + static_cast<int>(i) * 7 + 1;
  f->mine.assign(static_cast<std::size_t>(s.rbytes * g.stride), -7);
  f->ref = f->mine;
  const Sides& c = f->s;
  if (!reference) {
    f->ref_req = MPI_REQUEST_NULL;
  } else if (g.gather) {
    MPI_Ineighbor_allgatherv(f->send.data() + 1, c.sc[0], MPI_INT, f->ref.data(), c.rc.data(), c.rd.data(), g.rtype, g.comm, &f->ref_req);
  } else {
    MPI_Ineighbor_alltoallv(f->send.data(), c.sc.data(), c.sd.data(), MPI_INT, f->ref.data(), c.rc.data(), c.rd.data(), g.rtype, g.comm,
                            &f->ref_req);
  }
  if (g.gather) {
    f->rc = Cart_graph_ineighbor_allgatherv(f->send.data() + 1, c.sc[0], MPI_INT, f->mine.data(), c.rc.data(), c.rd.data(), g.rtype,
                                            g.comm, &f->req);
  } else {
    f->rc = Cart_graph_ineighbor_alltoallv(f->send.data(), c.sc.data(), c.sd.data(), MPI_INT, f->mine.data(), c.rc.data(), c.rd.data(),
                                           g.rtype, g.comm, &f->req);
  }
}

// Completes cartplan's request of `f` (Cart_wait, or `polling`: Cart_test with sleeps) and checks it.
void finish(Harness& h, Flight* f, bool polling, const std::string& what) {
  int rc = f->rc;
  if (rc == MPI_SUCCESS && polling) {
    int flag = 0;
    while (rc == MPI_SUCCESS && !flag) {
      rc = Cart_test(&f->req, &flag);
      if (!flag) usleep(200);
    }
  } else if (rc == MPI_SUCCESS) {
    rc = Cart_wait(&f->req);
  }
  MPI_Wait(&f->ref_req, MPI_STATUS_IGNORE);
  h.check(rc == MPI_SUCCESS, what + ": returns MPI_SUCCESS");
  h.check(f->mine == f->ref, what + ": every byte equals Open MPI's");
}

// One call on `f`'s buffers (kept from call to call: the same addresses for the same sizes).
Delta one_call(Harness& h, const Graph& g, Flight* f, const Sides& s, const std::string& what) {
  const auto before = cartplan::mpi::sized_call_stats();
  const auto passes = cartplan::mpi::size_passes_started();
  start(h, g, f, s);
  finish(h, f, h.rank % 2 == 1, what);
  return delta_since(before, passes);
}

// Same counts, a change on one rank, back, new buffers, empty blocks: each equals Open MPI's;
// the counters say the steady calls start no size pass and send nothing with sizes.
void sequence(Harness& h, const Graph& g, const std::string& name) {
  const int changer = h.size - 1;
  auto at = [&](int v, int skew) { return sides(g.in, g.out, h.rank, v, changer, skew, g.gather); };
  Flight f;
  const Delta first = one_call(h, g, &f, at(0, 0), name + " call 1");
  h.check(first.requests == h.size && first.as_before == 0, name + " call 1: every rank ran it on the chain, nothing as before");
  h.check(first.size_passes == 0, name + " call 1: no size pass");
  Delta steady;
  for (int i = 2; i <= 3; ++i) steady = one_call(h, g, &f, at(0, 0), name + " call " + std::to_string(i));
  h.check(steady.with_sizes == 0 && steady.size_passes == 0 && steady.layouts == 0,
          name + " same counts: no size pass, nothing with sizes, no layout built");
  h.check(steady.as_before == first.with_sizes, name + " same counts: every message as before");
  if (h.rank == 0)
    std::printf("%s: first call %ld messages with sizes; a steady call %ld as before, %ld with sizes, %ld size passes\n", name.c_str(),
                first.with_sizes, steady.as_before, steady.with_sizes, steady.size_passes);
  one_call(h, g, &f, at(1, 0), name + " rank " + std::to_string(changer) + "'s counts changed");
  one_call(h, g, &f, at(0, 0), name + " counts back");
  const Delta back = one_call(h, g, &f, at(0, 0), name + " counts back, again");
  h.check(back.with_sizes == 0, name + " counts back, again: nothing with sizes");
  const Delta moved = one_call(h, g, &f, at(0, 1), name + " a wider receive layout");
  h.check(moved.with_sizes == 0 && moved.size_passes == 0, name + " a wider receive layout: nothing with sizes");
  for (int i = 0; i < 2; ++i) one_call(h, g, &f, at(2, 1), name + " empty blocks " + std::to_string(i));
  one_call(h, g, &f, at(0, 0), name + " after empty blocks");
}

// `n` calls in flight, their counts alternating v0 v0 v1 v1 ..., started with rank-dependent
// sleeps between them and completed in reverse order (even ranks) or by polling every request
// in turn with sleeps (odd ranks), so ranks finish calls in different orders.
void in_flight(Harness& h, const Graph& g, const std::string& name, int n) {
  const int changer = h.size - 1;
  std::vector<Flight> f(static_cast<std::size_t>(n));
  const auto before = cartplan::mpi::sized_call_stats();
  const auto passes = cartplan::mpi::size_passes_started();
  for (int i = 0; i < n; ++i) {
    if ((h.rank + i) % 3 == 0) usleep(static_cast<useconds_t>(500 * (1 + h.rank % 2)));
    start(h, g, &f[static_cast<std::size_t>(i)], sides(g.in, g.out, h.rank, i / 2 % 2, changer, 0, g.gather));
  }
  const std::string what = name + ", " + std::to_string(n) + " in flight";
  if (h.rank % 2 == 0) {
    for (int i = n - 1; i >= 0; --i) finish(h, &f[static_cast<std::size_t>(i)], false, what + " (reverse waits) call " + std::to_string(i));
  } else {
    std::vector<int> open(static_cast<std::size_t>(n), 1);
    for (int left = n; left > 0;) {
      for (int i = (h.rank / 2) % n, k = 0; k < n; ++k, i = (i + 1) % n) {
        int flag = 0;
        if (!open[static_cast<std::size_t>(i)] || f[static_cast<std::size_t>(i)].rc != MPI_SUCCESS) flag = 1;
        else f[static_cast<std::size_t>(i)].rc = Cart_test(&f[static_cast<std::size_t>(i)].req, &flag);
        if (!flag || !open[static_cast<std::size_t>(i)]) continue;
        open[static_cast<std::size_t>(i)] = 0;
        --left;
        Flight& done = f[static_cast<std::size_t>(i)];
        MPI_Wait(&done.ref_req, MPI_STATUS_IGNORE);
        h.check(done.rc == MPI_SUCCESS, what + " (test loop) call " + std::to_string(i) + ": returns MPI_SUCCESS");
        h.check(done.mine == done.ref, what + " (test loop) call " + std::to_string(i) + ": every byte equals Open MPI's");
      }
      usleep(100);
    }
  }
  const Delta d = delta_since(before, passes);
  h.check(d.size_passes == 0 && d.requests == static_cast<long>(n) * h.size, what + ": every call on the chain, no size pass");
}

// Steady state with several in flight: the same counts, nothing with sizes.
void steady_in_flight(Harness& h, const Graph& g, const std::string& name) {
  const Sides s = sides(g.in, g.out, h.rank, 0, -1, 0, g.gather);
  Flight warm;
  one_call(h, g, &warm, s, name + " warm-up");
  std::vector<Flight> f(4);
  const auto before = cartplan::mpi::sized_call_stats();
  const auto passes = cartplan::mpi::size_passes_started();
  for (Flight& x : f) start(h, g, &x, s);
  for (int i = 3; i >= 0; --i) finish(h, &f[static_cast<std::size_t>((i + h.rank) % 4)], h.rank % 2 == 0, name + " steady, 4 in flight");
  const Delta d = delta_since(before, passes);
  h.check(d.with_sizes == 0 && d.size_passes == 0 && d.as_before > 0, name + " steady, 4 in flight: every message as before, no size pass");
}

// Double buffering: two buffer sets (same counts) alternated call by call, then two calls in
// flight on different buffers; after a first use of each set, no layout is built again.
void double_buffered(Harness& h, const Graph& g, const std::string& name) {
  const Sides s = sides(g.in, g.out, h.rank, 0, -1, 0, g.gather);
  Flight a, b;
  one_call(h, g, &a, s, name + " double-buffered warm-up a");
  one_call(h, g, &b, s, name + " double-buffered warm-up b");
  const auto before = cartplan::mpi::sized_call_stats();
  for (int i = 0; i < 4; ++i) one_call(h, g, i % 2 ? &b : &a, s, name + " double-buffered call " + std::to_string(i));
  for (int i = 0; i < 2; ++i) {
    start(h, g, &a, s);
    start(h, g, &b, s);
    finish(h, h.rank % 2 ? &a : &b, h.rank % 2 == 0, name + " double-buffered, 2 in flight");
    finish(h, h.rank % 2 ? &b : &a, false, name + " double-buffered, 2 in flight");
  }
  const Delta d = delta_since(before);
  h.check(d.with_sizes == 0 && d.as_before > 0 && d.layouts == 0,
          name + " two buffer sets alternated, and in flight: nothing with sizes, no layout built");
}

// Non-blocking calls around blocking calls of the same op (their own previous-call states).
void mixed(Harness& h, const Graph& g, const std::string& name) {
  const int changer = h.size - 1;
  Flight a, b;
  const Sides s0 = sides(g.in, g.out, h.rank, 0, changer, 0, g.gather), s1 = sides(g.in, g.out, h.rank, 1, changer, 0, g.gather);
  start(h, g, &a, s0);
  std::vector<int> send(static_cast<std::size_t>(s1.sbytes) + 1, h.rank + 5), mine(static_cast<std::size_t>(s1.rbytes * g.stride), -7),
      ref = mine;
  int rc = 0;
  if (g.gather) {
    MPI_Neighbor_allgatherv(send.data(), s1.sc[0], MPI_INT, ref.data(), s1.rc.data(), s1.rd.data(), g.rtype, g.comm);
    rc = Cart_graph_neighbor_allgatherv(send.data(), s1.sc[0], MPI_INT, mine.data(), s1.rc.data(), s1.rd.data(), g.rtype, g.comm);
  } else {
    MPI_Neighbor_alltoallv(send.data(), s1.sc.data(), s1.sd.data(), MPI_INT, ref.data(), s1.rc.data(), s1.rd.data(), g.rtype, g.comm);
    rc = Cart_graph_neighbor_alltoallv(send.data(), s1.sc.data(), s1.sd.data(), MPI_INT, mine.data(), s1.rc.data(), s1.rd.data(), g.rtype,
                                       g.comm);
  }
  h.check(rc == MPI_SUCCESS && mine == ref, name + " mixed: a blocking call while a non-blocking one is in flight equals Open MPI's");
  start(h, g, &b, s1);
  finish(h, &b, false, name + " mixed: the second non-blocking call (waited first)");
  finish(h, &a, h.rank % 2 == 0, name + " mixed: the first non-blocking call");
}

// A recv count one larger than its sender's on `victim` in the steady state: MPI_ERR_TRUNCATE
// there, MPI_SUCCESS or MPI_ERR_TRUNCATE elsewhere (blocks lost in the bad message), nobody
// hangs, and the next correct calls equal Open MPI's on every rank.
void mismatch(Harness& h, const Graph& g, const std::string& name, int victim) {
  const Sides good = sides(g.in, g.out, h.rank, 0, -1, 0, g.gather);
  Sides bad = good;
  if (h.rank == victim) bad.rc[0] += 1;  // the gap after the block holds it
  Flight f;
  one_call(h, g, &f, good, name + " warm-up");
  start(h, g, &f, bad, false);
  const int rc = f.rc == MPI_SUCCESS ? Cart_wait(&f.req) : f.rc;
  int cls = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  const std::string what = name + " (steady state): a recv count larger than its sender's";
  if (h.rank == victim) h.check(cls == MPI_ERR_TRUNCATE, what + ": MPI_ERR_TRUNCATE on the receiver");
  else h.check(cls == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE, what + ": MPI_SUCCESS or MPI_ERR_TRUNCATE elsewhere");
  one_call(h, g, &f, good, what + ", then a correct call");
  one_call(h, g, &f, good, what + ", then a second correct call");
}

// A call with a bad argument on every rank (a NULL request, which every rank sees whatever its
// edges) between two calls in flight: it returns MPI_ERR_REQUEST at once and the chain forgets
// at that point in call order (after the first call, which still reuses sizes), so the third
// call sends with sizes; both good calls equal Open MPI's, and the next one is steady again.
void bad_between(Harness& h, const Graph& g, const std::string& name) {
  const Sides s = sides(g.in, g.out, h.rank, 0, -1, 0, g.gather);
  Flight warm, a, c;
  const Delta w = one_call(h, g, &warm, s, name + " warm-up");
  const auto before = cartplan::mpi::sized_call_stats();
  start(h, g, &a, s);
  const int rc = g.gather ? Cart_graph_ineighbor_allgatherv(a.send.data() + 1, s.sc[0], MPI_INT, a.mine.data(), s.rc.data(), s.rd.data(),
                                                            g.rtype, g.comm, nullptr)
                          : Cart_graph_ineighbor_alltoallv(a.send.data(), s.sc.data(), s.sd.data(), MPI_INT, a.mine.data(), s.rc.data(),
                                                           s.rd.data(), g.rtype, g.comm, nullptr);
  int cls = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  h.check(cls == MPI_ERR_REQUEST, name + " a NULL request: MPI_ERR_REQUEST at once");
  start(h, g, &c, s);
  finish(h, &c, h.rank % 2 == 0, name + " the call after the bad one (waited first)");
  finish(h, &a, false, name + " the call before the bad one");
  const Delta d = delta_since(before);
  h.check(d.requests == 2L * h.size && (w.as_before == 0 || d.with_sizes > 0),
          name + " around a bad call: both good calls on the chain, the second with sizes");
  const Delta steady = one_call(h, g, &warm, s, name + " after the bad call, steady");
  h.check(steady.with_sizes == 0 && steady.size_passes == 0 && steady.as_before == w.as_before,
          name + " after the bad call: steady again");
}

// Reuse off (set_size_reuse, the benchmark's baseline): every call runs the size pass.
void reuse_off(Harness& h, const Graph& g, const std::string& name) {
  cartplan::mpi::set_size_reuse(false);
  const Sides s = sides(g.in, g.out, h.rank, 0, -1, 0, g.gather);
  Flight f;
  const Delta d = one_call(h, g, &f, s, name + " reuse off");
  cartplan::mpi::set_size_reuse(true);
  h.check(d.requests == 0 && d.size_passes == h.size, name + " reuse off: a size pass on every rank");
  one_call(h, g, &f, s, name + " reuse on again");
  const Delta again = one_call(h, g, &f, s, name + " reuse on again, steady");
  h.check(again.with_sizes == 0 && again.size_passes == 0, name + " reuse on again, steady: nothing with sizes");
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  const int p = h.size;
  std::vector<const char*> algorithms = {"pairing", "cumulative", "grid"};
  if (cartplan::mpitest::has_3d_grid(p)) algorithms.push_back("grid3");  // grid on the 3-D grid (Info cartplan_grid_dims=3)
  for (const char* algorithm : algorithms) {
    std::vector<std::pair<std::string, cartplan::ir::graph::Topology>> graphs;
    graphs.emplace_back("random multigraph", graph::random_multigraph(p, 0.5, 11));
    if (auto m = graph::moore(graph::balanced_dims(p, 2), 1, true, 0.0, 1)) graphs.emplace_back("periodic Moore 2-D r=1", *m);
    for (const auto& [label, t] : graphs) {
      for (bool gather : {false, true}) {
        const std::string name = std::string(gather ? "ineighbor_allgatherv, " : "ineighbor_alltoallv, ") + algorithm + ", " + label;
        Graph g = make_graph(t, h.rank, algorithm, gather);
        sequence(h, g, name);
        in_flight(h, g, name, 6);
        steady_in_flight(h, g, name);
        double_buffered(h, g, name);
        mixed(h, g, name);
        reuse_off(h, g, name);
        bad_between(h, g, name);
        int victim = g.in.empty() ? p : h.rank;
        MPI_Allreduce(MPI_IN_PLACE, &victim, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (victim < p) mismatch(h, g, name, victim);
        MPI_Comm_free(&g.comm);
      }
    }
  }
  return h.finish("graph_sized_requests_test");
}
