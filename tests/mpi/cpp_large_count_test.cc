// MPI test of the C++ API's large-count overloads (cartplan.hpp: MPI_Count counts, MPI_Aint
// displacements, as the C API's *_c forms). Small data given as MPI_Count: every Collective
// factory (direct and combining plans) against its int form, and every DistGraphComm /
// GraphCollective op in its blocking, non-blocking and persistent forms (linear, pairing, auto)
// against MPI_Neighbor_* (int: Open MPI 4.1 has no MPI_Neighbor_*_c), rank-dependent data and
// counts, byte by byte with sentinels. Counts above INT_MAX reach the core whole: 2^31 + 5
// elements of an empty datatype run (a count cut to int would be negative: MPI_ERR_COUNT), and
// 2^62 ints fail with the MPI_ERR_COUNT and the message of the C *_c function for the same
// arguments (nothing of that size is allocated). Scalar counts of other integer types (std::size_t,
// long, unsigned, int beside MPI_Count) take the widening templates: the int form's bytes, 2^31 + 5
// as std::size_t runs, a std::uint64_t above INT64_MAX fails as C's conversion to MPI_Count does.
// Overload resolution is checked at compile time.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "backends/mpi/cartplan.hpp"
#include "tests/mpi/gapped_layout.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpi::CartComm;
using cartplan::mpi::Collective;
using cartplan::mpi::DistGraphComm;
using cartplan::mpi::GraphCollective;
using cartplan::mpi::MpiError;
using cartplan::mpitest::Harness;
using cartplan::mpitest::lay_out;

// Overload resolution: int literals and int variables keep the int form, MPI_Count ones take the
// large-count form (the widening template is no candidate for them); scalar counts of any other
// integer type, or an int beside an MPI_Count, compile and take the widening template (exact
// match, where both non-template forms need a conversion). Bool and character types are no counts.
template <class S, class R = S>
concept CartCallable = requires(const CartComm& c, const void* s, void* r, S m, R n) { Collective::alltoall(c, s, m, MPI_INT, r, n, MPI_INT); };
template <class S, class R = S>
concept CartWidens = requires(const CartComm& c, const void* s, void* r, S m, R n) {
  Collective::alltoall<S, R>(c, s, m, MPI_INT, r, n, MPI_INT);
};
template <class S, class R = S>
concept GraphCallable = requires(const DistGraphComm& g, const void* s, void* r, S m, R n) { g.ialltoall(s, m, MPI_INT, r, n, MPI_INT); };
template <class S, class R = S>
concept GraphWidens = requires(const DistGraphComm& g, const void* s, void* r, S m, R n) {
  g.ialltoall<S, R>(s, m, MPI_INT, r, n, MPI_INT);
  g.allgather<S, R>(s, m, MPI_INT, r, n, MPI_INT);
  GraphCollective::allgather<S, R>(g, s, m, MPI_INT, r, n, MPI_INT);
};
// The one of long and long long that MPI_Count is not (Open MPI: long long; some MPIs: long).
using NotCount = std::conditional_t<std::is_same_v<MPI_Count, long>, long long, long>;
static_assert(CartCallable<int> && CartCallable<MPI_Count> && CartCallable<short> && !CartWidens<int> && !CartWidens<MPI_Count>);
static_assert(CartWidens<std::size_t> && CartWidens<NotCount> && CartWidens<unsigned> && CartWidens<std::uint64_t> && CartWidens<short>);
static_assert(CartWidens<int, MPI_Count> && CartWidens<MPI_Count, int> && CartWidens<std::size_t, int> && CartWidens<unsigned, MPI_Count>);
static_assert(CartCallable<std::size_t> && CartCallable<NotCount> && CartCallable<unsigned> && CartCallable<int, MPI_Count>);
static_assert(!CartWidens<bool> && !CartWidens<char> && !CartWidens<char16_t> && !CartCallable<std::size_t, char32_t>);
static_assert(GraphCallable<int> && GraphCallable<MPI_Count> && !GraphWidens<int> && !GraphWidens<MPI_Count>);
static_assert(GraphWidens<std::size_t> && GraphWidens<NotCount> && GraphWidens<unsigned> && GraphWidens<int, MPI_Count>);
static_assert(requires(const CartComm& c, const void* s, void* r, std::size_t n, int i, MPI_Count w) {
  Collective::allgather<std::size_t, std::size_t>(c, s, n, MPI_INT, r, n, MPI_INT);
  Collective::allreduce<std::size_t>(c, s, r, n, MPI_INT, MPI_SUM);
  Collective::reduce_scatter<NotCount>(c, s, r, NotCount{1}, MPI_INT, MPI_SUM);
  Collective::bcast<unsigned>(c, r, 1u, MPI_INT, 0);
  Collective::gather<int, MPI_Count>(c, s, i, MPI_INT, r, w, MPI_INT, 0);
  Collective::scatter<std::size_t, int>(c, s, n, MPI_INT, r, i, MPI_INT, 0);
  Collective::reduce<std::size_t>(c, s, r, n, MPI_INT, MPI_SUM, 0);
  GraphCollective::alltoall<std::size_t, std::size_t>(std::declval<const DistGraphComm&>(), s, n, MPI_INT, r, n, MPI_INT);
  std::declval<const DistGraphComm&>().alltoall<std::size_t, std::size_t>(s, n, MPI_INT, r, n, MPI_INT);
  std::declval<const DistGraphComm&>().iallgather<std::size_t, std::size_t>(s, n, MPI_INT, r, n, MPI_INT);
});
static_assert(std::is_same_v<decltype(Collective::bcast(std::declval<const CartComm&>(), nullptr, 0, MPI_INT, 0)), Collective>);
static_assert(std::is_same_v<decltype(std::declval<const DistGraphComm&>().allgather(nullptr, 0, MPI_INT, nullptr, 0, MPI_INT)), void>);
// The v forms pick by the arrays' element type.
static_assert(requires(const DistGraphComm& g, const int* ic, const int* id, const MPI_Count* wc, const MPI_Aint* wd) {
  g.alltoallv(nullptr, ic, id, MPI_INT, nullptr, ic, id, MPI_INT);
  g.alltoallv(nullptr, wc, wd, MPI_INT, nullptr, wc, wd, MPI_INT);
  g.allgatherv(nullptr, 0, MPI_INT, nullptr, wc, wd, MPI_INT);  // an int literal beside MPI_Count arrays
  g.allgatherv(nullptr, std::size_t{1}, MPI_INT, nullptr, wc, wd, MPI_INT);
  g.allgatherv(nullptr, std::size_t{1}, MPI_INT, nullptr, ic, id, MPI_INT);  // converted to int, as C++ converts
});
// A std::size_t counts array is neither form (no conversion between array element types).
template <class C>
concept CountsArray = requires(const DistGraphComm& g, const C* c, const MPI_Aint* d) { g.alltoallv(nullptr, c, d, MPI_INT, nullptr, c, d, MPI_INT); };
static_assert(CountsArray<MPI_Count> && !CountsArray<std::size_t> && !CountsArray<NotCount>);

