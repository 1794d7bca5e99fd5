// MPI test: where graph auto picks grid, and what a rank without edges changes. A periodic
// Moore graph whose last rank has no edges (grid is its cheapest schedule under the built-in
// model): 3x3 on 9 ranks (the 2-D grid 3x3), 2x2x2 on 8 and 3x2x2 on 12 (auto picks the 3-D grid
// there). Grid relays blocks through that rank too. Persistent init agrees on the block size of
// the ranks with edges and the rank without edges relays blocks of that size whatever count it
// passes (another one, or 0), so persistent auto picks grid and a forced grid init runs; sizes
// that differ between ranks with edges are refused for forced grid. Auto's blocking and
// non-blocking calls (which choose from their own block size) never pick grid. The v forms at
// persistent init (sizes learned by the size pass, also on the relaying rank) pick grid too.
// Results are compared with Open MPI's on the same communicator.
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "engine/graph/generators.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;

struct Call {
  std::vector<int> in, out;  // this rank's edges
  bool alltoall = false;
  int count = 1;  // ints per block this rank passes
  std::vector<int> send, mine, ref;
};

Call make_call(const std::vector<int>& in, const std::vector<int>& out, bool alltoall, int count, int rank, int salt) {
  Call c{in, out, alltoall, count, {}, {}, {}};
  const std::size_t blocks = alltoall ? out.size() : 1;
  c.send.assign(blocks * count + 1, -3);
  for (std::size_t i = 0; i + 1 < c.send.size(); ++i) c.send[i] = (salt * 1000 + rank) * 100 + static_cast<int>(i);
  c.mine.assign(in.size() * count + 1, -1);
  c.ref = c.mine;
  return c;
}

int reference(Call& c, MPI_Comm g) {
  return c.alltoall ? MPI_Neighbor_alltoall(c.send.data(), c.count, MPI_INT, c.ref.data(), c.count, MPI_INT, g)
                    : MPI_Neighbor_allgather(c.send.data(), c.count, MPI_INT, c.ref.data(), c.count, MPI_INT, g);
}

int blocking(Call& c, MPI_Comm g) {
  return c.alltoall ? Cart_graph_neighbor_alltoall(c.send.data(), c.count, MPI_INT, c.mine.data(), c.count, MPI_INT, g)
                    : Cart_graph_neighbor_allgather(c.send.data(), c.count, MPI_INT, c.mine.data(), c.count, MPI_INT, g);
}

int nonblocking(Call& c, MPI_Comm g, Cart_Request* r) {
  return c.alltoall ? Cart_graph_ineighbor_alltoall(c.send.data(), c.count, MPI_INT, c.mine.data(), c.count, MPI_INT, g, r)
                    : Cart_graph_ineighbor_allgather(c.send.data(), c.count, MPI_INT, c.mine.data(), c.count, MPI_INT, g, r);
}

int init(Call& c, MPI_Comm g, Cart_Request* r) {
  return c.alltoall
             ? Cart_graph_neighbor_alltoall_init(c.send.data(), c.count, MPI_INT, c.mine.data(), c.count, MPI_INT, g, MPI_INFO_NULL, r)
             : Cart_graph_neighbor_allgather_init(c.send.data(), c.count, MPI_INT, c.mine.data(), c.count, MPI_INT, g, MPI_INFO_NULL, r);
}

MPI_Comm make_graph(const Call& c, const char* algo) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", algo);
  int dummy = 0;
  MPI_Comm g = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(c.in.size()), c.in.empty() ? &dummy : c.in.data(), MPI_UNWEIGHTED,
                                 static_cast<int>(c.out.size()), c.out.empty() ? &dummy : c.out.data(), MPI_UNWEIGHTED, info, 0, &g);
  MPI_Info_free(&info);
  MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
  return g;
}

// A persistent init of `c`, run once against Open MPI's; returns the request's algorithm (-1:
// failed) and in *ndims its grid's dimensions (0: not grid).
int persistent_algorithm(Harness& h, Call& c, MPI_Comm g, const std::string& what, int* ndims = nullptr) {
  Cart_Request r = CART_REQUEST_NULL;
  if (init(c, g, &r) != MPI_SUCCESS) {
    h.check(false, what + ": init: " + Cart_error_message());
    return -1;
  }
  int got = -1;
  Cart_graph_request_algorithm(r, &got);
  if (ndims) Cart_graph_request_grid_dims(r, ndims);
  h.check(reference(c, g) == MPI_SUCCESS, "reference");
  h.check(Cart_start(&r) == MPI_SUCCESS && Cart_wait(&r) == MPI_SUCCESS, what + ": run: " + Cart_error_message());
  h.check(c.mine == c.ref, what + ": data");
  Cart_request_free(&r);
  return got;
}

