// MPI test of the native API's keyed non-blocking path (Cart_ialltoall / Cart_iallgather restart
// the pooled exchange of an earlier call with the same arguments) and of the lingering progress
// callbacks of both registries (Cartesian and graph):
//  - in_flight: 12 requests alive at once on one communicator (more than the pool keeps), each
//    with its own buffers, started in order and completed in reverse order on even ranks, in a
//    rank- and iteration-dependent order (Cart_wait or a Cart_test loop) on odd ranks; data
//    checked every iteration, direct and combining plans;
//  - blocked: a request pending while its rank blocks in MPI_Recv whose sender first waits on
//    its own request (it needs the blocked rank's later phases: progress inside MPI_Recv),
//    Cartesian combining and graph (pairing, cumulative) requests, with idle MPI rounds between
//    iterations on some of them, so that a lingering callback expires and is registered again;
//  - counts_change: a rank without neighbours that forwards blocks of a combining plan (the
//    offset (1,1) on a non-periodic grid), counts alternating between calls: the size a uniform
//    call states there shapes its exchange, so a repeat with another count must not reuse it.
// Run at several np; every check is on rank- and iteration-dependent data.
#include <mpi.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;

// The value rank `rank` sends in block `block` of request `req` in iteration `iter`.
int value(int rank, int block, int iter, int req) { return ((iter * 16 + req) * 512 + rank) * 16 + block; }

// A periodic 2-D grid, Moore radius 1 (8 offsets), with Info cartplan_algorithm = `algo`.
struct Grid {
  MPI_Comm comm = MPI_COMM_NULL;
  int t = 8;
  std::vector<int> sources;
};

Grid open_grid(int size, const char* algo) {
  Grid g;
  std::vector<int> dims(2, 0), periods(2, 1), flat;
  MPI_Dims_create(size, 2, dims.data());
  for (int a = -1; a <= 1; ++a)
    for (int b = -1; b <= 1; ++b)
      if (a || b) flat.insert(flat.end(), {a, b});
  g.comm = cartplan::mpitest::open_cart(2, dims, periods, g.t, flat, algo);
  g.sources.resize(g.t);
  std::vector<int> targets(g.t);
  Cart_neighbor_get(g.comm, g.t, g.sources.data(), MPI_UNWEIGHTED, g.t, targets.data(), MPI_UNWEIGHTED);
  return g;
}

// One request's buffers: alltoall for even req, allgather for odd.
struct Call {
  int req = 0;
  std::vector<int> send, recv;
  Cart_Request r = CART_REQUEST_NULL;
  bool gather() const { return req % 2 == 1; }
};

int start(Call& c, MPI_Comm comm) {
  return c.gather() ? Cart_iallgather(c.send.data(), 1, MPI_INT, c.recv.data(), 1, MPI_INT, comm, &c.r)
                    : Cart_ialltoall(c.send.data(), 1, MPI_INT, c.recv.data(), 1, MPI_INT, comm, &c.r);
}

void fill(Call& c, int me, int iter) {
  for (int i = 0; i < static_cast<int>(c.send.size()); ++i) c.send[i] = value(me, i, iter, c.req);
  std::fill(c.recv.begin(), c.recv.end(), -1);
}

bool correct(const Call& c, const std::vector<int>& sources, int iter) {
  for (std::size_t i = 0; i < sources.size(); ++i)
    if (sources[i] != MPI_PROC_NULL && c.recv[i] != value(sources[i], c.gather() ? 0 : static_cast<int>(i), iter, c.req))
      return false;
  return true;
}

// Completes `c` with Cart_wait, or with a Cart_test loop when `test`.
int complete(Call& c, bool test) {
  if (!test) return Cart_wait(&c.r);
  int done = 0, rc = MPI_SUCCESS;
  while (!done && rc == MPI_SUCCESS) rc = Cart_test(&c.r, &done);
  return rc;
}

void in_flight(Harness& h, const char* algo) {
  const Grid g = open_grid(h.size, algo);
  constexpr int kRequests = 12, kIterations = 20;
  std::vector<Call> calls(kRequests);
  for (int k = 0; k < kRequests; ++k) {
    calls[k].req = k;
    calls[k].send.resize(calls[k].gather() ? 1 : g.t);
    calls[k].recv.resize(g.t);
  }
  std::mt19937 rng(1234 + h.rank);
  for (int iter = 0; iter < kIterations; ++iter) {
    for (Call& c : calls) {
      fill(c, h.rank, iter);
      h.check(start(c, g.comm) == MPI_SUCCESS, std::string(algo) + " start: " + Cart_error_message());
    }
    std::vector<int> order(kRequests);
    for (int k = 0; k < kRequests; ++k) order[k] = kRequests - 1 - k;  // reverse
    if (h.rank % 2 == 1) std::shuffle(order.begin(), order.end(), rng);
    for (int k : order) {
      Call& c = calls[k];
      const int rc = complete(c, (k + iter + h.rank) % 3 == 0);
      h.check(rc == MPI_SUCCESS && c.r == CART_REQUEST_NULL, std::string(algo) + " complete: " + Cart_error_message());
      h.check(correct(c, g.sources, iter), std::string(algo) + " data of request " + std::to_string(k) + ", iteration " +
                                               std::to_string(iter));
    }
  }
  MPI_Comm comm = g.comm;
  MPI_Comm_free(&comm);
}