constexpr int kSentinel = -7;

int value(int rank, int i, int salt) { return (salt * 64 + rank) * 4096 + i + 1; }
// Ints of block i from `sender` in the v and w forms (rank-dependent, both ends compute it).
int vcount(int sender, int i) { return 1 + (sender * 3 + i) % 3; }

std::vector<MPI_Count> wide(const std::vector<int>& v) { return {v.begin(), v.end()}; }
std::vector<MPI_Aint> wide_displs(const std::vector<int>& v, MPI_Aint unit = 1) {
  std::vector<MPI_Aint> w;
  for (int x : v) w.push_back(x * unit);
  return w;
}

// The message of `body`'s MpiError prefixed by its class ("" if it throws none).
template <class Body>
std::string thrown(Body&& body) {
  try {
    body();
  } catch (const MpiError& e) {
    return std::to_string(e.code()) + ": " + e.what();
  }
  return "";
}

// ----- Cartesian: every Collective factory, int form against large-count form --------------------

using Make = std::function<Collective(const int* send, int* recv)>;

// Runs both forms (twice each, persistent) on the same send data and compares the receive buffers
// byte by byte; `receives`: this rank gets data (so the int form must have written something).
// `seeded`: the receive buffer starts as data (bcast's root).
void compare(Harness& h, const std::string& what, std::size_t send_n, std::size_t recv_n, bool receives, const Make& narrow,
             const Make& count, bool seeded = false) {
  std::vector<int> send(send_n + 1), a(recv_n + 1, kSentinel), b(recv_n + 1, kSentinel);
  for (std::size_t i = 0; i < send.size(); ++i) send[i] = value(h.rank, static_cast<int>(i), 1);
  if (seeded)
    for (std::size_t i = 0; i < recv_n; ++i) a[i] = b[i] = value(h.rank, static_cast<int>(i), 2);
  const std::string error = thrown([&] {
    Collective x = narrow(send.data(), a.data()), y = count(send.data(), b.data());
    for (int run = 0; run < 2; ++run) x.run(), y.run();
  });
  h.check(error.empty(), what + " threw " + error);
  h.check(std::memcmp(a.data(), b.data(), a.size() * sizeof(int)) == 0, what + ": the large-count form's bytes differ from the int form's");
  bool wrote = false;
  for (std::size_t i = 0; i < recv_n; ++i) wrote = wrote || a[i] != kSentinel;
  h.check(wrote == receives || seeded, what + (receives ? ": nothing arrived" : ": a buffer that receives nothing was written"));
  h.check(a[recv_n] == kSentinel && b[recv_n] == kSentinel, what + ": written past the end");
}

struct CartArgs {
  int t = 0, k = 3;
  std::vector<int> sc, rc, sd, rd;  // v forms, in ints
  int send_ints = 0, recv_ints = 0;
};