void one_op(Harness& h, const std::vector<int>& in, const std::vector<int>& out, bool alltoall, bool edgeless, int want_ndims) {
  const std::string op = alltoall ? "alltoall" : "allgather";
  const int other = edgeless ? 2 : 1;  // the rank without edges passes 2 ints per block, the others 1
  Call c = make_call(in, out, alltoall, 1, h.rank, 1);
  MPI_Comm g = make_graph(c, "auto");
  // One size everywhere: persistent auto may pick grid, and does here (else this test shows nothing).
  int ndims = -1;
  const int first = persistent_algorithm(h, c, g, op + " persistent, one size", &ndims);
  h.check(first == CART_GRAPH_GRID, op + ": persistent auto with one block size picks grid (the premise of this test), got " +
                                        std::to_string(first));
  h.check(ndims == want_ndims, op + ": persistent auto picks the " + std::to_string(want_ndims) + "-D grid, got " + std::to_string(ndims));
  // The rank without edges passes another size, or none (count 0; MPI never looks at them there):
  // it relays grid blocks of the size init agreed on, so persistent auto still picks grid, and the
  // results are Open MPI's.
  for (int count : {other, edgeless ? 0 : 1}) {
    Call d = make_call(in, out, alltoall, count, h.rank, 2 + count);
    ndims = -1;
    const int got = persistent_algorithm(h, d, g, op + " persistent, the rank without edges passes another count", &ndims);
    h.check(got == CART_GRAPH_GRID && ndims == want_ndims, op + ": a rank without edges does not veto grid (count " + std::to_string(count) + ")");
  }
  for (int iter = 0; iter < 3; ++iter) {
    Call b = make_call(in, out, alltoall, other, h.rank, 5 + iter);
    h.check(reference(b, g) == MPI_SUCCESS, "reference");
    h.check(blocking(b, g) == MPI_SUCCESS, op + " blocking auto, sizes differ: " + Cart_error_message());
    h.check(b.mine == b.ref, op + " blocking auto, sizes differ: data, iteration " + std::to_string(iter));
  }
  for (int count : {1, other}) {  // one size everywhere too: non-blocking calls never agree sizes
    Call n = make_call(in, out, alltoall, count, h.rank, 10 + count);
    h.check(reference(n, g) == MPI_SUCCESS, "reference");
    Cart_Request r = CART_REQUEST_NULL;
    int rc = nonblocking(n, g, &r), algo = -1;
    if (rc == MPI_SUCCESS) Cart_graph_request_algorithm(r, &algo);
    if (rc == MPI_SUCCESS) rc = Cart_wait(&r);
    h.check(rc == MPI_SUCCESS, op + " non-blocking auto: " + Cart_error_message());
    h.check(algo != CART_GRAPH_GRID, op + " non-blocking auto picks no grid, count " + std::to_string(count));
    h.check(n.mine == n.ref, op + " non-blocking auto: data, count " + std::to_string(count));
  }
  MPI_Comm_free(&g);
  // Forced grid: the rank without edges passing another size is fine at init (agreed size); sizes
  // that differ between ranks with edges (rank 0 passes 2 ints) are refused on every rank.
  MPI_Comm f = make_graph(c, "grid");
  Call e = make_call(in, out, alltoall, other, h.rank, 20);
  h.check(persistent_algorithm(h, e, f, op + " forced grid, the rank without edges passes another count") == CART_GRAPH_GRID,
          op + ": forced grid init with another count on the rank without edges runs grid");
  Call x = make_call(in, out, alltoall, h.rank == 0 ? 2 : 1, h.rank, 21);
  Cart_Request r = CART_REQUEST_NULL;
  const int rc = init(x, f, &r);
  h.check(rc != MPI_SUCCESS && r == CART_REQUEST_NULL, op + ": forced grid init with sizes that differ between ranks with edges is refused");
  if (rc == MPI_SUCCESS) Cart_request_free(&r);
  MPI_Comm_free(&f);
}

