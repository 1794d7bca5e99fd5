// MPI test of Cart_graph_comm_create_adjacent: the attribute path (what SMPI runs) against MPI's
// distributed graph on the same lists, byte for byte, for every algorithm, allgather, alltoall
// and their v forms, blocking and persistent; random multigraphs (parallel and self edges, lists
// in random order) and Moore graphs with holes. Also: the default path is MPI's distributed
// graph, Info reaches the blocking forms, MPI_Comm_dup keeps the lists, and bad lists get their
// error class on every rank.
#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "engine/graph/generators.h"
#include "tests/graph/random_graphs.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;
namespace graph = cartplan::engine::graph;

struct Edges {
  std::vector<int> in, out;
};

MPI_Info info_of(const char* way, const char* algo) {
  MPI_Info info;
  MPI_Info_create(&info);
  if (way) MPI_Info_set(info, "cartplan_graph_comm", way);
  MPI_Info_set(info, "cartplan_algorithm", algo);
  MPI_Info_set(info, "cartplan_theta", "1");
  return info;
}

int create(const Edges& e, const char* way, const char* algo, MPI_Comm* g) {
  MPI_Info info = info_of(way, algo);
  const int rc = Cart_graph_comm_create_adjacent(MPI_COMM_WORLD, static_cast<int>(e.in.size()), e.in.data(), static_cast<int>(e.out.size()),
                                                 e.out.data(), info, g);
  MPI_Info_free(&info);
  if (rc == MPI_SUCCESS) MPI_Comm_set_errhandler(*g, MPI_ERRORS_RETURN);
  return rc;
}

// One call's buffers: rank-, block- and element-dependent ints, 2 per block; v forms with counts
// 0..2 per edge and a gap before every block.
struct Call {
  bool alltoall = false, varied = false;
  std::vector<int> send, recv, scounts, sdispls, rcounts, rdispls;
};

int vcount(int origin, int k) { return (origin * 5 + k * 3) % 3; }

Call make_call(const Edges& e, const std::vector<int>& sender_k, int rank, bool alltoall, bool varied) {
  Call c;
  c.alltoall = alltoall;
  c.varied = varied;
  const std::size_t sblocks = alltoall ? e.out.size() : 1;
  const int gap = varied ? 1 : 0;
  for (std::size_t k = 0; k < sblocks; ++k) {
    const int n = varied ? vcount(rank, static_cast<int>(alltoall ? k : 0)) : 2;
    c.scounts.push_back(n);
    c.sdispls.push_back(static_cast<int>(c.send.size()) + gap);
    if (varied) c.send.push_back(-3);
    for (int i = 0; i < n; ++i) c.send.push_back(rank * 1000 + static_cast<int>(k) * 10 + i);
  }
  int at = 0;
  for (std::size_t j = 0; j < e.in.size(); ++j) {
    const int n = varied ? vcount(e.in[j], alltoall ? sender_k[j] : 0) : 2;
    c.rcounts.push_back(n);
    c.rdispls.push_back(at + gap);
    at += n + gap;
  }
  c.send.push_back(-3);
  c.recv.assign(static_cast<std::size_t>(at) + 1, -9);
  return c;
}

int blocking(Call& c, MPI_Comm g) {
  if (!c.varied && !c.alltoall) return Cart_graph_neighbor_allgather(c.send.data(), 2, MPI_INT, c.recv.data(), 2, MPI_INT, g);
  if (!c.varied) return Cart_graph_neighbor_alltoall(c.send.data(), 2, MPI_INT, c.recv.data(), 2, MPI_INT, g);
  if (!c.alltoall) return Cart_graph_neighbor_allgatherv(c.send.data() + 1, c.scounts[0], MPI_INT, c.recv.data(), c.rcounts.data(),
                                                         c.rdispls.data(), MPI_INT, g);
  return Cart_graph_neighbor_alltoallv(c.send.data(), c.scounts.data(), c.sdispls.data(), MPI_INT, c.recv.data(), c.rcounts.data(),
                                       c.rdispls.data(), MPI_INT, g);
}

