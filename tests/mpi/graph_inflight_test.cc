// MPI test of the native graph API with many requests in flight on one graph communicator (an MPI
// distributed graph with pairing or auto for its blocking and non-blocking calls, and a
// Cart_graph_comm_create_adjacent one with grid): persistent grid / linear / pairing / cumulative /
// auto requests of five ops, non-blocking v calls (new counts, and two with the same counts in
// flight together) and plain calls, a blocking call, a persistent init, an MPI_Comm_dup with a
// first call on the duplicate and Open MPI's MPI_Ineighbor_allgather between the starts, completed
// in rank-dependent orders (waits reversed, Cart_test polling, sleeps), mixed with the user's own
// point-to-point messages on the same communicator (MPI_ANY_SOURCE / MPI_ANY_TAG receives,
// cartplan's lane tags and MPI_TAG_UB, a receive blocked while the sender's requests are pending).
// Every received element is checked against rank-, edge- and iteration-dependent data, and every
// gap left untouched. Last, one request stays in flight while 4100 more non-blocking calls wrap the
// lanes round, and a communicator is freed with requests on it in flight.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/harness.h"
#include "tests/mpi/user_traffic.h"

namespace {

using cartplan::mpitest::complete_in_rank_order;
using cartplan::mpitest::Harness;
using cartplan::mpitest::UserTraffic;

// Who sent it, on which of its out-edges, which element, iteration and request.
int value(int sender, int block, int elem, int iter, int id) {
  return ((((iter % 1000) * 16 + id) * 64 + sender) * 64 + block) * 16 + elem;
}
constexpr int kGap = -7;  // what every receive-buffer cell outside a block must keep

// Rank r's destinations on p ranks: a ring both ways, a chord, a parallel edge on every third
// rank and a self edge on ranks 1 mod 4 (so degrees differ between ranks).
std::vector<int> outs_of(int r, int p) {
  std::vector<int> out = {(r + 1) % p, (r + p - 1) % p, (r + 2) % p};
  if (r % 3 == 0) out.push_back((r + 1) % p);
  if (r % 4 == 1) out.push_back(r);
  return out;
}

// Rank r's sources: every s listing r, as often as it lists it, in descending rank order.
std::vector<int> ins_of(int r, int p) {
  std::vector<int> in;
  for (int s = p - 1; s >= 0; --s)
    for (int d : outs_of(s, p))
      if (d == r) in.push_back(s);
  return in;
}

struct Graph {
  MPI_Comm comm = MPI_COMM_NULL;
  int me = 0, p = 1;
  bool dist = true;  // an MPI distributed graph (MPI_Neighbor_* work on it)
  std::vector<int> in, out;
  std::vector<int> sender_block;  // per in-edge j: the sender's out-edge index (k-th edge rule)
};

// attribute: Cart_graph_comm_create_adjacent's duplicate with the lists attached, else an MPI
// distributed graph.
Graph make_graph(int me, int p, const char* comm_algorithm, bool attribute) {
  Graph g;
  g.me = me;
  g.p = p;
  g.in = ins_of(me, p);
  g.out = outs_of(me, p);
  for (std::size_t j = 0; j < g.in.size(); ++j) {
    const int s = g.in[j];
    int seen = 0;  // earlier in-edges from s: this is the seen-th edge s -> me
    for (std::size_t i = 0; i < j; ++i) seen += g.in[i] == s;
    const std::vector<int> so = outs_of(s, p);
    for (std::size_t k = 0; k < so.size(); ++k)
      if (so[k] == me && seen-- == 0) {
        g.sender_block.push_back(static_cast<int>(k));
        break;
      }
  }
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", comm_algorithm);  // the blocking and non-blocking calls'
  g.dist = !attribute;
  if (attribute) {
    MPI_Info_set(info, "cartplan_graph_comm", "attribute");
    Cart_graph_comm_create_adjacent(MPI_COMM_WORLD, static_cast<int>(g.in.size()), g.in.data(), static_cast<int>(g.out.size()),
                                    g.out.data(), info, &g.comm);
  } else {
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(g.in.size()), g.in.data(), MPI_UNWEIGHTED,
                                   static_cast<int>(g.out.size()), g.out.data(), MPI_UNWEIGHTED, info, 0, &g.comm);
  }
  MPI_Info_free(&info);
  return g;
}

