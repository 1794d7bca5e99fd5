// MPI test of every Cartesian collective x {auto, direct, combining, hybrid, log-round} x
// {blocking, non-blocking, persistent} on random neighbourhoods (duplicates, zero offset) and random periodic,
// non-periodic and mixed grids, with rank- and block-dependent data. Results are checked
// against the expected blocks (sentinel where the source is outside the mesh), against
// MPI_Neighbor_alltoall/allgather on an MPI_Dist_graph_create_adjacent communicator, and the
// plan against the simulator. Run under mpirun (tests/mpi/run_mpi.sh); args: SEED CASES.
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "backends/sim/simulator.h"
#include "engine/loground.h"
#include "engine/optimizer.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;

constexpr int kSentinel = -1;

enum class Op { kAlltoall, kAlltoallv, kAlltoallw, kAllgather, kAllgatherv, kAllgatherw };
enum class Mode { kBlocking, kNonblocking, kPersistent };
const char* kOpNames[] = {"alltoall", "alltoallv", "alltoallw", "allgather", "allgatherv", "allgatherw"};
const char* kModeNames[] = {"blocking", "nonblocking", "persistent"};
const char* kAlgoNames[] = {"auto", "direct", "combining", "hybrid", "loground"};

bool is_gather(Op op) { return op >= Op::kAllgather; }

// Elements of a block: `n` ints at start, start+stride, ...
struct Layout {
  int start = 0, n = 0, stride = 1;
};

int value(int rank, int block, int j, int epoch) { return ((epoch * 16 + rank) * 64 + block) * 32 + j; }

struct Case {
  int d = 1;
  std::vector<int> dims, periods;
  std::vector<int> offsets;  // t*d
  int t = 0;
  std::string text;
};

Case random_case(std::mt19937& rng, int np) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Case c;
  c.d = pick(1, 3);
  // Usually the grid fills the communicator; sometimes it leaves ranks out (MPI_COMM_NULL).
  int p = np > 1 && pick(0, 4) == 0 ? np - 1 : np;
  c.dims.assign(c.d, 1);
  for (int f = 2; p > 1;) {
    if (p % f == 0) {
      c.dims[pick(0, c.d - 1)] *= f;
      p /= f;
    } else {
      ++f;
    }
  }
  const int kind = pick(0, 2);
  for (int k = 0; k < c.d; ++k) c.periods.push_back(kind == 0 ? 1 : kind == 1 ? 0 : pick(0, 1));
  const int distinct = pick(1, 7);
  // Coordinates up to 4 in a third of the cases, so that log-round plans route by bits.
  const int reach = pick(0, 2) == 0 ? 4 : 2;
  for (int i = 0; i < distinct; ++i)
    for (int k = 0; k < c.d; ++k) c.offsets.push_back(pick(-reach, reach));
  c.t = distinct;
  if (reach == 4) {  // and a deep line, +-{1, 2, 3} along one dimension (3 rounds become 2)
    const int line = pick(0, c.d - 1), sign = pick(0, 1) ? 1 : -1;
    for (int v = 1; v <= 3; ++v, ++c.t)
      for (int k = 0; k < c.d; ++k) c.offsets.push_back(k == line ? sign * v : 0);
  }
  if (pick(0, 2) == 0) {  // zero offset
    for (int k = 0; k < c.d; ++k) c.offsets.push_back(0);
    ++c.t;
  }
  if (pick(0, 2) == 0) {  // a duplicate
    const int i = pick(0, distinct - 1);
    for (int k = 0; k < c.d; ++k) c.offsets.push_back(c.offsets[i * c.d + k]);
    ++c.t;
  }
  c.text = "d=" + std::to_string(c.d) + " dims";
  for (int k = 0; k < c.d; ++k) c.text += " " + std::to_string(c.dims[k]) + (c.periods[k] ? "p" : "m");
  c.text += " offsets";
  for (int i = 0; i < c.t; ++i) {
    c.text += " (";
    for (int k = 0; k < c.d; ++k) c.text += (k ? "," : "") + std::to_string(c.offsets[i * c.d + k]);
    c.text += ")";
  }
  return c;
}