// The v forms at persistent init with auto: blocks of 1 + (origin % 2) ints, the rank without
// edges passes no counts of its own. The size pass tells every relaying rank its temp slots'
// sizes, so auto may pick grid, and does here; the results are Open MPI's.
void v_persistent(Harness& h, const std::vector<int>& in, const std::vector<int>& out, bool alltoall, int want_ndims) {
  const std::string op = alltoall ? "alltoallv" : "allgatherv";
  const int mine = 1 + h.rank % 2;
  std::vector<int> scounts, sdispls, rcounts, rdispls;
  for (std::size_t k = 0; k < out.size(); ++k) scounts.push_back(mine), sdispls.push_back(static_cast<int>(k) * 2);
  for (std::size_t j = 0; j < in.size(); ++j) rcounts.push_back(1 + in[j] % 2), rdispls.push_back(static_cast<int>(j) * 2);
  for (auto* list : {&scounts, &sdispls, &rcounts, &rdispls}) list->push_back(0);  // Open MPI refuses NULL arrays
  std::vector<int> send(out.size() * 2 + 2), got(in.size() * 2 + 1, -1), ref(in.size() * 2 + 1, -1);
  for (std::size_t i = 0; i < send.size(); ++i) send[i] = h.rank * 1000 + static_cast<int>(i);
  Call shape{in, out, alltoall, 1, {}, {}, {}};
  MPI_Comm g = make_graph(shape, "auto");
  Cart_Request r = CART_REQUEST_NULL;
  int rc = alltoall ? Cart_graph_neighbor_alltoallv_init(send.data(), scounts.data(), sdispls.data(), MPI_INT, got.data(), rcounts.data(),
                                                         rdispls.data(), MPI_INT, g, MPI_INFO_NULL, &r)
                    : Cart_graph_neighbor_allgatherv_init(send.data(), mine, MPI_INT, got.data(), rcounts.data(), rdispls.data(), MPI_INT,
                                                          g, MPI_INFO_NULL, &r);
  h.check(rc == MPI_SUCCESS, op + " persistent auto: init: " + Cart_error_message());
  if (rc == MPI_SUCCESS) {
    int algo = -1, ndims = -1;
    Cart_graph_request_algorithm(r, &algo);
    Cart_graph_request_grid_dims(r, &ndims);
    h.check(algo == CART_GRAPH_GRID && ndims == want_ndims, op + " persistent auto with a rank without edges picks the " +
                                                                std::to_string(want_ndims) + "-D grid, got " + std::to_string(algo) + ", " +
                                                                std::to_string(ndims) + " dimensions");
    rc = alltoall ? MPI_Neighbor_alltoallv(send.data(), scounts.data(), sdispls.data(), MPI_INT, ref.data(), rcounts.data(), rdispls.data(),
                                           MPI_INT, g)
                  : MPI_Neighbor_allgatherv(send.data(), mine, MPI_INT, ref.data(), rcounts.data(), rdispls.data(), MPI_INT, g);
    h.check(rc == MPI_SUCCESS, "reference");
    h.check(Cart_start(&r) == MPI_SUCCESS && Cart_wait(&r) == MPI_SUCCESS, op + " persistent auto: run: " + Cart_error_message());
    h.check(got == ref, op + " persistent auto: data");
    Cart_request_free(&r);
  }
  MPI_Comm_free(&g);
}

}  // namespace

int main(int argc, char** argv) {
  // The built-in model, whatever calibration this machine has: under it grid is the cheapest.
  unsetenv("CARTPLAN_COST_MODEL");
  setenv("XDG_CONFIG_HOME", "/nonexistent/cartplan-graph-grid-sizes-test", 1);
  setenv("HOME", "/nonexistent/cartplan-graph-grid-sizes-test", 1);
  Harness h(&argc, &argv);
  // A periodic Moore r=1 graph without the last rank's edges (grid is its cheapest schedule).
  const std::vector<int> dims = h.size == 9 ? std::vector<int>{3, 3} : h.size == 8 ? std::vector<int>{2, 2, 2} : std::vector<int>{3, 2, 2};
  const auto t = cartplan::engine::graph::moore(dims, 1, true, 0.0, 1);
  const bool runs = (h.size == 8 || h.size == 9 || h.size == 12) && t;
  h.check(runs, "runs on 8, 9 or 12 ranks");
  if (runs) {
    const int last = h.size - 1;
    const bool edgeless = h.rank == last;
    std::vector<int> in, out;
    for (int r : edgeless ? std::vector<int>{} : t->ranks[h.rank].in)
      if (r != last) in.push_back(r);
    for (int r : edgeless ? std::vector<int>{} : t->ranks[h.rank].out)
      if (r != last) out.push_back(r);
    for (bool alltoall : {false, true}) one_op(h, in, out, alltoall, edgeless, static_cast<int>(dims.size()));
    for (bool alltoall : {false, true}) v_persistent(h, in, out, alltoall, static_cast<int>(dims.size()));
  }
  return h.finish("graph_grid_sizes_test");
}
