// MPI test of the graph collectives' large-count forms (Cart_graph_neighbor_*_c, *_init_c and
// Cart_graph_ineighbor_*_c): every op in its three forms under every algorithm, compared byte
// for byte with MPI_Neighbor_* (int forms) on the same communicator, with rank- and
// iteration-dependent data, MPI_Count counts and MPI_Aint displacements with gaps, on a random
// multigraph (parallel and self edges) and a Moore graph with holes (ranks without edges). The v
// and w forms also run on MPI_BOTTOM with absolute addresses as displacements, which no int
// displacement can hold on a 64-bit machine (the int alltoallw too: its displacements are
// MPI_Aint). Then the errors only the wide forms can meet (counts or displacements whose product
// with the datatype overflows 64 bits). Blocks above INT_MAX elements: large_test.
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "engine/graph/generators.h"
#include "tests/graph/random_graphs.h"
#include "tests/mpi/graph_algorithm_info.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;
namespace graph = cartplan::engine::graph;

const char* const kAlgorithms[] = {"linear", "pairing", "cumulative", "grid", "auto"};

struct Edges {
  std::vector<int> in, out;
};

MPI_Comm make_graph(const Edges& e, const char* algo) {
  return cartplan::mpitest::graph_with_algorithm(e.in, e.out, algo, "1");
}

// One rank's counts (ints per block, from both ends' view of an edge, zero included) and
// displacements with a gap of one int before each block, in the int and the wide types.
struct Layout {
  std::vector<int> sc, sd, rc, rd;               // for the int reference
  std::vector<MPI_Count> wsc, wrc;               // the same counts, wide
  std::vector<MPI_Aint> wsd, wrd, sbytes, rbytes;  // the same displacements, wide; and in bytes
  int send_len = 1, recv_len = 1;
};

int edge_count(int from, int to, int nth) { return (from * 5 + to * 3 + nth) % 4; }

// Counts of the edges of `list` (k-th parallel edge to the same peer: nth = k).
std::vector<int> counts(const std::vector<int>& list, int me, bool out) {
  std::vector<int> c;
  for (std::size_t i = 0; i < list.size(); ++i) {
    int nth = 0;
    for (std::size_t k = 0; k < i; ++k) nth += list[k] == list[i];
    c.push_back(out ? edge_count(me, list[i], nth) : edge_count(list[i], me, nth));
  }
  return c;
}

Layout layout(const Edges& e, int me, bool alltoall) {
  Layout l;
  l.sc = alltoall ? counts(e.out, me, true) : std::vector<int>{1 + me % 3};
  l.rc = alltoall ? counts(e.in, me, false) : std::vector<int>{};
  if (!alltoall)
    for (int src : e.in) l.rc.push_back(1 + src % 3);
  for (auto [c, d, len] : {std::tuple{&l.sc, &l.sd, &l.send_len}, std::tuple{&l.rc, &l.rd, &l.recv_len}}) {
    for (int n : *c) d->push_back(*len), *len += n + 1;
    c->push_back(0), d->push_back(0);  // a spare entry: Open MPI refuses NULL arrays at degree 0
  }
  for (std::size_t i = 0; i < l.sc.size(); ++i) l.wsc.push_back(l.sc[i]), l.wsd.push_back(l.sd[i]), l.sbytes.push_back(4 * l.sd[i]);
  for (std::size_t i = 0; i < l.rc.size(); ++i) l.wrc.push_back(l.rc[i]), l.wrd.push_back(l.rd[i]), l.rbytes.push_back(4 * l.rd[i]);
  return l;
}

enum Form { kBlocking, kNonblocking, kPersistent };
const char* const kForms[] = {"blocking", "non-blocking", "persistent"};

// One case: the int reference into `ref`, cartplan's wide call into `mine` in a given form
// (blocking: request unused; the others return a started or an inactive request).
struct Buffers {
  std::vector<int> send, mine, ref;
};
using Reference = std::function<int(Buffers&, MPI_Comm)>;
using Wide = std::function<int(Buffers&, Form, MPI_Comm, Cart_Request*)>;

void fill(Buffers& b, int len, int rank, int iter) {
  b.send.resize(static_cast<std::size_t>(len));
  for (int i = 0; i < len; ++i) b.send[static_cast<std::size_t>(i)] = ((rank * 97 + iter) * 4096) + i;
}

