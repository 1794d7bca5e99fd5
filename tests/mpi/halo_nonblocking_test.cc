// MPI test of the halo API's non-blocking forms (Cart_halo_iexchange, Cart_halo_iexchange_fields)
// on a 2-D grid, periodic in dimension 0 only, whose interiors are the blocks of an 11 x 9 global
// array (so they differ between ranks). Every cell is checked against its global position: a
// ghost cell holds its source's value, a ghost cell without a source in the mesh and the
// interior keep theirs. Cases: one exchange per plan (each algorithm forced, and auto), the
// request CART_REQUEST_NULL after Cart_wait and its plan readable before; several exchanges of
// one halo in flight with a persistent request and a blocking exchange of the same halo,
// completed in rank-dependent orders (Cart_wait forwards or backwards, Cart_test polling); more
// exchanges in flight at once than there are non-blocking lanes (4096 under Open MPI: the lanes
// wrap while their first holders are pending); two fields of different element types; bad
// arguments (each rank its own error, no request) and checking mode (a field count that differs
// on one rank: MPI_ERR_TRUNCATE on every rank, no request), the halo working afterwards; the C++
// form (Halo::iexchange: wait, a test loop, start refused, move assignment while active); exchanges
// reused from the pool only for the same arrays and element types (a freed derived type's handle
// coming back for another layout builds again).
#include <mpi.h>

#include <cstring>
#include <string>
#include <vector>

#include "backends/mpi/cartplan.hpp"
#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/count_type_builds.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::error_class;
using cartplan::mpitest::Harness;

constexpr int kGlobal[2] = {11, 9};
constexpr int kGhost = 1;

struct Grid {
  MPI_Comm comm = MPI_COMM_NULL;
  int me = 0, dims[2] = {0, 0}, coords[2] = {0, 0};
  int interior[2] = {0, 0}, start[2] = {0, 0};  // this rank's block of the global array
  int extent(int k) const { return interior[k] + 2 * kGhost; }
  int cells() const { return extent(0) * extent(1); }
};

Grid make_grid(int size) {
  Grid g;
  MPI_Dims_create(size, 2, g.dims);
  const int periods[2] = {1, 0};
  MPI_Cart_create(MPI_COMM_WORLD, 2, g.dims, periods, 0, &g.comm);
  MPI_Comm_set_errhandler(g.comm, MPI_ERRORS_RETURN);  // errors are checked, also those of requests
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);  // where a request-less error goes
  MPI_Comm_rank(g.comm, &g.me);
  MPI_Cart_coords(g.comm, g.me, 2, g.coords);
  for (int k = 0; k < 2; ++k) {  // blocks of kGlobal[k] / dims[k], the first kGlobal[k] % dims[k] one more
    const int base = kGlobal[k] / g.dims[k], extra = kGlobal[k] % g.dims[k], c = g.coords[k];
    g.interior[k] = base + (c < extra ? 1 : 0);
    g.start[k] = c * base + (c < extra ? c : extra);
  }
  return g;
}

int interior_value(int g0, int g1, int salt) { return (salt * 256 + g0) * 256 + g1 + 1; }
int untouched_value(int salt) { return -salt - 1; }

// What cell (x0, x1) (C order, ghosts included) holds after the exchange of `salt`.
int expected(const Grid& g, int x0, int x1, int salt) {
  const int x[2] = {x0, x1};
  int G[2];
  for (int k = 0; k < 2; ++k) {
    G[k] = g.start[k] + x[k] - kGhost;
    if (k == 0) G[k] = (G[k] + kGlobal[k]) % kGlobal[k];                  // periodic
    if (k == 1 && (G[k] < 0 || G[k] >= kGlobal[k])) return untouched_value(salt);  // outside the mesh
  }
  return interior_value(G[0], G[1], salt);
}

bool inside(const Grid& g, int x0, int x1) {
  return x0 >= kGhost && x0 < kGhost + g.interior[0] && x1 >= kGhost && x1 < kGhost + g.interior[1];
}

