// MPI test of the w form of the graph collectives (issue 32), compared byte for byte with
// Open MPI's own PMPI_Neighbor_alltoallw / PMPI_Ineighbor_alltoallw on the same communicator in
// the same run. Built twice from this file: natively (Cart_graph_neighbor_alltoallw, _ineighbor_
// and _init; every algorithm forced and auto through the graph's Info), and with the drop-in
// linked in (GRAPH_W_DROPIN: the program's MPI_Neighbor_alltoallw, MPI_Ineighbor_alltoallw and
// MPIX_Neighbor_alltoallw_init; --algorithm sets CARTPLAN_INTERPOSE_ALGORITHM, and with
// --expect-accelerated every call on a graph that is not a stencil must run through cartplan).
//
// Graphs: random multigraphs (parallel and self edges, lists in random order), one with a sink
// rank (no destinations) and a source rank (no sources), and a periodic 2-D Moore graph (its
// short dimension wraps into parallel and self edges); ranks beyond a graph's size have no
// edges. Each edge carries 0..5 ints (the same number at both ends: origin, target and the nth
// parallel edge), and each end lays its block out on its own: contiguous ints, a vector, a
// 2-D subarray, an indexed block or several resized ints, at byte displacements with gaps. The
// send buffer holds rank- and iteration-dependent ints everywhere; receive buffers start with
// a sentinel, so bytes a type skips must stay as Open MPI leaves them.
//
// Forms: blocking, non-blocking, persistent (three starts with fresh data); then requests in
// flight together (a persistent and two non-blocking w requests, Open MPI's non-blocking
// reference calls and a plain ring of MPI_Isend/MPI_Irecv) completed in rank-dependent order:
// reverse waits, a test loop with sleeps on odd ranks, or the plain requests first.
//
//   graph_w_test [--algorithm auto|direct|combining] [--expect-accelerated]   (drop-in build)
#include <mpi.h>
#ifdef GRAPH_W_DROPIN
#include <mpi-ext.h>
#endif
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "engine/graph/generators.h"
#include "tests/graph/random_graphs.h"
#include "tests/mpi/graph_algorithm_info.h"
#include "tests/mpi/harness.h"

#ifdef GRAPH_W_DROPIN
extern "C" long CARTPLAN_Accelerated_calls(MPI_Comm comm);
extern "C" int CARTPLAN_Graph_collectives(MPI_Comm comm);
#endif

