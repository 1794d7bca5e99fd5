// MPI test: the first waits of Cart_* calls advance the process's pending requests while they
// wait: agreements (persistent init, halo creation, graph checking mode), the duplicate that
// starts a graph communicator's state (the first graph collective on it) and a graph call's
// pattern construction (point-to-point among neighbours or grid lines). Rank 0 starts a
// multi-phase request and then makes the call before completing it; the other ranks complete the
// request first and make the call after, so they wait for rank 0's later phases while rank 0
// waits in the call. A correct MPI program (collectives called in one order on every rank); run
// with CARTPLAN_PROGRESS=cartplan (progress only inside Cart_* calls), where a wait that does
// not progress deadlocks (run_mpi.sh's time limit then fails the test). Every received element
// and ghost cell is checked. Graph v calls learn their blocks' sizes point-to-point first (sizes/...).
//
//   agreement_progress_test [PART]   // only the parts whose name starts with PART
//                                    // (cartesian, graph, creation/..., construction/..., sizes/..., comm/...)
#include <mpi.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "backends/mpi/graph_sized_calls.h"
#include "backends/mpi/graph_sizes.h"
#include "tests/mpi/graph_algorithm_info.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;

// The Moore neighbourhood of radius 1 on a 2-D torus, forced to combining (two phases).
MPI_Comm moore_torus(Harness& h, int* t) {
  int dims[2] = {0, 0}, periods[2] = {1, 1};
  MPI_Dims_create(h.size, 2, dims);
  static const int offs[16] = {-1, -1, -1, 0, -1, 1, 0, -1, 0, 1, 1, -1, 1, 0, 1, 1};
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", "combining");
  MPI_Comm cart = MPI_COMM_NULL;
  h.check(Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, 8, offs, MPI_UNWEIGHTED, info, 0, &cart) == MPI_SUCCESS,
          std::string("create: ") + Cart_error_message());
  MPI_Info_free(&info);
  *t = 8;
  return cart;
}

// Rank 0 completes `pending` only after `agreement`; the others before it.
template <class Agreement>
void rank0_late(Harness& h, Cart_Request* pending, Agreement&& agreement, const std::string& what) {
  if (h.rank != 0) h.check(Cart_wait(pending) == MPI_SUCCESS, what + ": wait");
  h.check(agreement() == MPI_SUCCESS, what + ": the agreement: " + Cart_error_message());
  if (h.rank == 0) h.check(Cart_wait(pending) == MPI_SUCCESS, what + ": wait after the agreement");
}

