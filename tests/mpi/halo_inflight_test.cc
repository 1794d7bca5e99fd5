// MPI test of the halo API with several requests in flight on one Cartesian communicator: two halos
// (Moore with forced combining, C order; von Neumann with forced dimwise, Fortran order) and a
// third planned by the cost model (auto, with a measuring-mode init mid-flight), persistent
// exchanges on different arrays of each (one a two-field request) started together, blocking
// exchanges, a persistent init, a new halo's creation and exchange and Open MPI's
// MPI_Ineighbor_allgather between the starts, completed in rank-dependent orders (waits reversed,
// Cart_test polling, sleeps), mixed with the user's point-to-point messages on the same
// communicator (MPI_ANY_SOURCE / MPI_ANY_TAG receives, cartplan's lane tags and MPI_TAG_UB, a
// receive blocked while the sender's requests are pending). Every cell of every array is checked
// each iteration with new data: ghosts filled from the right global cell, the others untouched.
// Last, a halo and its communicator are freed while two of its requests are in flight.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/harness.h"
#include "tests/mpi/user_traffic.h"

namespace {

using cartplan::mpitest::complete_in_rank_order;
using cartplan::mpitest::Harness;
using cartplan::mpitest::UserTraffic;

// One halo's description and how to compute what every cell of an array must hold.
struct Shape {
  int interior[2], lo[2], hi[2];
  int order;
  bool von_neumann;  // faces only; else Moore (faces, edges, corners)
  const char* algorithm;
  int extent(int k) const { return lo[k] + interior[k] + hi[k]; }
  int cells() const { return extent(0) * extent(1); }
  int index(int x0, int x1) const { return order == MPI_ORDER_C ? x0 * extent(1) + x1 : x1 * extent(0) + x0; }
};

struct Grid {
  MPI_Comm comm = MPI_COMM_NULL;
  int me = 0, p = 1, dims[2] = {0, 0}, periods[2] = {1, 0}, coords[2] = {0, 0};
};

int interior_value(int g0, int g1, int iter, int id) { return (((iter % 1000) * 8 + id) * 256 + g0) * 256 + g1; }
int untouched_value(int iter, int id) { return -((iter % 1000) * 8 + id) - 1; }

// What cell (x0, x1) of array `id` of shape s must hold after the exchange of iteration iter.
int expected(const Grid& g, const Shape& s, int x0, int x1, int iter, int id) {
  const int x[2] = {x0, x1};
  int G[2], sign[2], nonzero = 0;
  for (int k = 0; k < 2; ++k) {
    sign[k] = x[k] < s.lo[k] ? -1 : (x[k] >= s.lo[k] + s.interior[k] ? 1 : 0);
    nonzero += sign[k] != 0;
    const int n = g.dims[k] * s.interior[k];
    G[k] = g.coords[k] * s.interior[k] + x[k] - s.lo[k];
    if (sign[k] != 0 && g.periods[k]) G[k] = (G[k] + n) % n;
    if (sign[k] != 0 && (G[k] < 0 || G[k] >= n)) return untouched_value(iter, id);  // no source in the mesh
  }
  if (nonzero == 0) return interior_value(G[0], G[1], iter, id);
  if (s.von_neumann && nonzero > 1) return untouched_value(iter, id);  // not in the neighbourhood
  return interior_value(G[0], G[1], iter, id);
}

void fill(const Grid& g, const Shape& s, std::vector<int>& a, int iter, int id) {
  a.assign(static_cast<std::size_t>(s.cells()), 0);
  for (int x0 = 0; x0 < s.extent(0); ++x0)
    for (int x1 = 0; x1 < s.extent(1); ++x1) {
      const bool inside = x0 >= s.lo[0] && x0 < s.lo[0] + s.interior[0] && x1 >= s.lo[1] && x1 < s.lo[1] + s.interior[1];
      a[s.index(x0, x1)] = inside ? expected(g, s, x0, x1, iter, id) : untouched_value(iter, id);
    }
}

// The first wrong cell, or "".
std::string check(const Grid& g, const Shape& s, const std::vector<int>& a, int iter, int id) {
  for (int x0 = 0; x0 < s.extent(0); ++x0)
    for (int x1 = 0; x1 < s.extent(1); ++x1) {
      const int want = expected(g, s, x0, x1, iter, id), got = a[s.index(x0, x1)];
      if (got != want)
        return "array " + std::to_string(id) + " cell (" + std::to_string(x0) + "," + std::to_string(x1) + ") is " + std::to_string(got) +
               ", want " + std::to_string(want) + " (iteration " + std::to_string(iter) + ")";
    }
  return "";
}

const Shape kMoore = {{5, 4}, {1, 2}, {2, 1}, MPI_ORDER_C, false, "combining"};
const Shape kVonNeumann = {{4, 6}, {2, 1}, {1, 1}, MPI_ORDER_FORTRAN, true, "dimwise"};
const Shape kAuto = {{3, 5}, {1, 1}, {1, 1}, MPI_ORDER_C, false, "auto"};  // Moore, planned by the cost model

Cart_Halo make_halo(Harness& h, const Grid& g, const Shape& s) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", s.algorithm);
  if (s.von_neumann) MPI_Info_set(info, "cartplan_stencil", "vonneumann:d=2,r=1");
  Cart_Halo halo = CART_HALO_NULL;
  h.check(Cart_halo_create(g.comm, 2, s.interior, s.lo, s.hi, MPI_INT, s.order, info, &halo) == MPI_SUCCESS,
          std::string("Cart_halo_create ") + s.algorithm + ": " + Cart_error_message());
  MPI_Info_free(&info);
  return halo;
}