CartArgs cart_args(const CartComm& cart, int rank) {
  CartArgs a;
  a.t = cart.neighbor_count();
  const std::vector<int> src = cart.sources();
  for (int i = 0; i < a.t; ++i) a.sc.push_back(vcount(rank, i)), a.rc.push_back(vcount(src[i], i));
  a.send_ints = lay_out(a.sc, &a.sd, true);
  a.recv_ints = lay_out(a.rc, &a.rd, false);
  return a;
}

void cart_exchanges(Harness& h, const CartComm& c, MPI_Info info, const std::string& algo) {
  const CartArgs a = cart_args(c, h.rank);
  const int k = a.k, t = a.t;
  const MPI_Count wk = k;
  const std::vector<MPI_Count> wsc = wide(a.sc), wrc = wide(a.rc);
  const std::vector<MPI_Aint> wsd = wide_displs(a.sd), wrd = wide_displs(a.rd), bsd = wide_displs(a.sd, sizeof(int)),
                              brd = wide_displs(a.rd, sizeof(int));
  const std::vector<MPI_Datatype> types(t, MPI_INT);
  const std::size_t kt = static_cast<std::size_t>(k) * t;
  compare(h, algo + " alltoall", kt, kt, true, [&](const int* s, int* r) { return Collective::alltoall(c, s, k, MPI_INT, r, k, MPI_INT, info); },
          [&](const int* s, int* r) { return Collective::alltoall(c, s, wk, MPI_INT, r, wk, MPI_INT, info); });
  compare(h, algo + " allgather", k, kt, true, [&](const int* s, int* r) { return Collective::allgather(c, s, k, MPI_INT, r, k, MPI_INT, info); },
          [&](const int* s, int* r) { return Collective::allgather(c, s, wk, MPI_INT, r, wk, MPI_INT, info); });
  compare(
      h, algo + " alltoallv", a.send_ints, a.recv_ints, true,
      [&](const int* s, int* r) { return Collective::alltoallv(c, s, a.sc.data(), a.sd.data(), MPI_INT, r, a.rc.data(), a.rd.data(), MPI_INT, info); },
      [&](const int* s, int* r) { return Collective::alltoallv(c, s, wsc.data(), wsd.data(), MPI_INT, r, wrc.data(), wrd.data(), MPI_INT, info); });
  compare(
      h, algo + " alltoallw", a.send_ints, a.recv_ints, true,
      [&](const int* s, int* r) {
        return Collective::alltoallw(c, s, a.sc.data(), bsd.data(), types.data(), r, a.rc.data(), brd.data(), types.data(), info);
      },
      [&](const int* s, int* r) { return Collective::alltoallw(c, s, wsc.data(), bsd.data(), types.data(), r, wrc.data(), brd.data(), types.data(), info); });
  const int mine = vcount(h.rank, 0);
  std::vector<int> gc, gd;
  for (int src : c.sources()) gc.push_back(vcount(src, 0));
  const int gather_ints = lay_out(gc, &gd, false);
  const std::vector<MPI_Count> wgc = wide(gc);
  const std::vector<MPI_Aint> wgd = wide_displs(gd), bgd = wide_displs(gd, sizeof(int));
  compare(
      h, algo + " allgatherv", mine, gather_ints, true,
      [&](const int* s, int* r) { return Collective::allgatherv(c, s, mine, MPI_INT, r, gc.data(), gd.data(), MPI_INT, info); },
      [&](const int* s, int* r) { return Collective::allgatherv(c, s, MPI_Count{mine}, MPI_INT, r, wgc.data(), wgd.data(), MPI_INT, info); });
  compare(
      h, algo + " allgatherw", mine, gather_ints, true,
      [&](const int* s, int* r) { return Collective::allgatherw(c, s, mine, MPI_INT, r, gc.data(), bgd.data(), types.data(), info); },
      [&](const int* s, int* r) { return Collective::allgatherw(c, s, MPI_Count{mine}, MPI_INT, r, wgc.data(), bgd.data(), types.data(), info); });
}