void cartesian(Harness& h) {
  int t = 0;
  MPI_Comm cart = moore_torus(h, &t);
  std::vector<int> send(t * 2), recv(t * 2, -1), ref(t * 2, -2), again(t * 2, -3);
  for (int i = 0; i < t * 2; ++i) send[i] = h.rank * 1000 + i;
  // The reference: the blocking call (tested against MPI elsewhere), before any request exists.
  h.check(Cart_alltoall(send.data(), 2, MPI_INT, ref.data(), 2, MPI_INT, cart) == MPI_SUCCESS, "Cartesian: the reference");
  Cart_Request q = CART_REQUEST_NULL, init = CART_REQUEST_NULL;
  h.check(Cart_ialltoall(send.data(), 2, MPI_INT, recv.data(), 2, MPI_INT, cart, &q) == MPI_SUCCESS, "Cart_ialltoall");
  int algorithm = -1;
  Cart_request_algorithm(q, &algorithm);
  h.check(algorithm == 1, "Cartesian: the pending request runs the combining plan (several phases)");
  rank0_late(h, &q, [&] { return Cart_alltoall_init(send.data(), 2, MPI_INT, again.data(), 2, MPI_INT, cart, MPI_INFO_NULL, &init); },
             "Cartesian: Cart_alltoall_init");
  h.check(recv == ref, "Cartesian: the pending request's data");
  h.check(Cart_start(&init) == MPI_SUCCESS && Cart_wait(&init) == MPI_SUCCESS && again == ref, "Cartesian: the new request's data");
  Cart_request_free(&init);
  // Halo creation agrees too: rank 0 creates a halo while a non-blocking halo exchange is pending.
  const int interior[2] = {3, 3}, ghost[2] = {1, 1};
  Cart_Halo halo = nullptr, other = nullptr;
  MPI_Info dimwise;  // two phases: corners travel inside the second phase's faces
  MPI_Info_create(&dimwise);
  MPI_Info_set(dimwise, "cartplan_algorithm", "dimwise");
  h.check(Cart_halo_create(cart, 2, interior, ghost, ghost, MPI_INT, MPI_ORDER_C, dimwise, &halo) == MPI_SUCCESS, "Cart_halo_create");
  MPI_Info_free(&dimwise);
  std::vector<int> array(25, -1);  // 5 x 5 with one ghost layer: the interior holds the rank
  for (int i = 1; i <= 3; ++i)
    for (int j = 1; j <= 3; ++j) array[i * 5 + j] = h.rank;
  h.check(Cart_halo_iexchange(array.data(), halo, &q) == MPI_SUCCESS, "Cart_halo_iexchange");
  rank0_late(h, &q, [&] { return Cart_halo_create(cart, 2, interior, ghost, ghost, MPI_INT, MPI_ORDER_C, MPI_INFO_NULL, &other); },
             "halo: Cart_halo_create");
  int dims[2], periods[2], coords[2];
  MPI_Cart_get(cart, 2, dims, periods, coords);
  for (int i = 0; i < 5; ++i)  // every ghost cell holds the rank it faces (corners: the diagonal one)
    for (int j = 0; j < 5; ++j) {
      const int di = i == 0 ? -1 : i == 4 ? 1 : 0, dj = j == 0 ? -1 : j == 4 ? 1 : 0;
      const int at[2] = {(coords[0] + di + dims[0]) % dims[0], (coords[1] + dj + dims[1]) % dims[1]};
      int from = 0;
      MPI_Cart_rank(cart, at, &from);
      h.check(array[i * 5 + j] == from, "halo: cell (" + std::to_string(i) + "," + std::to_string(j) + ") of the pending exchange holds " +
                                            std::to_string(array[i * 5 + j]) + ", expected " + std::to_string(from));
    }
  Cart_halo_free(&other);
  Cart_halo_free(&halo);
  MPI_Comm_free(&cart);
}

// Graph: a ring both ways, grid forced (multi-phase); the pending non-blocking allgather against
// a persistent init on rank 0, then against a blocking call of a communicator in checking mode.
void graph(Harness& h) {
  const int left = (h.rank + h.size - 1) % h.size, right = (h.rank + 1) % h.size;
  const std::vector<int> in = {left, right}, out = {right, left};
  MPI_Comm g = cartplan::mpitest::graph_with_algorithm(in, out, "grid", "1");
  int mine = h.rank + 7, ref[2] = {-1, -1}, got[2] = {-2, -2}, again[2] = {-3, -3};
  MPI_Neighbor_allgather(&mine, 1, MPI_INT, ref, 1, MPI_INT, g);
  Cart_Request q = CART_REQUEST_NULL, init = CART_REQUEST_NULL;
  h.check(Cart_graph_ineighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, g, &q) == MPI_SUCCESS, "graph: ineighbor_allgather");
  int ndims = 0;
  Cart_graph_request_grid_dims(q, &ndims);
  h.check(ndims == 2, "graph: the pending request runs the 2-D grid (two phases)");
  rank0_late(h, &q, [&] { return Cart_graph_neighbor_allgather_init(&mine, 1, MPI_INT, again, 1, MPI_INT, g, MPI_INFO_NULL, &init); },
             "graph: Cart_graph_neighbor_allgather_init");
  h.check(got[0] == ref[0] && got[1] == ref[1], "graph: the pending request's data");
  h.check(Cart_start(&init) == MPI_SUCCESS && Cart_wait(&init) == MPI_SUCCESS && again[0] == ref[0] && again[1] == ref[1],
          "graph: the new request's data");
  Cart_request_free(&init);
  MPI_Comm checking = MPI_COMM_NULL;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", "grid");
  MPI_Info_set(info, "cartplan_check", "collective");
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, in.data(), MPI_UNWEIGHTED, 2, out.data(), MPI_UNWEIGHTED, info, 0, &checking);
  MPI_Info_free(&info);
  MPI_Comm_set_errhandler(checking, MPI_ERRORS_RETURN);
  h.check(Cart_graph_neighbor_allgather(&mine, 1, MPI_INT, again, 1, MPI_INT, checking) == MPI_SUCCESS, "checking mode: first call");
  got[0] = got[1] = -2;
  h.check(Cart_graph_ineighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, g, &q) == MPI_SUCCESS, "graph: ineighbor_allgather again");
  rank0_late(h, &q, [&] { return Cart_graph_neighbor_allgather(&mine, 1, MPI_INT, again, 1, MPI_INT, checking); },
             "graph: a blocking call in checking mode");
  h.check(got[0] == ref[0] && got[1] == ref[1] && again[0] == ref[0] && again[1] == ref[1], "graph: both calls' data");
  MPI_Comm_free(&checking);
  MPI_Comm_free(&g);
}