enum Op { kAllgather, kAlltoall, kAllgatherv, kAlltoallv, kAlltoallw };

// Elements of the block sender s sends on its out-edge k (alltoall forms) or of all its sends
// (allgather forms, k ignored), for a salt that differs between requests and iterations.
int count_of(Op op, int m, int s, int k, int salt) {
  if (op == kAllgather || op == kAlltoall) return m;
  if (op == kAllgatherv) return 1 + (s + salt) % 3;
  return 1 + (3 * s + k + salt) % 4;
}

// One request of the test: its buffers, counts and displacements, and how to check them.
struct Req {
  std::string name;
  Op op = kAllgather;
  int m = 1, id = 0, salt = 0;
  std::vector<int> send, recv, sc, sd, rc, rd;  // counts and displacements in elements
  std::vector<MPI_Aint> sdb, rdb;               // w: in bytes
  std::vector<MPI_Datatype> st, rt;
  Cart_Request req = CART_REQUEST_NULL;

  bool gather() const { return op == kAllgather || op == kAllgatherv; }
  // v and w forms: send blocks in order with one spare element before each, receive blocks in
  // reverse edge order with one gap element after each (the gaps must stay kGap).
  void layout(const Graph& g, int new_salt) {
    salt = new_salt;
    const bool fixed = op == kAllgather || op == kAlltoall;  // blocks at k * m, no gaps
    sc.clear();
    sd.clear();
    int at = 0;
    const int blocks = gather() ? 1 : static_cast<int>(g.out.size());
    for (int k = 0; k < blocks; ++k) {
      sc.push_back(count_of(op, m, g.me, k, salt));
      sd.push_back(fixed ? k * m : at + 1);
      at = sd.back() + sc.back();
    }
    send.assign(static_cast<std::size_t>(at) + 1, 0);
    const int n = static_cast<int>(g.in.size());
    rc.assign(n, 0);
    rd.assign(n, 0);
    at = 0;
    for (int j = fixed ? 0 : n - 1; fixed ? j < n : j >= 0; j += fixed ? 1 : -1) {
      rc[j] = count_of(op, m, g.in[j], g.sender_block[j], salt);
      rd[j] = at;
      at += rc[j] + (fixed ? 0 : 1);
    }
    recv.assign(static_cast<std::size_t>(at) + 1, kGap);
    sdb.clear();
    rdb.clear();
    for (int d : sd) sdb.push_back(static_cast<MPI_Aint>(d * sizeof(int)));
    for (int d : rd) rdb.push_back(static_cast<MPI_Aint>(d * sizeof(int)));
    st.assign(sd.size(), MPI_INT);
    rt.assign(rd.size(), MPI_INT);
  }
  void fill(const Graph& g, int iter) {
    for (std::size_t k = 0; k < sc.size(); ++k)
      for (int e = 0; e < sc[k]; ++e) send[sd[k] + e] = value(g.me, gather() ? 0 : static_cast<int>(k), e, iter, id);
    std::fill(recv.begin(), recv.end(), kGap);
  }
  // The first wrong cell, or "".
  std::string check(const Graph& g, int iter) const {
    std::vector<int> want(recv.size(), kGap);
    for (std::size_t j = 0; j < g.in.size(); ++j)
      for (int e = 0; e < rc[j]; ++e)
        want[rd[j] + e] = value(g.in[j], gather() ? 0 : g.sender_block[j], e, iter, id);
    for (std::size_t i = 0; i < want.size(); ++i)
      if (recv[i] != want[i])
        return name + ": element " + std::to_string(i) + " is " + std::to_string(recv[i]) + ", want " + std::to_string(want[i]) +
               " (iteration " + std::to_string(iter) + ")";
    return "";
  }
  int post_init(const Graph& g, MPI_Info info);
  int post_nonblocking(const Graph& g);
};