void cart_reductions(Harness& h, const CartComm& c, MPI_Info info, const std::string& algo) {
  const int k = 3, t = c.neighbor_count(), root = h.size - 1;
  const MPI_Count wk = k;
  const bool at_root = h.rank == root;
  // Whether the root's blocks reach this rank (root + offset[i] is this rank for some i).
  const std::vector<int> src = c.sources();
  const bool reached = std::find(src.begin(), src.end(), root) != src.end();
  const std::size_t kt = static_cast<std::size_t>(k) * t;
  compare(h, algo + " allreduce", k, k, true, [&](const int* s, int* r) { return Collective::allreduce(c, s, r, k, MPI_INT, MPI_SUM, info); },
          [&](const int* s, int* r) { return Collective::allreduce(c, s, r, wk, MPI_INT, MPI_SUM, info); });
  compare(h, algo + " reduce_scatter", kt, k, true,
          [&](const int* s, int* r) { return Collective::reduce_scatter(c, s, r, k, MPI_INT, MPI_SUM, info); },
          [&](const int* s, int* r) { return Collective::reduce_scatter(c, s, r, wk, MPI_INT, MPI_SUM, info); });
  // Rooted: the root's own bcast buffer is never written (it starts as data here).
  compare(
      h, algo + " bcast", 0, k, reached && !at_root, [&](const int*, int* r) { return Collective::bcast(c, r, k, MPI_INT, root, info); },
      [&](const int*, int* r) { return Collective::bcast(c, r, wk, MPI_INT, root, info); }, at_root);
  compare(h, algo + " gather", k, at_root ? kt : 0, at_root,
          [&](const int* s, int* r) { return Collective::gather(c, s, k, MPI_INT, r, k, MPI_INT, root, info); },
          [&](const int* s, int* r) { return Collective::gather(c, s, wk, MPI_INT, r, wk, MPI_INT, root, info); });
  compare(h, algo + " scatter", at_root ? kt : 0, k, reached,
          [&](const int* s, int* r) { return Collective::scatter(c, s, k, MPI_INT, r, k, MPI_INT, root, info); },
          [&](const int* s, int* r) { return Collective::scatter(c, s, wk, MPI_INT, r, wk, MPI_INT, root, info); });
  compare(h, algo + " reduce", k, at_root ? k : 0, at_root,
          [&](const int* s, int* r) { return Collective::reduce(c, s, r, k, MPI_INT, MPI_SUM, root, info); },
          [&](const int* s, int* r) { return Collective::reduce(c, s, r, wk, MPI_INT, MPI_SUM, root, info); });
}

std::vector<std::vector<int>> moore2() {
  std::vector<std::vector<int>> o;
  for (int a = -1; a <= 1; ++a)
    for (int b = -1; b <= 1; ++b)
      if (a || b) o.push_back({a, b});
  return o;
}

CartComm torus(int size) {
  int dims[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  return CartComm(MPI_COMM_WORLD, {dims[0], dims[1]}, {1, 1}, moore2());
}

void cartesian_cases(Harness& h) {
  const CartComm cart = torus(h.size);
  for (const char* algo : {"direct", "combining"}) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cartplan_algorithm", algo);
    cart_exchanges(h, cart, info, algo);
    cart_reductions(h, cart, info, algo);
    MPI_Info_free(&info);
  }
}

// ----- Graph: every op and form of the large-count overloads against MPI_Neighbor_* ---------------

// Rank r's destinations: r+1, r+2 (duplicates and self edges on small p) and itself.
std::vector<int> destinations_of(int r, int p) { return {(r + 1) % p, (r + 2) % p, r}; }
std::vector<int> sources_of(int r, int p) {
  std::vector<int> s;
  for (int a = 0; a < p; ++a)
    for (int d : destinations_of(a, p))
      if (d == r) s.push_back(a);
  return s;
}
int ecount(int from, int to) { return 1 + (from * 7 + to * 3) % 4; }

enum class Form { kBlocking, kNonblocking, kPersistent };
const char* const kForms[] = {"blocking", "non-blocking", "persistent"};

// One graph op: `reference` fills ref through MPI_Neighbor_*, `run` fills mine through the
// large-count overload in form f; then the buffers are compared byte by byte.
void graph_case(Harness& h, const std::string& what, std::size_t send_n, std::size_t recv_n,
                const std::function<void(const int*, int*)>& reference, const std::function<void(Form, const int*, int*)>& run) {
  for (int f = 0; f < 3; ++f) {
    std::vector<int> send(send_n + 1), ref(recv_n + 1, kSentinel), mine(recv_n + 1, kSentinel);
    for (std::size_t i = 0; i < send.size(); ++i) send[i] = value(h.rank, static_cast<int>(i), 3 + f);
    reference(send.data(), ref.data());
    const std::string error = thrown([&] { run(static_cast<Form>(f), send.data(), mine.data()); });
    const std::string name = what + " " + kForms[f];
    h.check(error.empty(), name + " threw " + error);
    h.check(std::memcmp(ref.data(), mine.data(), ref.size() * sizeof(int)) == 0, name + ": bytes differ from MPI_Neighbor_*'s");
  }
}

// The form f of a call: blocking, non-blocking (waited), persistent (run twice).
void in_form(Form f, const std::function<void()>& blocking, const std::function<GraphCollective()>& nonblocking,
             const std::function<GraphCollective()>& persistent) {
  if (f == Form::kBlocking) return blocking();
  GraphCollective r = f == Form::kNonblocking ? nonblocking() : persistent();
  if (f == Form::kNonblocking) return r.wait();
  r.run();
  r.run();
}

