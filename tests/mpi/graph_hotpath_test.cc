// MPI test that the graph collectives make no global collective on any per-call path: the
// program counts every global collective (count_collectives.h). The first graph collective on
// a communicator creates cartplan's state there (one MPI_Comm_idup and one MPI_Iallreduce that
// agrees on the state, and with auto one more for the price table); after that blocking,
// non-blocking calls and Cart_start/Cart_wait of persistent requests make none (the v and w forms
// included), and each _init exactly two MPI_Allreduce (its arguments before building, its outcome
// after; an auto init that agrees auto's table agrees on its outcome in the table's reduction;
// a v or w init with a forced combining algorithm makes a third, on its pattern: not counted here).
// A persistent init that is the first graph collective on its communicator agrees on the state's
// creation inside its own first MPI_Allreduce: one MPI_Comm_idup and two MPI_Iallreduce, auto too
// (it was two MPI_Comm_dup and three MPI_Allreduce, auto four). cartplan's agreements are
// MPI_Iallreduce and its duplicates MPI_Comm_idup (progressing_wait.h); both are counted.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/count_collectives.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;

// Every rank: sources {left, left2, me}, destinations {right, right2, me} on a ring (parallel
// edges at small np), with Info cartplan_algorithm = algo and theta 1.
MPI_Comm make_graph(Harness& h, const char* algo, std::vector<int>* in) {
  const int p = h.size, r = h.rank;
  *in = {(r + p - 1) % p, (r + p - 2) % p, r};
  std::vector<int> out = {(r + 1) % p, (r + 2) % p, r};
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", algo);
  MPI_Info_set(info, "cartplan_theta", "1");
  MPI_Comm g;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, in->data(), MPI_UNWEIGHTED, 3, out.data(), MPI_UNWEIGHTED, info, 0, &g);
  MPI_Info_free(&info);
  return g;
}

bool allgather_right(const std::vector<int>& in, const std::vector<int>& r, int epoch) {
  for (std::size_t j = 0; j < in.size(); ++j)
    if (r[j] != in[j] * 100 + epoch) return false;
  return true;
}

