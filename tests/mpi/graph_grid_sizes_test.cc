// MPI test: graph auto picks grid only where init agreed one block size on every rank. A
// periodic Moore graph whose last rank has no edges (grid is its cheapest schedule under the
// built-in model): 3x3 on 9 ranks (the 2-D grid 3x3), 2x2x2 on 8 and 3x2x2 on 12 (auto picks the
// 3-D grid there); that rank passes another sendcount, as MPI allows: grid relays blocks
// through that rank, so auto's blocking and non-blocking calls (which choose from their own
// block size) must never pick grid, persistent init picks it only with one size everywhere, and a
// forced grid init with sizes that differ is refused on every rank. Results are compared with
// Open MPI's on the same communicator.
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
  // The rank without edges passes another size: no grid, and the results are Open MPI's.
  Call d = make_call(in, out, alltoall, other, h.rank, 2);
  const int got = persistent_algorithm(h, d, g, op + " persistent, sizes differ");
  h.check(got >= CART_GRAPH_LINEAR && got != CART_GRAPH_GRID, op + ": persistent auto with sizes that differ picks no grid");
  for (int iter = 0; iter < 3; ++iter) {
    Call b = make_call(in, out, alltoall, other, h.rank, 3 + iter);
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
  // Forced grid with sizes that differ: refused by init on every rank (it would truncate).
  MPI_Comm f = make_graph(c, "grid");
  Call e = make_call(in, out, alltoall, other, h.rank, 20);
  Cart_Request r = CART_REQUEST_NULL;
  const int rc = init(e, f, &r);
  h.check(rc != MPI_SUCCESS && r == CART_REQUEST_NULL, op + ": forced grid init with sizes that differ is refused");
  if (rc == MPI_SUCCESS) Cart_request_free(&r);
  MPI_Comm_free(&f);
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
  }
  return h.finish("graph_grid_sizes_test");
}