int Req::post_init(const Graph& g, MPI_Info info) {
  const MPI_Comm c = g.comm;
  switch (op) {
    case kAllgather: return Cart_graph_neighbor_allgather_init(send.data(), m, MPI_INT, recv.data(), m, MPI_INT, c, info, &req);
    case kAlltoall: return Cart_graph_neighbor_alltoall_init(send.data(), m, MPI_INT, recv.data(), m, MPI_INT, c, info, &req);
    case kAllgatherv:
      return Cart_graph_neighbor_allgatherv_init(send.data() + sd[0], sc[0], MPI_INT, recv.data(), rc.data(), rd.data(), MPI_INT, c,
                                                 info, &req);
    case kAlltoallv:
      return Cart_graph_neighbor_alltoallv_init(send.data(), sc.data(), sd.data(), MPI_INT, recv.data(), rc.data(), rd.data(),
                                                MPI_INT, c, info, &req);
    default:
      return Cart_graph_neighbor_alltoallw_init(send.data(), sc.data(), sdb.data(), st.data(), recv.data(), rc.data(), rdb.data(),
                                                rt.data(), c, info, &req);
  }
}

int Req::post_nonblocking(const Graph& g) {
  const MPI_Comm c = g.comm;
  switch (op) {
    case kAllgather: return Cart_graph_ineighbor_allgather(send.data(), m, MPI_INT, recv.data(), m, MPI_INT, c, &req);
    case kAlltoall: return Cart_graph_ineighbor_alltoall(send.data(), m, MPI_INT, recv.data(), m, MPI_INT, c, &req);
    case kAllgatherv:
      return Cart_graph_ineighbor_allgatherv(send.data() + sd[0], sc[0], MPI_INT, recv.data(), rc.data(), rd.data(), MPI_INT, c, &req);
    case kAlltoallv:
      return Cart_graph_ineighbor_alltoallv(send.data(), sc.data(), sd.data(), MPI_INT, recv.data(), rc.data(), rd.data(), MPI_INT, c,
                                            &req);
    default:
      return Cart_graph_ineighbor_alltoallw(send.data(), sc.data(), sdb.data(), st.data(), recv.data(), rc.data(), rdb.data(),
                                            rt.data(), c, &req);
  }
}

// The persistent requests: op, block size, the algorithm forced at _init and what it reports.
struct PersistentSpec {
  Op op;
  int m;
  const char* algorithm;
  int expect;  // CART_GRAPH_*, or -1 for auto (any)
};
const PersistentSpec kPersistent[] = {
    {kAllgather, 3, "grid", CART_GRAPH_GRID},          {kAlltoall, 2, "linear", CART_GRAPH_LINEAR},
    {kAlltoallv, 0, "pairing", CART_GRAPH_PAIRING},    {kAllgatherv, 0, "cumulative", CART_GRAPH_CUMULATIVE},
    {kAlltoallw, 0, "auto", -1},                       {kAlltoallv, 0, "grid", CART_GRAPH_GRID},
};
constexpr int kPersistentCount = sizeof kPersistent / sizeof kPersistent[0];

std::vector<Req> make_persistent(Harness& h, const Graph& g) {
  std::vector<Req> out(kPersistentCount);
  for (int i = 0; i < kPersistentCount; ++i) {
    Req& r = out[i];
    r.op = kPersistent[i].op;
    r.m = kPersistent[i].m;
    r.id = i;
    r.name = std::string("persistent ") + std::to_string(i) + " (" + kPersistent[i].algorithm + ")";
    r.layout(g, 5 * i);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cartplan_algorithm", kPersistent[i].algorithm);
    h.check(r.post_init(g, info) == MPI_SUCCESS, r.name + " init: " + Cart_error_message());
    MPI_Info_free(&info);
    int algorithm = -2;
    h.check(Cart_graph_request_algorithm(r.req, &algorithm) == MPI_SUCCESS &&
                (kPersistent[i].expect < 0 ? algorithm >= 0 : algorithm == kPersistent[i].expect),
            r.name + " runs its algorithm, got " + std::to_string(algorithm));
  }
  return out;
}