void check_algorithm(Harness& h, const char* algo) {
  std::vector<int> in;
  MPI_Comm g = make_graph(h, algo, &in);
  const std::string a = std::string(algo) + ": ";
  std::vector<int> s(9), r(9, -1);  // alltoall with 3 ints per block below: 3 blocks of 3
  const long at_start = global_collectives;
  s[0] = h.rank * 100;
  h.check(Cart_graph_neighbor_allgather(s.data(), 1, MPI_INT, r.data(), 1, MPI_INT, g) == MPI_SUCCESS && allgather_right(in, r, 0),
          a + "first call");
  const long creation = global_collectives - at_start;
  const bool is_auto = std::string(algo) == "auto";
  h.check(creation == 2 + (is_auto ? 1 : 0),
          a + "creation makes one MPI_Comm_idup and one MPI_Iallreduce (auto one more), made " + std::to_string(creation));
  const long before = global_collectives;
  for (int epoch = 1; epoch <= 20; ++epoch) {
    s[0] = h.rank * 100 + epoch;
    h.check(Cart_graph_neighbor_allgather(s.data(), 1, MPI_INT, r.data(), 1, MPI_INT, g) == MPI_SUCCESS && allgather_right(in, r, epoch),
            a + "blocking allgather");
    h.check(Cart_graph_neighbor_alltoall(s.data(), 1, MPI_INT, r.data(), 1, MPI_INT, g) == MPI_SUCCESS, a + "blocking alltoall");
    Cart_Request q = CART_REQUEST_NULL;
    h.check(Cart_graph_ineighbor_allgather(s.data(), 1, MPI_INT, r.data(), 1, MPI_INT, g, &q) == MPI_SUCCESS && Cart_wait(&q) == MPI_SUCCESS &&
                allgather_right(in, r, epoch),
            a + "non-blocking allgather");
    h.check(Cart_graph_ineighbor_alltoall(s.data(), 3, MPI_INT, r.data(), 3, MPI_INT, g, &q) == MPI_SUCCESS && Cart_wait(&q) == MPI_SUCCESS,
            a + "non-blocking alltoall");
    // v forms: a combining schedule's size pass talks along the schedule's edges only.
    const int counts[3] = {1, 2, 1}, displs[3] = {0, 1, 3};
    const int ones[3] = {1, 1, 1}, steps[3] = {0, 1, 2};
    s[0] = h.rank * 100 + epoch;
    h.check(Cart_graph_neighbor_allgatherv(s.data(), 1, MPI_INT, r.data(), ones, steps, MPI_INT, g) == MPI_SUCCESS && allgather_right(in, r, epoch),
            a + "blocking allgatherv");
    h.check(Cart_graph_ineighbor_alltoallv(s.data(), counts, displs, MPI_INT, r.data(), counts, displs, MPI_INT, g, &q) == MPI_SUCCESS &&
                Cart_wait(&q) == MPI_SUCCESS,
            a + "non-blocking alltoallv");
    // The w form: per-edge types, the same size pass as the v forms.
    const MPI_Aint bytes[3] = {0, 4, 8};
    const MPI_Datatype types[3] = {MPI_INT, MPI_INT, MPI_INT};
    h.check(Cart_graph_neighbor_alltoallw(s.data(), ones, bytes, types, r.data(), ones, bytes, types, g) == MPI_SUCCESS,
            a + "blocking alltoallw");
    h.check(Cart_graph_ineighbor_alltoallw(s.data(), ones, bytes, types, r.data(), ones, bytes, types, g, &q) == MPI_SUCCESS &&
                Cart_wait(&q) == MPI_SUCCESS,
            a + "non-blocking alltoallw");
  }
  h.check(global_collectives == before, a + "blocking and non-blocking calls make no global collective (" +
                                            std::to_string(global_collectives - before) + " made)");
  const long before_init = global_collectives;
  Cart_Request p = CART_REQUEST_NULL;
  h.check(Cart_graph_neighbor_allgather_init(s.data(), 1, MPI_INT, r.data(), 1, MPI_INT, g, MPI_INFO_NULL, &p) == MPI_SUCCESS, a + "init");
  // Auto's default list in a persistent init is the grids, not the blocking calls' seed 003 pair:
  // its table is agreed once more, at this first init (later inits reuse it), with the outcome.
  const long init_reductions = 2;
  h.check(global_collectives - before_init == init_reductions,
          a + "init makes " + std::to_string(init_reductions) + " MPI_Allreduce, made " + std::to_string(global_collectives - before_init));
  Cart_Request second = CART_REQUEST_NULL;
  const long before_second = global_collectives;
  h.check(Cart_graph_neighbor_allgather_init(s.data(), 1, MPI_INT, r.data(), 1, MPI_INT, g, MPI_INFO_NULL, &second) == MPI_SUCCESS, a + "second init");
  h.check(global_collectives - before_second == 2, a + "a second init makes two MPI_Allreduce (the table is kept), made " +
                                                       std::to_string(global_collectives - before_second));
  Cart_request_free(&second);
  const long after_init = global_collectives;
  for (int epoch = 0; epoch < 20; ++epoch) {
    s[0] = h.rank * 100 + epoch;
    h.check(Cart_start(&p) == MPI_SUCCESS && Cart_wait(&p) == MPI_SUCCESS && allgather_right(in, r, epoch), a + "persistent");
  }
  h.check(global_collectives == after_init, a + "Cart_start/Cart_wait make no global collective");
  Cart_request_free(&p);
  MPI_Comm_free(&g);
}

// The first graph collective on the communicator is a persistent init: the state's creation is
// agreed in init's agreement. The request delivers, and a blocking call afterwards finds the
// state (no creation again).
void check_first_init(Harness& h, const char* algo) {
  std::vector<int> in;
  MPI_Comm g = make_graph(h, algo, &in);
  const std::string a = std::string(algo) + ", init first: ";
  std::vector<int> s(9), r(9, -1);
  const long at_start = global_collectives;
  Cart_Request p = CART_REQUEST_NULL;
  h.check(Cart_graph_neighbor_allgather_init(s.data(), 1, MPI_INT, r.data(), 1, MPI_INT, g, MPI_INFO_NULL, &p) == MPI_SUCCESS, a + "init");
  const long made = global_collectives - at_start, expected = 3;
  h.check(made == expected, a + "creation and init make one MPI_Comm_idup and two MPI_Iallreduce (auto's table with the outcome), made " +
                                std::to_string(made));
  for (int epoch = 0; epoch < 5; ++epoch) {
    s[0] = h.rank * 100 + epoch;
    h.check(Cart_start(&p) == MPI_SUCCESS && Cart_wait(&p) == MPI_SUCCESS && allgather_right(in, r, epoch), a + "persistent");
  }
  Cart_request_free(&p);
  const long before = global_collectives;
  s[0] = h.rank * 100 + 7;
  h.check(Cart_graph_neighbor_allgather(s.data(), 1, MPI_INT, r.data(), 1, MPI_INT, g) == MPI_SUCCESS && allgather_right(in, r, 7),
          a + "blocking call after it");
  const long blocking = global_collectives - before, blocking_expected = std::string(algo) == "auto" ? 1 : 0;  // auto's blocking table
  h.check(blocking == blocking_expected, a + "the blocking call finds the state made by init (made " + std::to_string(blocking) + " collectives)");
  MPI_Comm_free(&g);
}