namespace {

using cartplan::ir::graph::Topology;
using cartplan::mpitest::Harness;
namespace graph = cartplan::engine::graph;

// The calls under test and their requests: the drop-in's MPI_ functions, or cartplan's own.
#ifdef GRAPH_W_DROPIN
using Req = MPI_Request;
const Req kNull = MPI_REQUEST_NULL;
int r_start(Req* r) { return MPI_Start(r); }
int r_wait(Req* r) { return MPI_Wait(r, MPI_STATUS_IGNORE); }
int r_test(Req* r, int* flag) { return MPI_Test(r, flag, MPI_STATUS_IGNORE); }
void r_free(Req* r) { MPI_Request_free(r); }
const char* last_error() { return ""; }
// Open MPI 4.1's own MPIX_Neighbor_alltoallw_init (where the drop-in passes an init through,
// e.g. on a stencil) keeps the caller's datatype handles: freeing them before MPI_Start crashes
// inside Open MPI (seen with CARTPLAN_INTERPOSE=0, every call Open MPI's, at np 2). So the
// drop-in build frees types only after non-blocking calls.
constexpr bool kFreeAfterInit = false;
#else
using Req = Cart_Request;
const Req kNull = CART_REQUEST_NULL;
int r_start(Req* r) { return Cart_start(r); }
int r_wait(Req* r) { return Cart_wait(r); }
int r_test(Req* r, int* flag) { return Cart_test(r, flag); }
void r_free(Req* r) { Cart_request_free(r); }
const char* last_error() { return Cart_error_message(); }
constexpr bool kFreeAfterInit = true;
#endif

// How many entries before list[k] equal list[k]: the edge's rank among parallel edges.
int nth_of(const std::vector<int>& list, std::size_t k) {
  return static_cast<int>(std::count(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(k), list[k]));
}

// Ints on edge (origin -> target, nth parallel edge): 0..5, the same at both ends.
int edge_ints(int origin, int target, int nth, int salt) { return (origin * 5 + target * 3 + nth * 7 + salt) % 6; }

// One end's layout of n ints, kind 0..4; a derived type is committed and kept in `owned`.
void layout(int n, int kind, std::vector<MPI_Datatype>* owned, int* count, MPI_Datatype* type) {
  const int m = std::max(n, 1);  // an empty block still has a valid datatype (count 0)
  *count = kind == 0 || kind == 4 ? n : (n > 0 ? 1 : 0);
  if (kind == 0) {
    *type = MPI_INT;
    return;
  }
  MPI_Datatype t = MPI_DATATYPE_NULL;
  if (kind == 1) {
    MPI_Type_vector(m, 1, 2, MPI_INT, &t);  // every other int
  } else if (kind == 2) {
    const int sizes[2] = {m, 3}, sub[2] = {m, 1}, starts[2] = {0, 1};  // column 1 of an m x 3 array
    MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &t);
  } else if (kind == 3) {
    std::vector<int> displs;
    for (int i = 0; i < m; ++i) displs.push_back(3 * i + i % 2);
    MPI_Type_create_indexed_block(m, 1, displs.data(), MPI_INT, &t);
  } else {
    MPI_Type_create_resized(MPI_INT, 0, 3 * sizeof(int), &t);  // n of them, 12 bytes apart
  }
  MPI_Type_commit(&t);
  owned->push_back(t);
  *type = t;
}

// Bytes a block of `count` x `type` spans from its displacement (every lower bound here is 0).
MPI_Aint span(int count, MPI_Datatype type) {
  if (count == 0) return 0;
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  MPI_Type_get_extent(type, &lb, &extent);
  MPI_Type_get_true_extent(type, &true_lb, &true_extent);
  return true_lb + (count - 1) * extent + true_extent;
}

// One side's arguments: per-edge counts, byte displacements and types, and the buffer's size.
struct Side {
  std::vector<int> counts;
  std::vector<MPI_Aint> displs;
  std::vector<MPI_Datatype> types;
  std::size_t ints = 0;
};

Side make_side(const std::vector<int>& list, bool send, int me, int salt, std::vector<MPI_Datatype>* owned) {
  Side s;
  MPI_Aint at = 4 * (1 + me % 3);  // a leading gap
  for (std::size_t k = 0; k < list.size(); ++k) {
    const int nth = nth_of(list, k);
    const int n = send ? edge_ints(me, list[k], nth, salt) : edge_ints(list[k], me, nth, salt);
    const int kind = (me * 3 + list[k] * 7 + nth + (send ? 0 : 2) + salt) % 5;
    int count = 0;
    MPI_Datatype type = MPI_INT;
    layout(n, kind, owned, &count, &type);
    s.counts.push_back(count);
    s.displs.push_back(at);
    s.types.push_back(type);
    at += (span(count, type) + 3) / 4 * 4 + 4 * (1 + static_cast<MPI_Aint>(k % 2));
  }
  s.ints = static_cast<std::size_t>(at / 4 + 1);
  // One spare entry each: Open MPI refuses NULL arrays even where the degree is 0.
  s.counts.push_back(0);
  s.displs.push_back(0);
  s.types.push_back(MPI_INT);
  return s;
}

// One w call's arguments and buffers: cartplan's receive side and Open MPI's, same sentinel.
struct Case {
  Side send, recv;
  std::vector<int> sbuf, mine, ref;
};