// The three forms of one case (the persistent one started three times with new data).
void check_case(Harness& h, MPI_Comm g, const std::string& name, int send_len, int recv_len, const Reference& reference, const Wide& wide) {
  for (Form f : {kBlocking, kNonblocking, kPersistent}) {
    const std::string what = name + " " + kForms[f];
    Buffers b;
    b.mine.assign(static_cast<std::size_t>(recv_len), -3);
    fill(b, send_len, h.rank, 0);
    Cart_Request r = CART_REQUEST_NULL;
    int rc = wide(b, f, g, &r);
    h.check(rc == MPI_SUCCESS, what + ": " + Cart_error_message());
    if (rc != MPI_SUCCESS) continue;
    for (int iter = 0; iter < (f == kPersistent ? 3 : 1); ++iter) {
      if (f == kPersistent) fill(b, send_len, h.rank, iter);  // same storage, between runs of the request
      b.ref.assign(static_cast<std::size_t>(recv_len), -3);
      h.check(reference(b, g) == MPI_SUCCESS, what + ": reference");
      if (f == kPersistent) rc = Cart_start(&r);
      if (f != kBlocking && rc == MPI_SUCCESS) rc = Cart_wait(&r);
      h.check(rc == MPI_SUCCESS, what + ": completion: " + Cart_error_message());
      h.check(b.mine == b.ref, what + ": data, iteration " + std::to_string(iter));
    }
    if (f == kPersistent) Cart_request_free(&r);
  }
}

// allgather_c and alltoall_c: 3 ints per block.
void uniform_cases(Harness& h, MPI_Comm g, const Edges& e, const std::string& name) {
  const int in = static_cast<int>(e.in.size()), out = static_cast<int>(e.out.size());
  const MPI_Count n = 3;
  check_case(h, g, name + " allgather_c", 3, 3 * in + 1,
             [](Buffers& b, MPI_Comm c) { return MPI_Neighbor_allgather(b.send.data(), 3, MPI_INT, b.ref.data(), 3, MPI_INT, c); },
             [n](Buffers& b, Form f, MPI_Comm c, Cart_Request* r) {
               if (f == kBlocking) return Cart_graph_neighbor_allgather_c(b.send.data(), n, MPI_INT, b.mine.data(), n, MPI_INT, c);
               if (f == kNonblocking) return Cart_graph_ineighbor_allgather_c(b.send.data(), n, MPI_INT, b.mine.data(), n, MPI_INT, c, r);
               return Cart_graph_neighbor_allgather_init_c(b.send.data(), n, MPI_INT, b.mine.data(), n, MPI_INT, c, MPI_INFO_NULL, r);
             });
  check_case(h, g, name + " alltoall_c", 3 * out + 1, 3 * in + 1,
             [](Buffers& b, MPI_Comm c) { return MPI_Neighbor_alltoall(b.send.data(), 3, MPI_INT, b.ref.data(), 3, MPI_INT, c); },
             [n](Buffers& b, Form f, MPI_Comm c, Cart_Request* r) {
               if (f == kBlocking) return Cart_graph_neighbor_alltoall_c(b.send.data(), n, MPI_INT, b.mine.data(), n, MPI_INT, c);
               if (f == kNonblocking) return Cart_graph_ineighbor_alltoall_c(b.send.data(), n, MPI_INT, b.mine.data(), n, MPI_INT, c, r);
               return Cart_graph_neighbor_alltoall_init_c(b.send.data(), n, MPI_INT, b.mine.data(), n, MPI_INT, c, MPI_INFO_NULL, r);
             });
}

// allgatherv_c and alltoallv_c with the layout's counts and gapped displacements.
void v_cases(Harness& h, MPI_Comm g, const Edges& e, const std::string& name) {
  const Layout a = layout(e, h.rank, false);
  check_case(h, g, name + " allgatherv_c", a.send_len, a.recv_len,
             [&a](Buffers& b, MPI_Comm c) {
               return MPI_Neighbor_allgatherv(b.send.data(), a.sc[0], MPI_INT, b.ref.data(), a.rc.data(), a.rd.data(), MPI_INT, c);
             },
             [&a](Buffers& b, Form f, MPI_Comm c, Cart_Request* r) {
               const int* s = b.send.data();
               int* m = b.mine.data();
               if (f == kBlocking) return Cart_graph_neighbor_allgatherv_c(s, a.wsc[0], MPI_INT, m, a.wrc.data(), a.wrd.data(), MPI_INT, c);
               if (f == kNonblocking)
                 return Cart_graph_ineighbor_allgatherv_c(s, a.wsc[0], MPI_INT, m, a.wrc.data(), a.wrd.data(), MPI_INT, c, r);
               return Cart_graph_neighbor_allgatherv_init_c(s, a.wsc[0], MPI_INT, m, a.wrc.data(), a.wrd.data(), MPI_INT, c, MPI_INFO_NULL, r);
             });
  const Layout v = layout(e, h.rank, true);
  check_case(h, g, name + " alltoallv_c", v.send_len, v.recv_len,
             [&v](Buffers& b, MPI_Comm c) {
               return MPI_Neighbor_alltoallv(b.send.data(), v.sc.data(), v.sd.data(), MPI_INT, b.ref.data(), v.rc.data(), v.rd.data(), MPI_INT, c);
             },
             [&v](Buffers& b, Form f, MPI_Comm c, Cart_Request* r) {
               const int* s = b.send.data();
               int* m = b.mine.data();
               if (f == kBlocking)
                 return Cart_graph_neighbor_alltoallv_c(s, v.wsc.data(), v.wsd.data(), MPI_INT, m, v.wrc.data(), v.wrd.data(), MPI_INT, c);
               if (f == kNonblocking)
                 return Cart_graph_ineighbor_alltoallv_c(s, v.wsc.data(), v.wsd.data(), MPI_INT, m, v.wrc.data(), v.wrd.data(), MPI_INT, c, r);
               return Cart_graph_neighbor_alltoallv_init_c(s, v.wsc.data(), v.wsd.data(), MPI_INT, m, v.wrc.data(), v.wrd.data(), MPI_INT, c,
                                                           MPI_INFO_NULL, r);
             });
}

