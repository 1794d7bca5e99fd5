// MPI test of Info cartplan_auto_candidates (graph auto's candidate set): auto constructs only
// the candidates the list allows (a construction it skips cannot fail: CARTPLAN_TEST_FAIL=
// pattern-pairing,pattern-cumulative fails every rank's pairing and cumulative construction,
// which the full list hits and the grid-only list never reaches), the default (auto) constructs
// the grids and not seed 003's pair in a persistent init (both where p has no usable grid: prime
// p), and seed 003's pair and not the grids
// in a blocking call (CARTPLAN_TEST_FAIL=pattern-grid), its pick is the full list's wherever the
// full list picks an allowed candidate, the data is MPI_Neighbor_allgather's byte for byte, and
// a bad or differing value is MPI_ERR_INFO_VALUE naming the key.
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;

// A periodic 2-D Moore neighbourhood (r = 1) on MPI_Dims_create's grid: 8 out-edges per rank
// (parallel edges and self edges where an extent is below 3, as MPI allows).
MPI_Comm moore(Harness& h, const char* candidates) {
  int dims[2] = {0, 0};
  MPI_Dims_create(h.size, 2, dims);
  const int x = h.rank / dims[1], y = h.rank % dims[1];
  std::vector<int> nbrs;
  for (int dx = -1; dx <= 1; ++dx)
    for (int dy = -1; dy <= 1; ++dy)
      if (dx != 0 || dy != 0) nbrs.push_back(((x + dx + dims[0]) % dims[0]) * dims[1] + (y + dy + dims[1]) % dims[1]);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_theta", "1");  // friends everywhere: pairing and cumulative have work
  if (candidates) MPI_Info_set(info, "cartplan_auto_candidates", candidates);
  MPI_Comm g = MPI_COMM_NULL;
  const int n = static_cast<int>(nbrs.size());
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, n, nbrs.data(), MPI_UNWEIGHTED, n, nbrs.data(), MPI_UNWEIGHTED, info, 0, &g);
  MPI_Info_free(&info);
  MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
  return g;
}

// Whether p has a usable virtual grid (engine/graph/auto_candidates.h's grids_suffice: MPI_Dims_create's
// 2-D or 3-D grid with 2 or more extents above 1, the largest <= 8 x the smallest): where it has
// none (prime p), the default keeps seed 003's pair beside the grids in a persistent init.
bool grids_suffice(int p) {
  if (p < 2) return true;
  for (int d : {2, 3}) {
    std::vector<int> dims(static_cast<std::size_t>(d), 0);
    MPI_Dims_create(p, d, dims.data());
    dims.erase(std::remove(dims.begin(), dims.end(), 1), dims.end());
    if (dims.size() >= 2 && dims.front() <= 8 * dims.back()) return true;
  }
  return false;
}

struct Outcome {
  int rc = MPI_SUCCESS, algorithm = -1, grid_dims = -1;
  bool delivered = false;
  std::string message;
};

// Persistent auto allgather of `ints` ints per block on a fresh graph, run twice, against MPI's.
Outcome run(Harness& h, const char* candidates, int ints) {
  MPI_Comm g = moore(h, candidates);
  int indeg = 0, outdeg = 0, weighted = 0;
  MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted);
  std::vector<int> send(static_cast<std::size_t>(ints)), recv(static_cast<std::size_t>(indeg * ints), -1), ref(recv.size(), -2);
  for (int i = 0; i < ints; ++i) send[static_cast<std::size_t>(i)] = h.rank * 1000 + i;
  Outcome o;
  Cart_Request req = CART_REQUEST_NULL;
  o.rc = Cart_graph_neighbor_allgather_init(send.data(), ints, MPI_INT, recv.data(), ints, MPI_INT, g, MPI_INFO_NULL, &req);
  o.message = Cart_error_message();
  if (o.rc == MPI_SUCCESS) {
    Cart_graph_request_algorithm(req, &o.algorithm);
    Cart_graph_request_grid_dims(req, &o.grid_dims);
    MPI_Neighbor_allgather(send.data(), ints, MPI_INT, ref.data(), ints, MPI_INT, g);
    o.delivered = true;
    for (int call = 0; call < 2; ++call) {
      std::fill(recv.begin(), recv.end(), -1);
      o.delivered = o.delivered && Cart_start(&req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS && recv == ref;
    }
    Cart_request_free(&req);
  }
  MPI_Comm_free(&g);
  return o;
}

