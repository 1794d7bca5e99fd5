// MPI test of the neighbourhood reductions and rooted collectives (Cart_allreduce,
// Cart_reduce_scatter, Cart_bcast, Cart_gather, Cart_scatter, Cart_reduce) x {auto, direct,
// combining} x {blocking, non-blocking, persistent} on random neighbourhoods (duplicates, zero
// offset, offsets that wrap around small tori) and random periodic, non-periodic and mixed grids.
// The reference is MPI itself: MPI_Neighbor_allgather / MPI_Neighbor_alltoall on an
// MPI_Dist_graph_create_adjacent communicator of the existing neighbours, plus a local
// reduction. Integer data depend on rank, block, element and epoch, so a contribution counted
// twice, missing or from the wrong process changes the sum; doubles are compared with a
// relative tolerance; a user-defined commutative op runs on a derived datatype; non-significant
// arguments of rooted ops are passed as NULL / -1 / MPI_DATATYPE_NULL, and buffers that must stay
// untouched are checked against a sentinel. Args: SEED CASES.
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;
using Vec = std::vector<std::int64_t>;

constexpr std::int64_t kSentinel = -7;
constexpr std::int64_t kModulus = 1000003;

enum class Op { kAllreduceSum, kAllreduceMax, kAllreduceUser, kAllreduceDouble, kReduceScatter, kBcast, kGather, kScatter, kReduce };
constexpr int kOps = 9;
const char* kOpNames[] = {"allreduce(sum)", "allreduce(max)", "allreduce(user op)", "allreduce(double)", "reduce_scatter",
                          "bcast", "gather", "scatter", "reduce"};
enum class Mode { kBlocking, kNonblocking, kPersistent };
const char* kModeNames[] = {"blocking", "nonblocking", "persistent"};
const char* kAlgoNames[] = {"auto", "direct", "combining"};

bool personalized(Op op) { return op == Op::kReduceScatter || op == Op::kScatter; }

// Rank-, block-, element- and epoch-dependent, below kModulus and distinct enough that a double
// count changes every sum.
std::int64_t value(int rank, int block, int e, int epoch) {
  return ((static_cast<std::int64_t>(epoch) * 97 + rank) * 131 + block) * 53 + e + 1;
}

// A commutative user op on pairs of int64: addition modulo kModulus.
void modsum(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<const std::int64_t*>(in);
  auto* b = static_cast<std::int64_t*>(inout);
  for (int j = 0; j < 2 * *len; ++j) b[j] = (a[j] + b[j]) % kModulus;
}

struct Case {
  int d = 1, t = 0, m = 1, root = 0;
  std::vector<int> dims, periods, offsets;
  std::string text;
};

Case random_case(std::mt19937& rng, int np) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Case c;
  c.d = pick(1, 3);
  int p = np > 1 && pick(0, 5) == 0 ? np - 1 : np;  // sometimes ranks outside the grid
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
  for (int i = 0; i < distinct * c.d; ++i) c.offsets.push_back(pick(-2, 2));
  c.t = distinct;
  if (pick(0, 2) == 0) {  // zero offset
    for (int k = 0; k < c.d; ++k) c.offsets.push_back(0);
    ++c.t;
  }
  if (pick(0, 2) == 0) {  // a duplicate
    const int i = pick(0, distinct - 1);
    for (int k = 0; k < c.d; ++k) c.offsets.push_back(c.offsets[i * c.d + k]);
    ++c.t;
  }
  if (pick(0, 3) == 0) {  // a box: the product neighbourhoods of the d-phase allreduce
    c.offsets.clear();
    c.t = 1;
    for (int k = 0; k < c.d; ++k) c.t *= 3;
    for (int i = 0; i < c.t; ++i)
      for (int k = 0, r = i; k < c.d; ++k, r /= 3) c.offsets.push_back(r % 3 - 1);
  }
  const int ms[] = {1, 3, 40};
  c.m = ms[pick(0, 2)];
  int size = 1;
  for (int x : c.dims) size *= x;
  c.root = pick(0, size - 1);
  c.text = "d=" + std::to_string(c.d) + " dims";
  for (int k = 0; k < c.d; ++k) c.text += " " + std::to_string(c.dims[k]) + (c.periods[k] ? "p" : "m");
  c.text += " m=" + std::to_string(c.m) + " root=" + std::to_string(c.root) + " offsets";
  for (int i = 0; i < c.t; ++i) {
    c.text += " (";
    for (int k = 0; k < c.d; ++k) c.text += (k ? "," : "") + std::to_string(c.offsets[i * c.d + k]);
    c.text += ")";
  }
  return c;
}