template <class T>
void fill(const Grid& g, std::vector<T>& a, int salt) {
  a.assign(static_cast<std::size_t>(g.cells()), T(0));
  for (int x0 = 0; x0 < g.extent(0); ++x0)
    for (int x1 = 0; x1 < g.extent(1); ++x1)
      a[x0 * g.extent(1) + x1] = static_cast<T>(inside(g, x0, x1) ? expected(g, x0, x1, salt) : untouched_value(salt));
}

// The number of wrong cells.
template <class T>
int wrong_cells(const Grid& g, const std::vector<T>& a, int salt) {
  int wrong = 0;
  for (int x0 = 0; x0 < g.extent(0); ++x0)
    for (int x1 = 0; x1 < g.extent(1); ++x1) wrong += a[x0 * g.extent(1) + x1] != static_cast<T>(expected(g, x0, x1, salt));
  return wrong;
}

Cart_Halo make_halo(Harness& h, const Grid& g, const char* algorithm, const char* check = nullptr) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", algorithm);
  if (check) MPI_Info_set(info, "cartplan_check", check);
  const int ghost[2] = {kGhost, kGhost};
  Cart_Halo halo = CART_HALO_NULL;
  const int rc = Cart_halo_create(g.comm, 2, g.interior, ghost, ghost, MPI_INT, MPI_ORDER_C, info, &halo);
  MPI_Info_free(&info);
  h.check(rc == MPI_SUCCESS, std::string("Cart_halo_create ") + algorithm + ": " + Cart_error_message());
  return halo;
}

// One exchange per plan, with the request's plan named before the wait.
void each_algorithm(Harness& h, const Grid& g) {
  for (const char* algorithm : {"auto", "direct", "combining", "dimwise"}) {
    Cart_Halo halo = make_halo(h, g, algorithm);
    std::vector<int> a;
    fill(g, a, 3);
    Cart_Request r = CART_REQUEST_NULL;
    h.check(Cart_halo_iexchange(a.data(), halo, &r) == MPI_SUCCESS && r != CART_REQUEST_NULL,
            std::string("iexchange ") + algorithm + ": " + Cart_error_message());
    char* json = nullptr;
    const std::string want = std::string("\"algorithm\": \"") + (std::string(algorithm) == "auto" ? "" : algorithm);
    const bool named = Cart_halo_request_plan(r, &json) == MPI_SUCCESS && json && std::string(json).find(want) != std::string::npos;
    if (json) Cart_free_plan_json(json);
    h.check(named, std::string("Cart_halo_request_plan of a non-blocking request names its plan: ") + algorithm);
    h.check(Cart_wait(&r) == MPI_SUCCESS && r == CART_REQUEST_NULL, std::string("Cart_wait frees the request: ") + algorithm);
    h.check(wrong_cells(g, a, 3) == 0, std::string("cells after iexchange ") + algorithm);
    Cart_halo_free(&halo);
  }
}

// Completes requests in an order that depends on the rank and the round.
int complete(const Grid& g, std::vector<Cart_Request>& reqs, int round) {
  const int n = static_cast<int>(reqs.size()), mode = (g.me + round) % 3;
  int rc = MPI_SUCCESS;
  if (mode < 2) {
    for (int i = 0; i < n; ++i) rc |= Cart_wait(&reqs[mode == 0 ? i : n - 1 - i]);
    return rc;
  }
  for (int left = n; left > 0;)
    for (int i = 0; i < n; ++i) {
      int flag = 0;
      if (reqs[i] == CART_REQUEST_NULL) continue;
      rc |= Cart_test(&reqs[i], &flag);
      left -= flag;
    }
  return rc;
}

