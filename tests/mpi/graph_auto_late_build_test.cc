// MPI test of a first persistent auto init whose picked row is too large to make before the pick
// (graph_collective.cc, Prebuilt::temp_budget): that row is built after the table, on every rank,
// and its outcome agreed afterwards. On 4 ranks (the 2x2 virtual grid) the graph 0 <-> 1 <-> 2
// leaves rank 3 without edges, yet grid routes rank 1's block for rank 2 through it (one temp
// slot): with 2 MiB blocks that slot is above rank 3's budget (1 MiB, it has no blocks of its
// own), so rank 3 never makes the grid row before the pick. A cost model where only messages cost
// makes auto pick grid. What shows the row was built late: CARTPLAN_TEST_FAIL=prebuilt-grid on
// every rank fails only rows made before the pick, and the init still succeeds (with 16-byte
// blocks, where every rank makes the row first, the same failure fails the init: the control).
// Then: the late build delivers rank-dependent data over several starts; a late build that fails
// on one rank only (CARTPLAN_TEST_FAIL=late-grid) or runs out of memory (a 2^50-byte datatype:
// its temp slots cannot be had) is the same error class on every rank, no request anywhere, no
// hang (the run's time limit fails it), and the communicator delivers afterwards.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::error_class;
using cartplan::mpitest::Harness;
using cartplan::mpitest::same_everywhere;

constexpr int kBigInts = 1 << 19;  // 2 MiB blocks: the relay's temp slot is over its budget
constexpr int kSmallInts = 4;      // 16-byte blocks: every row fits every budget

// 0 <-> 1 <-> 2; ranks from 3 on have no edges.
MPI_Comm relay_graph(const Harness& h, std::vector<int>* peers) {
  peers->clear();
  if (h.rank == 0 || h.rank == 2) peers->push_back(1);
  if (h.rank == 1) *peers = {0, 2};
  const int n = static_cast<int>(peers->size());
  MPI_Comm g = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, n, peers->data(), MPI_UNWEIGHTED, n, peers->data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                 &g);
  MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
  return g;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

int value(int from, int to, int epoch, int k) { return (from * 7 + to * 3 + epoch * 11) * 1000003 + k; }

// An alltoall request of `ints` ints per block on g.
struct Blocks {
  std::vector<int> peers, send, recv;
  int ints = 0;
};

// Starts `req` three times: block k of the block from s to r is value(s, r, epoch, k).
bool delivers(const Harness& h, Blocks& b, Cart_Request* req) {
  bool right = true;
  for (int epoch = 0; epoch < 3 && right; ++epoch) {
    for (std::size_t e = 0; e < b.peers.size(); ++e)
      for (int k = 0; k < b.ints; ++k) b.send[e * b.ints + k] = value(h.rank, b.peers[e], epoch, k);
    std::fill(b.recv.begin(), b.recv.end(), -1);
    right = Cart_start(req) == MPI_SUCCESS && Cart_wait(req) == MPI_SUCCESS;
    for (std::size_t e = 0; e < b.peers.size() && right; ++e)
      for (int k = 0; k < b.ints && right; ++k) right = b.recv[e * b.ints + k] == value(b.peers[e], h.rank, epoch, k);
  }
  return right;
}

// An auto init of ints-int blocks on g (already used or fresh): its class; with success, the
// algorithm it runs and whether it delivered, *right; the request is freed.
int init_and_run(const Harness& h, MPI_Comm g, const std::vector<int>& peers, int ints, int* algorithm, bool* right) {
  const std::size_t n = std::max<std::size_t>(peers.size(), 1) * static_cast<std::size_t>(ints);  // one block without edges
  Blocks b{peers, std::vector<int>(n), std::vector<int>(n), ints};
  Cart_Request req = CART_REQUEST_NULL;
  const int cls =
      error_class(Cart_graph_neighbor_alltoall_init(b.send.data(), ints, MPI_INT, b.recv.data(), ints, MPI_INT, g, MPI_INFO_NULL, &req));
  *algorithm = -1;
  *right = false;
  if (req != CART_REQUEST_NULL) {
    Cart_graph_request_algorithm(req, algorithm);
    *right = cls == MPI_SUCCESS && delivers(h, b, &req);
    Cart_request_free(&req);
  }
  return cls;
}

// The first init on a fresh relay graph with `fail` as CARTPLAN_TEST_FAIL (on `fail_rank`, or on
// every rank when -1; nullptr: none).
int first_init(Harness& h, const std::string& model, int ints, const char* fail, int fail_rank, int* algorithm, bool* right,
               std::string* message) {
  std::vector<int> peers;
  MPI_Comm g = relay_graph(h, &peers);
  setenv("CARTPLAN_COST_MODEL", model.c_str(), 1);  // read at the graph state's creation, inside the init
  if (fail && (fail_rank < 0 || fail_rank == h.rank)) setenv("CARTPLAN_TEST_FAIL", fail, 1);
  const int cls = init_and_run(h, g, peers, ints, algorithm, right);
  *message = cls == MPI_SUCCESS ? "" : Cart_error_message();
  unsetenv("CARTPLAN_TEST_FAIL");
  unsetenv("CARTPLAN_COST_MODEL");
  MPI_Comm_free(&g);
  return cls;
}

