// MPI test of the C++ graph API (cartplan.hpp: DistGraphComm, GraphCollective) on an irregular,
// rank-dependent multigraph with a duplicate edge and a self edge on every rank: allgather,
// alltoall, allgatherv and alltoallv with rank-dependent counts and gaps, and alltoallw with a
// strided send type on every other edge; blocking, non-blocking (completed by wait() or a test()
// loop; start() refused), and persistent started several times with changing data; every algorithm forced (and auto) by Info cartplan_algorithm. Each result is
// compared element by element (gaps included) with MPI_Neighbor_* on the same communicator.
// A rank without any edge (empty buffers) beside a ring of the others; a view of a communicator
// the program made with MPI_Dist_graph_create_adjacent. Then errors: a bad argument on rank 0 only fails a persistent init with MpiError(MPI_ERR_COUNT)
// on every rank, lists that are not one graph fail the constructor with MPI_ERR_TOPOLOGY on
// every rank, and moved-from objects throw.
#include <mpi.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "backends/mpi/cartplan.hpp"
#include "tests/mpi/gapped_layout.h"
#include "tests/mpi/graph_algorithm_info.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpi::DistGraphComm;
using cartplan::mpi::GraphCollective;
using cartplan::mpi::MpiError;
using cartplan::mpitest::Harness;
using cartplan::mpitest::lay_out;

constexpr int kIterations = 3;
const char* const kAlgorithms[] = {"linear", "pairing", "cumulative", "grid", "auto"};

// Rank r's destinations: r+1 twice (a duplicate edge), itself, and 2r+3 on even ranks.
std::vector<int> destinations_of(int r, int p) {
  std::vector<int> d = {(r + 1) % p, r, (r + 1) % p};
  if (r % 2 == 0) d.push_back((2 * r + 3) % p);
  return d;
}

// Rank r's sources: every edge a -> r once per listing, in rank order, reversed on odd ranks.
std::vector<int> sources_of(int r, int p) {
  std::vector<int> s;
  for (int a = 0; a < p; ++a)
    for (int d : destinations_of(a, p))
      if (d == r) s.push_back(a);
  if (r % 2 == 1) std::reverse(s.begin(), s.end());
  return s;
}

// The ints `from` sends `to` on each of their edges (alltoallv, alltoallw), and what a rank
// sends in allgatherv.
int edge_count(int from, int to) { return 1 + (from * 7 + to * 3) % 4; }
int gather_count(int rank) { return 1 + (rank * 5 + 2) % 3; }

int value(int rank, int i, int iter, int salt) { return ((salt * 16 + iter) * 64 + rank) * 1024 + i; }

enum class Op { kAllgather, kAlltoall, kAllgatherv, kAlltoallv, kAlltoallw };
const char* const kOpNames[] = {"allgather", "alltoall", "allgatherv", "alltoallv", "alltoallw"};

// One collective's arguments on this rank: the send buffer, counts, displacements (the w form's
// in bytes) and types, and two receive buffers (cartplan's and MPI's) with the same sentinel.
struct Case {
  Op op = Op::kAllgather;
  int rank = 0;
  std::vector<int> send, mine, ref;
  int count = 3;  // allgather, alltoall: ints per block; allgatherv: this rank's
  std::vector<int> scounts, sdispls, rcounts, rdispls;
  std::vector<MPI_Aint> sbytes, rbytes;
  std::vector<MPI_Datatype> stypes, rtypes;
};