// allgather_c sending from MPI_BOTTOM with a datatype that holds the block's absolute address,
// and allgatherv_c receiving into MPI_BOTTOM (displacements: addresses / 4 in ints).
void bottom_gather_cases(Harness& h, MPI_Comm g, const Edges& e, const std::string& name) {
  const Layout a = layout(e, h.rank, false);
  const Reference reference = [&a](Buffers& b, MPI_Comm c) {
    return MPI_Neighbor_allgatherv(b.send.data(), a.sc[0], MPI_INT, b.ref.data(), a.rc.data(), a.rd.data(), MPI_INT, c);
  };
  check_case(h, g, name + " allgatherv_c from and into MPI_BOTTOM", a.send_len, a.recv_len, reference,
             [&a](Buffers& b, Form f, MPI_Comm c, Cart_Request* r) {
               MPI_Aint at = 0;
               MPI_Get_address(b.send.data(), &at);
               MPI_Datatype absolute = MPI_DATATYPE_NULL;  // the send block at its address
               MPI_Type_create_hindexed(1, &a.sc[0], &at, MPI_INT, &absolute);
               MPI_Type_commit(&absolute);
               std::vector<MPI_Aint> rd;
               for (MPI_Aint d : a.wrd) rd.push_back(0), MPI_Get_address(b.mine.data() + d, &rd.back()), rd.back() /= 4;
               const MPI_Count one = 1;
               int rc = MPI_SUCCESS;
               if (f == kBlocking) rc = Cart_graph_neighbor_allgatherv_c(MPI_BOTTOM, one, absolute, MPI_BOTTOM, a.wrc.data(), rd.data(), MPI_INT, c);
               if (f == kNonblocking)
                 rc = Cart_graph_ineighbor_allgatherv_c(MPI_BOTTOM, one, absolute, MPI_BOTTOM, a.wrc.data(), rd.data(), MPI_INT, c, r);
               if (f == kPersistent)
                 rc = Cart_graph_neighbor_allgatherv_init_c(MPI_BOTTOM, one, absolute, MPI_BOTTOM, a.wrc.data(), rd.data(), MPI_INT, c,
                                                            MPI_INFO_NULL, r);
               MPI_Type_free(&absolute);  // MPI semantics: a started or persistent request keeps its own reference
               return rc;
             });
}

// Absolute addresses of blocks at `bytes` from `base`, for MPI_BOTTOM.
std::vector<MPI_Aint> absolute(const void* base, const std::vector<MPI_Aint>& bytes) {
  MPI_Aint at = 0;
  MPI_Get_address(base, &at);
  std::vector<MPI_Aint> out;
  for (MPI_Aint b : bytes) out.push_back(MPI_Aint_add(at, b));
  return out;
}