MPI_Comm make_cart(const Case& c, const char* algo) {
  return cartplan::mpitest::open_cart(c.d, c.dims, c.periods, c.t, c.offsets, algo);
}

// The reference: MPI's neighbourhood collectives over the existing neighbours.
struct Reference {
  MPI_Comm graph = MPI_COMM_NULL;
  std::vector<int> sources, targets;  // per offset, MPI_PROC_NULL outside the mesh
  int in = 0, out = 0;

  // Per offset i: the vector of the source at -offset[i] (empty if it does not exist).
  std::vector<Vec> allgather(const Vec& mine, int m) const {
    Vec got(static_cast<std::size_t>(std::max(in, 1)) * m);
    MPI_Neighbor_allgather(mine.data(), m, MPI_INT64_T, got.data(), m, MPI_INT64_T, graph);
    return spread(got, m);
  }
  // Per offset i: block i of the source at -offset[i] (that source's block for this process).
  std::vector<Vec> alltoall(const Vec& blocks, int m) const {
    Vec send, got(static_cast<std::size_t>(std::max(in, 1)) * m);
    for (std::size_t i = 0; i < targets.size(); ++i)
      if (targets[i] != MPI_PROC_NULL) send.insert(send.end(), blocks.begin() + i * m, blocks.begin() + (i + 1) * m);
    send.resize(std::max<std::size_t>(send.size(), 1));
    MPI_Neighbor_alltoall(send.data(), m, MPI_INT64_T, got.data(), m, MPI_INT64_T, graph);
    return spread(got, m);
  }
  std::vector<Vec> spread(const Vec& got, int m) const {
    std::vector<Vec> r(sources.size());
    int k = 0;
    for (std::size_t i = 0; i < sources.size(); ++i)
      if (sources[i] != MPI_PROC_NULL) {
        r[i].assign(got.begin() + static_cast<std::ptrdiff_t>(k) * m, got.begin() + static_cast<std::ptrdiff_t>(k + 1) * m);
        ++k;
      }
    return r;
  }
};

Reference make_reference(Harness& h, MPI_Comm cart, int t) {
  Reference r;
  r.sources.resize(t);
  r.targets.resize(t);
  h.check(Cart_neighbor_get(cart, t, r.sources.data(), MPI_UNWEIGHTED, t, r.targets.data(), MPI_UNWEIGHTED) == MPI_SUCCESS,
          "Cart_neighbor_get");
  int tt = 0;
  Cart_neighbor_degrees(cart, &tt, &r.in, &r.out);
  std::vector<int> gs(std::max(r.in, 1)), gt(std::max(r.out, 1));
  h.check(Cart_graph_get(cart, r.in, gs.data(), r.out, gt.data()) == MPI_SUCCESS, "Cart_graph_get");
  MPI_Dist_graph_create_adjacent(cart, r.in, gs.data(), MPI_UNWEIGHTED, r.out, gt.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                 &r.graph);
  return r;
}

// Local reduction of the vectors that exist (nullopt-like empty result when none does).
Vec reduce_local(const std::vector<Vec>& parts, Op op, int m) {
  Vec acc;
  for (const Vec& v : parts) {
    if (v.empty()) continue;
    if (acc.empty()) {
      acc = v;
      continue;
    }
    for (int e = 0; e < m; ++e) {
      if (op == Op::kAllreduceMax) acc[e] = std::max(acc[e], v[e]);
      else if (op == Op::kAllreduceUser) acc[e] = (acc[e] + v[e]) % kModulus;
      else acc[e] += v[e];
    }
  }
  return acc;
}

