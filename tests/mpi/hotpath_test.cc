// MPI test that blocking and non-blocking Cartesian collectives talk to neighbours only in the
// default mode: this program defines the global collectives itself (the MPI profiling
// interface), counts every call cartplan makes to them, and forwards to PMPI_*. In checking
// mode the same calls must agree (so the counter must move: the counting itself is tested); a
// halo in checking mode agrees exactly once per blocking exchange.
#include <mpi.h>

#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/count_collectives.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;
using cartplan::mpitest::open_checking_moore;
using cartplan::mpitest::open_plain_cart2;

// Runs every blocking collective and every Cart_i* + Cart_wait once with fresh data, checking
// the alltoall and allgather results.
bool round_of_calls(Harness& h, MPI_Comm cart, int t, const std::vector<int>& sources, int me, int epoch) {
  const int m = 3;
  std::vector<int> s(t * m), r(t * m), counts(t, m), displs(t);
  std::vector<MPI_Aint> bd(t);
  std::vector<MPI_Datatype> types(t, MPI_INT);
  for (int i = 0; i < t; ++i) {
    displs[i] = i * m;
    bd[i] = static_cast<MPI_Aint>(i * m * sizeof(int));
    for (int j = 0; j < m; ++j) s[i * m + j] = ((epoch * 100 + me) * 64 + i) * 4 + j;
  }
  auto check = [&](bool gather) {
    bool ok = true;
    for (int i = 0; i < t; ++i)
      for (int j = 0; j < m; ++j)
        if (sources[i] != MPI_PROC_NULL) ok = ok && r[i * m + j] == ((epoch * 100 + sources[i]) * 64 + (gather ? 0 : i)) * 4 + j;
    return ok;
  };
  bool ok = Cart_alltoall(s.data(), m, MPI_INT, r.data(), m, MPI_INT, cart) == MPI_SUCCESS && check(false);
  ok = ok && Cart_alltoallv(s.data(), counts.data(), displs.data(), MPI_INT, r.data(), counts.data(), displs.data(), MPI_INT, cart) == MPI_SUCCESS && check(false);
  ok = ok && Cart_alltoallw(s.data(), counts.data(), bd.data(), types.data(), r.data(), counts.data(), bd.data(), types.data(), cart) == MPI_SUCCESS && check(false);
  ok = ok && Cart_allgather(s.data(), m, MPI_INT, r.data(), m, MPI_INT, cart) == MPI_SUCCESS && check(true);
  ok = ok && Cart_allgatherv(s.data(), m, MPI_INT, r.data(), counts.data(), displs.data(), MPI_INT, cart) == MPI_SUCCESS && check(true);
  ok = ok && Cart_allgatherw(s.data(), m, MPI_INT, r.data(), counts.data(), bd.data(), types.data(), cart) == MPI_SUCCESS && check(true);
  Cart_Request q = CART_REQUEST_NULL;
  ok = ok && Cart_ialltoall(s.data(), m, MPI_INT, r.data(), m, MPI_INT, cart, &q) == MPI_SUCCESS && Cart_wait(&q) == MPI_SUCCESS && check(false);
  ok = ok && Cart_ialltoallv(s.data(), counts.data(), displs.data(), MPI_INT, r.data(), counts.data(), displs.data(), MPI_INT, cart, &q) == MPI_SUCCESS &&
       Cart_wait(&q) == MPI_SUCCESS && check(false);
  ok = ok && Cart_ialltoallw(s.data(), counts.data(), bd.data(), types.data(), r.data(), counts.data(), bd.data(), types.data(), cart, &q) == MPI_SUCCESS &&
       Cart_wait(&q) == MPI_SUCCESS && check(false);
  ok = ok && Cart_iallgather(s.data(), m, MPI_INT, r.data(), m, MPI_INT, cart, &q) == MPI_SUCCESS && Cart_wait(&q) == MPI_SUCCESS && check(true);
  ok = ok && Cart_iallgatherv(s.data(), m, MPI_INT, r.data(), counts.data(), displs.data(), MPI_INT, cart, &q) == MPI_SUCCESS &&
       Cart_wait(&q) == MPI_SUCCESS && check(true);
  ok = ok && Cart_iallgatherw(s.data(), m, MPI_INT, r.data(), counts.data(), bd.data(), types.data(), cart, &q) == MPI_SUCCESS &&
       Cart_wait(&q) == MPI_SUCCESS && check(true);
  h.check(ok, "calls of epoch " + std::to_string(epoch) + " succeed with the right data");
  return ok;
}