// Collective calls made while the iteration's requests are in flight, the same on every rank:
// every sixth iteration a persistent init of alltoallv (grid, cumulative, auto, pairing in turn;
// its lane chosen while other lanes are busy), started at once and freed after completion; every
// sixth, offset by 2, MPI_Comm_dup of the graph and a first blocking graph call on the duplicate
// (cartplan's state set up there), then its free.
struct Midflight {
  Req extra;
  std::string begin(const Graph& g, int iter) {
    if (iter % 6 == 2) {
      Graph d = g;
      MPI_Comm_dup(g.comm, &d.comm);
      Req r;
      r.op = kAllgather, r.m = 2, r.id = 13, r.name = "blocking allgather on a duplicate";
      r.layout(d, 0);
      r.fill(d, iter);
      const int rc = Cart_graph_neighbor_allgather(r.send.data(), 2, MPI_INT, r.recv.data(), 2, MPI_INT, d.comm);
      MPI_Comm_free(&d.comm);
      return rc != MPI_SUCCESS ? r.name + ": " + Cart_error_message() : r.check(d, iter);
    }
    if (iter % 6 != 5) return "";
    extra = Req{};
    extra.op = kAlltoallv, extra.id = 14, extra.name = "persistent init while others are in flight";
    extra.layout(g, iter);
    extra.fill(g, iter);
    MPI_Info info;
    MPI_Info_create(&info);
    const char* const algorithms[] = {"grid", "cumulative", "auto", "pairing"};
    MPI_Info_set(info, "cartplan_algorithm", algorithms[(iter / 6) % 4]);
    const int rc = extra.post_init(g, info);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS || Cart_start(&extra.req) != MPI_SUCCESS) return extra.name + ": " + Cart_error_message();
    return "";
  }
  // After the others completed: complete and check the extra request, then free it.
  std::string end(const Graph& g, int iter) {
    if (iter % 6 != 5) return "";
    std::string fail;
    if (Cart_wait(&extra.req) != MPI_SUCCESS) fail = extra.name + ": wait: " + Cart_error_message();
    if (fail.empty()) fail = extra.check(g, iter);
    if (Cart_request_free(&extra.req) != MPI_SUCCESS && fail.empty()) fail = extra.name + ": free";
    return fail;
  }
};

// The non-blocking and blocking calls of the test, on the communicator's algorithm: alltoallv
// with new counts every iteration, allgather, a blocking alltoallv, and two alltoallv calls with
// the counts of the previous such call (the second reuses the first's sizes while both are in
// flight: graph_sized_chain.h).
struct Calls {
  Req nbv, nbg, blk, same1, same2;
  Midflight mid;
  int expect = 0;  // CART_GRAPH_* the communicator's Info makes a non-blocking v call run
  void setup(const Graph& g) {
    nbv.op = kAlltoallv, nbv.id = 10, nbv.name = "non-blocking alltoallv";
    nbg.op = kAllgather, nbg.m = 2, nbg.id = 11, nbg.name = "non-blocking allgather";
    blk.op = kAlltoallv, blk.id = 12, blk.name = "blocking alltoallv";
    same1.op = kAlltoallv, same1.id = 8, same1.name = "non-blocking alltoallv, counts as before";
    same2.op = kAlltoallv, same2.id = 9, same2.name = "non-blocking alltoallv, counts as the one in flight";
    nbg.layout(g, 0);
    same1.layout(g, 100);
    same2.layout(g, 100);
  }
};

bool cartplan_progress_only() {
  const char* p = std::getenv("CARTPLAN_PROGRESS");
  return p && std::string(p) == "cartplan";
}