Case make_case(const std::vector<int>& in, const std::vector<int>& out, int me, int salt, std::vector<MPI_Datatype>* owned) {
  Case c;
  c.send = make_side(out, true, me, salt, owned);
  c.recv = make_side(in, false, me, salt, owned);
  c.sbuf.assign(c.send.ints, 0);
  c.mine.assign(c.recv.ints, -1 - me);
  c.ref = c.mine;
  return c;
}

// Fresh data for iteration `iter` (the same buffer: persistent requests keep its address).
void fill(Case& c, int me, int iter) {
  for (std::size_t i = 0; i < c.sbuf.size(); ++i) c.sbuf[i] = ((iter * 16 + me) << 12) + static_cast<int>(i);
  std::fill(c.mine.begin(), c.mine.end(), -1 - me - iter);
  c.ref = c.mine;
}

int reference(Case& c, MPI_Comm g, MPI_Request* r) {
  if (!r)
    return PMPI_Neighbor_alltoallw(c.sbuf.data(), c.send.counts.data(), c.send.displs.data(), c.send.types.data(), c.ref.data(),
                                   c.recv.counts.data(), c.recv.displs.data(), c.recv.types.data(), g);
  return PMPI_Ineighbor_alltoallw(c.sbuf.data(), c.send.counts.data(), c.send.displs.data(), c.send.types.data(), c.ref.data(),
                                  c.recv.counts.data(), c.recv.displs.data(), c.recv.types.data(), g, r);
}

#ifdef GRAPH_W_DROPIN
int w_blocking(Case& c, MPI_Comm g) {
  return MPI_Neighbor_alltoallw(c.sbuf.data(), c.send.counts.data(), c.send.displs.data(), c.send.types.data(), c.mine.data(),
                                c.recv.counts.data(), c.recv.displs.data(), c.recv.types.data(), g);
}
int w_nonblocking(Case& c, MPI_Comm g, Req* r) {
  return MPI_Ineighbor_alltoallw(c.sbuf.data(), c.send.counts.data(), c.send.displs.data(), c.send.types.data(), c.mine.data(),
                                 c.recv.counts.data(), c.recv.displs.data(), c.recv.types.data(), g, r);
}
int w_init(Case& c, MPI_Comm g, Req* r) {
  return MPIX_Neighbor_alltoallw_init(c.sbuf.data(), c.send.counts.data(), c.send.displs.data(), c.send.types.data(), c.mine.data(),
                                      c.recv.counts.data(), c.recv.displs.data(), c.recv.types.data(), g, MPI_INFO_NULL, r);
}
#else
int w_blocking(Case& c, MPI_Comm g) {
  return Cart_graph_neighbor_alltoallw(c.sbuf.data(), c.send.counts.data(), c.send.displs.data(), c.send.types.data(), c.mine.data(),
                                       c.recv.counts.data(), c.recv.displs.data(), c.recv.types.data(), g);
}
int w_nonblocking(Case& c, MPI_Comm g, Req* r) {
  return Cart_graph_ineighbor_alltoallw(c.sbuf.data(), c.send.counts.data(), c.send.displs.data(), c.send.types.data(), c.mine.data(),
                                        c.recv.counts.data(), c.recv.displs.data(), c.recv.types.data(), g, r);
}
int w_init(Case& c, MPI_Comm g, Req* r) {
  return Cart_graph_neighbor_alltoallw_init(c.sbuf.data(), c.send.counts.data(), c.send.displs.data(), c.send.types.data(),
                                            c.mine.data(), c.recv.counts.data(), c.recv.displs.data(), c.recv.types.data(), g,
                                            MPI_INFO_NULL, r);
}
#endif

// A test on one graph communicator: this rank's lists, and the calls that went to cartplan.
struct Run {
  Run(Harness& harness, std::string n) : h(harness), name(std::move(n)) {}
  Harness& h;
  std::string name;
  std::vector<int> in, out;
  MPI_Comm g = MPI_COMM_NULL;
  long calls = 0;  // w calls made (a persistent request counts once, at init)
  std::vector<MPI_Datatype> owned;
};