// alltoallw_c with byte displacements from the buffer, and alltoallv_c and alltoallw_c (and
// the int alltoallw) on MPI_BOTTOM with absolute addresses. The buffers' addresses are taken
// at each call: a persistent request keeps the first, which stay valid (same storage).
void w_cases(Harness& h, MPI_Comm g, const Edges& e, const std::string& name) {
  const Layout v = layout(e, h.rank, true);
  const std::vector<MPI_Datatype> st(v.sc.size(), MPI_INT), rt(v.rc.size(), MPI_INT);
  const Reference reference = [&v](Buffers& b, MPI_Comm c) {
    return MPI_Neighbor_alltoallv(b.send.data(), v.sc.data(), v.sd.data(), MPI_INT, b.ref.data(), v.rc.data(), v.rd.data(), MPI_INT, c);
  };
  check_case(h, g, name + " alltoallw_c", v.send_len, v.recv_len, reference, [&](Buffers& b, Form f, MPI_Comm c, Cart_Request* r) {
    const int* s = b.send.data();
    int* m = b.mine.data();
    const auto *sc = v.wsc.data(), *rc = v.wrc.data();
    if (f == kBlocking) return Cart_graph_neighbor_alltoallw_c(s, sc, v.sbytes.data(), st.data(), m, rc, v.rbytes.data(), rt.data(), c);
    if (f == kNonblocking)
      return Cart_graph_ineighbor_alltoallw_c(s, sc, v.sbytes.data(), st.data(), m, rc, v.rbytes.data(), rt.data(), c, r);
    return Cart_graph_neighbor_alltoallw_init_c(s, sc, v.sbytes.data(), st.data(), m, rc, v.rbytes.data(), rt.data(), c, MPI_INFO_NULL, r);
  });
  // alltoallv_c on MPI_BOTTOM: MPI_BYTE blocks (extent 1), so the displacements are addresses.
  std::vector<MPI_Count> scb, rcb;
  for (int n : v.sc) scb.push_back(4 * static_cast<MPI_Count>(n));
  for (int n : v.rc) rcb.push_back(4 * static_cast<MPI_Count>(n));
  check_case(h, g, name + " alltoallv_c on MPI_BOTTOM", v.send_len, v.recv_len, reference, [&](Buffers& b, Form f, MPI_Comm c, Cart_Request* r) {
    const std::vector<MPI_Aint> sa = absolute(b.send.data(), v.sbytes), ra = absolute(b.mine.data(), v.rbytes);
    if (f == kBlocking) return Cart_graph_neighbor_alltoallv_c(MPI_BOTTOM, scb.data(), sa.data(), MPI_BYTE, MPI_BOTTOM, rcb.data(), ra.data(), MPI_BYTE, c);
    if (f == kNonblocking)
      return Cart_graph_ineighbor_alltoallv_c(MPI_BOTTOM, scb.data(), sa.data(), MPI_BYTE, MPI_BOTTOM, rcb.data(), ra.data(), MPI_BYTE, c, r);
    return Cart_graph_neighbor_alltoallv_init_c(MPI_BOTTOM, scb.data(), sa.data(), MPI_BYTE, MPI_BOTTOM, rcb.data(), ra.data(), MPI_BYTE, c,
                                                MPI_INFO_NULL, r);
  });
  check_case(h, g, name + " alltoallw_c on MPI_BOTTOM", v.send_len, v.recv_len, reference, [&](Buffers& b, Form f, MPI_Comm c, Cart_Request* r) {
    const std::vector<MPI_Aint> sa = absolute(b.send.data(), v.sbytes), ra = absolute(b.mine.data(), v.rbytes);
    const auto *sc = v.wsc.data(), *rc = v.wrc.data();
    if (f == kBlocking) return Cart_graph_neighbor_alltoallw_c(MPI_BOTTOM, sc, sa.data(), st.data(), MPI_BOTTOM, rc, ra.data(), rt.data(), c);
    if (f == kNonblocking)
      return Cart_graph_ineighbor_alltoallw_c(MPI_BOTTOM, sc, sa.data(), st.data(), MPI_BOTTOM, rc, ra.data(), rt.data(), c, r);
    return Cart_graph_neighbor_alltoallw_init_c(MPI_BOTTOM, sc, sa.data(), st.data(), MPI_BOTTOM, rc, ra.data(), rt.data(), c, MPI_INFO_NULL, r);
  });
  check_case(h, g, name + " alltoallw (int) on MPI_BOTTOM", v.send_len, v.recv_len, reference, [&](Buffers& b, Form f, MPI_Comm c, Cart_Request* r) {
    const std::vector<MPI_Aint> sa = absolute(b.send.data(), v.sbytes), ra = absolute(b.mine.data(), v.rbytes);
    const int *sc = v.sc.data(), *rc = v.rc.data();
    if (f == kBlocking) return Cart_graph_neighbor_alltoallw(MPI_BOTTOM, sc, sa.data(), st.data(), MPI_BOTTOM, rc, ra.data(), rt.data(), c);
    if (f == kNonblocking)
      return Cart_graph_ineighbor_alltoallw(MPI_BOTTOM, sc, sa.data(), st.data(), MPI_BOTTOM, rc, ra.data(), rt.data(), c, r);
    return Cart_graph_neighbor_alltoallw_init(MPI_BOTTOM, sc, sa.data(), st.data(), MPI_BOTTOM, rc, ra.data(), rt.data(), c, MPI_INFO_NULL, r);
  });
}