void count_mode(Harness& h, const char* mode, const int periods[2], const char* algorithm) {
  int dims[2] = {0, 0};
  MPI_Dims_create(h.size, 2, dims);
  int offs[18], n = 0;
  for (int a = -1; a <= 1; ++a)
    for (int b = -1; b <= 1; ++b) {
      offs[n++] = a;
      offs[n++] = b;
    }
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_check", mode);
  MPI_Info_set(info, "cartplan_algorithm", algorithm);
  MPI_Comm cart = MPI_COMM_NULL;
  h.check(Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, 9, offs, MPI_UNWEIGHTED, info, 0, &cart) == MPI_SUCCESS, "create");
  MPI_Info_free(&info);
  int me = 0;
  MPI_Comm_rank(cart, &me);
  std::vector<int> sources(9), targets(9);
  Cart_neighbor_get(cart, 9, sources.data(), MPI_UNWEIGHTED, 9, targets.data(), MPI_UNWEIGHTED);
  const std::string label = std::string(mode) + ", " + algorithm + (periods[1] ? ", torus" : ", mesh");
  global_collectives = 0;
  for (int epoch = 0; epoch < 20; ++epoch) round_of_calls(h, cart, 9, sources, me, epoch);
  const long counted = global_collectives;
  if (std::string(mode) == "none") {
    h.check(counted == 0, label + ": " + std::to_string(counted) + " global collective calls in 240 blocking/non-blocking calls");
  } else {
    h.check(counted >= 240, label + ": checking mode agrees on every call (" + std::to_string(counted) + " global collectives)");
  }
  // Persistent: init agrees, start/wait never does.
  std::vector<int> s(9, me), r(9);
  Cart_Request q = CART_REQUEST_NULL;
  h.check(Cart_alltoall_init(s.data(), 1, MPI_INT, r.data(), 1, MPI_INT, cart, MPI_INFO_NULL, &q) == MPI_SUCCESS, "init");
  global_collectives = 0;
  for (int k = 0; k < 100; ++k) h.check(Cart_start(&q) == MPI_SUCCESS && Cart_wait(&q) == MPI_SUCCESS, "start/wait");
  h.check(global_collectives == 0, label + ": persistent start/wait makes no global collective call");
  Cart_request_free(&q);
  MPI_Comm_free(&cart);
}

}  // namespace

