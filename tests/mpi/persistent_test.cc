// MPI test of persistent and blocking use over time: two requests in flight on one
// communicator, buffers and types that change between blocking calls, 10,000 starts of one
// request with checked data and flat memory, queries and the C++ API.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "backends/mpi/cartplan.hpp"
#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;
using cartplan::mpitest::resident_kb;

int value(int rank, int block, int j, int epoch) { return ((epoch * 16 + rank) * 64 + block) * 32 + j; }

struct Moore2d {
  MPI_Comm cart = MPI_COMM_NULL;
  int t = 8;
  std::vector<int> sources;
  int me = 0;
};

// The 8-neighbour stencil on a 2-d grid (periodic in x, not in y) over all ranks.
Moore2d moore(Harness& h, const char* algo) {
  Moore2d m;
  int dims[2] = {0, 0};
  MPI_Dims_create(h.size, 2, dims);
  int periods[2] = {1, 0};
  int offs[16], n = 0;
  for (int a = -1; a <= 1; ++a)
    for (int b = -1; b <= 1; ++b)
      if (a || b) {
        offs[n++] = a;
        offs[n++] = b;
      }
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", algo);
  h.check(Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, 8, offs, MPI_UNWEIGHTED, info, 0, &m.cart) == MPI_SUCCESS,
          "moore creation");
  MPI_Info_free(&info);
  MPI_Comm_rank(m.cart, &m.me);
  m.sources.resize(8);
  std::vector<int> targets(8);
  Cart_neighbor_get(m.cart, 8, m.sources.data(), MPI_UNWEIGHTED, 8, targets.data(), MPI_UNWEIGHTED);
  return m;
}

bool check_alltoall(const Moore2d& m, const std::vector<int>& recv, int count, int epoch) {
  for (int i = 0; i < m.t; ++i)
    for (int j = 0; j < count; ++j) {
      const int want = m.sources[i] == MPI_PROC_NULL ? -1 : value(m.sources[i], i, j, epoch);
      if (recv[i * count + j] != want) return false;
    }
  return true;
}

bool check_allgather(const Moore2d& m, const std::vector<int>& recv, int count, int epoch) {
  for (int i = 0; i < m.t; ++i)
    for (int j = 0; j < count; ++j) {
      const int want = m.sources[i] == MPI_PROC_NULL ? -1 : value(m.sources[i], 0, j, epoch);
      if (recv[i * count + j] != want) return false;
    }
  return true;
}

void fill(std::vector<int>& v, int rank, int blocks, int count, int epoch) {
  for (int i = 0; i < blocks; ++i)
    for (int j = 0; j < count; ++j) v[i * count + j] = value(rank, i, j, epoch);
}

void two_in_flight(Harness& h, const char* algo) {
  Moore2d m = moore(h, algo);
  const int c = 4;
  std::vector<int> a_send(8 * c), a_recv(8 * c, -1), g_send(c), g_recv(8 * c, -1);
  fill(a_send, m.me, 8, c, 5);
  fill(g_send, m.me, 1, c, 6);
  Cart_Request a, g;
  h.check(Cart_alltoall_init(a_send.data(), c, MPI_INT, a_recv.data(), c, MPI_INT, m.cart, MPI_INFO_NULL, &a) == MPI_SUCCESS, "init a");
  h.check(Cart_allgather_init(g_send.data(), c, MPI_INT, g_recv.data(), c, MPI_INT, m.cart, MPI_INFO_NULL, &g) == MPI_SUCCESS, "init g");
  // Both in flight at once, completed in the opposite order, plus a blocking call in between.
  h.check(Cart_start(&a) == MPI_SUCCESS && Cart_start(&g) == MPI_SUCCESS, std::string(algo) + ": two starts");
  std::vector<int> b_recv(8 * c, -1);
  h.check(Cart_alltoall(a_send.data(), c, MPI_INT, b_recv.data(), c, MPI_INT, m.cart) == MPI_SUCCESS, "blocking in between");
  h.check(Cart_wait(&g) == MPI_SUCCESS && Cart_wait(&a) == MPI_SUCCESS, std::string(algo) + ": two waits");
  h.check(check_alltoall(m, a_recv, c, 5), std::string(algo) + ": request a delivered the wrong data");
  h.check(check_allgather(m, g_recv, c, 6), std::string(algo) + ": request g delivered the wrong data");
  h.check(check_alltoall(m, b_recv, c, 5), std::string(algo) + ": blocking call delivered the wrong data");
  Cart_request_free(&a);
  Cart_request_free(&g);
  MPI_Comm_free(&m.cart);
}

void changing_buffers(Harness& h) {
  Moore2d m = moore(h, "auto");
  // Count, type and buffers change from call to call; the cached plan must not be tied to them.
  for (int round = 0; round < 6; ++round) {
    const int c = 1 + round * 37;  // crosses the auto cut-off for large counts
    std::vector<int> s(8 * c), r(8 * c, -1);
    fill(s, m.me, 8, c, round);
    if (round % 2 == 0) {
      h.check(Cart_alltoall(s.data(), c, MPI_INT, r.data(), c, MPI_INT, m.cart) == MPI_SUCCESS, "blocking alltoall");
    } else {
      // The same bytes described as MPI_BYTE with a different count.
      h.check(Cart_alltoall(s.data(), c * 4, MPI_BYTE, r.data(), c * 4, MPI_BYTE, m.cart) == MPI_SUCCESS, "blocking alltoall bytes");
    }
    h.check(check_alltoall(m, r, c, round), "changing buffers: round " + std::to_string(round));
  }
  MPI_Comm_free(&m.cart);
}