// The arrays: 0 Moore persistent, 1 and 2 Moore two-field persistent, 3 von Neumann persistent,
// 4 von Neumann blocking, 5 Moore blocking, 6 Moore persistent made mid-flight, 7 a new halo's
// (von Neumann's shape) blocking exchange mid-flight, 8 the auto halo's persistent, 9 the auto
// halo's persistent made mid-flight in measuring mode, 10 and 11 the auto halo's blocking
// two-field exchange (priced for 8 bytes a cell: its own plan). 6, 7 and 9 only exchanged in some
// iterations.
constexpr int kArrays = 12;
struct Arrays {
  std::vector<int> a[kArrays];
  const Shape* shape[kArrays] = {&kMoore, &kMoore, &kMoore, &kVonNeumann, &kVonNeumann, &kMoore,
                                 &kMoore, &kVonNeumann, &kAuto, &kAuto, &kAuto, &kAuto};
  static bool exchanged(int id, int iter) {
    return id < 6 || id == 8 || id >= 10 || ((id == 6 || id == 9) && iter % 6 == 5) || (id == 7 && iter % 6 == 2);
  }
};

// Collective calls made while the iteration's requests are in flight, the same on every rank:
// every sixth iteration persistent inits on array 6 (Moore) and on array 9 (the auto halo, in
// measuring mode: its trials run while the auto halo's own request is in flight), started at once
// and freed after completion; every sixth, offset by 2, a new halo (von Neumann's shape)
// created, used once (blocking, array 7) and freed.
struct Midflight {
  Cart_Request extra = CART_REQUEST_NULL, measured = CART_REQUEST_NULL;
  std::string begin(Harness& h, const Grid& g, Arrays& x, Cart_Halo moore, Cart_Halo automatic, int iter) {
    if (iter % 6 == 2) {
      Cart_Halo fresh = make_halo(h, g, kVonNeumann);
      const int rc = Cart_halo_exchange(x.a[7].data(), fresh);
      Cart_halo_free(&fresh);
      return rc != MPI_SUCCESS ? std::string("blocking exchange of a new halo: ") + Cart_error_message() : check(g, kVonNeumann, x.a[7], iter, 7);
    }
    if (iter % 6 != 5) return "";
    if (Cart_halo_exchange_init(x.a[6].data(), moore, MPI_INFO_NULL, &extra) != MPI_SUCCESS || Cart_start(&extra) != MPI_SUCCESS)
      return std::string("persistent init while others are in flight: ") + Cart_error_message();
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cartplan_tune", "measure");
    const int rc = Cart_halo_exchange_init(x.a[9].data(), automatic, info, &measured);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS || Cart_start(&measured) != MPI_SUCCESS)
      return std::string("measuring init while others are in flight: ") + Cart_error_message();
    return "";
  }
  // After the others completed: complete the extra request and free it (its cells are checked
  // with the other arrays).
  std::string end(int iter) {
    if (iter % 6 != 5) return "";
    std::string fail;
    if (Cart_wait(&measured) != MPI_SUCCESS) fail = std::string("measured request: wait: ") + Cart_error_message();
    if (Cart_wait(&extra) != MPI_SUCCESS && fail.empty()) fail = std::string("extra request: wait: ") + Cart_error_message();
    if ((Cart_request_free(&extra) != MPI_SUCCESS || Cart_request_free(&measured) != MPI_SUCCESS) && fail.empty()) fail = "extra requests: free";
    return fail;
  }
};

// The test's halos and persistent requests: reqs[0] on array 0 and reqs[1] on arrays 1 and 2
// (Moore), reqs[2] on array 3 (von Neumann), reqs[3] on array 8 (auto).
struct Halos {
  Cart_Halo moore = CART_HALO_NULL, vn = CART_HALO_NULL, automatic = CART_HALO_NULL;
  Cart_Request reqs[4] = {CART_REQUEST_NULL, CART_REQUEST_NULL, CART_REQUEST_NULL, CART_REQUEST_NULL};
  Midflight mid;
};