double as_double(std::int64_t v) { return static_cast<double>(v) * 0.37 + 1.0 / 3.0; }

struct Env {
  MPI_Op user_op = MPI_OP_NULL;
  MPI_Datatype pair = MPI_DATATYPE_NULL;  // two int64: the user op's element
};

// Runs `op` in `mode` and checks the result against the reference for two epochs (persistent:
// two starts of one request with new data).
void run_one(Harness& h, const Env& env, const Case& c, const Reference& ref, MPI_Comm cart, int algo, Op op, Mode mode) {
  int me = 0;
  MPI_Comm_rank(cart, &me);
  const int t = c.t, m = c.m, root = c.root;
  const std::string what = c.text + " " + kOpNames[static_cast<int>(op)] + " " + kAlgoNames[algo] + " " +
                           kModeNames[static_cast<int>(mode)] + " on rank " + std::to_string(me);
  const bool multi_send = personalized(op), multi_recv = op == Op::kGather;
  Vec send(static_cast<std::size_t>(multi_send ? t : 1) * m), recv(static_cast<std::size_t>(multi_recv ? t : 1) * m);
  std::vector<double> dsend(send.size()), drecv(recv.size());
  auto fill = [&](int epoch) {
    for (int b = 0; b < (multi_send ? t : 1); ++b)
      for (int e = 0; e < m; ++e) {
        std::int64_t v = value(me, b, e, epoch);
        if (op == Op::kAllreduceUser) v %= kModulus;
        send[static_cast<std::size_t>(b) * m + e] = v;
        dsend[static_cast<std::size_t>(b) * m + e] = as_double(v);
      }
    // Cart_bcast has one buffer: the data at the root, the sentinel elsewhere.
    if (op == Op::kBcast && me != root) std::fill(send.begin(), send.end(), kSentinel);
    std::fill(recv.begin(), recv.end(), kSentinel);
    std::fill(drecv.begin(), drecv.end(), as_double(kSentinel));
  };
  // Blocking calls pass the arguments MPI calls not significant as NULL / -1 / MPI_DATATYPE_NULL.
  const bool sloppy = mode == Mode::kBlocking;
  const bool at_root = me == root;
  Cart_Request req = CART_REQUEST_NULL;
  auto call = [&]() -> int {
    const bool nb = mode == Mode::kNonblocking, bl = mode == Mode::kBlocking;
    Cart_Request* r = &req;
    void* sb = send.data();
    void* rb = op == Op::kBcast ? send.data() : recv.data();
    switch (op) {
      case Op::kAllreduceSum:
      case Op::kAllreduceMax: {
        MPI_Op o = op == Op::kAllreduceSum ? MPI_SUM : MPI_MAX;
        return bl ? Cart_allreduce(sb, rb, m, MPI_INT64_T, o, cart)
               : nb ? Cart_iallreduce(sb, rb, m, MPI_INT64_T, o, cart, r)
                    : Cart_allreduce_init(sb, rb, m, MPI_INT64_T, o, cart, MPI_INFO_NULL, r);
      }
      case Op::kAllreduceUser:
        return bl ? Cart_allreduce(sb, rb, m / 2, env.pair, env.user_op, cart)
               : nb ? Cart_iallreduce(sb, rb, m / 2, env.pair, env.user_op, cart, r)
                    : Cart_allreduce_init(sb, rb, m / 2, env.pair, env.user_op, cart, MPI_INFO_NULL, r);
      case Op::kAllreduceDouble:
        return bl ? Cart_allreduce(dsend.data(), drecv.data(), m, MPI_DOUBLE, MPI_SUM, cart)
               : nb ? Cart_iallreduce(dsend.data(), drecv.data(), m, MPI_DOUBLE, MPI_SUM, cart, r)
                    : Cart_allreduce_init(dsend.data(), drecv.data(), m, MPI_DOUBLE, MPI_SUM, cart, MPI_INFO_NULL, r);
      case Op::kReduceScatter:
        return bl ? Cart_reduce_scatter(sb, rb, m, MPI_INT64_T, MPI_SUM, cart)
               : nb ? Cart_ireduce_scatter(sb, rb, m, MPI_INT64_T, MPI_SUM, cart, r)
                    : Cart_reduce_scatter_init(sb, rb, m, MPI_INT64_T, MPI_SUM, cart, MPI_INFO_NULL, r);
      case Op::kBcast:
        return bl ? Cart_bcast(rb, m, MPI_INT64_T, root, cart)
               : nb ? Cart_ibcast(rb, m, MPI_INT64_T, root, cart, r)
                    : Cart_bcast_init(rb, m, MPI_INT64_T, root, cart, MPI_INFO_NULL, r);
      case Op::kGather: {
        const bool skip = sloppy && !at_root;
        void* g = skip ? nullptr : rb;
        const int rc = skip ? -1 : m;
        MPI_Datatype rt = skip ? MPI_DATATYPE_NULL : MPI_INT64_T;
        return bl ? Cart_gather(sb, m, MPI_INT64_T, g, rc, rt, root, cart)
               : nb ? Cart_igather(sb, m, MPI_INT64_T, g, rc, rt, root, cart, r)
                    : Cart_gather_init(sb, m, MPI_INT64_T, g, rc, rt, root, cart, MPI_INFO_NULL, r);
      }
      case Op::kScatter: {
        const bool skip = sloppy && !at_root;
        void* s = skip ? nullptr : sb;
        const int sc = skip ? -1 : m;
        MPI_Datatype st = skip ? MPI_DATATYPE_NULL : MPI_INT64_T;
        return bl ? Cart_scatter(s, sc, st, rb, m, MPI_INT64_T, root, cart)
               : nb ? Cart_iscatter(s, sc, st, rb, m, MPI_INT64_T, root, cart, r)
                    : Cart_scatter_init(s, sc, st, rb, m, MPI_INT64_T, root, cart, MPI_INFO_NULL, r);
      }
      case Op::kReduce: {
        void* g = sloppy && !at_root ? nullptr : rb;
        return bl ? Cart_reduce(sb, g, m, MPI_INT64_T, MPI_SUM, root, cart)
               : nb ? Cart_ireduce(sb, g, m, MPI_INT64_T, MPI_SUM, root, cart, r)
                    : Cart_reduce_init(sb, g, m, MPI_INT64_T, MPI_SUM, root, cart, MPI_INFO_NULL, r);
      }
    }
    return MPI_ERR_ARG;
  };
  // The expected recv buffer (send buffer for bcast) of this epoch, from MPI's own collectives.
  auto expected = [&]() -> Vec {
    const Vec untouched(recv.size(), kSentinel);
    int first = -1;  // the lowest i whose source is the root (single-buffer rule)
    for (int i = 0; i < t && first < 0; ++i)
      if (ref.sources[i] == root) first = i;
    if (personalized(op)) {
      const std::vector<Vec> got = ref.alltoall(send, m);
      if (op == Op::kScatter) return first >= 0 ? got[first] : untouched;
      const Vec r = reduce_local(got, op, m);
      return r.empty() ? untouched : r;
    }
    const std::vector<Vec> got = ref.allgather(Vec(send.begin(), send.begin() + m), m);
    switch (op) {
      case Op::kBcast:
        if (at_root) return send;
        return first >= 0 ? got[first] : Vec(send.size(), kSentinel);
      case Op::kGather: {
        if (!at_root) return untouched;
        Vec r;
        for (int i = 0; i < t; ++i) {
          if (got[i].empty()) r.insert(r.end(), m, kSentinel);
          else r.insert(r.end(), got[i].begin(), got[i].end());
        }
        return r;
      }
      case Op::kReduce: {
        if (!at_root) return untouched;
        const Vec r = reduce_local(got, Op::kAllreduceSum, m);
        return r.empty() ? untouched : r;
      }
      default: {
        const Vec r = reduce_local(got, op, m);
        return r.empty() ? untouched : r;
      }
    }
  };
  auto check = [&](int epoch) {
    const Vec want = expected();  // collective over the graph: every rank computes it
    if (op == Op::kAllreduceDouble) {
      bool ok = true;
      (void)want;
      // The double sum of the same contributions (each as_double of the int values).
      const std::vector<Vec> got = ref.allgather(Vec(send.begin(), send.begin() + m), m);
      bool any = false;
      std::vector<double> sum(m, 0.0);
      for (const Vec& v : got)
        if (!v.empty()) {
          any = true;
          for (int e = 0; e < m; ++e) sum[e] += as_double(v[e]);
        }
      for (int e = 0; e < m; ++e) {
        const double w = any ? sum[e] : as_double(kSentinel);
        ok = ok && std::fabs(drecv[e] - w) <= 1e-12 * std::max(1.0, std::fabs(w));
        if (!any) ok = ok && drecv[e] == w;  // untouched means bit for bit
      }
      h.check(ok, what + ": wrong double result in epoch " + std::to_string(epoch));
      return;
    }
    const Vec& got = op == Op::kBcast ? send : recv;
    bool same = got == want;
    std::string detail;
    if (!same)
      for (std::size_t e = 0; e < got.size() && e < want.size(); ++e)
        if (got[e] != want[e]) {
          detail = " (element " + std::to_string(e) + ": got " + std::to_string(got[e]) + ", want " + std::to_string(want[e]) + ")";
          break;
        }
    h.check(same, what + ": wrong result in epoch " + std::to_string(epoch) + detail);
  };

  fill(1);
  int rc = call();
  h.check(rc == MPI_SUCCESS, what + ": call returned " + std::to_string(rc) + " " + Cart_error_message());
  if (rc != MPI_SUCCESS) return;
  if (mode == Mode::kNonblocking) {
    int flag = 0;
    for (int spins = 0; !flag && spins < 1000; ++spins) Cart_test(&req, &flag);
    if (!flag) h.check(Cart_wait(&req) == MPI_SUCCESS, what + ": wait");
    h.check(req == CART_REQUEST_NULL, what + ": the request was not freed");
  } else if (mode == Mode::kPersistent) {
    int combining = -1;
    Cart_request_algorithm(req, &combining);
    if (algo == 1) h.check(combining == 0, what + ": direct requested, got combining");
    if (algo == 2) h.check(combining == 1, what + ": combining requested, got direct");
    h.check(Cart_start(&req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS, what + ": start/wait");
  }
  check(1);
  if (mode == Mode::kPersistent) {
    fill(2);
    h.check(Cart_start(&req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS, what + ": second start");
    check(2);
    h.check(Cart_request_free(&req) == MPI_SUCCESS, what + ": free");
  }
}

void random_cases(Harness& h, const Env& env, int seed, int cases) {
  std::mt19937 rng(static_cast<unsigned>(seed));  // the same sequence on every rank
  for (int n = 0; n < cases; ++n) {
    Case c = random_case(rng, h.size);
    for (int algo = 0; algo < 3; ++algo) {
      MPI_Comm cart = make_cart(c, kAlgoNames[algo]);
      if (cart == MPI_COMM_NULL) continue;  // beyond the grid
      Reference ref = make_reference(h, cart, c.t);
      for (int op = 0; op < kOps; ++op) {
        Case cc = c;
        if (static_cast<Op>(op) == Op::kAllreduceUser) cc.m = 2 * ((c.m + 1) / 2);  // pairs
        for (int mode = 0; mode < 3; ++mode) run_one(h, env, cc, ref, cart, algo, static_cast<Op>(op), static_cast<Mode>(mode));
      }
      MPI_Comm_free(&ref.graph);
      MPI_Comm_free(&cart);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  const int seed = argc > 1 ? std::atoi(argv[1]) : 1;
  const int cases = argc > 2 ? std::atoi(argv[2]) : 12;
  Env env;
  MPI_Op_create(modsum, 1, &env.user_op);
  MPI_Type_contiguous(2, MPI_INT64_T, &env.pair);
  MPI_Type_commit(&env.pair);
  random_cases(h, env, seed + h.size, cases);
  MPI_Type_free(&env.pair);
  MPI_Op_free(&env.user_op);
  return h.finish("reductions_test");
}