MPI_Datatype type_of(const Layout& l, std::vector<MPI_Datatype>& owned, int* count) {
  if (l.stride == 1 || l.n == 0) {
    *count = l.n;
    return MPI_INT;
  }
  MPI_Datatype v;
  MPI_Type_vector(l.n, 1, l.stride, MPI_INT, &v);
  MPI_Type_commit(&v);
  owned.push_back(v);
  *count = 1;
  return v;
}

// Buffers, layouts and MPI arguments for one collective on one rank.
struct Setup {
  Op op;
  int t = 0;
  int c = 0;  // base count
  std::vector<Layout> send, recv;
  std::vector<int> sendbuf, recvbuf;
  // v and w arguments
  std::vector<int> scounts, sdispls, rcounts, rdispls;
  std::vector<MPI_Aint> sdispls_w, rdispls_w;
  std::vector<MPI_Datatype> stypes, rtypes, owned;

  ~Setup() {
    for (MPI_Datatype& dt : owned) MPI_Type_free(&dt);
  }
};

// Block sizes depend on the block (v/w) but never on the rank, as cartplan requires.
void build(Setup& s, Op op, int t, int c) {
  s.op = op;
  s.t = t;
  s.c = c;
  const bool irregular = op == Op::kAlltoallv || op == Op::kAlltoallw;
  auto count = [&](int i) { return irregular ? (i % 3) + (i % 2 == 0 ? c : 0) : c; };
  // Blocks are placed in reverse order for v/w so displacements really matter; w uses
  // strided types on one side and contiguous on the other (same type signature).
  int pos = 0;
  const int nsend = is_gather(op) ? 1 : t;
  s.send.resize(nsend);
  for (int k = 0; k < nsend; ++k) {
    const int i = (op == Op::kAlltoallv || op == Op::kAlltoallw) ? nsend - 1 - k : k;
    const int stride = op == Op::kAlltoallw && i % 2 == 1 ? 2 : 1;
    s.send[i] = Layout{pos, count(i), stride};
    pos += count(i) * stride + (irregular ? 1 : 0);
  }
  s.sendbuf.assign(std::max(pos, 1), kSentinel);
  pos = 0;
  s.recv.resize(t);
  for (int k = 0; k < t; ++k) {
    const int i = (op == Op::kAlltoall || op == Op::kAllgather) ? k : t - 1 - k;
    const int stride = ((op == Op::kAlltoallw && i % 2 == 0) || (op == Op::kAllgatherw && i % 2 == 1)) ? 2 : 1;
    s.recv[i] = Layout{pos, is_gather(op) ? c : count(i), stride};
    pos += s.recv[i].n * stride + (op == Op::kAlltoall || op == Op::kAllgather ? 0 : 1);
  }
  s.recvbuf.assign(std::max(pos, 1), kSentinel);
  for (int i = 0; i < nsend; ++i) {
    int n = 0;
    MPI_Datatype dt = type_of(s.send[i], s.owned, &n);
    s.scounts.push_back(n);
    s.sdispls.push_back(s.send[i].start);
    s.sdispls_w.push_back(static_cast<MPI_Aint>(s.send[i].start) * sizeof(int));
    s.stypes.push_back(dt);
  }
  for (int i = 0; i < t; ++i) {
    int n = 0;
    MPI_Datatype dt = type_of(s.recv[i], s.owned, &n);
    s.rcounts.push_back(n);
    s.rdispls.push_back(s.recv[i].start);
    s.rdispls_w.push_back(static_cast<MPI_Aint>(s.recv[i].start) * sizeof(int));
    s.rtypes.push_back(dt);
  }
}

void fill_send(Setup& s, int rank, int epoch) {
  for (std::size_t i = 0; i < s.send.size(); ++i)
    for (int j = 0; j < s.send[i].n; ++j)
      s.sendbuf[s.send[i].start + j * s.send[i].stride] = value(rank, static_cast<int>(i), j, epoch);
}

// The whole recv buffer as it must be: block i from the source at -offset[i], sentinel where
// there is no source and in every gap.
std::vector<int> expected_recv(const Setup& s, const std::vector<int>& sources, int epoch) {
  std::vector<int> e(s.recvbuf.size(), kSentinel);
  for (int i = 0; i < s.t; ++i) {
    if (sources[i] == MPI_PROC_NULL) continue;
    for (int j = 0; j < s.recv[i].n; ++j)
      e[s.recv[i].start + j * s.recv[i].stride] = value(sources[i], is_gather(s.op) ? 0 : i, j, epoch);
  }
  return e;
}