void graph_uniform(Harness& h, const DistGraphComm& g, const std::string& algo) {
  const int k = 3;
  const MPI_Count wk = k;
  const MPI_Comm comm = g.get();
  const std::size_t in = g.indegree() * k, out = g.outdegree() * k;
  graph_case(
      h, algo + " allgather", k, in, [&](const int* s, int* r) { MPI_Neighbor_allgather(s, k, MPI_INT, r, k, MPI_INT, comm); },
      [&](Form f, const int* s, int* r) {
        in_form(
            f, [&] { g.allgather(s, wk, MPI_INT, r, wk, MPI_INT); }, [&] { return g.iallgather(s, wk, MPI_INT, r, wk, MPI_INT); },
            [&] { return GraphCollective::allgather(g, s, wk, MPI_INT, r, wk, MPI_INT); });
      });
  graph_case(
      h, algo + " alltoall", out, in, [&](const int* s, int* r) { MPI_Neighbor_alltoall(s, k, MPI_INT, r, k, MPI_INT, comm); },
      [&](Form f, const int* s, int* r) {
        in_form(
            f, [&] { g.alltoall(s, wk, MPI_INT, r, wk, MPI_INT); }, [&] { return g.ialltoall(s, wk, MPI_INT, r, wk, MPI_INT); },
            [&] { return GraphCollective::alltoall(g, s, wk, MPI_INT, r, wk, MPI_INT); });
      });
}

void graph_varied(Harness& h, const DistGraphComm& g, const std::string& algo) {
  const MPI_Comm comm = g.get();
  std::vector<int> sc, rc, sd, rd, gc, gd;
  for (int d : g.destinations()) sc.push_back(ecount(h.rank, d));
  for (int s : g.sources()) rc.push_back(ecount(s, h.rank)), gc.push_back(vcount(s, 0));
  const int send_n = lay_out(sc, &sd, true), recv_n = lay_out(rc, &rd, false), gather_n = lay_out(gc, &gd, false);
  const int mine = vcount(h.rank, 0);
  const std::vector<MPI_Count> wsc = wide(sc), wrc = wide(rc), wgc = wide(gc);
  const std::vector<MPI_Aint> wsd = wide_displs(sd), wrd = wide_displs(rd), wgd = wide_displs(gd);
  const std::vector<MPI_Aint> bsd = wide_displs(sd, sizeof(int)), brd = wide_displs(rd, sizeof(int));
  const std::vector<MPI_Datatype> st(sc.size(), MPI_INT), rt(rc.size(), MPI_INT);
  const MPI_Count wmine = mine;
  graph_case(
      h, algo + " allgatherv", mine, gather_n,
      [&](const int* s, int* r) { MPI_Neighbor_allgatherv(s, mine, MPI_INT, r, gc.data(), gd.data(), MPI_INT, comm); },
      [&](Form f, const int* s, int* r) {
        in_form(
            f, [&] { g.allgatherv(s, wmine, MPI_INT, r, wgc.data(), wgd.data(), MPI_INT); },
            [&] { return g.iallgatherv(s, wmine, MPI_INT, r, wgc.data(), wgd.data(), MPI_INT); },
            [&] { return GraphCollective::allgatherv(g, s, wmine, MPI_INT, r, wgc.data(), wgd.data(), MPI_INT); });
      });
  graph_case(
      h, algo + " alltoallv", send_n, recv_n,
      [&](const int* s, int* r) { MPI_Neighbor_alltoallv(s, sc.data(), sd.data(), MPI_INT, r, rc.data(), rd.data(), MPI_INT, comm); },
      [&](Form f, const int* s, int* r) {
        in_form(
            f, [&] { g.alltoallv(s, wsc.data(), wsd.data(), MPI_INT, r, wrc.data(), wrd.data(), MPI_INT); },
            [&] { return g.ialltoallv(s, wsc.data(), wsd.data(), MPI_INT, r, wrc.data(), wrd.data(), MPI_INT); },
            [&] { return GraphCollective::alltoallv(g, s, wsc.data(), wsd.data(), MPI_INT, r, wrc.data(), wrd.data(), MPI_INT); });
      });
  graph_case(
      h, algo + " alltoallw", send_n, recv_n,
      [&](const int* s, int* r) { MPI_Neighbor_alltoallw(s, sc.data(), bsd.data(), st.data(), r, rc.data(), brd.data(), rt.data(), comm); },
      [&](Form f, const int* s, int* r) {
        in_form(
            f, [&] { g.alltoallw(s, wsc.data(), bsd.data(), st.data(), r, wrc.data(), brd.data(), rt.data()); },
            [&] { return g.ialltoallw(s, wsc.data(), bsd.data(), st.data(), r, wrc.data(), brd.data(), rt.data()); },
            [&] { return GraphCollective::alltoallw(g, s, wsc.data(), bsd.data(), st.data(), r, wrc.data(), brd.data(), rt.data()); });
      });
}

void graph_cases(Harness& h) {
  for (const char* algo : {"linear", "pairing", "auto"}) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cartplan_algorithm", algo);
    MPI_Info_set(info, "cartplan_theta", "1");
    const DistGraphComm g(MPI_COMM_WORLD, sources_of(h.rank, h.size), destinations_of(h.rank, h.size), info);
    MPI_Info_free(&info);
    graph_uniform(h, g, algo);
    graph_varied(h, g, algo);
  }
}

// ----- Counts above INT_MAX, without allocating them ----------------------------------------------