// A first auto alltoallv init: the same three global collectives when it runs linear; one more
// (the outcome) after a combining pick, whose size pass runs after the table. On the complete
// graph with a model where a message costs 10 us and a byte next to nothing (read at the
// state's creation, inside this init), auto picks a grid from 4 ranks on. The block from s to
// r has 1 + (s + r) % 3 ints of 1000 s + 10 r + epoch.
void check_first_init_v(Harness& h) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string model = std::string(dir && *dir ? dir : "/tmp") + "/hotpath_model_" + std::to_string(h.rank) + ".json";
  if (FILE* f = std::fopen(model.c_str(), "w")) {
    std::fputs("{\"schema\": \"cartplan.cost_model/1\", \"alpha_us\": 10.0, \"beta_us_per_byte\": 0.000001}\n", f);
    std::fclose(f);
  }
  std::vector<int> peers, counts, displs;
  for (int q = 0; q < h.size; ++q)
    if (q != h.rank) {
      displs.push_back(displs.empty() ? 0 : displs.back() + counts.back());
      peers.push_back(q);
      counts.push_back(1 + (q + h.rank) % 3);
    }
  const int n = static_cast<int>(peers.size());
  MPI_Comm g;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, n, peers.data(), MPI_UNWEIGHTED, n, peers.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
  std::vector<int> s(static_cast<std::size_t>(3 * n + 1)), r(s.size(), -1);
  setenv("CARTPLAN_COST_MODEL", model.c_str(), 1);
  const long at_start = global_collectives;
  Cart_Request q = CART_REQUEST_NULL;
  h.check(Cart_graph_neighbor_alltoallv_init(s.data(), counts.data(), displs.data(), MPI_INT, r.data(), counts.data(), displs.data(), MPI_INT,
                                             g, MPI_INFO_NULL, &q) == MPI_SUCCESS,
          "auto alltoallv, init first: init");
  const long made = global_collectives - at_start;
  unsetenv("CARTPLAN_COST_MODEL");
  std::remove(model.c_str());  // read at the state's creation, inside the init
  int algorithm = -1;
  Cart_graph_request_algorithm(q, &algorithm);
  const long expected = algorithm == CART_GRAPH_LINEAR ? 3 : 4;
  h.check(made == expected, "auto alltoallv, init first: one MPI_Comm_idup and " + std::to_string(expected - 1) +
                                " MPI_Iallreduce (algorithm " + std::to_string(algorithm) + "), made " + std::to_string(made));
  h.check(h.size < 4 || algorithm == CART_GRAPH_GRID, "auto alltoallv, init first: the message-heavy model picks a grid");
  for (int epoch = 0; epoch < 3; ++epoch) {
    const auto at = [&](int k, int e) { return static_cast<std::size_t>(displs[static_cast<std::size_t>(k)] + e); };
    const auto count = [&](int k) { return counts[static_cast<std::size_t>(k)]; };
    const auto peer = [&](int k) { return peers[static_cast<std::size_t>(k)]; };
    for (int k = 0; k < n; ++k)
      for (int e = 0; e < count(k); ++e) s[at(k, e)] = 1000 * h.rank + 10 * peer(k) + epoch;
    bool right = Cart_start(&q) == MPI_SUCCESS && Cart_wait(&q) == MPI_SUCCESS;
    for (int k = 0; k < n; ++k)
      for (int e = 0; e < count(k); ++e) right = right && r[at(k, e)] == 1000 * peer(k) + 10 * h.rank + epoch;
    h.check(right, "auto alltoallv, init first: delivers, epoch " + std::to_string(epoch));
  }
  Cart_request_free(&q);
  MPI_Comm_free(&g);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  for (const char* algo : {"linear", "pairing", "cumulative", "auto"}) check_algorithm(h, algo);
  for (const char* algo : {"linear", "pairing", "auto"}) check_first_init(h, algo);
  check_first_init_v(h);
  return h.finish("graph_hotpath_test");
}