// Constructions the list leaves out never run: failing them on every rank fails the full list
// only. The default list is auto: in a persistent init, the grids only.
void skipped_not_constructed(Harness& h) {
  setenv("CARTPLAN_TEST_FAIL", "pattern-pairing,pattern-cumulative", 1);
  const Outcome all = run(h, "all", 1);
  const Outcome grid = run(h, "grid", 1);
  const Outcome by_default = run(h, nullptr, 1);
  const Outcome linear = run(h, "linear", 1);
  setenv("CARTPLAN_TEST_FAIL", "pattern", 1);  // every construction fails, the grid's too
  const Outcome linear_only = run(h, "linear", 1);
  setenv("CARTPLAN_TEST_FAIL", "pattern-grid", 1);
  const Outcome default_no_grid = run(h, nullptr, 1);
  const Outcome pairs_no_grid = run(h, "pairing,cumulative", 1);
  unsetenv("CARTPLAN_TEST_FAIL");
  int cls = MPI_SUCCESS;
  if (all.rc != MPI_SUCCESS) MPI_Error_class(all.rc, &cls);
  h.check(cls == MPI_ERR_OTHER && all.message.find("CARTPLAN_TEST_FAIL=pattern-pairing") != std::string::npos,
          "all candidates: the failing pairing construction is reached (" + all.message + ")");
  h.check(grid.rc == MPI_SUCCESS && grid.delivered, "grid only: pairing and cumulative never constructed (" + grid.message + ")");
  h.check(grid.algorithm == CART_GRAPH_LINEAR || grid.algorithm == CART_GRAPH_GRID, "grid only: picks linear or grid");
  if (grids_suffice(h.size)) {
    h.check(by_default.rc == MPI_SUCCESS && by_default.delivered && by_default.algorithm == grid.algorithm &&
                by_default.grid_dims == grid.grid_dims,
            "default (auto), persistent: pairing and cumulative never constructed, the grid list's pick (" + by_default.message + ")");
  } else {  // prime p: the grid is one message per peer, the default keeps the pair
    cls = MPI_SUCCESS;
    if (by_default.rc != MPI_SUCCESS) MPI_Error_class(by_default.rc, &cls);
    h.check(cls == MPI_ERR_OTHER && by_default.message.find("CARTPLAN_TEST_FAIL=pattern-pairing") != std::string::npos,
            "default (auto), persistent, p without a usable grid: pairing is constructed (" + by_default.message + ")");
  }
  // Where p has a grid of 2 or more dimensions, the default constructs it: failing it fails init.
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  cls = MPI_SUCCESS;
  if (default_no_grid.rc != MPI_SUCCESS) MPI_Error_class(default_no_grid.rc, &cls);
  if (size > 1)
    h.check(cls == MPI_ERR_OTHER && default_no_grid.message.find("CARTPLAN_TEST_FAIL=pattern-grid") != std::string::npos,
            "default (auto), persistent: the grid is constructed (" + default_no_grid.message + ")");
  h.check(pairs_no_grid.rc == MPI_SUCCESS && pairs_no_grid.delivered, "pairing,cumulative: no grid constructed (" + pairs_no_grid.message + ")");
  h.check(linear.rc == MPI_SUCCESS && linear.delivered && linear.algorithm == CART_GRAPH_LINEAR, "linear only: runs linear");
  h.check(linear_only.rc == MPI_SUCCESS && linear_only.delivered, "linear only: no construction at all (" + linear_only.message + ")");
}