int call(Setup& s, MPI_Comm cart, Mode mode, Cart_Request* req) {
  const void* sb = s.sendbuf.data();
  void* rb = s.recvbuf.data();
  const bool b = mode == Mode::kBlocking, nb = mode == Mode::kNonblocking;
  switch (s.op) {
    case Op::kAlltoall:
      return b ? Cart_alltoall(sb, s.c, MPI_INT, rb, s.c, MPI_INT, cart)
             : nb ? Cart_ialltoall(sb, s.c, MPI_INT, rb, s.c, MPI_INT, cart, req)
                  : Cart_alltoall_init(sb, s.c, MPI_INT, rb, s.c, MPI_INT, cart, MPI_INFO_NULL, req);
    case Op::kAlltoallv:
      return b ? Cart_alltoallv(sb, s.scounts.data(), s.sdispls.data(), MPI_INT, rb, s.rcounts.data(), s.rdispls.data(), MPI_INT, cart)
             : nb ? Cart_ialltoallv(sb, s.scounts.data(), s.sdispls.data(), MPI_INT, rb, s.rcounts.data(), s.rdispls.data(), MPI_INT, cart, req)
                  : Cart_alltoallv_init(sb, s.scounts.data(), s.sdispls.data(), MPI_INT, rb, s.rcounts.data(), s.rdispls.data(), MPI_INT, cart,
                                        MPI_INFO_NULL, req);
    case Op::kAlltoallw:
      return b ? Cart_alltoallw(sb, s.scounts.data(), s.sdispls_w.data(), s.stypes.data(), rb, s.rcounts.data(), s.rdispls_w.data(),
                                s.rtypes.data(), cart)
             : nb ? Cart_ialltoallw(sb, s.scounts.data(), s.sdispls_w.data(), s.stypes.data(), rb, s.rcounts.data(),
                                    s.rdispls_w.data(), s.rtypes.data(), cart, req)
                  : Cart_alltoallw_init(sb, s.scounts.data(), s.sdispls_w.data(), s.stypes.data(), rb, s.rcounts.data(),
                                        s.rdispls_w.data(), s.rtypes.data(), cart, MPI_INFO_NULL, req);
    case Op::kAllgather:
      return b ? Cart_allgather(sb, s.c, MPI_INT, rb, s.c, MPI_INT, cart)
             : nb ? Cart_iallgather(sb, s.c, MPI_INT, rb, s.c, MPI_INT, cart, req)
                  : Cart_allgather_init(sb, s.c, MPI_INT, rb, s.c, MPI_INT, cart, MPI_INFO_NULL, req);
    case Op::kAllgatherv:
      return b ? Cart_allgatherv(sb, s.c, MPI_INT, rb, s.rcounts.data(), s.rdispls.data(), MPI_INT, cart)
             : nb ? Cart_iallgatherv(sb, s.c, MPI_INT, rb, s.rcounts.data(), s.rdispls.data(), MPI_INT, cart, req)
                  : Cart_allgatherv_init(sb, s.c, MPI_INT, rb, s.rcounts.data(), s.rdispls.data(), MPI_INT, cart, MPI_INFO_NULL, req);
    case Op::kAllgatherw:
      return b ? Cart_allgatherw(sb, s.c, MPI_INT, rb, s.rcounts.data(), s.rdispls_w.data(), s.rtypes.data(), cart)
             : nb ? Cart_iallgatherw(sb, s.c, MPI_INT, rb, s.rcounts.data(), s.rdispls_w.data(), s.rtypes.data(), cart, req)
                  : Cart_allgatherw_init(sb, s.c, MPI_INT, rb, s.rcounts.data(), s.rdispls_w.data(), s.rtypes.data(), cart,
                                         MPI_INFO_NULL, req);
  }
  return MPI_ERR_ARG;
}

MPI_Comm make_cart(const Case& c, const char* algo, const char* struct_min_bytes) {
  return cartplan::mpitest::open_cart(c.d, c.dims, c.periods, c.t, c.offsets, algo, struct_min_bytes);
}

