// MPI test of a first persistent auto init whose outcome rides in auto's table reduction: a
// failure on one rank only is the same error on every rank, with no request anywhere, and the
// communicator still works afterwards. (a) An uncommitted derived send type on rank 0 only (its
// copy fails before any row is made). (b) A failure injected after one row's exchange was made
// (CARTPLAN_TEST_FAIL=prebuilt-<algorithm>, on the last rank): the init fails everywhere when
// auto picks that row, and succeeds and delivers when it picks another. Two cost models (read at
// the state's creation, inside the init) make auto pick a grid (messages expensive) and linear
// (bytes expensive) from 4 ranks on, so both outcomes are exercised. Data is rank-dependent.
#include <mpi.h>

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

// The complete graph without self edges: in and out lists are every other rank, ascending.
MPI_Comm complete_graph(const Harness& h, std::vector<int>* peers) {
  peers->clear();
  for (int q = 0; q < h.size; ++q)
    if (q != h.rank) peers->push_back(q);
  const int n = static_cast<int>(peers->size());
  MPI_Comm g = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, n, peers->data(), MPI_UNWEIGHTED, n, peers->data(), MPI_UNWEIGHTED,
                                 MPI_INFO_NULL, 0, &g);
  MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
  return g;
}

// Starts `req` three times: block from s to r is 1000 s + r + 10 epoch (one int).
bool delivers(const Harness& h, const std::vector<int>& peers, std::vector<int>& send, const std::vector<int>& recv,
              Cart_Request* req) {
  bool right = true;
  for (int epoch = 0; epoch < 3; ++epoch) {
    for (std::size_t k = 0; k < peers.size(); ++k) send[k] = 1000 * h.rank + peers[k] + 10 * epoch;
    right = right && Cart_start(req) == MPI_SUCCESS && Cart_wait(req) == MPI_SUCCESS;
    for (std::size_t k = 0; k < peers.size(); ++k) right = right && recv[k] == 1000 * peers[k] + h.rank + 10 * epoch;
  }
  return right;
}

// (a) The first graph collective on a fresh communicator is an auto alltoall init whose send type
// is an uncommitted contiguous int on rank 0 (MPI_INT elsewhere: the same 4 bytes).
void uncommitted_on_rank0(Harness& h) {
  std::vector<int> peers;
  MPI_Comm g = complete_graph(h, &peers);
  const std::size_t n = std::max<std::size_t>(peers.size(), 1);
  std::vector<int> send(n, 0), recv(n, -1);
  MPI_Datatype uncommitted = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(1, MPI_INT, &uncommitted);
  const MPI_Datatype sendtype = h.rank == 0 ? uncommitted : MPI_INT;
  Cart_Request req = CART_REQUEST_NULL;
  const int cls = error_class(Cart_graph_neighbor_alltoall_init(send.data(), 1, sendtype, recv.data(), 1, MPI_INT, g, MPI_INFO_NULL, &req));
  const std::string message = Cart_error_message();
  h.check(cls != MPI_SUCCESS, "uncommitted send type on rank 0: init fails (" + message + ")");
  h.check(same_everywhere(cls), "uncommitted send type on rank 0: the same class on every rank (" + std::to_string(cls) + ")");
  h.check(req == CART_REQUEST_NULL, "uncommitted send type on rank 0: no request");
  if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  MPI_Type_free(&uncommitted);
  const int rc = Cart_graph_neighbor_alltoall_init(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, g, MPI_INFO_NULL, &req);
  h.check(rc == MPI_SUCCESS && delivers(h, peers, send, recv, &req), "uncommitted send type on rank 0: a good init then delivers");
  if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  MPI_Comm_free(&g);
}

const char* algorithm_name(int algorithm) {
  switch (algorithm) {
    case CART_GRAPH_LINEAR: return "linear";
    case CART_GRAPH_PAIRING: return "pairing";
    case CART_GRAPH_CUMULATIVE: return "cumulative";
    case CART_GRAPH_GRID: return "grid";
  }
  return "?";
}

// A first auto alltoall init on a fresh complete graph under `model`, with CARTPLAN_TEST_FAIL =
// `fail` on the last rank (nullptr: none). Returns its class; *algorithm gets the pick (-1 when
// it failed), *right whether it delivered.
int first_init(Harness& h, const std::string& model, const char* fail, int* algorithm, bool* right, std::string* message) {
  std::vector<int> peers;
  MPI_Comm g = complete_graph(h, &peers);
  const std::size_t n = std::max<std::size_t>(peers.size(), 1);
  std::vector<int> send(n, 0), recv(n, -1);
  setenv("CARTPLAN_COST_MODEL", model.c_str(), 1);
  if (fail && h.rank == h.size - 1) setenv("CARTPLAN_TEST_FAIL", fail, 1);
  Cart_Request req = CART_REQUEST_NULL;
  const int cls = error_class(Cart_graph_neighbor_alltoall_init(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, g, MPI_INFO_NULL, &req));
  *message = Cart_error_message();
  unsetenv("CARTPLAN_TEST_FAIL");
  unsetenv("CARTPLAN_COST_MODEL");
  *algorithm = -1;
  *right = false;
  if (req != CART_REQUEST_NULL) {
    Cart_graph_request_algorithm(req, algorithm);
    *right = cls == MPI_SUCCESS && delivers(h, peers, send, recv, &req);
    Cart_request_free(&req);
  }
  MPI_Comm_free(&g);
  return cls;
}

// (b) Per model: the pick without a failure, then a failure injected after each row's exchange.
void prebuilt_failure(Harness& h, const char* label, double alpha_us, double beta_us_per_byte, int expected_pick) {
  const std::string model = cartplan::mpitest::write_cost_model(h.rank, "auto_outcome_model", alpha_us, beta_us_per_byte);
  const std::string m = std::string(label) + " model: ";
  int pick = -1;
  bool right = false;
  std::string message;
  h.check(first_init(h, model, nullptr, &pick, &right, &message) == MPI_SUCCESS && right, m + "init without a failure delivers");
  h.check(h.size < 4 || pick == expected_pick, m + "picks " + algorithm_name(expected_pick) + " (picked " + std::to_string(pick) + ")");
  for (int row : {CART_GRAPH_LINEAR, CART_GRAPH_PAIRING, CART_GRAPH_CUMULATIVE, CART_GRAPH_GRID}) {
    const std::string step = std::string("prebuilt-") + algorithm_name(row);
    const std::string what = m + step + " on rank " + std::to_string(h.size - 1);
    int got = -1;
    const int cls = first_init(h, model, step.c_str(), &got, &right, &message);
    h.check(same_everywhere(cls), what + ": the same class on every rank");
    if (row == pick) {
      h.check(cls == MPI_ERR_OTHER && got == -1, what + ": the picked row failed, init fails (class " + std::to_string(cls) + ")");
      h.check(h.rank != h.size - 1 || message.find("CARTPLAN_TEST_FAIL=" + step) != std::string::npos,
              what + ": the failing rank names it (" + message + ")");
    } else {
      h.check(cls == MPI_SUCCESS && got == pick && right, what + ": a row not picked failed, init delivers (" + message + ")");
    }
  }
  std::remove(model.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  uncommitted_on_rank0(h);
  prebuilt_failure(h, "message-heavy", 10.0, 0.000001, CART_GRAPH_GRID);
  prebuilt_failure(h, "byte-heavy", 0.001, 10.0, CART_GRAPH_LINEAR);
  return h.finish("graph_auto_outcome_test");
}