void same(Run& t, const Case& c, const std::string& what) {
  t.h.check(c.mine == c.ref, t.name + " " + what + ": differs from Open MPI's");
}

// Blocking, non-blocking and persistent (three starts), each against Open MPI's blocking call.
void forms(Run& t, int salt) {
  Case c = make_case(t.in, t.out, t.h.rank, salt, &t.owned);
  fill(c, t.h.rank, 0);
  t.h.check(reference(c, t.g, nullptr) == MPI_SUCCESS, "reference");
  t.h.check(w_blocking(c, t.g) == MPI_SUCCESS, t.name + " blocking: " + last_error());
  same(t, c, "blocking");
  fill(c, t.h.rank, 1);
  t.h.check(reference(c, t.g, nullptr) == MPI_SUCCESS, "reference");
  Req r = kNull;
  t.h.check(w_nonblocking(c, t.g, &r) == MPI_SUCCESS && r_wait(&r) == MPI_SUCCESS, t.name + " non-blocking: " + last_error());
  same(t, c, "non-blocking");
  t.calls += 3;
  if (w_init(c, t.g, &r) != MPI_SUCCESS) return t.h.check(false, t.name + " init: " + last_error());
  for (int iter = 2; iter < 5; ++iter) {
    fill(c, t.h.rank, iter);
    t.h.check(reference(c, t.g, nullptr) == MPI_SUCCESS, "reference");
    t.h.check(r_start(&r) == MPI_SUCCESS && r_wait(&r) == MPI_SUCCESS, t.name + " persistent: " + last_error());
    same(t, c, "persistent, start " + std::to_string(iter - 1));
  }
  r_free(&r);
}

// MPI lets a program free its datatypes right after a non-blocking call or a persistent init:
// the requests must not depend on them. Open MPI's reference runs on an identical second set.
void freed_types(Run& t, int salt) {
  std::vector<MPI_Datatype> doomed;
  Case c = make_case(t.in, t.out, t.h.rank, salt, &doomed);
  Case ref = make_case(t.in, t.out, t.h.rank, salt, &t.owned);  // the same layouts, other handles
  auto expect = [&](int iter) {
    fill(c, t.h.rank, iter);
    fill(ref, t.h.rank, iter);
    t.h.check(reference(ref, t.g, nullptr) == MPI_SUCCESS, "reference");
    c.ref = ref.ref;
  };
  expect(7);
  Req r = kNull;
  const int rc = w_nonblocking(c, t.g, &r);
  std::vector<MPI_Datatype> kept = doomed;  // handles for the init below: duplicates
  for (MPI_Datatype& type : kept) MPI_Type_dup(type, &type);
  for (MPI_Datatype& type : doomed) MPI_Type_free(&type);
  t.h.check(rc == MPI_SUCCESS && r_wait(&r) == MPI_SUCCESS, t.name + " non-blocking, types freed: " + last_error());
  same(t, c, "non-blocking, types freed after the call");
  t.calls += 1;
  if (!kFreeAfterInit) {
    for (MPI_Datatype& type : kept) MPI_Type_free(&type);
    return;
  }
  // Persistent: init with the duplicates, free them, start twice.
  Case p = c;
  std::size_t next = 0;
  for (std::vector<MPI_Datatype>* types : {&p.send.types, &p.recv.types})
    for (MPI_Datatype& type : *types)
      if (type != MPI_INT) type = kept[next++];
  expect(8);
  p.sbuf = c.sbuf;
  const bool made = w_init(p, t.g, &r) == MPI_SUCCESS;
  t.h.check(made, t.name + " init, types freed: " + last_error());
  for (MPI_Datatype& type : kept) MPI_Type_free(&type);
  t.calls += 1;
  for (int iter = 8; made && iter < 10; ++iter) {
    expect(iter);
    p.sbuf = c.sbuf;  // the request's own buffers: p's
    std::fill(p.mine.begin(), p.mine.end(), c.mine[0]);
    t.h.check(r_start(&r) == MPI_SUCCESS && r_wait(&r) == MPI_SUCCESS, t.name + " persistent, types freed: " + last_error());
    p.ref = c.ref;
    same(t, p, "persistent, types freed after init, start " + std::to_string(iter - 7));
  }
  if (made) r_free(&r);
}