Case make_case(Op op, const DistGraphComm& g, int rank, MPI_Datatype stride2) {
  Case c;
  c.op = op;
  c.rank = rank;
  const std::vector<int>& in = g.sources();
  const std::vector<int>& out = g.destinations();
  int send_ints = 0, recv_ints = 0;
  if (op == Op::kAllgather || op == Op::kAlltoall) {
    send_ints = op == Op::kAllgather ? c.count : c.count * g.outdegree();
    recv_ints = c.count * g.indegree() + 1;
  } else if (op == Op::kAllgatherv) {
    c.count = gather_count(rank);
    send_ints = c.count;
    for (int s : in) c.rcounts.push_back(gather_count(s));
    recv_ints = lay_out(c.rcounts, &c.rdispls, false);
  } else {
    for (int d : out) c.scounts.push_back(edge_count(rank, d));
    for (int s : in) c.rcounts.push_back(edge_count(s, rank));
    std::vector<int> span = c.scounts;  // the w form's strided blocks span twice their count
    for (std::size_t k = 0; k < span.size(); ++k)
      if (op == Op::kAlltoallw && k % 2 == 1) span[k] *= 2;
    send_ints = lay_out(span, &c.sdispls, true);
    recv_ints = lay_out(c.rcounts, &c.rdispls, false);
    for (std::size_t k = 0; k < out.size(); ++k) {
      c.sbytes.push_back(static_cast<MPI_Aint>(c.sdispls[k] * sizeof(int)));
      c.stypes.push_back(k % 2 == 1 ? stride2 : MPI_INT);
    }
    for (std::size_t j = 0; j < in.size(); ++j) {
      c.rbytes.push_back(static_cast<MPI_Aint>(c.rdispls[j] * sizeof(int)));
      c.rtypes.push_back(MPI_INT);
    }
  }
  c.send.assign(send_ints + 1, 0);
  c.mine.assign(recv_ints, 0);
  c.ref.assign(recv_ints, 0);
  return c;
}

// New data for iteration `iter`, in place: a persistent collective keeps the buffers.
void fill(Case& c, int iter, int salt) {
  for (std::size_t i = 0; i < c.send.size(); ++i) c.send[i] = value(c.rank, static_cast<int>(i), iter, salt);
  std::fill(c.mine.begin(), c.mine.end(), -1 - iter);
  std::fill(c.ref.begin(), c.ref.end(), -1 - iter);
}

void reference(Case& c, MPI_Comm g) {
  const int* sd = c.sdispls.data();
  switch (c.op) {
    case Op::kAllgather: MPI_Neighbor_allgather(c.send.data(), c.count, MPI_INT, c.ref.data(), c.count, MPI_INT, g); break;
    case Op::kAlltoall: MPI_Neighbor_alltoall(c.send.data(), c.count, MPI_INT, c.ref.data(), c.count, MPI_INT, g); break;
    case Op::kAllgatherv:
      MPI_Neighbor_allgatherv(c.send.data(), c.count, MPI_INT, c.ref.data(), c.rcounts.data(), c.rdispls.data(), MPI_INT, g);
      break;
    case Op::kAlltoallv:
      MPI_Neighbor_alltoallv(c.send.data(), c.scounts.data(), sd, MPI_INT, c.ref.data(), c.rcounts.data(), c.rdispls.data(),
                             MPI_INT, g);
      break;
    case Op::kAlltoallw:
      MPI_Neighbor_alltoallw(c.send.data(), c.scounts.data(), c.sbytes.data(), c.stypes.data(), c.ref.data(), c.rcounts.data(),
                             c.rbytes.data(), c.rtypes.data(), g);
      break;
  }
}

void blocking(Case& c, const DistGraphComm& g) {
  switch (c.op) {
    case Op::kAllgather: g.allgather(c.send.data(), c.count, MPI_INT, c.mine.data(), c.count, MPI_INT); break;
    case Op::kAlltoall: g.alltoall(c.send.data(), c.count, MPI_INT, c.mine.data(), c.count, MPI_INT); break;
    case Op::kAllgatherv: g.allgatherv(c.send.data(), c.count, MPI_INT, c.mine.data(), c.rcounts.data(), c.rdispls.data(), MPI_INT); break;
    case Op::kAlltoallv:
      g.alltoallv(c.send.data(), c.scounts.data(), c.sdispls.data(), MPI_INT, c.mine.data(), c.rcounts.data(), c.rdispls.data(),
                  MPI_INT);
      break;
    case Op::kAlltoallw:
      g.alltoallw(c.send.data(), c.scounts.data(), c.sbytes.data(), c.stypes.data(), c.mine.data(), c.rcounts.data(),
                  c.rbytes.data(), c.rtypes.data());
      break;
  }
}