// The first wrong cell of the iteration's arrays: exchanged ones as `expected` says, the others
// exactly as filled (nothing wrote them).
std::string check_arrays(const Grid& g, const Arrays& x, int iter) {
  std::string fail;
  for (int id = 0; id < kArrays && fail.empty(); ++id) {
    if (Arrays::exchanged(id, iter)) {
      fail = check(g, *x.shape[id], x.a[id], iter, id);
      continue;
    }
    std::vector<int> fresh;
    fill(g, *x.shape[id], fresh, iter, id);
    if (fresh != x.a[id]) fail = "array " + std::to_string(id) + " written in iteration " + std::to_string(iter) + " without an exchange";
  }
  return fail;
}

bool cartplan_progress_only() {
  const char* p = std::getenv("CARTPLAN_PROGRESS");
  return p && std::string(p) == "cartplan";
}

// One iteration: the same sequence of halo calls on every rank (starts, a blocking exchange,
// the mid-flight calls, another blocking exchange, Cart_startall); user messages sent first on
// even ranks and after completion on odd ones, received while requests are in flight on even
// ranks.
std::string iteration(Harness& h, const Grid& g, Arrays& x, Halos& hs, UserTraffic& user, int iter) {
  for (int id = 0; id < kArrays; ++id) {
    std::vector<int> fresh;
    fill(g, *x.shape[id], fresh, iter, id);
    std::copy(fresh.begin(), fresh.end(), x.a[id].begin());  // same storage: the requests keep pointers
  }
  const bool even = g.me % 2 == 0;
  // With progress only inside Cart_* calls (CARTPLAN_PROGRESS=cartplan) a rank blocked in
  // MPI_Recv does not advance its requests, so there every rank sends before the receives.
  const bool send_early = even || cartplan_progress_only();
  std::string fail;
  bool ok = true;
  if (send_early) user.send(iter);
  ok = Cart_start(&hs.reqs[3]) == MPI_SUCCESS && Cart_start(&hs.reqs[0]) == MPI_SUCCESS && Cart_start(&hs.reqs[2]) == MPI_SUCCESS && ok;
  ok = Cart_halo_exchange(x.a[4].data(), hs.vn) == MPI_SUCCESS && ok;
  void* const pair[2] = {x.a[10].data(), x.a[11].data()};
  const MPI_Datatype ints[2] = {MPI_INT, MPI_INT};
  ok = Cart_halo_exchange_fields(2, pair, ints, hs.automatic) == MPI_SUCCESS && ok;
  const std::string midflight = hs.mid.begin(h, g, x, hs.moore, hs.automatic, iter);
  ok = Cart_halo_exchange(x.a[5].data(), hs.moore) == MPI_SUCCESS && ok;
  // Started last, just before even ranks block in MPI_Recv: its second (combining) phase is
  // posted by progress inside that MPI_Recv, which the odd sender waits for.
  ok = Cart_startall(1, &hs.reqs[1]) == MPI_SUCCESS && ok;
  // Open MPI's own neighbourhood collective on the Cartesian communicator, in flight with the
  // halo requests: every rank's value from its 2d neighbours (MPI_PROC_NULL: untouched).
  MPI_Request mine = MPI_REQUEST_NULL;
  const int own = UserTraffic::payload(g.me, 3, 0, iter);
  int theirs[4] = {-1, -1, -1, -1};
  MPI_Ineighbor_allgather(&own, 1, MPI_INT, theirs, 1, MPI_INT, g.comm, &mine);
  if (even) fail = user.receive(iter);
  std::vector<Cart_Request*> handles;
  for (Cart_Request& r : hs.reqs) handles.push_back(&r);
  ok = complete_in_rank_order(user, handles, iter, &fail) && ok;
  const std::string extra = hs.mid.end(iter);
  MPI_Wait(&mine, MPI_STATUS_IGNORE);
  for (int k = 0; k < 2; ++k) {
    int from[2];
    MPI_Cart_shift(g.comm, k, 1, &from[0], &from[1]);
    for (int side = 0; side < 2; ++side)
      if (fail.empty() && theirs[2 * k + side] != (from[side] == MPI_PROC_NULL ? -1 : UserTraffic::payload(from[side], 3, 0, iter)))
        fail = "MPI_Ineighbor_allgather in flight with the halo requests: neighbour " + std::to_string(2 * k + side);
  }
  if (!send_early) user.send(iter);
  if (!even && fail.empty()) fail = user.receive(iter);
  MPI_Waitall(2, user.sends, MPI_STATUSES_IGNORE);
  if (!ok) return "a call failed at iteration " + std::to_string(iter) + ": " + Cart_error_message();
  if (fail.empty()) fail = !midflight.empty() ? midflight : extra;
  return fail.empty() ? check_arrays(g, x, iter) : fail;
}