// A Cartesian combining alltoall on the Moore torus, pending until finish(): the request rank 0
// completes only after the call under test, while its peers wait for its later phases.
struct CartPending {
  Harness& h;
  MPI_Comm cart = MPI_COMM_NULL;
  int t = 0;
  std::vector<int> send, recv, ref;
  Cart_Request q = CART_REQUEST_NULL;
  explicit CartPending(Harness& harness) : h(harness) {
    cart = moore_torus(h, &t);
    send.resize(static_cast<std::size_t>(t) * 2);
    for (int i = 0; i < t * 2; ++i) send[static_cast<std::size_t>(i)] = h.rank * 1000 + i;
    ref.assign(send.size(), -2);
    h.check(Cart_alltoall(send.data(), 2, MPI_INT, ref.data(), 2, MPI_INT, cart) == MPI_SUCCESS, "pending: the reference");
  }
  void start() {
    recv.assign(send.size(), -1);
    h.check(Cart_ialltoall(send.data(), 2, MPI_INT, recv.data(), 2, MPI_INT, cart, &q) == MPI_SUCCESS, "pending: Cart_ialltoall");
    int algorithm = -1;
    Cart_request_algorithm(q, &algorithm);
    h.check(algorithm == 1, "pending: the request runs the combining plan (several phases)");
  }
  void check(const std::string& what) { h.check(recv == ref, what + ": the pending request's data"); }
  ~CartPending() { MPI_Comm_free(&cart); }
};

// A ring both ways with `algorithm` forced (Info), theta 1.
MPI_Comm ring(Harness& h, const char* algorithm) {
  const int left = (h.rank + h.size - 1) % h.size, right = (h.rank + 1) % h.size;
  return cartplan::mpitest::graph_with_algorithm({left, right}, {right, left}, algorithm, "1");
}

// What an allgather of rank + 7 on ring() brings: the left neighbour's, then the right one's.
bool ring_gathered(Harness& h, const int got[2]) {
  return got[0] == (h.rank + h.size - 1) % h.size + 7 && got[1] == (h.rank + 1) % h.size + 7;
}

// Whether the part `name` runs: every part without an argument, else those whose name starts
// with argv[1] ("creation", "construction/grid", ...), to see which one hangs.
const char* g_only = nullptr;
bool wanted(const std::string& name) { return !g_only || name.rfind(g_only, 0) == 0; }