// The non-blocking member of c.op, started.
GraphCollective nonblocking(Case& c, const DistGraphComm& g) {
  switch (c.op) {
    case Op::kAllgather: return g.iallgather(c.send.data(), c.count, MPI_INT, c.mine.data(), c.count, MPI_INT);
    case Op::kAlltoall: return g.ialltoall(c.send.data(), c.count, MPI_INT, c.mine.data(), c.count, MPI_INT);
    case Op::kAllgatherv:
      return g.iallgatherv(c.send.data(), c.count, MPI_INT, c.mine.data(), c.rcounts.data(), c.rdispls.data(), MPI_INT);
    case Op::kAlltoallv:
      return g.ialltoallv(c.send.data(), c.scounts.data(), c.sdispls.data(), MPI_INT, c.mine.data(), c.rcounts.data(),
                          c.rdispls.data(), MPI_INT);
    case Op::kAlltoallw:
      break;
  }
  return g.ialltoallw(c.send.data(), c.scounts.data(), c.sbytes.data(), c.stypes.data(), c.mine.data(), c.rcounts.data(),
                      c.rbytes.data(), c.rtypes.data());
}

GraphCollective persistent(Case& c, const DistGraphComm& g, MPI_Info info) {
  switch (c.op) {
    case Op::kAllgather: return GraphCollective::allgather(g, c.send.data(), c.count, MPI_INT, c.mine.data(), c.count, MPI_INT, info);
    case Op::kAlltoall: return GraphCollective::alltoall(g, c.send.data(), c.count, MPI_INT, c.mine.data(), c.count, MPI_INT, info);
    case Op::kAllgatherv:
      return GraphCollective::allgatherv(g, c.send.data(), c.count, MPI_INT, c.mine.data(), c.rcounts.data(), c.rdispls.data(),
                                         MPI_INT, info);
    case Op::kAlltoallv:
      return GraphCollective::alltoallv(g, c.send.data(), c.scounts.data(), c.sdispls.data(), MPI_INT, c.mine.data(),
                                        c.rcounts.data(), c.rdispls.data(), MPI_INT, info);
    case Op::kAlltoallw:
      break;
  }
  return GraphCollective::alltoallw(g, c.send.data(), c.scounts.data(), c.sbytes.data(), c.stypes.data(), c.mine.data(),
                                    c.rcounts.data(), c.rbytes.data(), c.rtypes.data(), info);
}

// Element by element; names the first difference.
void compare(Harness& h, const Case& c, const std::string& what) {
  for (std::size_t i = 0; i < c.mine.size(); ++i)
    if (c.mine[i] != c.ref[i]) {
      h.check(false, what + ": element " + std::to_string(i) + " is " + std::to_string(c.mine[i]) + ", MPI's " +
                         std::to_string(c.ref[i]));
      return;
    }
  h.check(true, what);
}

// What a request forced to `algo` reports (auto: any algorithm, grid dimensions only with grid).
bool expected_algorithm(const GraphCollective& r, const std::string& algo, int p) {
  const GraphCollective::Algorithm a = r.algorithm();
  if (algo == "auto") return (a == GraphCollective::Algorithm::kGrid) == (r.grid_dims() > 0) || p == 1;
  if (algo != GraphCollective::name(a)) return false;
  return r.grid_dims() == (algo == "grid" ? cartplan::mpitest::grid_ndims(p, 2) : 0);
}

// The class of the MpiError `body` throws, MPI_SUCCESS if none.
template <class Body>
int thrown(Body&& body) {
  try {
    body();
  } catch (const MpiError& e) {
    return e.code();
  }
  return MPI_SUCCESS;
}

// Every op blocking, non-blocking, then persistent with kIterations runs (start + wait, test until done, run).
void check_algorithm(Harness& h, const char* algo, MPI_Datatype stride2) {
  MPI_Info info;
  MPI_Info_create(&info);
  cartplan::mpitest::set_graph_algorithm(info, algo);
  MPI_Info_set(info, "cartplan_theta", "1");  // pairing and cumulative pair ranks sharing one destination
  const DistGraphComm g(MPI_COMM_WORLD, sources_of(h.rank, h.size), destinations_of(h.rank, h.size), info);
  for (int o = 0; o < 5; ++o) {
    const std::string what = std::string(algo) + " " + kOpNames[o];
    Case c = make_case(static_cast<Op>(o), g, h.rank, stride2);
    for (int iter = 0; iter < 2; ++iter) {
      fill(c, iter, o);
      reference(c, g.get());
      blocking(c, g);
      compare(h, c, what + " blocking, call " + std::to_string(iter));
    }
    for (int iter = 0; iter < 2; ++iter) {  // non-blocking: completed by wait(), then by a test() loop
      fill(c, 20 + iter, o);
      reference(c, g.get());
      GraphCollective nb = nonblocking(c, g);
      if (iter == 0) {
        nb.wait();
      } else {
        while (!nb.test()) {
        }
      }
      compare(h, c, what + " non-blocking, call " + std::to_string(iter));
      h.check(thrown([&] { nb.start(); }) == MPI_ERR_REQUEST, what + ": a non-blocking call's request cannot be started");
    }
    GraphCollective r = persistent(c, g, info);
    h.check(expected_algorithm(r, algo, h.size),
            what + " persistent runs " + GraphCollective::name(r.algorithm()) + ", grid_dims " + std::to_string(r.grid_dims()));
    for (int iter = 0; iter < kIterations; ++iter) {
      fill(c, 10 + iter, o);
      reference(c, g.get());
      if (iter == 0) {
        r.start();
        r.wait();
      } else if (iter == 1) {
        r.start();
        while (!r.test()) {
        }
      } else {
        r.run();
      }
      compare(h, c, what + " persistent, run " + std::to_string(iter));
    }
  }
  MPI_Info_free(&info);
}