// 2^31 + 5 elements of an empty datatype: nothing moves, nothing is written, no error. Cut to int
// the count would be negative (MPI_ERR_COUNT).
void empty_type_cases(Harness& h, const CartComm& cart, const DistGraphComm& g) {
  MPI_Datatype empty;
  MPI_Type_contiguous(0, MPI_INT, &empty);
  MPI_Type_commit(&empty);
  const MPI_Count big = (MPI_Count{1} << 31) + 5;
  static_assert((MPI_Count{1} << 31) + 5 > INT_MAX);
  int s[4] = {1, 2, 3, 4}, r[4] = {kSentinel, kSentinel, kSentinel, kSentinel};
  auto untouched = [&] { return r[0] == kSentinel && r[1] == kSentinel && r[2] == kSentinel && r[3] == kSentinel; };
  std::string e = thrown([&] { Collective::alltoall(cart, s, big, empty, r, big, empty).run(); });
  h.check(e.empty() && untouched(), "Collective::alltoall, 2^31 + 5 empty elements: " + e);
  e = thrown([&] { Collective::allreduce(cart, s, r, big, empty, MPI_SUM).run(); });
  h.check(e.empty() && untouched(), "Collective::allreduce, 2^31 + 5 empty elements: " + e);
  e = thrown([&] { g.alltoall(s, big, empty, r, big, empty); });
  h.check(e.empty() && untouched(), "DistGraphComm::alltoall, 2^31 + 5 empty elements: " + e);
  e = thrown([&] { g.iallgather(s, big, empty, r, big, empty).wait(); });
  h.check(e.empty() && untouched(), "DistGraphComm::iallgather, 2^31 + 5 empty elements: " + e);
  std::vector<MPI_Count> sc(g.outdegree(), big), rc(g.indegree(), big);
  std::vector<MPI_Aint> sd(g.outdegree(), 0), rd(g.indegree(), 0);
  e = thrown([&] { GraphCollective::alltoallv(g, s, sc.data(), sd.data(), empty, r, rc.data(), rd.data(), empty).run(); });
  h.check(e.empty() && untouched(), "GraphCollective::alltoallv, 2^31 + 5 empty elements per edge: " + e);
  // The C _c functions, for the same arguments, agree.
  h.check(Cart_alltoall_c(s, big, empty, r, big, empty, cart.get()) == MPI_SUCCESS && untouched(),
          std::string("Cart_alltoall_c, 2^31 + 5 empty elements: ") + Cart_error_message());
  h.check(Cart_graph_neighbor_alltoall_c(s, big, empty, r, big, empty, g.get()) == MPI_SUCCESS && untouched(),
          std::string("Cart_graph_neighbor_alltoall_c, 2^31 + 5 empty elements: ") + Cart_error_message());
  MPI_Type_free(&empty);
}

// The C function's result as thrown() gives it: class and Cart_error_message().
std::string c_result(int rc) {
  return rc == MPI_SUCCESS ? "" : std::to_string(cartplan::mpitest::error_class(rc)) + ": " + Cart_error_message();
}

// 2^62 ints overflow 64 bits of bytes: the C++ overload throws what the C *_c function returns.
void overflow_cases(Harness& h, const CartComm& cart, const DistGraphComm& g) {
  const MPI_Count huge = MPI_Count{1} << 62;
  int s[4] = {0}, r[4] = {0};
  Cart_Request req = CART_REQUEST_NULL;
  const std::string c1 = c_result(Cart_alltoall_init_c(s, huge, MPI_INT, r, 1, MPI_INT, cart.get(), MPI_INFO_NULL, &req));
  const std::string x1 = thrown([&] { Collective::alltoall(cart, s, huge, MPI_INT, r, MPI_Count{1}, MPI_INT); });
  h.check(!x1.empty() && x1 == c1 && x1.rfind(std::to_string(MPI_ERR_COUNT) + ":", 0) == 0,
          "Collective::alltoall sendcount 2^62: threw \"" + x1 + "\", Cart_alltoall_init_c \"" + c1 + "\"");
  const std::string c2 = c_result(Cart_reduce_init_c(s, r, huge, MPI_INT, MPI_SUM, 0, cart.get(), MPI_INFO_NULL, &req));
  const std::string x2 = thrown([&] { Collective::reduce(cart, s, r, huge, MPI_INT, MPI_SUM, 0); });
  h.check(!x2.empty() && x2 == c2, "Collective::reduce count 2^62: threw \"" + x2 + "\", Cart_reduce_init_c \"" + c2 + "\"");
  const std::string c3 = c_result(Cart_graph_neighbor_allgather_c(s, huge, MPI_INT, r, 1, MPI_INT, g.get()));
  const std::string x3 = thrown([&] { g.allgather(s, huge, MPI_INT, r, MPI_Count{1}, MPI_INT); });
  h.check(x3 == c3 && x3.find(std::to_string(huge)) != std::string::npos,
          "DistGraphComm::allgather sendcount 2^62: threw \"" + x3 + "\", the C _c form \"" + c3 + "\"");
  std::vector<MPI_Count> sc(g.outdegree(), huge), rc(g.indegree(), 1);
  std::vector<MPI_Aint> sd(g.outdegree(), 0), rd(g.indegree(), 0);
  const std::string c4 = c_result(Cart_graph_ineighbor_alltoallv_c(s, sc.data(), sd.data(), MPI_INT, r, rc.data(), rd.data(), MPI_INT, g.get(), &req));
  const std::string x4 = thrown([&] { g.ialltoallv(s, sc.data(), sd.data(), MPI_INT, r, rc.data(), rd.data(), MPI_INT); });
  h.check(x4 == c4 && x4.find(std::to_string(huge)) != std::string::npos,
          "DistGraphComm::ialltoallv sendcounts 2^62: threw \"" + x4 + "\", the C _c form \"" + c4 + "\"");
  const std::string c5 = c_result(Cart_graph_neighbor_alltoall_init_c(s, huge, MPI_INT, r, huge, MPI_INT, g.get(), MPI_INFO_NULL, &req));
  const std::string x5 = thrown([&] { GraphCollective::alltoall(g, s, huge, MPI_INT, r, huge, MPI_INT); });
  h.check(!x5.empty() && x5 == c5, "GraphCollective::alltoall 2^62: threw \"" + x5 + "\", the C _c form \"" + c5 + "\"");
  h.check(req == CART_REQUEST_NULL, "the failed C calls left no request");
}