int persistent(Call& c, MPI_Comm g, const char* algo) {
  MPI_Info info = info_of(nullptr, algo);
  Cart_Request r = CART_REQUEST_NULL;
  int rc = MPI_SUCCESS;
  if (!c.varied)
    rc = c.alltoall ? Cart_graph_neighbor_alltoall_init(c.send.data(), 2, MPI_INT, c.recv.data(), 2, MPI_INT, g, info, &r)
                    : Cart_graph_neighbor_allgather_init(c.send.data(), 2, MPI_INT, c.recv.data(), 2, MPI_INT, g, info, &r);
  else
    rc = c.alltoall ? Cart_graph_neighbor_alltoallv_init(c.send.data(), c.scounts.data(), c.sdispls.data(), MPI_INT, c.recv.data(),
                                                           c.rcounts.data(), c.rdispls.data(), MPI_INT, g, info, &r)
                      : Cart_graph_neighbor_allgatherv_init(c.send.data() + 1, c.scounts[0], MPI_INT, c.recv.data(), c.rcounts.data(),
                                                            c.rdispls.data(), MPI_INT, g, info, &r);
  MPI_Info_free(&info);
  for (int it = 0; rc == MPI_SUCCESS && it < 2; ++it) {
    rc = Cart_start(&r);
    if (rc == MPI_SUCCESS) rc = Cart_wait(&r);
  }
  if (r != CART_REQUEST_NULL) Cart_request_free(&r);
  return rc;
}

// Every algorithm and op on the attribute communicator against MPI's distributed graph.
void compare(Harness& h, const std::string& name, const Edges& e, const std::vector<int>& sender_k) {
  for (const char* algo : {"linear", "pairing", "cumulative", "auto"}) {
    MPI_Comm dist = MPI_COMM_NULL, attr = MPI_COMM_NULL;
    h.check(create(e, "dist_graph", algo, &dist) == MPI_SUCCESS && create(e, "attribute", algo, &attr) == MPI_SUCCESS, name + " create");
    int topo = 0;
    MPI_Topo_test(attr, &topo);
    h.check(topo == MPI_UNDEFINED, name + ": the attribute communicator has no MPI topology");
    for (int op = 0; op < 4; ++op) {
      const bool alltoall = op & 1, varied = op & 2;
      const std::string what = name + " " + algo + (alltoall ? " alltoall" : " allgather") + (varied ? "v" : "");
      Call a = make_call(e, sender_k, h.rank, alltoall, varied), b = a, c = a, d = a;
      h.check(blocking(a, dist) == MPI_SUCCESS && blocking(b, attr) == MPI_SUCCESS, what + " blocking: " + Cart_error_message());
      h.check(a.recv == b.recv, what + " blocking: attribute differs from dist graph");
      h.check(persistent(c, dist, algo) == MPI_SUCCESS && persistent(d, attr, algo) == MPI_SUCCESS, what + " persistent: " + Cart_error_message());
      h.check(c.recv == d.recv && c.recv == a.recv, what + " persistent: results differ");
      if (!varied) {
        Call ref = a;
        std::fill(ref.recv.begin(), ref.recv.end(), -9);
        if (alltoall) MPI_Neighbor_alltoall(ref.send.data(), 2, MPI_INT, ref.recv.data(), 2, MPI_INT, dist);
        else MPI_Neighbor_allgather(ref.send.data(), 2, MPI_INT, ref.recv.data(), 2, MPI_INT, dist);
        h.check(ref.recv == b.recv, what + ": differs from MPI_Neighbor_*");
      }
    }
    MPI_Comm_free(&dist);
    MPI_Comm_free(&attr);
  }
}

// For recv block j, the index of the sender's send block over that edge (MPI's k-th edge rule).
std::vector<int> sender_blocks(const cartplan::ir::graph::Topology& t, int rank) {
  std::vector<int> ks;
  std::vector<int> seen(static_cast<std::size_t>(t.size()), 0);
  for (int a : t.ranks[rank].in) {
    int n = seen[a]++;
    const auto& out = t.ranks[a].out;
    for (std::size_t k = 0; k < out.size(); ++k)
      if (out[k] == rank && n-- == 0) ks.push_back(static_cast<int>(k));
  }
  return ks;
}

void graphs(Harness& h) {
  for (int seed = 1; seed <= 3; ++seed) {
    const auto t = graph::random_multigraph(h.size, 0.5, static_cast<std::uint64_t>(seed) + 100);
    compare(h, "random seed " + std::to_string(seed), Edges{t.ranks[h.rank].in, t.ranks[h.rank].out}, sender_blocks(t, h.rank));
  }
  auto m = graph::moore({2, h.size / 2 + 1}, 1, false, 0.3, 7);
  if (m && m->size() <= h.size) {  // ranks beyond the graph's have no edges
    const bool in = h.rank < m->size();
    compare(h, "moore with holes", in ? Edges{m->ranks[h.rank].in, m->ranks[h.rank].out} : Edges{}, in ? sender_blocks(*m, h.rank) : std::vector<int>{});
  }
}