// One iteration: the same sequence of collective calls on every rank (starts, a non-blocking
// call, Cart_startall, a blocking call, another non-blocking call, Cart_startall); user messages
// sent before the collectives on even ranks and after completion on odd ones, received while
// requests are in flight on even ranks (blocked in MPI_Recv while the sender's are pending).
std::string iteration(Graph& g, std::vector<Req>& pers, Calls& c, UserTraffic& user, int iter) {
  for (Req& r : pers) r.fill(g, iter);
  c.nbv.layout(g, iter + 1);
  c.blk.layout(g, 2 * iter + 3);
  for (Req* r : {&c.nbv, &c.nbg, &c.blk, &c.same1, &c.same2}) r->fill(g, iter);
  const bool even = g.me % 2 == 0;
  // With progress only inside Cart_* calls (CARTPLAN_PROGRESS=cartplan) a rank blocked in
  // MPI_Recv does not advance its requests, so there every rank sends before the receives.
  const bool send_early = even || cartplan_progress_only();
  std::string fail;
  bool ok = true;
  if (send_early) user.send(iter);
  ok = Cart_start(&pers[0].req) == MPI_SUCCESS && Cart_start(&pers[1].req) == MPI_SUCCESS && ok;
  ok = c.nbv.post_nonblocking(g) == MPI_SUCCESS && ok;
  int algorithm = -1;
  if (ok && Cart_graph_request_algorithm(c.nbv.req, &algorithm) == MPI_SUCCESS && algorithm != c.expect)
    fail = c.nbv.name + " runs algorithm " + std::to_string(algorithm) + ", want " + std::to_string(c.expect);
  Cart_Request first[2] = {pers[2].req, pers[3].req}, second[2] = {pers[4].req, pers[5].req};
  ok = Cart_startall(2, first) == MPI_SUCCESS && ok;
  const std::string midflight = c.mid.begin(g, iter);
  Req& b = c.blk;
  ok = Cart_graph_neighbor_alltoallv(b.send.data(), b.sc.data(), b.sd.data(), MPI_INT, b.recv.data(), b.rc.data(), b.rd.data(),
                                     MPI_INT, g.comm) == MPI_SUCCESS && ok;
  ok = c.nbg.post_nonblocking(g) == MPI_SUCCESS && ok;
  ok = c.same1.post_nonblocking(g) == MPI_SUCCESS && c.same2.post_nonblocking(g) == MPI_SUCCESS && ok;
  ok = Cart_startall(2, second) == MPI_SUCCESS && ok;
  // Open MPI's own neighbourhood collective in flight with cartplan's, on the same communicator.
  MPI_Request mine = MPI_REQUEST_NULL;
  const int own = value(g.me, 50, 0, iter, 15);
  std::vector<int> theirs(g.in.size() + 1, kGap);
  if (g.dist) MPI_Ineighbor_allgather(&own, 1, MPI_INT, theirs.data(), 1, MPI_INT, g.comm, &mine);
  if (even) {
    const std::string f = user.receive(iter);  // always received, whatever failed before
    if (fail.empty()) fail = f;
  }
  std::vector<Req*> all = {&pers[0], &pers[1], &c.nbv, &pers[2], &pers[3], &c.nbg, &c.same1, &c.same2, &pers[4], &pers[5]};
  std::vector<Cart_Request*> handles;
  for (Req* r : all) handles.push_back(&r->req);
  ok = complete_in_rank_order(user, handles, iter, &fail) && ok;
  const std::string extra = c.mid.end(g, iter);
  MPI_Wait(&mine, MPI_STATUS_IGNORE);
  for (std::size_t j = 0; g.dist && j <= g.in.size(); ++j)
    if (fail.empty() && theirs[j] != (j < g.in.size() ? value(g.in[j], 50, 0, iter, 15) : kGap))
      fail = "MPI_Ineighbor_allgather in flight with cartplan's requests: block " + std::to_string(j);
  if (!send_early) user.send(iter);
  if (!even && fail.empty()) fail = user.receive(iter);
  MPI_Waitall(2, user.sends, MPI_STATUSES_IGNORE);
  if (!ok) return "a call failed at iteration " + std::to_string(iter) + ": " + Cart_error_message();
  if (fail.empty()) fail = !midflight.empty() ? midflight : extra;
  for (Req* r : all)
    if (fail.empty()) fail = r->check(g, iter);
  if (fail.empty()) fail = b.check(g, iter);
  for (Req* r : {&c.nbv, &c.nbg, &c.same1, &c.same2})
    if (fail.empty() && r->req != CART_REQUEST_NULL) fail = r->name + ": completion left the request";
  return fail;
}

void run_iterations(Harness& h, Graph& g, const std::string& label, int expect, int iterations) {
  std::vector<Req> pers = make_persistent(h, g);
  Calls c;
  c.setup(g);
  c.expect = expect;
  UserTraffic user(g.comm);
  std::string fail;
  for (int it = 0; it < iterations; ++it) {  // every rank runs every iteration: no rank left waiting
    const std::string f = iteration(g, pers, c, user, it);
    if (fail.empty()) fail = f;
  }
  h.check(fail.empty(), label + ": " + fail);
  for (Req& r : pers) h.check(Cart_request_free(&r.req) == MPI_SUCCESS, label + ": free " + r.name);
}