// The first graph collective on a distributed-graph communicator creates cartplan's state there
// (a duplicate of the communicator, then an agreement) before anything else: the communicator
// is made before the request starts, so that only that creation lies between. Blocking,
// non-blocking and persistent first calls (require_graph, and init's begin_graph).
void graph_creation(Harness& h) {
  CartPending p(h);
  const int mine = h.rank + 7;
  for (const char* form : {"blocking", "nonblocking", "persistent"}) {
    const std::string what = std::string("creation/") + form, f = form;
    if (!wanted(what)) continue;
    MPI_Comm g = ring(h, "linear");
    int got[2] = {-1, -1};
    Cart_Request q = CART_REQUEST_NULL;
    p.start();
    rank0_late(h, &p.q, [&] {
      if (f == "blocking") return Cart_graph_neighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, g);
      if (f == "nonblocking") return Cart_graph_ineighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, g, &q);
      return Cart_graph_neighbor_allgather_init(&mine, 1, MPI_INT, got, 1, MPI_INT, g, MPI_INFO_NULL, &q);
    }, what);
    p.check(what);
    if (f == "persistent") h.check(Cart_start(&q) == MPI_SUCCESS, what + ": start");
    h.check(Cart_wait(&q) == MPI_SUCCESS && ring_gathered(h, got), what + ": the call's data");
    if (q != CART_REQUEST_NULL) Cart_request_free(&q);
    MPI_Comm_free(&g);
  }
}

// A blocking or non-blocking call with a combining algorithm forced constructs its pattern first
// (point-to-point among neighbours, or grid lines), before any agreement. The state is created
// beforehand by a persistent init that runs linear (Info), which constructs nothing.
void graph_construction(Harness& h) {
  CartPending p(h);
  const int mine = h.rank + 7;
  MPI_Info linear;
  MPI_Info_create(&linear);
  MPI_Info_set(linear, "cartplan_algorithm", "linear");
  const std::pair<const char*, int> algorithms[] = {{"pairing", CART_GRAPH_PAIRING}, {"cumulative", CART_GRAPH_CUMULATIVE}, {"grid", CART_GRAPH_GRID}};
  for (const auto& [algorithm, code] : algorithms) {
    for (const bool blocking : {true, false}) {
      const std::string what = std::string("construction/") + algorithm + (blocking ? "/blocking" : "/nonblocking");
      if (!wanted(what)) continue;
      MPI_Comm g = ring(h, algorithm);
      int got[2] = {-1, -1};
      Cart_Request q = CART_REQUEST_NULL;
      h.check(Cart_graph_neighbor_allgather_init(&mine, 1, MPI_INT, got, 1, MPI_INT, g, linear, &q) == MPI_SUCCESS, what + ": linear init");
      Cart_request_free(&q);
      p.start();
      rank0_late(h, &p.q, [&] {
        return blocking ? Cart_graph_neighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, g)
                        : Cart_graph_ineighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, g, &q);
      }, what);
      if (!blocking) {
        int ran = -1;
        Cart_graph_request_algorithm(q, &ran);
        h.check(ran == code, what + ": runs the algorithm forced");
        h.check(Cart_wait(&q) == MPI_SUCCESS, what + ": wait");
      }
      h.check(ring_gathered(h, got), what + ": data");
      p.check(what);
      MPI_Comm_free(&g);
    }
  }
  MPI_Info_free(&linear);
}