namespace {

// The fields forms of a halo of 6x5 doubles with ghost widths 2 and 1: a blocking call with a
// new sum of element sizes plans for that sum (priced_for) with no global collective, as do the
// calls after it; a fields init agrees like the one-array init (errors, lanes), its start/wait
// not at all.
void count_halo_fields(Harness& h, Cart_Halo halo, const std::string& what) {
  std::vector<double> u(10 * 7, 1.0), v(10 * 7, 2.0), w(10 * 7, 3.0);
  std::vector<int> k(10 * 7, 4);
  const long before = global_collectives;
  struct Call {
    int count;
    void* arrays[3];
    MPI_Datatype types[3];
  };
  const Call calls[] = {{2, {u.data(), k.data()}, {MPI_DOUBLE, MPI_INT}},                       // 12 bytes per cell
                        {2, {u.data(), v.data()}, {MPI_DOUBLE, MPI_DOUBLE}},                    // 16
                        {3, {u.data(), v.data(), k.data()}, {MPI_DOUBLE, MPI_DOUBLE, MPI_INT}}}; // 20
  for (int it = 0; it < 6; ++it)
    for (const Call& c : calls)
      h.check(Cart_halo_exchange_fields(c.count, c.arrays, c.types, halo) == MPI_SUCCESS, what + ": blocking fields");
  h.check(global_collectives == before, what + ": blocking fields of new element sizes make no global collective, counted " +
                                            std::to_string(global_collectives - before));
  void* const arrays[3] = {u.data(), v.data(), w.data()};
  const MPI_Datatype types[3] = {MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE};  // 24 bytes per cell: planned at init
  Cart_Request req = CART_REQUEST_NULL;
  long mark = global_collectives;
  h.check(Cart_halo_exchange_fields_init(3, arrays, types, halo, MPI_INFO_NULL, &req) == MPI_SUCCESS, what + ": fields init");
  h.check(global_collectives - mark == 2,
          what + ": fields init agrees once (errors, lanes), counted " + std::to_string(global_collectives - mark));
  mark = global_collectives;
  for (int it = 0; it < 10; ++it) h.check(Cart_start(&req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS, what + ": fields start/wait");
  h.check(global_collectives == mark, what + ": fields start/wait make no global collective, counted " + std::to_string(global_collectives - mark));
  Cart_request_free(&req);
}

// The halo API: creation agrees once (one MPI_Allreduce), persistent init once more (its lane
// agreement), and no blocking or non-blocking exchange, start or wait makes any global collective.
void count_halo(Harness& h, const int periods[2], const char* algorithm) {
  MPI_Comm cart = open_plain_cart2(h.size, periods);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", algorithm);
  const int interior[2] = {6, 5}, ghost[2] = {2, 1};
  const std::string what = std::string("halo ") + algorithm + (periods[1] ? " torus" : " mesh");
  Cart_Halo halo = CART_HALO_NULL;
  long before = global_collectives;
  h.check(Cart_halo_create(cart, 2, interior, ghost, ghost, MPI_DOUBLE, MPI_ORDER_C, info, &halo) == MPI_SUCCESS, what + ": create");
  MPI_Info_free(&info);
  h.check(global_collectives - before == 1, what + ": creation agrees once, counted " + std::to_string(global_collectives - before));
  std::vector<double> u(10 * 7, 1.0), v(10 * 7, 2.0);
  before = global_collectives;
  Cart_Request req = CART_REQUEST_NULL;
  h.check(Cart_halo_exchange_init(u.data(), halo, MPI_INFO_NULL, &req) == MPI_SUCCESS, what + ": init");
  h.check(global_collectives - before == 2, what + ": init agrees once (errors, lanes), counted " + std::to_string(global_collectives - before));
  before = global_collectives;
  for (int it = 0; it < 20; ++it) {
    h.check(Cart_halo_exchange(it % 2 ? u.data() : v.data(), halo) == MPI_SUCCESS, what + ": blocking");
    h.check(Cart_start(&req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS, what + ": persistent");
    Cart_Request once = CART_REQUEST_NULL;
    h.check(Cart_halo_iexchange(it % 2 ? v.data() : u.data(), halo, &once) == MPI_SUCCESS && Cart_wait(&once) == MPI_SUCCESS,
            what + ": non-blocking");
  }
  h.check(global_collectives == before, what + ": no global collective per exchange, counted " + std::to_string(global_collectives - before));
  Cart_request_free(&req);
  count_halo_fields(h, halo, what);
  Cart_halo_free(&halo);
  MPI_Comm_free(&cart);
}

// Ten rounds of a blocking Cart_halo_exchange (u and v in turn) and a blocking two-field
// exchange of `arrays`: the global collectives they made.
long collectives_of_blocking_calls(Harness& h, Cart_Halo halo, std::vector<double>* u, std::vector<double>* v, void* arrays[2],
                                   const MPI_Datatype types[2], const std::string& what) {
  const long before = global_collectives;
  for (int it = 0; it < 10; ++it) {
    h.check(Cart_halo_exchange(it % 2 ? u->data() : v->data(), halo) == MPI_SUCCESS, what + ": blocking");
    h.check(Cart_halo_exchange_fields(2, arrays, types, halo) == MPI_SUCCESS, what + ": blocking fields");
  }
  return global_collectives - before;
}

// A halo in checking mode (Info cartplan_check=collective at creation): every blocking exchange,
// one array or several fields, agrees in exactly one global collective; init agrees as in the
// default mode (two); start/wait never.
void count_halo_checking(Harness& h) {
  MPI_Comm cart = open_plain_cart2(h.size);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_check", "collective");
  const int interior[2] = {6, 5}, ghost[2] = {2, 1};
  Cart_Halo halo = CART_HALO_NULL;
  h.check(Cart_halo_create(cart, 2, interior, ghost, ghost, MPI_DOUBLE, MPI_ORDER_C, info, &halo) == MPI_SUCCESS, "checking halo: create");
  MPI_Info_free(&info);
  std::vector<double> u(10 * 7, 1.0), v(10 * 7, 2.0);
  std::vector<int> k(10 * 7, 4);
  void* arrays[2] = {u.data(), k.data()};
  const MPI_Datatype types[2] = {MPI_DOUBLE, MPI_INT};
  const long blocking = collectives_of_blocking_calls(h, halo, &u, &v, arrays, types, "checking halo");
  h.check(blocking == 20, "checking halo: one global collective per blocking call (20 calls), counted " + std::to_string(blocking));
  long before = global_collectives;
  Cart_Request req = CART_REQUEST_NULL;
  h.check(Cart_halo_exchange_fields_init(2, arrays, types, halo, MPI_INFO_NULL, &req) == MPI_SUCCESS, "checking halo: fields init");
  h.check(global_collectives - before == 2, "checking halo: init agrees once (errors, lanes), counted " + std::to_string(global_collectives - before));
  before = global_collectives;
  for (int it = 0; it < 10; ++it) h.check(Cart_start(&req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS, "checking halo: start/wait");
  h.check(global_collectives == before, "checking halo: start/wait make no global collective, counted " + std::to_string(global_collectives - before));
  Cart_request_free(&req);
  Cart_halo_free(&halo);
  MPI_Comm_free(&cart);
}

// A halo created with Info cartplan_check=none on a cartplan communicator in checking mode:
// the halo's Info wins, so its blocking exchanges make no global collective at all.
void count_halo_unchecked_on_checking_comm(Harness& h) {
  MPI_Comm cart = open_checking_moore(h.size);
  h.check(cart != MPI_COMM_NULL, "unchecked halo: a checking cartplan communicator");
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_check", "none");
  const int interior[2] = {6, 5}, ghost[2] = {1, 1};
  Cart_Halo halo = CART_HALO_NULL;
  h.check(Cart_halo_create(cart, 2, interior, ghost, ghost, MPI_DOUBLE, MPI_ORDER_C, info, &halo) == MPI_SUCCESS, "unchecked halo: create");
  MPI_Info_free(&info);
  std::vector<double> u(8 * 7), v(8 * 7);
  std::vector<int> k(8 * 7);
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = h.rank * 100.0 + i, v[i] = -u[i], k[i] = h.rank;
  void* arrays[2] = {u.data(), k.data()};
  const MPI_Datatype types[2] = {MPI_DOUBLE, MPI_INT};
  const long blocking = collectives_of_blocking_calls(h, halo, &u, &v, arrays, types, "unchecked halo");
  h.check(blocking == 0, "unchecked halo on a checking communicator: no global collective per blocking call, counted " +
                             std::to_string(blocking));
  Cart_halo_free(&halo);
  MPI_Comm_free(&cart);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  const int torus[2] = {1, 1}, mesh[2] = {1, 0};
  for (const char* algorithm : {"auto", "direct", "combining"}) {
    count_mode(h, "none", torus, algorithm);
    count_mode(h, "collective", torus, algorithm);
  }
  count_mode(h, "none", mesh, "auto");
  count_mode(h, "none", mesh, "direct");
  for (const char* algorithm : {"auto", "direct", "combining", "dimwise"}) {
    count_halo(h, torus, algorithm);
    count_halo(h, mesh, algorithm);
  }
  count_halo_checking(h);
  count_halo_unchecked_on_checking_comm(h);
  return h.finish("hotpath_test");
}