// The default way, Info on the blocking forms, MPI_Comm_dup.
void paths(Harness& h) {
  const int right = (h.rank + 1) % h.size, left = (h.rank + h.size - 1) % h.size;
  const Edges ring{{left, right}, {left, right}};
  MPI_Comm g = MPI_COMM_NULL, d = MPI_COMM_NULL;
  h.check(create(ring, nullptr, "auto", &g) == MPI_SUCCESS, "default create");
  int topo = 0;
  MPI_Topo_test(g, &topo);
  h.check(topo == MPI_DIST_GRAPH, "default: Open MPI's distributed graph");
  MPI_Comm_free(&g);
  h.check(create(ring, "attribute", "pairing", &g) == MPI_SUCCESS, "attribute create");
  MPI_Comm_dup(g, &d);
  MPI_Comm_free(&g);  // the duplicate keeps its own copy of the lists and the Info
  int send = h.rank, recv[2] = {-1, -1}, algo = -1;
  Cart_Request r = CART_REQUEST_NULL;
  h.check(Cart_graph_ineighbor_allgather(&send, 1, MPI_INT, recv, 1, MPI_INT, d, &r) == MPI_SUCCESS, "dup: ineighbor");
  Cart_graph_request_algorithm(r, &algo);
  h.check(algo == CART_GRAPH_PAIRING, "the Info given at creation reaches the non-blocking form");
  Cart_wait(&r);
  h.check(recv[0] == left && recv[1] == right, "dup: data");
  MPI_Comm_free(&d);
}

void expect_error(Harness& h, const Edges& e, const char* way, int code, const std::string& what) {
  MPI_Comm g = MPI_COMM_NULL;
  MPI_Info info = info_of(way, "auto");
  const int rc = Cart_graph_comm_create_adjacent(MPI_COMM_WORLD, static_cast<int>(e.in.size()), e.in.empty() ? nullptr : e.in.data(),
                                                 static_cast<int>(e.out.size()), e.out.empty() ? nullptr : e.out.data(), info, &g);
  MPI_Info_free(&info);
  h.check(rc == code && g == MPI_COMM_NULL, what + ": got " + std::to_string(rc) + " (" + Cart_error_message() + ")");
}

void errors(Harness& h) {
  const int right = (h.rank + 1) % h.size, left = (h.rank + h.size - 1) % h.size;
  const Edges ok{{left}, {right}};
  const bool r0 = h.rank == 0;
  expect_error(h, r0 ? Edges{{left}, {MPI_PROC_NULL}} : ok, nullptr, MPI_ERR_RANK, "MPI_PROC_NULL on rank 0");
  expect_error(h, r0 ? Edges{{h.size}, {right}} : ok, nullptr, MPI_ERR_RANK, "rank out of range on rank 0");
  expect_error(h, Edges{{left}, {right, right}}, nullptr, MPI_ERR_TOPOLOGY, "a destination without its source");
  expect_error(h, Edges{{left}, {right}}, "sideways", MPI_ERR_INFO_VALUE, "bad cartplan_graph_comm");
  if (h.size > 1)  // one rank asks for the attribute, the others for MPI's graph: refused on every rank
    expect_error(h, ok, r0 ? "attribute" : "dist_graph", MPI_ERR_INFO_VALUE, "cartplan_graph_comm differing between ranks");
  MPI_Comm g = MPI_COMM_NULL;
  int src = left, dst = right;
  h.check(Cart_graph_comm_create_adjacent(MPI_COMM_WORLD, r0 ? -1 : 1, &src, 1, &dst, MPI_INFO_NULL, &g) == MPI_ERR_ARG, "negative indegree");
  h.check(Cart_graph_comm_create_adjacent(MPI_COMM_WORLD, 1, r0 ? nullptr : &src, 1, &dst, MPI_INFO_NULL, &g) == MPI_ERR_ARG, "NULL sources");
  h.check(Cart_graph_comm_create_adjacent(MPI_COMM_WORLD, 1, &src, 1, &dst, MPI_INFO_NULL, nullptr) == MPI_ERR_ARG, "NULL graphcomm");
  h.check(Cart_graph_comm_create_adjacent(MPI_COMM_NULL, 1, &src, 1, &dst, MPI_INFO_NULL, &g) == MPI_ERR_COMM, "MPI_COMM_NULL");
  h.check(Cart_graph_comm_create_adjacent(MPI_COMM_WORLD, 0, nullptr, 0, nullptr, MPI_INFO_NULL, &g) == MPI_SUCCESS, "no edges");
  if (g != MPI_COMM_NULL) MPI_Comm_free(&g);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  graphs(h);
  paths(h);
  errors(h);
  return h.finish("graph_adjacent_test");
}