// The wide forms' own errors, on a ring where every rank passes the same bad argument (each
// rank checks its own arguments; none sends).
void overflow_errors(Harness& h) {
  const Edges ring{{(h.rank + h.size - 1) % h.size}, {(h.rank + 1) % h.size}};
  for (const char* algo : {"linear", "auto"}) {
    MPI_Comm g = make_graph(ring, algo);
    int s[4] = {0}, m[4] = {0};
    const MPI_Count huge = MPI_Count{1} << 62;
    auto expect = [&](int rc, int cls, const std::string& text, const std::string& what) {
      const std::string msg = Cart_error_message();
      h.check(cartplan::mpitest::error_class(rc) == cls && msg.find(text) != std::string::npos,
              std::string(algo) + " " + what + ": got class " + std::to_string(cartplan::mpitest::error_class(rc)) + ", \"" + msg + "\"");
    };
    expect(Cart_graph_neighbor_allgather_c(s, huge, MPI_INT, m, 1, MPI_INT, g), MPI_ERR_COUNT, "overflows 64 bits",
           "allgather_c sendcount 2^62 ints");
    MPI_Count one[1] = {1}, big[1] = {huge}, neg[1] = {-1};
    MPI_Aint zero[1] = {0}, far[1] = {MPI_Aint{1} << 62};
    expect(Cart_graph_neighbor_alltoallv_c(s, big, zero, MPI_INT, m, one, zero, MPI_INT, g), MPI_ERR_COUNT, "sendcounts[0]",
           "alltoallv_c sendcounts[0] 2^62 ints");
    expect(Cart_graph_neighbor_alltoallv_c(s, one, zero, MPI_INT, m, one, far, MPI_DOUBLE, g), MPI_ERR_ARG, "displs[0]",
           "alltoallv_c rdispls[0] 2^62 doubles");
    expect(Cart_graph_neighbor_allgatherv_c(s, 1, MPI_INT, m, neg, zero, MPI_INT, g), MPI_ERR_COUNT, "negative",
           "allgatherv_c recvcounts[0] -1");
    MPI_Count none[1] = {0};  // an empty block's displacement is not significant, however large
    h.check(Cart_graph_neighbor_alltoallv_c(s, none, far, MPI_DOUBLE, m, none, far, MPI_DOUBLE, g) == MPI_SUCCESS,
            std::string(algo) + " alltoallv_c: empty blocks at displacement 2^62 doubles are fine: " + Cart_error_message());
    Cart_Request r = CART_REQUEST_NULL;
    expect(Cart_graph_ineighbor_alltoall_c(s, huge, MPI_INT, m, huge, MPI_INT, g, &r), MPI_ERR_COUNT, "overflows 64 bits",
           "ialltoall_c 2^62 ints");
    h.check(r == CART_REQUEST_NULL, std::string(algo) + " a failed ialltoall_c leaves no request");
    const int rc = Cart_graph_neighbor_alltoallv_init_c(s, big, zero, MPI_INT, m, one, zero, MPI_INT, g, MPI_INFO_NULL, &r);
    h.check(cartplan::mpitest::error_class(rc) == MPI_ERR_COUNT && r == CART_REQUEST_NULL,
            std::string(algo) + " alltoallv_init_c sendcounts[0] 2^62 ints: " + Cart_error_message());
    MPI_Comm_free(&g);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  const int p = h.size;
  std::vector<std::pair<std::string, cartplan::ir::graph::Topology>> graphs;
  graphs.emplace_back("random multigraph", graph::random_multigraph(p, 0.5, 3));
  if (auto m = graph::moore({2, (p + 1) / 2}, 1, false, 0.25, 5)) graphs.emplace_back("Moore with holes", *m);
  for (const auto& [name, t] : graphs) {
    if (t.size() > p) continue;
    const Edges e = h.rank < t.size() ? Edges{t.ranks[h.rank].in, t.ranks[h.rank].out} : Edges{};
    for (const char* algo : kAlgorithms) {
      MPI_Comm g = make_graph(e, algo);
      const std::string what = name + " " + algo;
      uniform_cases(h, g, e, what);
      v_cases(h, g, e, what);
      w_cases(h, g, e, what);
      bottom_gather_cases(h, g, e, what);
      MPI_Comm_free(&g);
    }
  }
  overflow_errors(h);
  return h.finish("graph_large_count_test");
}
