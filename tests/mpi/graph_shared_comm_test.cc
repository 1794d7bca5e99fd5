// MPI test that a graph communicator's one private communicator keeps the set-up's messages
// (pattern constructions, received from any rank on their own tag) apart from the collectives'
// (lane tags). On g, a grid persistent request p (several rounds at composite np) is started and
// progressed on odd ranks only, so its next round's messages are unexpected at even ranks while
// g constructs on the same private communicator: in epoch 0 a blocking auto call (seed 003's
// pair at theta 1, and its table), in epoch 2 a persistent init of cumulative at theta 2 (Info;
// its construction and init's agreements). On g2 a persistent pairing request and non-blocking
// calls run alongside (their pattern was constructed at p2's init, before the loop), and in
// epoch 1 an MPI_Comm_dup of g creates its state and constructs in a non-blocking call (on its
// own fresh private communicator, with g's and g2's requests in flight on theirs). Requests are
// completed in a rank-dependent order; every block is checked (rank- and epoch-dependent data).
#include <mpi.h>

#include <algorithm>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;

// Rank r sends to r+1, r+2 and 3r+1 (mod p, without itself, no repeats): rank-dependent degrees,
// so pairing finds friends.
std::vector<int> destinations(int r, int p) {
  std::vector<int> out;
  for (int d : {(r + 1) % p, (r + 2) % p, (3 * r + 1) % p})
    if (d != r && std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  return out;
}

struct Graph {
  std::vector<int> in, out;
  MPI_Comm comm = MPI_COMM_NULL;
};

Graph make_graph(const Harness& h, const char* algo) {
  Graph g;
  g.out = destinations(h.rank, h.size);
  for (int s = 0; s < h.size; ++s)
    for (int d : destinations(s, h.size))
      if (d == h.rank) g.in.push_back(s);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", algo);
  MPI_Info_set(info, "cartplan_theta", "1");
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(g.in.size()), g.in.data(), MPI_UNWEIGHTED,
                                 static_cast<int>(g.out.size()), g.out.data(), MPI_UNWEIGHTED, info, 0, &g.comm);
  MPI_Info_free(&info);
  return g;
}

// Alltoall, 2 ints per block: rank s's block for its j-th destination is {s, 1000 j + tag}.
void fill_alltoall(const Harness& h, const Graph& g, int tag, std::vector<int>* send) {
  send->assign(2 * g.out.size(), 0);
  for (std::size_t j = 0; j < g.out.size(); ++j) {
    (*send)[2 * j] = h.rank;
    (*send)[2 * j + 1] = static_cast<int>(1000 * j) + tag;
  }
}

bool alltoall_right(const Harness& h, const Graph& g, int tag, const std::vector<int>& recv) {
  for (std::size_t i = 0; i < g.in.size(); ++i) {
    const std::vector<int> theirs = destinations(g.in[i], h.size);
    const int j = static_cast<int>(std::find(theirs.begin(), theirs.end(), h.rank) - theirs.begin());
    if (recv[2 * i] != g.in[i] || recv[2 * i + 1] != 1000 * j + tag) return false;
  }
  return true;
}

// Allgather, 1 int: rank s sends 100 s + tag.
bool allgather_right(const Graph& g, int tag, const std::vector<int>& recv) {
  for (std::size_t i = 0; i < g.in.size(); ++i)
    if (recv[i] != 100 * g.in[i] + tag) return false;
  return true;
}

// Odd ranks test a request a rank-dependent number of times (progress in between), even ranks not.
void poke(const Harness& h, Cart_Request* q) {
  for (int k = 0; k < 2 + h.rank % 3 && h.rank % 2 == 1 && *q != CART_REQUEST_NULL; ++k) {
    int flag = 0;
    Cart_test(q, &flag);
  }
}

// A persistent allgather on g with Info cartplan_algorithm=cumulative and cartplan_theta=2 (a
// pattern g has not constructed: its calls so far ran at theta 1).
int cumulative_init(const Graph& g, int* send, int* recv, Cart_Request* c) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", "cumulative");
  MPI_Info_set(info, "cartplan_theta", "2");
  const int rc = Cart_graph_neighbor_allgather_init(send, 1, MPI_INT, recv, 1, MPI_INT, g.comm, info, c);
  MPI_Info_free(&info);
  return rc;
}