// The control and the late build: the pick, and whether prebuilt-grid failures reach the init.
void picked_then_built(Harness& h, const std::string& model) {
  int algorithm = -1;
  bool right = false;
  std::string message;
  int cls = first_init(h, model, kSmallInts, nullptr, -1, &algorithm, &right, &message);
  h.check(cls == MPI_SUCCESS && algorithm == CART_GRAPH_GRID && right, "16-byte blocks: auto picks grid and delivers (" + message + ")");
  cls = first_init(h, model, kSmallInts, "prebuilt-grid", -1, &algorithm, &right, &message);
  h.check(cls == MPI_ERR_OTHER && same_everywhere(cls) && contains(message, "CARTPLAN_TEST_FAIL=prebuilt-grid"),
          "control, 16-byte blocks: every rank made grid before the pick, so prebuilt-grid fails the init (class " + std::to_string(cls) + ")");
  cls = first_init(h, model, kBigInts, nullptr, -1, &algorithm, &right, &message);
  h.check(cls == MPI_SUCCESS && algorithm == CART_GRAPH_GRID && right, "2 MiB blocks: grid built after the table delivers (" + message + ")");
  cls = first_init(h, model, kBigInts, "prebuilt-grid", -1, &algorithm, &right, &message);
  h.check(cls == MPI_SUCCESS && same_everywhere(cls) && algorithm == CART_GRAPH_GRID && right,
          "2 MiB blocks: prebuilt-grid is not seen (rank 3 did not make the row before the pick; all build it after), grid delivers (" +
              message + ")");
}

// A late build that fails on rank 1 only: every rank fails alike, then a second init delivers.
void late_failure(Harness& h, const std::string& model) {
  std::vector<int> peers;
  MPI_Comm g = relay_graph(h, &peers);
  setenv("CARTPLAN_COST_MODEL", model.c_str(), 1);
  if (h.rank == 1) setenv("CARTPLAN_TEST_FAIL", "late-grid", 1);
  int algorithm = -1;
  bool right = false;
  const int cls = init_and_run(h, g, peers, kBigInts, &algorithm, &right);
  const std::string message = cls == MPI_SUCCESS ? "" : Cart_error_message();
  unsetenv("CARTPLAN_TEST_FAIL");
  unsetenv("CARTPLAN_COST_MODEL");
  h.check(cls == MPI_ERR_OTHER && same_everywhere(cls) && algorithm == -1,
          "late-grid on rank 1: MPI_ERR_OTHER on every rank, no request (class " + std::to_string(cls) + ", " + message + ")");
  h.check(contains(message, h.rank == 1 ? "CARTPLAN_TEST_FAIL=late-grid" : "another rank"), "late-grid on rank 1: message '" + message + "'");
  const int again = init_and_run(h, g, peers, kBigInts, &algorithm, &right);
  h.check(again == MPI_SUCCESS && algorithm == CART_GRAPH_GRID && right, "after the failed late build: grid delivers");
  MPI_Comm_free(&g);
}

// Blocks of 2^50 bytes (contiguous bytes: its size, not only its extent): the late build's temp
// slots cannot be had. `info`: the init's (a forced grid), or MPI_INFO_NULL (auto).
void out_of_memory(Harness& h, const std::string& model, MPI_Info info, const std::string& what) {
  std::vector<int> peers;
  MPI_Comm g = relay_graph(h, &peers);
  MPI_Datatype chunk = MPI_DATATYPE_NULL, huge = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(1 << 25, MPI_BYTE, &chunk);
  MPI_Type_contiguous(1 << 25, chunk, &huge);
  MPI_Type_commit(&huge);
  MPI_Count size = 0;
  MPI_Type_size_x(huge, &size);
  h.check(size == MPI_Count{1} << 50, what + ": the datatype has 2^50 bytes");
  std::vector<char> send(16), recv(16);  // never started: init only looks at the addresses
  setenv("CARTPLAN_COST_MODEL", model.c_str(), 1);
  Cart_Request req = CART_REQUEST_NULL;
  const int cls = error_class(Cart_graph_neighbor_alltoall_init(send.data(), 1, huge, recv.data(), 1, huge, g, info, &req));
  const std::string message = cls == MPI_SUCCESS ? "" : Cart_error_message();
  unsetenv("CARTPLAN_COST_MODEL");
  h.check(cls == MPI_ERR_NO_MEM && same_everywhere(cls) && req == CART_REQUEST_NULL,
          what + ": MPI_ERR_NO_MEM on every rank, no request (class " + std::to_string(cls) + ", " + message + ")");
  // Ranks 0 and 3 hold grid's temp slots (relays of 2 -> 1 and 1 -> 2); 1 and 2 hold none.
  const bool relays = h.rank == 0 || h.rank == 3;
  h.check(contains(message, relays ? "out of memory making the grid exchange" : "another rank"), what + ": message '" + message + "'");
  h.check(!relays || contains(message, "temp slot of " + std::to_string(std::int64_t{1} << 50) + " bytes"),
          what + ": the relay's message names its 2^50-byte temp slot ('" + message + "')");
  if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  MPI_Type_free(&huge);
  MPI_Type_free(&chunk);
  int algorithm = -1;
  bool right = false;
  const int again = init_and_run(h, g, peers, kBigInts, &algorithm, &right);
  h.check(again == MPI_SUCCESS && algorithm == CART_GRAPH_GRID && right, what + ": then a good init delivers with grid");
  MPI_Comm_free(&g);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  h.check(h.size == 4, "runs on 4 ranks (the 2x2 virtual grid routes through rank 3)");
  if (h.size == 4) {
    // Only messages cost, so grid (fewer messages) is the pick.
    const std::string model = cartplan::mpitest::write_cost_model(h.rank, "late_build_model", 1000, 0);
    picked_then_built(h, model);
    late_failure(h, model);
    out_of_memory(h, model, MPI_INFO_NULL, "auto, 2^50-byte blocks");
    MPI_Info grid;
    MPI_Info_create(&grid);
    MPI_Info_set(grid, "cartplan_algorithm", "grid");
    out_of_memory(h, model, grid, "forced grid, 2^50-byte blocks");
    MPI_Info_free(&grid);
    std::remove(model.c_str());
  }
  return h.finish("graph_auto_late_build_test");
}