// A graph communicator of the same Moore torus (Cart_graph_comm_create_adjacent) with Info
// cartplan_algorithm = `algo`; *sources in the order of its receive blocks.
MPI_Comm open_graph(int me, int size, const char* algo, std::vector<int>* sources) {
  std::vector<int> dims(2, 0);
  MPI_Dims_create(size, 2, dims.data());
  const int x = me / dims[1], y = me % dims[1];
  std::vector<int> dests;
  for (int a = -1; a <= 1; ++a)
    for (int b = -1; b <= 1; ++b)
      if (a || b) {
        dests.push_back(((x + a + dims[0]) % dims[0]) * dims[1] + (y + b + dims[1]) % dims[1]);
        sources->push_back(((x - a + dims[0]) % dims[0]) * dims[1] + (y - b + dims[1]) % dims[1]);
      }
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", algo);
  MPI_Info_set(info, "cartplan_theta", "2");
  MPI_Comm g = MPI_COMM_NULL;
  Cart_graph_comm_create_adjacent(MPI_COMM_WORLD, 8, sources->data(), 8, dests.data(), info, &g);
  MPI_Info_free(&info);
  return g;
}

int start_on(Call& c, MPI_Comm comm, bool graph) {
  if (!graph) return start(c, comm);
  return c.gather() ? Cart_graph_ineighbor_allgather(c.send.data(), 1, MPI_INT, c.recv.data(), 1, MPI_INT, comm, &c.r)
                    : Cart_graph_ineighbor_alltoall(c.send.data(), 1, MPI_INT, c.recv.data(), 1, MPI_INT, comm, &c.r);
}

// Idle progress rounds: more than a lingering callback waits before it unregisters itself.
void idle_rounds(int n) {
  for (int i = 0; i < n; ++i) {
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  }
}

// Pairs (2j, 2j+1), roles swapped every iteration: the blocked rank sits in MPI_Recv from its
// partner, which sends only after its own request completed; a rank without partner only
// starts and waits.
void blocked(Harness& h, MPI_Comm comm, const std::vector<int>& sources, bool graph, const std::string& label) {
  constexpr int kIterations = 24;
  Call c;
  for (int iter = 0; iter < kIterations; ++iter) {
    c.req = iter % 2;  // alltoall and allgather in turn
    c.send.assign(c.gather() ? 1 : sources.size(), 0);
    c.recv.assign(sources.size(), -1);
    fill(c, h.rank, iter);
    h.check(start_on(c, comm, graph) == MPI_SUCCESS, label + " start: " + Cart_error_message());
    const int partner = h.rank ^ 1;
    const bool paired = partner < h.size;
    const bool blocks = paired && (h.rank % 2 == iter % 2);
    int token = -1;
    if (blocks) {
      MPI_Recv(&token, 1, MPI_INT, partner, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      h.check(token == iter, label + " token");
    }
    h.check(Cart_wait(&c.r) == MPI_SUCCESS, label + " wait: " + Cart_error_message());
    if (paired && !blocks) MPI_Send(&iter, 1, MPI_INT, partner, 7, MPI_COMM_WORLD);
    h.check(correct(c, sources, iter), label + " data, iteration " + std::to_string(iter));
    if (iter % 4 == 3) idle_rounds(200);
  }
}

}  // namespace

void counts_change(Harness& h, bool blocking) {
  int dims[2] = {0, 0};
  MPI_Dims_create(h.size, 2, dims);
  std::vector<int> d(dims, dims + 2), periods{0, 0}, offset{1, 1};
  MPI_Comm cart = cartplan::mpitest::open_cart(2, d, periods, 1, offset, "combining");
  MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
  int src = MPI_PROC_NULL, dst = MPI_PROC_NULL;
  Cart_neighbor_get(cart, 1, &src, MPI_UNWEIGHTED, 1, &dst, MPI_UNWEIGHTED);
  std::vector<int> send(16), recv(16);
  for (int iter = 0; iter < 6; ++iter) {
    const int count = iter % 2 == 0 ? 1 : 16;
    for (int i = 0; i < 16; ++i) send[i] = value(h.rank, i, iter, 0), recv[i] = -1;
    int rc = MPI_SUCCESS;
    if (blocking) {
      rc = Cart_alltoall(send.data(), count, MPI_INT, recv.data(), count, MPI_INT, cart);
    } else {
      Cart_Request r = CART_REQUEST_NULL;
      rc = Cart_ialltoall(send.data(), count, MPI_INT, recv.data(), count, MPI_INT, cart, &r);
      if (rc == MPI_SUCCESS) rc = Cart_wait(&r);
    }
    const std::string what = std::string(blocking ? "blocking" : "non-blocking") + " count " + std::to_string(count) +
                             " iteration " + std::to_string(iter);
    h.check(rc == MPI_SUCCESS, what + ": " + (rc == MPI_SUCCESS ? "" : Cart_error_message()));
    for (int i = 0; i < count && src != MPI_PROC_NULL; ++i)
      h.check(recv[i] == value(src, i, iter, 0), what + ": block element " + std::to_string(i));
    for (int i = src == MPI_PROC_NULL ? 0 : count; i < 16; ++i) h.check(recv[i] == -1, what + ": untouched element " + std::to_string(i));
  }
  MPI_Comm_free(&cart);
}

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  for (bool blocking : {false, true}) counts_change(h, blocking);
  for (const char* algo : {"direct", "combining"}) in_flight(h, algo);
  {
    Grid g = open_grid(h.size, "combining");
    blocked(h, g.comm, g.sources, false, "cartesian combining");
    for (const char* algo : {"pairing", "cumulative"}) {
      std::vector<int> sources;
      MPI_Comm graph = open_graph(h.rank, h.size, algo, &sources);
      blocked(h, graph, sources, true, std::string("graph ") + algo);
      MPI_Comm_free(&graph);
    }
    MPI_Comm_free(&g.comm);
  }
  return h.finish("keyed_requests_test");
}