// A blocking v call (allgatherv) with a combining algorithm forced learns its temp slots' sizes
// first, point-to-point along the schedule: with reuse off (set_size_reuse(false), the v bench's
// baseline) a size pass (graph_sizes.h) in every call, with reuse on the previous call's sizes
// (graph_sized_calls.h). Once the pattern exists that is the call's first wait for its peers: the
// same call made with nothing pending constructs it beforehand. Checks the pass ran (its counter).
void graph_sizes(Harness& h) {
  CartPending p(h);
  const int mine = h.rank + 7, counts[2] = {1, 1}, displs[2] = {0, 1};
  for (const char* algorithm : {"pairing", "cumulative", "grid"}) {
    for (const bool reuse : {false, true}) {
      const std::string what = std::string("sizes/") + algorithm + (reuse ? "/reuse" : "/pass");
      if (!wanted(what)) continue;
      cartplan::mpi::set_size_reuse(reuse);
      MPI_Comm g = ring(h, algorithm);
      int got[2] = {-1, -1};
      h.check(Cart_graph_neighbor_allgatherv(&mine, 1, MPI_INT, got, counts, displs, MPI_INT, g) == MPI_SUCCESS && ring_gathered(h, got),
              what + ": the call that constructs the pattern");
      got[0] = got[1] = -1;
      const std::uint64_t passes = cartplan::mpi::size_passes_started();
      p.start();
      rank0_late(h, &p.q, [&] { return Cart_graph_neighbor_allgatherv(&mine, 1, MPI_INT, got, counts, displs, MPI_INT, g); }, what);
      h.check(ring_gathered(h, got), what + ": data");
      if (!reuse) h.check(cartplan::mpi::size_passes_started() == passes + 1, what + ": the call ran a size pass");
      p.check(what);
      MPI_Comm_free(&g);
    }
  }
  cartplan::mpi::set_size_reuse(true);
}

// Making a communicator: Cart_graph_comm_create_adjacent (as MPI's distributed graph, and as an
// attribute of a duplicate) and Cart_neighborhood_create start with collectives over the
// communicator they are made from. The new communicator then runs a call, checked.
void comm_creation(Harness& h) {
  CartPending p(h);
  const int mine = h.rank + 7, left = (h.rank + h.size - 1) % h.size, right = (h.rank + 1) % h.size;
  const int in[2] = {left, right}, out[2] = {right, left};
  for (const char* way : {"dist_graph", "attribute"}) {
    const std::string what = std::string("comm/graph_adjacent/") + way;
    if (!wanted(what)) continue;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cartplan_graph_comm", way);
    MPI_Comm g = MPI_COMM_NULL;
    p.start();
    rank0_late(h, &p.q, [&] { return Cart_graph_comm_create_adjacent(MPI_COMM_WORLD, 2, in, 2, out, info, &g); }, what);
    p.check(what);
    MPI_Info_free(&info);
    int got[2] = {-1, -1};
    h.check(Cart_graph_neighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, g) == MPI_SUCCESS && ring_gathered(h, got), what + ": a call on it");
    MPI_Comm_free(&g);
  }
  if (!wanted("comm/neighborhood")) return;
  int dims[2] = {0, 0}, periods[2] = {1, 1}, t = 4;
  MPI_Dims_create(h.size, 2, dims);
  static const int faces[8] = {-1, 0, 1, 0, 0, -1, 0, 1};
  MPI_Comm cart = MPI_COMM_NULL;
  p.start();
  rank0_late(h, &p.q, [&] { return Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, t, faces, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &cart); },
             "comm/neighborhood");
  p.check("comm/neighborhood");
  std::vector<int> got(4, -1), want(4, -2);
  h.check(Cart_allgather(&mine, 1, MPI_INT, got.data(), 1, MPI_INT, cart) == MPI_SUCCESS, "comm/neighborhood: a call on it");
  int coords[2];
  MPI_Cart_coords(cart, h.rank, 2, coords);
  for (int i = 0; i < 4; ++i) {  // block i: rank + 7 of the process at -offset[i]
    const int at[2] = {(coords[0] - faces[2 * i] + dims[0]) % dims[0], (coords[1] - faces[2 * i + 1] + dims[1]) % dims[1]};
    int from = 0;
    MPI_Cart_rank(cart, at, &from);
    want[static_cast<std::size_t>(i)] = from + 7;
  }
  h.check(got == want, "comm/neighborhood: the call's data");
  MPI_Comm_free(&cart);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  if (argc > 1) g_only = argv[1];
  if (wanted("cartesian")) cartesian(h);
  if (wanted("graph")) graph(h);
  graph_creation(h);
  graph_construction(h);
  graph_sizes(h);
  comm_creation(h);
  return h.finish("agreement_progress_test");
}