void many_starts(Harness& h, const char* algo) {
  Moore2d m = moore(h, algo);
  const int c = 2;
  std::vector<int> s(8 * c), r(8 * c, -1);
  Cart_Request req;
  h.check(Cart_alltoall_init(s.data(), c, MPI_INT, r.data(), c, MPI_INT, m.cart, MPI_INFO_NULL, &req) == MPI_SUCCESS, "init");
  long before = 0;
  bool all_ok = true;
  for (int it = 0; it < 10000; ++it) {
    if (it == 200) before = resident_kb();
    const bool checked = it % 1000 == 0;
    if (checked) fill(s, m.me, 8, c, it / 1000);
    if (Cart_start(&req) != MPI_SUCCESS || Cart_wait(&req) != MPI_SUCCESS) all_ok = false;
    if (checked) {
      all_ok = all_ok && check_alltoall(m, r, c, it / 1000);
      std::fill(r.begin(), r.end(), -1);
      // The next run re-delivers the same data, so unchecked iterations refill the halo.
    }
  }
  const long after = resident_kb();
  h.check(all_ok, std::string(algo) + ": 10,000 starts delivered wrong data or failed");
  h.check(after - before < 1024, std::string(algo) + ": resident memory grew by " + std::to_string(after - before) +
                                     " kB over 9,800 starts");
  Cart_request_free(&req);
  MPI_Comm_free(&m.cart);
}

void queries(Harness& h) {
  Moore2d m = moore(h, "auto");
  int dims[2], periods[2], coords[2];
  MPI_Cart_get(m.cart, 2, dims, periods, coords);
  int t = 0, in = 0, out = 0;
  h.check(Cart_neighbor_degrees(m.cart, &t, &in, &out) == MPI_SUCCESS && t == 8, "degrees");
  int expect_in = 0;
  for (int s : m.sources) expect_in += s != MPI_PROC_NULL;
  h.check(in == expect_in && out == expect_in, "in/out degree count the existing neighbours");
  for (int i = 0, a = -1; a <= 1; ++a)
    for (int b = -1; b <= 1; ++b) {
      if (!a && !b) continue;
      // The source of offset (a,b) is at coords - (a,b): ask MPI itself.
      int c[2] = {coords[0] - a, coords[1] - b}, want = MPI_PROC_NULL;
      c[0] = ((c[0] % dims[0]) + dims[0]) % dims[0];
      if (c[1] >= 0 && c[1] < dims[1]) MPI_Cart_rank(m.cart, c, &want);
      h.check(m.sources[i] == want, "source " + std::to_string(i) + " agrees with MPI_Cart_rank");
      int rel[2] = {a, b}, in_r = 0, out_r = 0, r = 0;
      Cart_relative_shift(m.cart, rel, &in_r, &out_r);
      Cart_relative_rank(m.cart, rel, &r);
      h.check(in_r == want && r == out_r, "relative shift and rank agree");
      if (out_r != MPI_PROC_NULL) {
        int back[2];
        Cart_relative_coord(m.cart, out_r, back);
        // On a periodic dimension of size 1 or 2 the representative may differ from (a,b).
        if (dims[0] > 2) h.check(back[0] == a && back[1] == b, "relative coord inverts relative rank");
      }
      ++i;
    }
  int n = 0;
  h.check(Cart_neighbors_count(2, CART_CHEBYSHEV, 1, 1, &n) == MPI_SUCCESS && n == 8, "Moore generator count");
  h.check(Cart_neighbors_count(2, CART_MANHATTAN, 1, 2, &n) == MPI_SUCCESS && n == 12, "von Neumann r=2 without zero");
  MPI_Comm_free(&m.cart);
}

void cpp_api(Harness& h) {
  int dims[1] = {0};
  MPI_Dims_create(h.size, 1, dims);
  cartplan::mpi::CartComm cart(MPI_COMM_WORLD, {dims[0]}, {0}, {{1}, {-1}, {0}});
  h.check(cart.member() && cart.neighbor_count() == 3, "C++ CartComm");
  int me = 0;
  MPI_Comm_rank(cart.get(), &me);
  std::vector<int> s = {value(me, 0, 0, 9), value(me, 1, 0, 9), value(me, 2, 0, 9)}, r(3, -1);
  auto x = cartplan::mpi::Collective::alltoall(cart, s.data(), 1, MPI_INT, r.data(), 1, MPI_INT);
  x.run();
  const std::vector<int> src = cart.sources();
  for (int i = 0; i < 3; ++i)
    h.check(r[i] == (src[i] == MPI_PROC_NULL ? -1 : value(src[i], i, 0, 9)), "C++ Collective block " + std::to_string(i));
  bool threw = false;
  try {
    x.start();
    x.start();
  } catch (const cartplan::mpi::MpiError& e) {
    threw = e.code() == MPI_ERR_REQUEST;
  }
  h.check(threw, "C++ start twice throws MPI_ERR_REQUEST");
  x.wait();
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  for (const char* algo : {"direct", "combining"}) {
    two_in_flight(h, algo);
    many_starts(h, algo);
  }
  changing_buffers(h);
  queries(h);
  cpp_api(h);
  return h.finish("persistent_test");
}