// Blocking auto never runs grid: the default constructs seed 003's pair there (failing it fails
// the call) and not the grids (failing them changes nothing); all constructed the grids too.
void blocking_default(Harness& h) {
  auto call = [&h](const char* candidates, const char* fail, std::string* message) {
    MPI_Comm g = moore(h, candidates);
    int indeg = 0, outdeg = 0, weighted = 0;
    MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted);
    std::vector<int> recv(static_cast<std::size_t>(indeg), -1), ref(recv.size(), -2);
    int send = h.rank * 7 + 1;
    setenv("CARTPLAN_TEST_FAIL", fail, 1);
    int rc = Cart_graph_neighbor_allgather(&send, 1, MPI_INT, recv.data(), 1, MPI_INT, g);
    unsetenv("CARTPLAN_TEST_FAIL");
    *message = Cart_error_message();
    MPI_Neighbor_allgather(&send, 1, MPI_INT, ref.data(), 1, MPI_INT, g);
    if (rc == MPI_SUCCESS && recv != ref) rc = -1;
    MPI_Comm_free(&g);
    return rc;
  };
  std::string m;
  h.check(call(nullptr, "pattern-grid", &m) == MPI_SUCCESS, "blocking, default: the grids are not constructed (" + m + ")");
  const int pairs = call(nullptr, "pattern-pairing", &m);
  int cls = MPI_SUCCESS;
  if (pairs != MPI_SUCCESS && pairs != -1) MPI_Error_class(pairs, &cls);
  h.check(cls == MPI_ERR_OTHER && m.find("CARTPLAN_TEST_FAIL=pattern-pairing") != std::string::npos,
          "blocking, default: seed 003's pairing is constructed (" + m + ")");
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int all = call("all", "pattern-grid", &m);
  if (size > 1) h.check(all != MPI_SUCCESS, "blocking, all: the grids are constructed (and fail)");
}

// Wherever the full list picks a candidate the shorter list allows, the shorter list picks it too.
void picks_unchanged(Harness& h) {
  for (int ints : {1, 256, 16384}) {
    const Outcome all = run(h, "all", ints);
    h.check(all.rc == MPI_SUCCESS && all.delivered, "all candidates deliver, " + std::to_string(ints) + " ints");
    for (const char* list : {"grid", "pairing,cumulative", "linear,cumulative,grid", "pairing", static_cast<const char*>(nullptr)}) {
      const Outcome some = run(h, list, ints);
      // The default in a persistent init: linear and the grids (with the pair where p has no usable grid).
      if (!list) list = grids_suffice(h.size) ? "grid" : "pairing,cumulative,grid";
      const std::string what = std::string(list) + ", " + std::to_string(ints) + " ints";
      h.check(some.rc == MPI_SUCCESS && some.delivered, what + ": delivers");
      const bool allowed = all.algorithm == CART_GRAPH_LINEAR ||
                           (all.algorithm == CART_GRAPH_GRID && std::strstr(list, "grid")) ||
                           (all.algorithm == CART_GRAPH_PAIRING && std::strstr(list, "pairing")) ||
                           (all.algorithm == CART_GRAPH_CUMULATIVE && std::strstr(list, "cumulative"));
      if (allowed)
        h.check(some.algorithm == all.algorithm && some.grid_dims == all.grid_dims,
                what + ": the full list's pick " + std::to_string(all.algorithm) + " kept, got " + std::to_string(some.algorithm));
    }
  }
}

void bad_values(Harness& h) {
  for (const char* bad : {"bogus", "grid,", "grid,,pairing"}) {
    MPI_Comm g = moore(h, nullptr);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cartplan_auto_candidates", bad);
    int s = h.rank, r[8];
    Cart_Request req = CART_REQUEST_NULL;
    const int rc = Cart_graph_neighbor_allgather_init(&s, 1, MPI_INT, r, 1, MPI_INT, g, info, &req);
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    h.check(cls == MPI_ERR_INFO_VALUE && std::strstr(Cart_error_message(), "cartplan_auto_candidates"),
            std::string("bad value '") + bad + "': MPI_ERR_INFO_VALUE naming the key (" + Cart_error_message() + ")");
    if (req != CART_REQUEST_NULL) Cart_request_free(&req);
    MPI_Info_set(info, "cartplan_auto_candidates", h.rank == 0 ? "auto" : "all");
    const int differ = Cart_graph_neighbor_allgather_init(&s, 1, MPI_INT, r, 1, MPI_INT, g, info, &req);
    cls = MPI_SUCCESS;
    if (differ != MPI_SUCCESS) MPI_Error_class(differ, &cls);
    h.check(cls == (h.size > 1 ? MPI_ERR_INFO_VALUE : MPI_SUCCESS), "lists that differ between ranks: agreed error");
    if (req != CART_REQUEST_NULL) Cart_request_free(&req);
    MPI_Info_free(&info);
    MPI_Comm_free(&g);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  skipped_not_constructed(h);
  blocking_default(h);
  picks_unchanged(h);
  bad_values(h);
  return h.finish("graph_auto_candidates_test");
}