// Three non-blocking exchanges and a persistent one of one halo in flight, a blocking exchange of
// a fifth array between the starts.
void in_flight(Harness& h, const Grid& g) {
  Cart_Halo halo = make_halo(h, g, "auto");
  std::vector<std::vector<int>> arrays(5);
  Cart_Request persistent = CART_REQUEST_NULL;
  fill(g, arrays[3], 0);
  h.check(Cart_halo_exchange_init(arrays[3].data(), halo, MPI_INFO_NULL, &persistent) == MPI_SUCCESS, "persistent init");
  for (int round = 0; round < 6; ++round) {
    std::vector<Cart_Request> reqs(3, CART_REQUEST_NULL);
    for (int i = 0; i < 5; ++i) fill(g, arrays[i], 10 * round + i);
    h.check(Cart_halo_iexchange(arrays[0].data(), halo, &reqs[0]) == MPI_SUCCESS, "iexchange 0");
    h.check(Cart_start(&persistent) == MPI_SUCCESS, "Cart_start");
    h.check(Cart_halo_iexchange(arrays[1].data(), halo, &reqs[1]) == MPI_SUCCESS, "iexchange 1");
    h.check(Cart_halo_exchange(arrays[4].data(), halo) == MPI_SUCCESS, "blocking exchange in between");
    h.check(Cart_halo_iexchange(arrays[2].data(), halo, &reqs[2]) == MPI_SUCCESS, "iexchange 2");
    h.check(complete(g, reqs, round) == MPI_SUCCESS, "non-blocking requests complete");
    h.check(Cart_wait(&persistent) == MPI_SUCCESS, "Cart_wait persistent");
    for (int i = 0; i < 5; ++i) h.check(wrong_cells(g, arrays[i], 10 * round + i) == 0, "in flight: array " + std::to_string(i));
  }
  Cart_request_free(&persistent);
  Cart_halo_free(&halo);
}

// More exchanges in flight than there are non-blocking lanes: a call whose lane is still held by
// a pending exchange completes that one first (lanes.h); then all complete in rank order.
void lanes_wrap(Harness& h, const Grid& g) {
  Cart_Halo halo = make_halo(h, g, "dimwise");
  const int n = 4100;
  std::vector<std::vector<int>> arrays(n);
  std::vector<Cart_Request> reqs(n, CART_REQUEST_NULL);
  int failed = 0;
  for (int i = 0; i < n; ++i) {
    fill(g, arrays[i], i % 500);
    failed += Cart_halo_iexchange(arrays[i].data(), halo, &reqs[i]) != MPI_SUCCESS;
  }
  h.check(failed == 0, "4100 exchanges started");
  h.check(complete(g, reqs, 0) == MPI_SUCCESS, "4100 exchanges complete");
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += wrong_cells(g, arrays[i], i % 500);
  h.check(wrong == 0, "cells of 4100 exchanges in flight at once: " + std::to_string(wrong) + " wrong");
  Cart_halo_free(&halo);
}

// Two fields of different element types in one set of messages.
void fields(Harness& h, const Grid& g) {
  Cart_Halo halo = make_halo(h, g, "combining");
  std::vector<int> a;
  std::vector<double> b;
  fill(g, a, 7);
  fill(g, b, 8);
  void* arrays[2] = {a.data(), b.data()};
  MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
  Cart_Request r = CART_REQUEST_NULL;
  h.check(Cart_halo_iexchange_fields(2, arrays, types, halo, &r) == MPI_SUCCESS, "iexchange_fields");
  char* json = nullptr;
  h.check(Cart_halo_request_plan(r, &json) == MPI_SUCCESS && std::string(json ? json : "").find("\"elem_bytes\": 12") != std::string::npos,
          "the fields request's plan is priced for 4 + 8 bytes per cell");
  if (json) Cart_free_plan_json(json);
  h.check(Cart_wait(&r) == MPI_SUCCESS && r == CART_REQUEST_NULL, "fields: Cart_wait");
  h.check(wrong_cells(g, a, 7) == 0 && wrong_cells(g, b, 8) == 0, "fields: cells of both arrays");
  Cart_halo_free(&halo);
}