// Completes cartplan's requests and the plain ones in an order that depends on rank and iteration.
void complete(Run& t, std::vector<Req>& mine, std::vector<MPI_Request>& plain, int iter) {
  const int mode = (t.h.rank + iter) % 3;
  if (mode == 0) {  // reverse order, a plain wait between
    for (std::size_t q = mine.size(); q-- > 0;) {
      t.h.check(r_wait(&mine[q]) == MPI_SUCCESS, t.name + " inflight wait: " + last_error());
      if (!plain.empty()) MPI_Wait(&plain[q % plain.size()], MPI_STATUS_IGNORE);
    }
  } else if (mode == 1) {  // test loops over both kinds, odd ranks slower
    for (bool left = true; left;) {
      left = false;
      for (Req& r : mine) {
        int flag = 1;
        if (r != kNull) t.h.check(r_test(&r, &flag) == MPI_SUCCESS, t.name + " inflight test: " + last_error());
        left = left || !flag;
      }
      int all = 0;
      MPI_Testall(static_cast<int>(plain.size()), plain.data(), &all, MPI_STATUSES_IGNORE);
      left = left || !all;
      if (t.h.rank % 2) usleep(100);
    }
  } else {  // the plain requests first (they need the peers' cartplan progress too)
    if (t.h.rank % 2 == 0) usleep(500);
    MPI_Waitall(static_cast<int>(plain.size()), plain.data(), MPI_STATUSES_IGNORE);
    for (Req& r : mine) t.h.check(r_wait(&r) == MPI_SUCCESS, t.name + " inflight wait: " + last_error());
  }
  MPI_Waitall(static_cast<int>(plain.size()), plain.data(), MPI_STATUSES_IGNORE);
}

// A persistent and two non-blocking w requests in flight with Open MPI's non-blocking reference
// calls and a plain ring exchange on MPI_COMM_WORLD, for four iterations.
void inflight(Run& t, int salt) {
  std::vector<Case> cases;
  for (int q = 0; q < 3; ++q) cases.push_back(make_case(t.in, t.out, t.h.rank, salt + 11 * q, &t.owned));
  std::vector<Req> mine(3, kNull);
  t.h.check(w_init(cases[0], t.g, &mine[0]) == MPI_SUCCESS, t.name + " inflight init: " + last_error());
  ++t.calls;
  Req persistent = mine[0];
  const int right = (t.h.rank + 1) % t.h.size, left = (t.h.rank + t.h.size - 1) % t.h.size;
  for (int iter = 0; iter < 4; ++iter) {
    for (int q = 0; q < 3; ++q) fill(cases[static_cast<std::size_t>(q)], t.h.rank, iter * 3 + q);
    int token = t.h.rank * 100 + iter, got = -1;
    std::vector<MPI_Request> plain(5, MPI_REQUEST_NULL);
    MPI_Irecv(&got, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &plain[0]);
    mine[0] = persistent;
    t.h.check(r_start(&mine[0]) == MPI_SUCCESS, t.name + " inflight start: " + last_error());
    for (int q = 1; q < 3; ++q)
      t.h.check(w_nonblocking(cases[static_cast<std::size_t>(q)], t.g, &mine[static_cast<std::size_t>(q)]) == MPI_SUCCESS,
                t.name + " inflight call: " + last_error());
    for (int q = 0; q < 3; ++q) reference(cases[static_cast<std::size_t>(q)], t.g, &plain[static_cast<std::size_t>(q) + 1]);
    MPI_Isend(&token, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &plain[4]);
    t.calls += 2;
    complete(t, mine, plain, iter);
    t.h.check(got == left * 100 + iter, t.name + " inflight: the plain message");
    for (int q = 0; q < 3; ++q) same(t, cases[static_cast<std::size_t>(q)], "inflight request " + std::to_string(q) + ", iteration " + std::to_string(iter));
  }
  r_free(&persistent);
}