void run_one(Harness& h, const Case& c, MPI_Comm cart, int algo, Op op, Mode mode, const std::vector<int>& sources) {
  const int me = [&] { int r; MPI_Comm_rank(cart, &r); return r; }();
  Setup s;
  build(s, op, c.t, 2);
  const std::string what = c.text + " " + kOpNames[static_cast<int>(op)] + " " + kAlgoNames[algo] + " " +
                           kModeNames[static_cast<int>(mode)];
  fill_send(s, me, 1);
  Cart_Request req = CART_REQUEST_NULL;
  int rc = call(s, cart, mode, &req);
  h.check(rc == MPI_SUCCESS, what + ": call returned " + std::to_string(rc) + " " + Cart_error_message());
  if (rc != MPI_SUCCESS) return;
  if (mode == Mode::kNonblocking) {
    int flag = 0;
    for (int spins = 0; !flag && spins < 1000000; ++spins) Cart_test(&req, &flag);
    h.check(flag && req == CART_REQUEST_NULL, what + ": Cart_test never completed / did not free the request");
    if (!flag) Cart_wait(&req);
  } else if (mode == Mode::kPersistent) {
    int combining = -1;
    Cart_request_algorithm(req, &combining);
    if (algo == 1) h.check(combining == 0, what + ": direct requested, got combining");
    if (algo == 2) h.check(combining == 1, what + ": combining requested, got direct");
    h.check(Cart_start(&req) == MPI_SUCCESS, what + ": start");
    h.check(Cart_wait(&req) == MPI_SUCCESS, what + ": wait");
  }
  h.check(s.recvbuf == expected_recv(s, sources, 1), what + ": wrong recv buffer");
  if (mode == Mode::kPersistent) {
    // Buffers are fixed at init, their contents are not: a second start sends the new data.
    fill_send(s, me, 2);
    std::fill(s.recvbuf.begin(), s.recvbuf.end(), kSentinel);
    h.check(Cart_start(&req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS, what + ": second start");
    h.check(s.recvbuf == expected_recv(s, sources, 2), what + ": wrong recv buffer after the second start");
    h.check(Cart_request_free(&req) == MPI_SUCCESS && req == CART_REQUEST_NULL, what + ": free");
  }
}

// MPI's own neighbourhood collectives on a distributed graph of the existing neighbours.
void compare_with_mpi(Harness& h, const Case& c, MPI_Comm cart, const std::vector<int>& sources, const std::vector<int>& targets) {
  int t = 0, in = 0, out = 0;
  Cart_neighbor_degrees(cart, &t, &in, &out);
  std::vector<int> gs(in), gt(out);
  h.check(Cart_graph_get(cart, in, gs.data(), out, gt.data()) == MPI_SUCCESS, "Cart_graph_get");
  MPI_Comm graph;
  MPI_Dist_graph_create_adjacent(cart, in, gs.data(), MPI_UNWEIGHTED, out, gt.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);
  int me = 0;
  MPI_Comm_rank(cart, &me);
  const int m = 3;
  for (bool gather : {false, true}) {
    std::vector<int> mine(static_cast<std::size_t>(t) * m), theirs_send, theirs_recv(static_cast<std::size_t>(in) * m, kSentinel);
    for (int i = 0; i < t; ++i)
      for (int j = 0; j < m; ++j) mine[i * m + j] = value(me, gather ? 0 : i, j, 3);
    for (int i = 0; i < t; ++i)
      if (targets[i] != MPI_PROC_NULL)
        theirs_send.insert(theirs_send.end(), mine.begin() + i * m, mine.begin() + (i + 1) * m);
    std::vector<int> ours(static_cast<std::size_t>(t) * m, kSentinel);
    if (gather) {
      MPI_Neighbor_allgather(mine.data(), m, MPI_INT, theirs_recv.data(), m, MPI_INT, graph);
      Cart_allgather(mine.data(), m, MPI_INT, ours.data(), m, MPI_INT, cart);
    } else {
      theirs_send.resize(std::max<std::size_t>(theirs_send.size(), 1));
      MPI_Neighbor_alltoall(theirs_send.data(), m, MPI_INT, theirs_recv.data(), m, MPI_INT, graph);
      Cart_alltoall(mine.data(), m, MPI_INT, ours.data(), m, MPI_INT, cart);
    }
    int k = 0;
    bool same = true;
    for (int i = 0; i < t; ++i) {
      if (sources[i] == MPI_PROC_NULL) continue;
      same = same && std::equal(ours.begin() + i * m, ours.begin() + (i + 1) * m, theirs_recv.begin() + k * m);
      ++k;
    }
    h.check(same, c.text + (gather ? ": Cart_allgather differs from MPI_Neighbor_allgather" : ": Cart_alltoall differs from MPI_Neighbor_alltoall"));
  }
  MPI_Comm_free(&graph);
}

// The case's offsets as a neighbourhood (random_case makes only valid ones).
cartplan::engine::Neighborhood neighborhood_of(const Case& c) {
  std::vector<cartplan::ir::Offset> offs(c.t, cartplan::ir::Offset(c.d));
  for (int i = 0; i < c.t; ++i)
    for (int k = 0; k < c.d; ++k) offs[i][k] = c.offsets[i * c.d + k];
  return *cartplan::engine::Neighborhood::create(c.d, offs);
}

// The plan the backend runs, simulated for all ranks in one process.
void compare_with_simulator(Harness& h, const Case& c) {
  const cartplan::engine::Neighborhood nbh = neighborhood_of(c);
  std::vector<bool> per(c.periods.begin(), c.periods.end());
  auto grid = cartplan::engine::Grid::create(c.dims, per);
  for (auto op : {cartplan::ir::Op::kAlltoall, cartplan::ir::Op::kAllgather})
    for (auto algo : {cartplan::engine::AlgoChoice::kDirect, cartplan::engine::AlgoChoice::kCombining,
                      cartplan::engine::AlgoChoice::kLogRound}) {
      cartplan::engine::PlanOptions o;
      o.algo = algo;
      auto plan = cartplan::engine::make_plan(op, nbh, o);
      auto r = cartplan::sim::simulate(*plan, *grid, cartplan::sim::SimOptions{});
      h.check(r.ok() && r->ok, c.text + ": simulator disagrees");
    }
}

void random_cases(Harness& h, int seed, int cases) {
  std::mt19937 rng(static_cast<unsigned>(seed));  // the same sequence on every rank
  for (int n = 0; n < cases; ++n) {
    const Case c = random_case(rng, h.size);
    compare_with_simulator(h, c);
    // Hybrid (forced through the Info key) needs two distinct non-zero offsets to split.
    std::set<std::vector<int>> distinct;
    for (int i = 0; i < c.t; ++i) {
      std::vector<int> o(c.offsets.begin() + i * c.d, c.offsets.begin() + (i + 1) * c.d);
      if (std::any_of(o.begin(), o.end(), [](int x) { return x != 0; })) distinct.insert(o);
    }
    // Log-round (forced) where some dimension has values that log rounds route in fewer rounds.
    const std::vector<bool> log = cartplan::engine::log_round_dims(neighborhood_of(c));
    std::vector<int> algos = {0, 1, 2};
    if (distinct.size() >= 2) algos.push_back(3);
    if (std::find(log.begin(), log.end(), true) != log.end()) algos.push_back(4);
    for (int algo : algos) {
      // Messages of several blocks go packed (the default for small blocks) in even cases and by
      // struct datatypes, with no copy by cartplan, in odd ones.
      MPI_Comm cart = make_cart(c, kAlgoNames[algo], n % 2 ? "0" : "-1");
      if (cart == MPI_COMM_NULL) continue;  // beyond the grid
      std::vector<int> sources(c.t), targets(c.t);
      h.check(Cart_neighbor_get(cart, c.t, sources.data(), MPI_UNWEIGHTED, c.t, targets.data(), MPI_UNWEIGHTED) == MPI_SUCCESS,
              "Cart_neighbor_get");
      for (int op = 0; op < 6; ++op)
        for (int mode = 0; mode < 3; ++mode) run_one(h, c, cart, algo, static_cast<Op>(op), static_cast<Mode>(mode), sources);
      if (algo == 0) compare_with_mpi(h, c, cart, sources, targets);
      MPI_Comm_free(&cart);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  const int seed = argc > 1 ? std::atoi(argv[1]) : 1;
  const int cases = argc > 2 ? std::atoi(argv[2]) : 20;
  random_cases(h, seed + h.size, cases);
  return h.finish("collectives_test");
}