void check_errors(Harness& h) {
  const DistGraphComm g(MPI_COMM_WORLD, sources_of(h.rank, h.size), destinations_of(h.rank, h.size));
  h.check(g.indegree() == static_cast<int>(sources_of(h.rank, h.size).size()) &&
              g.outdegree() == static_cast<int>(destinations_of(h.rank, h.size).size()),
          "indegree and outdegree are the lists' lengths");
  int in = -1, out = -1, weighted = -1;
  MPI_Dist_graph_neighbors_count(g.get(), &in, &out, &weighted);
  h.check(in == g.indegree() && out == g.outdegree(), "MPI's distributed graph has the same degrees");

  std::vector<int> sbuf(4 * g.outdegree() + 4, 1), rbuf(4 * g.indegree() + 4, 0);
  const int code = thrown([&] {
    GraphCollective::alltoall(g, sbuf.data(), h.rank == 0 ? -1 : 1, MPI_INT, rbuf.data(), 1, MPI_INT);
  });
  h.check(code == MPI_ERR_COUNT, "a negative sendcount on rank 0 fails init on every rank with MPI_ERR_COUNT (got " +
                                     std::to_string(code) + ")");

  std::vector<int> dests = destinations_of(h.rank, h.size);
  if (h.rank == 0) dests.push_back(0);  // an edge 0 -> 0 that rank 0 does not list among its sources
  const int topology = thrown([&] { DistGraphComm bad(MPI_COMM_WORLD, sources_of(h.rank, h.size), dests); });
  h.check(topology == MPI_ERR_TOPOLOGY, "lists that are not one graph throw MPI_ERR_TOPOLOGY on every rank (got " +
                                            std::to_string(topology) + ")");

  DistGraphComm moved(MPI_COMM_WORLD, sources_of(h.rank, h.size), destinations_of(h.rank, h.size));
  GraphCollective r = GraphCollective::allgather(moved, sbuf.data(), 1, MPI_INT, rbuf.data(), 1, MPI_INT);
  GraphCollective r2 = std::move(r);
  r2.run();
  h.check(thrown([&] { r.start(); }) == MPI_ERR_REQUEST, "a moved-from GraphCollective throws MPI_ERR_REQUEST");
  const DistGraphComm taken = std::move(moved);
  h.check(moved.get() == MPI_COMM_NULL && moved.indegree() == 0 && taken.indegree() == g.indegree(), "a move takes the communicator and lists");
  h.check(thrown([&] { moved.allgather(sbuf.data(), 1, MPI_INT, rbuf.data(), 1, MPI_INT); }) == MPI_ERR_COMM,
          "a blocking call on a moved-from DistGraphComm throws MPI_ERR_COMM");
}

}  // namespace