// Checking mode with the lanes wrapping: 4096 dimwise exchanges in flight (their later phases
// need progress), then a call with a NULL request on rank 0 only, whose lane is held by the first
// of them: every rank returns an error (the others' checks pass, but they agree) and none waits
// for a peer already in the agreement. Then all complete.
void wrap_then_error(Harness& h, const Grid& g, Cart_Halo halo) {
  const int n = 4096;
  std::vector<std::vector<int>> arrays(n);
  std::vector<Cart_Request> reqs(n, CART_REQUEST_NULL);
  int failed = 0;
  for (int i = 0; i < n; ++i) {
    fill(g, arrays[i], i % 300);
    failed += Cart_halo_iexchange(arrays[i].data(), halo, &reqs[i]) != MPI_SUCCESS;
  }
  h.check(failed == 0, "checking mode: 4096 exchanges started");
  std::vector<int> a;
  fill(g, a, 1);
  Cart_Request bad = CART_REQUEST_NULL;
  const int rc = error_class(Cart_halo_iexchange(a.data(), halo, g.me == 0 ? nullptr : &bad));
  h.check(rc != MPI_SUCCESS && bad == CART_REQUEST_NULL, "checking mode: a NULL request on rank 0 is an error on every rank");
  h.check(complete(g, reqs, 1) == MPI_SUCCESS, "checking mode: the 4096 exchanges complete");
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += wrong_cells(g, arrays[i], i % 300);
  h.check(wrong == 0, "checking mode: cells of the 4096 exchanges: " + std::to_string(wrong) + " wrong");
}

// Exchanges come back from the pool for the same arrays and element types: three rounds of one
// buffer as ints through a derived type, then the type freed and the same buffer as doubles
// through a new derived type (MPI may hand out the freed handle again): the pooled int exchange
// must not run for it (types are keyed by layout).
template <class T>
bool exchanged_through(Harness& h, const Grid& g, Cart_Halo halo, std::vector<double>& buf, MPI_Datatype type, int salt) {
  std::vector<T> a;
  fill(g, a, salt);
  std::memcpy(buf.data(), a.data(), a.size() * sizeof(T));
  void* arrays[1] = {buf.data()};
  Cart_Request r = CART_REQUEST_NULL;
  const bool ok = Cart_halo_iexchange_fields(1, arrays, &type, halo, &r) == MPI_SUCCESS && Cart_wait(&r) == MPI_SUCCESS;
  std::memcpy(a.data(), buf.data(), a.size() * sizeof(T));
  h.check(ok, "pooled: the exchange ran");
  return ok && wrong_cells(g, a, salt) == 0;
}

void pooled(Harness& h, const Grid& g) {
  Cart_Halo halo = make_halo(h, g, "dimwise");
  std::vector<double> buf(static_cast<std::size_t>(g.cells()));
  MPI_Datatype t;
  MPI_Type_contiguous(1, MPI_INT, &t);
  MPI_Type_commit(&t);
  for (int round = 0; round < 3; ++round) {
    const long before = type_subarrays;
    h.check(exchanged_through<int>(h, g, halo, buf, t, 30 + round), "pooled: ints, round " + std::to_string(round));
    // Round 0 builds the exchange's subarray datatypes; the others take it from the pool.
    h.check((type_subarrays > before) == (round == 0), "pooled: ints, round " + std::to_string(round) + " built " +
                                                           std::to_string(type_subarrays - before) + " subarray types");
  }
  MPI_Type_free(&t);
  MPI_Type_contiguous(1, MPI_DOUBLE, &t);
  MPI_Type_commit(&t);
  for (int round = 0; round < 2; ++round)
    h.check(exchanged_through<double>(h, g, halo, buf, t, 40 + round), "pooled: doubles after the int type was freed, round " + std::to_string(round));
  MPI_Type_free(&t);
  Cart_halo_free(&halo);
}