void large_value_cases(Harness& h) {
  const CartComm cart = torus(h.size);
  const DistGraphComm g(MPI_COMM_WORLD, sources_of(h.rank, h.size), destinations_of(h.rank, h.size));
  MPI_Comm_set_errhandler(cart.get(), MPI_ERRORS_RETURN);  // the C functions' errors come back
  MPI_Comm_set_errhandler(g.get(), MPI_ERRORS_RETURN);
  empty_type_cases(h, cart, g);
  overflow_cases(h, cart, g);
}

// ----- Counts of other integer types: the widening templates -------------------------------------

// std::size_t, long, unsigned and mixed int / MPI_Count counts give the int form's bytes.
void widening_bytes(Harness& h, const CartComm& c, const DistGraphComm& g) {
  const int k = 3, t = c.neighbor_count(), root = h.size - 1;
  const std::size_t z = k, kt = z * t;
  const long l = k;
  const unsigned u = k;
  const MPI_Count wk = k;
  const bool at_root = h.rank == root;
  compare(h, "widening alltoall std::size_t", kt, kt, true,
          [&](const int* s, int* r) { return Collective::alltoall(c, s, k, MPI_INT, r, k, MPI_INT); },
          [&](const int* s, int* r) { return Collective::alltoall(c, s, z, MPI_INT, r, z, MPI_INT); });
  compare(h, "widening allgather long / unsigned", k, kt, true,
          [&](const int* s, int* r) { return Collective::allgather(c, s, k, MPI_INT, r, k, MPI_INT); },
          [&](const int* s, int* r) { return Collective::allgather(c, s, l, MPI_INT, r, u, MPI_INT); });
  compare(h, "widening allreduce std::size_t", k, k, true,
          [&](const int* s, int* r) { return Collective::allreduce(c, s, r, k, MPI_INT, MPI_SUM); },
          [&](const int* s, int* r) { return Collective::allreduce(c, s, r, z, MPI_INT, MPI_SUM); });
  compare(h, "widening gather int / MPI_Count", k, at_root ? kt : 0, at_root,
          [&](const int* s, int* r) { return Collective::gather(c, s, k, MPI_INT, r, k, MPI_INT, root); },
          [&](const int* s, int* r) { return Collective::gather(c, s, k, MPI_INT, r, wk, MPI_INT, root); });
  const MPI_Comm comm = g.get();
  const std::size_t in = g.indegree() * z, out = g.outdegree() * z;
  graph_case(
      h, "widening allgather", k, in, [&](const int* s, int* r) { MPI_Neighbor_allgather(s, k, MPI_INT, r, k, MPI_INT, comm); },
      [&](Form f, const int* s, int* r) {
        in_form(
            f, [&] { g.allgather(s, z, MPI_INT, r, z, MPI_INT); }, [&] { return g.iallgather(s, l, MPI_INT, r, u, MPI_INT); },
            [&] { return GraphCollective::allgather(g, s, z, MPI_INT, r, k, MPI_INT); });
      });
  graph_case(
      h, "widening alltoall", out, in, [&](const int* s, int* r) { MPI_Neighbor_alltoall(s, k, MPI_INT, r, k, MPI_INT, comm); },
      [&](Form f, const int* s, int* r) {
        in_form(
            f, [&] { g.alltoall(s, k, MPI_INT, r, wk, MPI_INT); }, [&] { return g.ialltoall(s, z, MPI_INT, r, z, MPI_INT); },
            [&] { return GraphCollective::alltoall(g, s, u, MPI_INT, r, l, MPI_INT); });
      });
}