// A rank without edges: rank 0 has no sources and no destinations (its buffers are empty
// vectors), the others form a ring among themselves. Allgather blocking, non-blocking and
// persistent, and alltoall blocking, under linear, grid and auto; every value checked.
void check_isolated(Harness& h) {
  if (h.size < 3) return;
  const int r = h.rank, m = h.size - 1;  // ranks 1..m in a ring
  std::vector<int> in, out;
  if (r > 0) {
    out = {r % m + 1};
    in = {(r + m - 2) % m + 1};
  }
  for (const char* algo : {"linear", "grid", "auto"}) {
    MPI_Info info;
    MPI_Info_create(&info);
    cartplan::mpitest::set_graph_algorithm(info, algo);
    const DistGraphComm g(MPI_COMM_WORLD, in, out, info);
    MPI_Info_free(&info);
    const std::string what = std::string("isolated rank 0, ") + algo;
    int mine = 1000 + r;
    std::vector<int> got(in.size(), -1), sent(out.size(), 500 + r), back(in.size(), -1);
    g.allgather(&mine, 1, MPI_INT, got.data(), 1, MPI_INT);
    h.check(got.empty() || got[0] == 1000 + in[0], what + ": blocking allgather");
    mine = 2000 + r;
    GraphCollective nb = g.iallgather(&mine, 1, MPI_INT, got.data(), 1, MPI_INT);
    nb.wait();
    h.check(got.empty() || got[0] == 2000 + in[0], what + ": non-blocking allgather");
    GraphCollective p = GraphCollective::allgather(g, &mine, 1, MPI_INT, got.data(), 1, MPI_INT);
    for (int it = 0; it < 2; ++it) {
      mine = 3000 + 10 * it + r;
      p.run();
      h.check(got.empty() || got[0] == 3000 + 10 * it + in[0], what + ": persistent allgather, run " + std::to_string(it));
    }
    g.alltoall(sent.data(), 1, MPI_INT, back.data(), 1, MPI_INT);
    h.check(back.empty() || back[0] == 500 + in[0], what + ": blocking alltoall");
  }
}

// DistGraphComm::view of a communicator the program made with MPI_Dist_graph_create_adjacent:
// the lists read from it, every op blocking and persistent against MPI_Neighbor_* on it, and the
// communicator still the program's to free afterwards; a view of MPI_COMM_WORLD throws
// MPI_ERR_TOPOLOGY, of MPI_COMM_NULL MPI_ERR_COMM.
void check_view(Harness& h, MPI_Datatype stride2) {
  const std::vector<int> src = sources_of(h.rank, h.size), dst = destinations_of(h.rank, h.size);
  MPI_Comm mine = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(src.size()), src.data(), MPI_UNWEIGHTED,
                                 static_cast<int>(dst.size()), dst.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &mine);
  {
    const DistGraphComm g = DistGraphComm::view(mine);
    h.check(g.get() == mine && g.sources() == src && g.destinations() == dst, "view: the lists of the program's communicator");
    for (int o = 0; o < 5; ++o) {
      Case c = make_case(static_cast<Op>(o), g, h.rank, stride2);
      fill(c, 0, o);
      reference(c, mine);
      blocking(c, g);
      compare(h, c, std::string("view: ") + kOpNames[o] + " blocking");
      GraphCollective r = persistent(c, g, MPI_INFO_NULL);
      fill(c, 1, o);
      reference(c, mine);
      r.run();
      compare(h, c, std::string("view: ") + kOpNames[o] + " persistent");
    }
  }
  h.check(MPI_Comm_free(&mine) == MPI_SUCCESS, "view: the program frees its communicator after the view");
  h.check(thrown([] { DistGraphComm::view(MPI_COMM_WORLD); }) == MPI_ERR_TOPOLOGY, "view of MPI_COMM_WORLD: MPI_ERR_TOPOLOGY");
  h.check(thrown([] { DistGraphComm::view(MPI_COMM_NULL); }) == MPI_ERR_COMM, "view of MPI_COMM_NULL: MPI_ERR_COMM");
}

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  MPI_Datatype stride2;  // an int with the extent of two: count n sends every other int
  MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &stride2);
  MPI_Type_commit(&stride2);
  for (const char* algo : kAlgorithms) {
    try {
      check_algorithm(h, algo, stride2);
    } catch (const MpiError& e) {
      h.check(false, std::string(algo) + ": MpiError " + std::to_string(e.code()) + ": " + e.what());
    }
  }
  try {
    check_view(h, stride2);
  } catch (const MpiError& e) {
    h.check(false, std::string("view: MpiError ") + std::to_string(e.code()) + ": " + e.what());
  }
  try {
    check_isolated(h);
  } catch (const MpiError& e) {
    h.check(false, std::string("isolated rank: MpiError ") + std::to_string(e.code()) + ": " + e.what());
  }
  try {
    check_errors(h);
  } catch (const MpiError& e) {
    h.check(false, std::string("errors: unexpected MpiError ") + std::to_string(e.code()) + ": " + e.what());
  }
  MPI_Type_free(&stride2);
  return h.finish("cpp_graph_test");
}