// A graph with a sink (the last rank: no destinations) and a source (rank 0: no sources).
Topology with_sink_and_source(Topology t) {
  const int sink = t.size() - 1, source = 0;
  for (int r = 0; r < t.size(); ++r) {
    auto& e = t.ranks[static_cast<std::size_t>(r)];
    if (r == sink) e.out.clear();
    if (r == source) e.in.clear();
    e.in.erase(std::remove(e.in.begin(), e.in.end(), sink), e.in.end());
    e.out.erase(std::remove(e.out.begin(), e.out.end(), source), e.out.end());
  }
  return t;
}

MPI_Comm make_graph(const std::vector<int>& in, const std::vector<int>& out, const char* algo) {
  return cartplan::mpitest::graph_with_algorithm(in, out, algo, "1");
}

// Every form and the in-flight mix on one graph with one algorithm (native: Info
// cartplan_algorithm; drop-in: nullptr, CARTPLAN_INTERPOSE_ALGORITHM decides).
void check_graph(Harness& h, const Topology& t, const std::string& name, const char* algo, int salt, bool expect) {
  if (t.size() > h.size) return;  // the same decision on every rank
  Run run(h, name + (algo ? std::string(" ") + algo : std::string()));
  if (h.rank < t.size()) run.in = t.ranks[static_cast<std::size_t>(h.rank)].in, run.out = t.ranks[static_cast<std::size_t>(h.rank)].out;
  run.g = make_graph(run.in, run.out, algo);
#ifdef GRAPH_W_DROPIN
  const long before = CARTPLAN_Accelerated_calls(run.g);
#endif
  forms(run, salt);
  inflight(run, salt + 1);
  freed_types(run, salt + 2);
#ifdef GRAPH_W_DROPIN
  // A graph that happens to be a stencil takes the stencil's path (w forms pass through there).
  if (expect && CARTPLAN_Graph_collectives(run.g))
    h.check(CARTPLAN_Accelerated_calls(run.g) - before == run.calls,
            run.name + ": every w call ran through cartplan (" + std::to_string(CARTPLAN_Accelerated_calls(run.g) - before) + " of " +
                std::to_string(run.calls) + ")");
#else
  (void)expect;
#endif
  MPI_Comm_free(&run.g);
  for (MPI_Datatype& type : run.owned) MPI_Type_free(&type);
}

}  // namespace

int main(int argc, char** argv) {
  bool expect = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--algorithm") && i + 1 < argc) setenv("CARTPLAN_INTERPOSE_ALGORITHM", argv[++i], 1);
    else if (!std::strcmp(argv[i], "--expect-accelerated")) expect = true;
  }
  Harness h(&argc, &argv);
  const int p = h.size;
  std::vector<std::pair<std::string, Topology>> graphs;
  graphs.emplace_back("random multigraph", graph::random_multigraph(p, 0.5, 3));
  graphs.emplace_back("dense random multigraph, sink and source", with_sink_and_source(graph::random_multigraph(p, 0.8, 5)));
  if (auto m = graph::moore({2, (p + 1) / 2}, 1, true, 0.0, 1)) graphs.emplace_back("periodic Moore 2-D r=1", *m);
#ifdef GRAPH_W_DROPIN
  const std::vector<const char*> algos = {nullptr};
#else
  std::vector<const char*> algos = {"linear", "pairing", "cumulative", "grid", "auto"};
  if (cartplan::mpitest::has_3d_grid(p)) algos.push_back("grid3");  // grid on the 3-D grid (Info cartplan_grid_dims=3)
#endif
  int salt = 0;
  for (const auto& [name, t] : graphs)
    for (const char* algo : algos) check_graph(h, t, name, algo, ++salt, expect);
  return h.finish("graph_w_test");
}