// The halo and its Cartesian communicator freed while two of its requests are in flight (the
// halo's private communicators outlive both): a request on array a and a two-field one on b and
// c started, Cart_halo_free and MPI_Comm_free (after a sleep on odd ranks), then completed in
// rank-dependent order, every cell checked; started once more, then freed.
std::string free_while_in_flight(const Grid& grid, Harness& h) {
  Grid g = grid;
  MPI_Comm_dup(grid.comm, &g.comm);
  Cart_Halo halo = make_halo(h, g, kVonNeumann);
  std::vector<int> arr[3];
  for (std::vector<int>& v : arr) v.assign(static_cast<std::size_t>(kVonNeumann.cells()), 0);
  void* const fields[2] = {arr[1].data(), arr[2].data()};
  Cart_Request r[2] = {CART_REQUEST_NULL, CART_REQUEST_NULL};
  if (Cart_halo_exchange_init(arr[0].data(), halo, MPI_INFO_NULL, &r[0]) != MPI_SUCCESS ||
      Cart_halo_exchange_fields_init(2, fields, nullptr, halo, MPI_INFO_NULL, &r[1]) != MPI_SUCCESS)
    return std::string("init: ") + Cart_error_message();
  std::string fail;
  for (int it = 40; it < 42 && fail.empty(); ++it) {
    for (int id = 0; id < 3; ++id) {
      std::vector<int> fresh;
      fill(g, kVonNeumann, fresh, it, id);
      std::copy(fresh.begin(), fresh.end(), arr[id].begin());
    }
    if (Cart_startall(2, r) != MPI_SUCCESS) return std::string("start: ") + Cart_error_message();
    if (it == 40) {
      if (g.me % 2) usleep(500);
      Cart_halo_free(&halo);
      MPI_Comm_free(&g.comm);
    }
    const int first = g.me % 2;
    if (Cart_wait(&r[first]) != MPI_SUCCESS || Cart_wait(&r[1 - first]) != MPI_SUCCESS) return std::string("wait: ") + Cart_error_message();
    for (int id = 0; id < 3 && fail.empty(); ++id) fail = check(g, kVonNeumann, arr[id], it, id);
  }
  for (Cart_Request& q : r)
    if (Cart_request_free(&q) != MPI_SUCCESS && fail.empty()) fail = "free";
  return fail;
}

void run(Harness& h, int iterations) {
  Grid g;
  MPI_Dims_create(h.size, 2, g.dims);
  MPI_Cart_create(MPI_COMM_WORLD, 2, g.dims, g.periods, 0, &g.comm);
  MPI_Comm_rank(g.comm, &g.me);
  MPI_Comm_size(g.comm, &g.p);
  MPI_Cart_coords(g.comm, g.me, 2, g.coords);
  Halos hs;
  hs.moore = make_halo(h, g, kMoore);
  hs.vn = make_halo(h, g, kVonNeumann);
  hs.automatic = make_halo(h, g, kAuto);
  Arrays x;
  for (int id = 0; id < kArrays; ++id) x.a[id].assign(static_cast<std::size_t>(x.shape[id]->cells()), 0);
  void* const fields[2] = {x.a[1].data(), x.a[2].data()};
  h.check(Cart_halo_exchange_init(x.a[0].data(), hs.moore, MPI_INFO_NULL, &hs.reqs[0]) == MPI_SUCCESS, "init Moore");
  h.check(Cart_halo_exchange_fields_init(2, fields, nullptr, hs.moore, MPI_INFO_NULL, &hs.reqs[1]) == MPI_SUCCESS, "init Moore fields");
  h.check(Cart_halo_exchange_init(x.a[3].data(), hs.vn, MPI_INFO_NULL, &hs.reqs[2]) == MPI_SUCCESS, "init von Neumann");
  h.check(Cart_halo_exchange_init(x.a[8].data(), hs.automatic, MPI_INFO_NULL, &hs.reqs[3]) == MPI_SUCCESS, "init auto");
  UserTraffic user(g.comm);
  std::string fail;
  for (int it = 0; it < iterations; ++it) {  // every rank runs every iteration: no rank left waiting
    const std::string f = iteration(h, g, x, hs, user, it);
    if (fail.empty()) fail = f;
  }
  h.check(fail.empty(), fail);
  for (Cart_Request& r : hs.reqs) h.check(Cart_request_free(&r) == MPI_SUCCESS, "free a request");
  Cart_halo_free(&hs.moore);
  Cart_halo_free(&hs.vn);
  Cart_halo_free(&hs.automatic);
  const std::string freed = free_while_in_flight(g, h);
  h.check(freed.empty(), "halo and communicator freed with requests in flight: " + freed);
  MPI_Comm_free(&g.comm);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  run(h, 30);
  return h.finish("halo_inflight_test");
}