// Values at the edge of MPI_Count: 2^31 + 5 as std::size_t reaches the core whole (an empty type
// runs); a std::uint64_t above INT64_MAX fails (MPI_ERR_COUNT) as the negative MPI_Count C's
// conversion gives; INT64_MAX as std::uint64_t fails as the MPI_Count value does (the core's
// overflow error).
void widening_edges(Harness& h, const CartComm& cart, const DistGraphComm& g) {
  MPI_Datatype empty;
  MPI_Type_contiguous(0, MPI_INT, &empty);
  MPI_Type_commit(&empty);
  const std::size_t big = (std::size_t{1} << 31) + 5;
  int s[4] = {1, 2, 3, 4}, r[4] = {kSentinel, kSentinel, kSentinel, kSentinel};
  std::string e = thrown([&] { Collective::alltoall(cart, s, big, empty, r, big, empty).run(); });
  h.check(e.empty() && r[0] == kSentinel, "Collective::alltoall, 2^31 + 5 empty elements as std::size_t: " + e);
  e = thrown([&] { g.iallgather(s, big, empty, r, big, empty).wait(); });
  h.check(e.empty() && r[0] == kSentinel, "DistGraphComm::iallgather, 2^31 + 5 empty elements as std::size_t: " + e);
  MPI_Type_free(&empty);
  const std::uint64_t above = std::uint64_t{INT64_MAX} + 1, top = UINT64_MAX;
  const std::string count = std::to_string(MPI_ERR_COUNT) + ": ";
  // Converted as C converts: the same error as the MPI_Count value the cast gives (negative).
  const auto as_c = [&](const std::string& x, const std::string& y) { return x.rfind(count, 0) == 0 && x == y; };
  const MPI_Count above_c = static_cast<MPI_Count>(above), top_c = static_cast<MPI_Count>(top);
  e = thrown([&] { Collective::alltoall(cart, s, above, MPI_INT, r, 1, MPI_INT); });
  std::string c = thrown([&] { Collective::alltoall(cart, s, above_c, MPI_INT, r, MPI_Count{1}, MPI_INT); });
  h.check(as_c(e, c), "Collective::alltoall sendcount 2^63 as std::uint64_t: threw \"" + e + "\", as MPI_Count \"" + c + "\"");
  e = thrown([&] { Collective::reduce(cart, s, r, top, MPI_INT, MPI_SUM, 0); });
  c = thrown([&] { Collective::reduce(cart, s, r, top_c, MPI_INT, MPI_SUM, 0); });
  h.check(as_c(e, c), "Collective::reduce count UINT64_MAX: threw \"" + e + "\", as MPI_Count \"" + c + "\"");
  e = thrown([&] { g.allgather(s, 1, MPI_INT, r, top, MPI_INT); });
  c = thrown([&] { g.allgather(s, MPI_Count{1}, MPI_INT, r, top_c, MPI_INT); });
  h.check(as_c(e, c), "DistGraphComm::allgather recvcount UINT64_MAX: threw \"" + e + "\", as MPI_Count \"" + c + "\"");
  e = thrown([&] { g.ialltoall(s, above, MPI_INT, r, std::size_t{1}, MPI_INT); });
  c = thrown([&] { g.ialltoall(s, above_c, MPI_INT, r, MPI_Count{1}, MPI_INT); });
  h.check(as_c(e, c), "DistGraphComm::ialltoall sendcount 2^63: threw \"" + e + "\", as MPI_Count \"" + c + "\"");
  e = thrown([&] { GraphCollective::allgather(g, s, 1, MPI_INT, r, above, MPI_INT); });
  c = thrown([&] { GraphCollective::allgather(g, s, MPI_Count{1}, MPI_INT, r, above_c, MPI_INT); });
  h.check(as_c(e, c), "GraphCollective::allgather recvcount 2^63: threw \"" + e + "\", as MPI_Count \"" + c + "\"");
  const std::uint64_t fits = INT64_MAX;
  const std::string x = thrown([&] { GraphCollective::alltoall(g, s, fits, MPI_INT, r, fits, MPI_INT); });
  const std::string y = thrown([&] { GraphCollective::alltoall(g, s, MPI_Count{INT64_MAX}, MPI_INT, r, MPI_Count{INT64_MAX}, MPI_INT); });
  h.check(x.rfind(count, 0) == 0 && x == y, "GraphCollective::alltoall INT64_MAX as std::uint64_t: \"" + x + "\", as MPI_Count \"" + y + "\"");
}

void widening_cases(Harness& h) {
  const CartComm cart = torus(h.size);
  const DistGraphComm g(MPI_COMM_WORLD, sources_of(h.rank, h.size), destinations_of(h.rank, h.size));
  widening_bytes(h, cart, g);
  widening_edges(h, cart, g);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  cartesian_cases(h);
  graph_cases(h);
  large_value_cases(h);
  widening_cases(h);
  return h.finish("cpp_large_count_test");
}