// Bad arguments: each rank its own error and no request; then, in checking mode, a field count
// that differs on the last rank: MPI_ERR_TRUNCATE on every rank. The halo works afterwards.
void errors(Harness& h, const Grid& g, int size) {
  Cart_Halo halo = make_halo(h, g, "dimwise", "collective");
  std::vector<int> a, b;
  fill(g, a, 5);
  fill(g, b, 6);
  Cart_Request r = CART_REQUEST_NULL;
  h.check(error_class(Cart_halo_iexchange(a.data(), halo, nullptr)) == MPI_ERR_REQUEST, "NULL request: MPI_ERR_REQUEST");
  h.check(error_class(Cart_halo_iexchange(a.data(), CART_HALO_NULL, &r)) == MPI_ERR_ARG && r == CART_REQUEST_NULL,
          "CART_HALO_NULL: MPI_ERR_ARG, no request");
  void* arrays[2] = {a.data(), b.data()};
  const int count = g.me == size - 1 ? 1 : 2;
  const int rc = error_class(Cart_halo_iexchange_fields(count, arrays, nullptr, halo, &r));
  h.check(rc == MPI_ERR_TRUNCATE && r == CART_REQUEST_NULL,
          "checking mode: another field count on the last rank is MPI_ERR_TRUNCATE on every rank, got " + std::to_string(rc));
  h.check(error_class(Cart_halo_iexchange_fields(0, arrays, nullptr, halo, &r)) == MPI_ERR_COUNT && r == CART_REQUEST_NULL,
          "count 0: MPI_ERR_COUNT");
  h.check(Cart_halo_iexchange(a.data(), halo, &r) == MPI_SUCCESS && Cart_wait(&r) == MPI_SUCCESS, "after the errors");
  h.check(wrong_cells(g, a, 5) == 0, "cells after the errors");
  wrap_then_error(h, g, halo);
  Cart_halo_free(&halo);
}

// The C++ form: HaloRequest from Halo::iexchange, completed by wait() or a test() loop; it runs once.
void cpp_form(Harness& h, const Grid& g) {
  try {
    cartplan::mpi::Halo halo(g.comm, {g.interior[0], g.interior[1]}, {kGhost, kGhost}, {kGhost, kGhost}, MPI_INT);
    std::vector<int> a;
    std::vector<double> b;
    fill(g, a, 9);
    fill(g, b, 11);
    cartplan::mpi::HaloRequest r = halo.iexchange(a.data());
    h.check(r.plan().find("\"algorithm\"") != std::string::npos, "C++: the non-blocking request's plan");
    r.wait();
    h.check(wrong_cells(g, a, 9) == 0, "C++: cells after iexchange + wait");
    int refused = MPI_SUCCESS;
    try {
      r.start();
    } catch (const cartplan::mpi::MpiError& e) {
      refused = e.code();
    }
    h.check(refused == MPI_ERR_REQUEST, "C++: a non-blocking request cannot be started again");
    fill(g, a, 12);
    cartplan::mpi::HaloRequest f = halo.iexchange({a.data(), b.data()}, {MPI_INT, MPI_DOUBLE});
    while (!f.test()) {
    }
    h.check(wrong_cells(g, a, 12) == 0 && wrong_cells(g, b, 11) == 0, "C++: fields after a test() loop");
    h.check(f.test(), "C++: test() after completion stays true");
    // Move-assigned while active: the old exchange completes before its halo (the last owner of
    // the halo's communicator here: a temporary) is released.
    std::vector<int> c;
    fill(g, a, 13);
    fill(g, c, 14);
    {
      cartplan::mpi::Halo temporary(g.comm, {g.interior[0], g.interior[1]}, {kGhost, kGhost}, {kGhost, kGhost}, MPI_INT);
      f = temporary.iexchange(a.data());
    }
    f = halo.iexchange(c.data());
    f.wait();
    h.check(wrong_cells(g, a, 13) == 0 && wrong_cells(g, c, 14) == 0, "C++: a request move-assigned while active");
    // A C++ request gives its completed exchange back to the pool as it is destroyed: the same call
    // then builds nothing (round 0 builds: f still holds its exchange of c).
    for (int round = 0; round < 2; ++round) {
      fill(g, c, 15 + round);
      const long before = type_subarrays;
      {
        cartplan::mpi::HaloRequest again = halo.iexchange(c.data());
        again.wait();
      }
      h.check(wrong_cells(g, c, 15 + round) == 0 && (round == 0 || type_subarrays == before),
              "C++: a repeated iexchange takes its exchange from the pool, built " + std::to_string(type_subarrays - before));
    }
  } catch (const cartplan::mpi::MpiError& e) {
    h.check(false, std::string("C++: ") + e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  Grid g = make_grid(h.size);
  each_algorithm(h, g);
  in_flight(h, g);
  lanes_wrap(h, g);
  fields(h, g);
  pooled(h, g);
  errors(h, g, h.size);
  cpp_form(h, g);
  MPI_Comm_free(&g.comm);
  return h.finish("halo_nonblocking_test");
}