// A non-blocking request left in flight while 4100 more non-blocking calls run on the same
// communicator: their lanes (4096 with Open MPI's tag space, lanes.h) come round to the old
// request's, which must finish before its lane is reused and still deliver its own data. The
// old one is tested now and then on even ranks only; every call's data checked.
std::string lane_wrap(const Graph& g) {
  Req old, call;
  old.op = kAlltoall, old.m = 1, old.id = 7, old.name = "request in flight while the lanes wrap";
  call.op = kAllgather, call.m = 1, call.id = 6, call.name = "non-blocking allgather";
  old.layout(g, 0);
  call.layout(g, 0);
  old.fill(g, 999);
  std::string fail;
  if (old.post_nonblocking(g) != MPI_SUCCESS) return old.name + ": " + Cart_error_message();
  for (int i = 0; i < 4100; ++i) {
    call.fill(g, i);
    if (call.post_nonblocking(g) != MPI_SUCCESS || Cart_wait(&call.req) != MPI_SUCCESS) return call.name + ": " + Cart_error_message();
    if (fail.empty()) fail = call.check(g, i);
    int flag = 0;
    if (g.me % 2 == 0 && i % 97 == 0 && old.req != CART_REQUEST_NULL && Cart_test(&old.req, &flag) != MPI_SUCCESS)
      return old.name + ": test: " + Cart_error_message();
  }
  if (old.req != CART_REQUEST_NULL && Cart_wait(&old.req) != MPI_SUCCESS) return old.name + ": wait: " + Cart_error_message();
  return fail.empty() ? old.check(g, 999) : fail;
}

// The communicator freed while its requests are in flight (MPI_Comm_free: pending operations
// complete normally): a non-blocking pairing alltoallv and a persistent grid allgather started,
// the communicator freed (after a sleep on odd ranks), then both completed in rank-dependent
// order and checked; the persistent request started once more, then freed.
std::string free_while_in_flight(int me, int p) {
  Graph g = make_graph(me, p, "pairing", false);
  Req nb, pers;
  nb.op = kAlltoallv, nb.id = 4, nb.name = "non-blocking alltoallv on a freed communicator";
  pers.op = kAllgather, pers.m = 2, pers.id = 5, pers.name = "persistent allgather on a freed communicator";
  nb.layout(g, 7);
  pers.layout(g, 0);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", "grid");
  const int rc = pers.post_init(g, info);
  MPI_Info_free(&info);
  if (rc != MPI_SUCCESS) return pers.name + ": init: " + Cart_error_message();
  std::string fail;
  for (int it = 0; it < 2 && fail.empty(); ++it) {
    nb.fill(g, it);
    pers.fill(g, it);
    if (Cart_start(&pers.req) != MPI_SUCCESS || (it == 0 && nb.post_nonblocking(g) != MPI_SUCCESS)) return "start: " + std::string(Cart_error_message());
    if (it == 0) {
      if (me % 2) usleep(500);
      MPI_Comm_free(&g.comm);
    }
    Cart_Request* order[2] = {&pers.req, &nb.req};
    if (me % 2) std::swap(order[0], order[1]);
    for (Cart_Request* r : order)
      if (*r != CART_REQUEST_NULL && Cart_wait(r) != MPI_SUCCESS && fail.empty()) fail = std::string("wait: ") + Cart_error_message();
    if (fail.empty()) fail = pers.check(g, it);
    if (fail.empty() && it == 0) fail = nb.check(g, it);
  }
  if (Cart_request_free(&pers.req) != MPI_SUCCESS && fail.empty()) fail = pers.name + ": free";
  return fail;
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  // The communicator's Info forces pairing on the blocking and non-blocking calls (multi-phase:
  // they need progress); each _init forces its own.
  // The third: forced grid on a Cart_graph_comm_create_adjacent communicator.
  for (const char* comm_algorithm : {"pairing", "auto", "grid"}) {
    const bool attribute = std::string(comm_algorithm) == "grid";
    Graph g = make_graph(h.rank, h.size, comm_algorithm, attribute);
    const int expect = attribute ? CART_GRAPH_GRID : (std::string(comm_algorithm) == "pairing" ? CART_GRAPH_PAIRING : CART_GRAPH_LINEAR);
    run_iterations(h, g, std::string("communicator algorithm ") + comm_algorithm + (attribute ? " (attribute)" : ""), expect, 25);
    if (std::string(comm_algorithm) == "pairing") {
      const std::string fail = lane_wrap(g);
      h.check(fail.empty(), "lanes wrap: " + fail);
    }
    MPI_Comm_free(&g.comm);
  }
  const std::string fail = free_while_in_flight(h.rank, h.size);
  h.check(fail.empty(), "communicator freed with requests in flight: " + fail);
  return h.finish("graph_inflight_test");
}