void run(Harness& h) {
  Graph g = make_graph(h, "auto"), g2 = make_graph(h, "pairing");
  const std::size_t in = std::max<std::size_t>(g.in.size(), 1), out = std::max<std::size_t>(g.out.size(), 1);
  std::vector<int> ps, pr(2 * in, -1), p2s(1), p2r(in, -1), bs(1), br(in, -1), qs(1), qr(in, -1), ds(1), dr(in, -1), cs(1), cr(in, -1);
  Cart_Request c = CART_REQUEST_NULL;
  fill_alltoall(h, g, 0, &ps);
  ps.resize(2 * out);
  Cart_Request p = CART_REQUEST_NULL, p2 = CART_REQUEST_NULL;
  // p runs the grid (several rounds): a rank that progressed it sends its next round's messages
  // to peers that have not posted their receives yet, which are then unexpected there while the
  // blocking call below constructs on the same private communicator.
  MPI_Info grid;
  MPI_Info_create(&grid);
  MPI_Info_set(grid, "cartplan_algorithm", "grid");
  h.check(Cart_graph_neighbor_alltoall_init(ps.data(), 2, MPI_INT, pr.data(), 2, MPI_INT, g.comm, grid, &p) == MPI_SUCCESS, "init on g");
  MPI_Info_free(&grid);
  h.check(Cart_graph_neighbor_allgather_init(p2s.data(), 1, MPI_INT, p2r.data(), 1, MPI_INT, g2.comm, MPI_INFO_NULL, &p2) == MPI_SUCCESS,
          "init on g2");
  MPI_Comm dup = MPI_COMM_NULL;
  for (int epoch = 0; epoch < 4; ++epoch) {
    fill_alltoall(h, g, epoch, &ps);
    ps.resize(2 * out);
    p2s[0] = 100 * h.rank + 10 + epoch;
    h.check(Cart_start(&p) == MPI_SUCCESS && Cart_start(&p2) == MPI_SUCCESS, "start");
    poke(h, &p);
    // Epoch 0: auto's blocking table on g (seed 003's pair: two constructions, one MPI_Allreduce)
    // while p's messages are in flight on g.
    bs[0] = 100 * h.rank + 20 + epoch;
    h.check(Cart_graph_neighbor_allgather(bs.data(), 1, MPI_INT, br.data(), 1, MPI_INT, g.comm) == MPI_SUCCESS &&
                allgather_right(g, 20 + epoch, br),
            "blocking allgather on g, epoch " + std::to_string(epoch));
    // Epoch 1: a duplicate of g creates its state and constructs in a non-blocking call.
    if (epoch == 1) MPI_Comm_dup(g.comm, &dup);
    // Epoch 2: a persistent init on g constructs cumulative at theta 2 while p is in flight on
    // g; c runs from then on.
    if (epoch == 2) h.check(cumulative_init(g, cs.data(), cr.data(), &c) == MPI_SUCCESS, "cumulative init on g");
    cs[0] = 100 * h.rank + 50 + epoch;
    if (c != CART_REQUEST_NULL) h.check(Cart_start(&c) == MPI_SUCCESS, "start c");
    Cart_Request q = CART_REQUEST_NULL, d = CART_REQUEST_NULL;
    qs[0] = 100 * h.rank + 30 + epoch;
    h.check(Cart_graph_ineighbor_allgather(qs.data(), 1, MPI_INT, qr.data(), 1, MPI_INT, g2.comm, &q) == MPI_SUCCESS, "non-blocking on g2");
    ds[0] = 100 * h.rank + 40 + epoch;
    if (dup != MPI_COMM_NULL)
      h.check(Cart_graph_ineighbor_allgather(ds.data(), 1, MPI_INT, dr.data(), 1, MPI_INT, dup, &d) == MPI_SUCCESS, "non-blocking on the dup");
    poke(h, &p2);
    Cart_Request* order[5] = {&p, &q, &c, &p2, &d};
    if ((h.rank + epoch) % 2 == 1) std::reverse(order, order + 5);
    for (Cart_Request* r : order) h.check(Cart_wait(r) == MPI_SUCCESS, "wait");
    h.check(alltoall_right(h, g, epoch, pr), "persistent alltoall on g, epoch " + std::to_string(epoch));
    h.check(allgather_right(g2, 10 + epoch, p2r), "persistent allgather on g2, epoch " + std::to_string(epoch));
    h.check(allgather_right(g2, 30 + epoch, qr), "non-blocking allgather on g2, epoch " + std::to_string(epoch));
    if (dup != MPI_COMM_NULL) h.check(allgather_right(g, 40 + epoch, dr), "non-blocking allgather on the dup, epoch " + std::to_string(epoch));
    if (epoch >= 2) h.check(allgather_right(g, 50 + epoch, cr), "persistent cumulative allgather on g, epoch " + std::to_string(epoch));
  }
  Cart_request_free(&c);
  Cart_request_free(&p);
  Cart_request_free(&p2);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&g.comm);
  MPI_Comm_free(&g2.comm);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  run(h);
  return h.finish("graph_shared_comm_test");
}
