// MPI test of checking mode on halo exchanges (cartplan_check=collective, docs/halo.md): where one
// rank's blocking Cart_halo_exchange[_fields] or fields init passes another number of fields,
// element sizes adding up to another sum, the same sum in other sizes, or a bad argument, every
// rank returns the same error class (MPI_ERR_TRUNCATE naming what differs; the bad argument's
// class), no ghost cell is written, and correct calls on the same halo afterwards fill every
// ghost cell with its source rank's value (2-D torus, Moore, fields of doubles and floats).
// Checking mode comes from Info at Cart_halo_create, from CARTPLAN_CHECK, and from a cartplan
// communicator's Info; the C++ form throws on every rank alike; a bad cartplan_check value on one
// rank fails creation everywhere; a build that fails on one rank only (out of memory) is an error
// on every rank, in checking mode's blocking calls and in persistent inits of any mode (fields
// init and Cart_halo_exchange_init: no request, and an init afterwards delivers); so is planning
// out of memory on one rank (CARTPLAN_TEST_FAIL=halo-plan) in Cart_halo_create, a fields init and
// checking mode's blocking call (no halo, no request, no ghost cell written). The mismatched
// calls run only in checking mode: without it they could hang, and the run's time limit fails the
// test.
#include <mpi.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "backends/mpi/cartplan.hpp"
#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;
using cartplan::mpitest::open_checking_moore;
using cartplan::mpitest::open_plain_cart2;

constexpr int kNx = 4, kNy = 3;                  // interior, one ghost layer on every side
constexpr int kEx = kNx + 2, kEy = kNy + 2;      // array extents (C order)
constexpr double kSentinel = -1;                 // no value of value() equals it

double value(int rank, int field, int i, int j, int salt) { return rank * 1000 + field * 100 + i * 10 + j + salt * 10000; }

bool ghost(int i, int j) { return i < 0 || j < 0 || i >= kNx || j >= kNy; }

// The arrays every call passes: u and w of doubles, p of floats (fields 0, 1, 2).
struct Fields {
  std::vector<double> u = std::vector<double>(kEx * kEy), w = std::vector<double>(kEx * kEy);
  std::vector<float> p = std::vector<float>(kEx * kEy);

  template <class T>
  static void fill_one(std::vector<T>& a, int rank, int field, int salt) {
    for (int i = -1; i <= kNx; ++i)
      for (int j = -1; j <= kNy; ++j) a[(i + 1) * kEy + (j + 1)] = static_cast<T>(ghost(i, j) ? kSentinel : value(rank, field, i, j, salt));
  }
  void fill(int rank, int salt) {
    fill_one(u, rank, 0, salt);
    fill_one(p, rank, 1, salt);
    fill_one(w, rank, 2, salt);
  }
};

// Whether every ghost cell of `a` holds the value of its source (the process at self + sign
// vector, cell x - sign * interior), or with `untouched` still the sentinel.
template <class T>
bool ghosts_ok(MPI_Comm cart, const std::vector<T>& a, int field, int salt, bool untouched) {
  int me = 0, coords[2] = {0, 0};
  MPI_Comm_rank(cart, &me);
  MPI_Cart_coords(cart, me, 2, coords);
  for (int i = -1; i <= kNx; ++i)
    for (int j = -1; j <= kNy; ++j) {
      if (!ghost(i, j)) continue;
      const int t[2] = {i < 0 ? -1 : i >= kNx ? 1 : 0, j < 0 ? -1 : j >= kNy ? 1 : 0};
      int at[2] = {coords[0] + t[0], coords[1] + t[1]}, source = 0;
      MPI_Cart_rank(cart, at, &source);  // periodic: wraps
      const double want = untouched ? kSentinel : value(source, field, i - t[0] * kNx, j - t[1] * kNy, salt);
      if (a[(i + 1) * kEy + (j + 1)] != static_cast<T>(want)) return false;
    }
  return true;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

struct Tester {
  Harness& h;
  MPI_Comm cart;
  Cart_Halo halo;
  std::string mode;  // where checking mode came from
  Fields f;
  int salt = 0;

  bool all_ghosts(int fields, bool untouched) {
    bool ok = ghosts_ok(cart, f.u, 0, salt, untouched);
    if (fields >= 2) ok = ok && ghosts_ok(cart, f.p, 1, salt, untouched);
    if (fields >= 3) ok = ok && ghosts_ok(cart, f.w, 2, salt, untouched);
    return ok;
  }

  // A correct blocking call and a correct persistent request (two starts): every ghost cell.
  void good_calls(const std::string& after) {
    void* arrays[3] = {f.u.data(), f.p.data(), f.w.data()};
    const MPI_Datatype types[3] = {MPI_DOUBLE, MPI_FLOAT, MPI_DOUBLE};
    f.fill(h.rank, ++salt);
    int rc = Cart_halo_exchange_fields(3, arrays, types, halo);
    h.check(rc == MPI_SUCCESS && all_ghosts(3, false), mode + ": blocking fields after " + after + ": rc " + std::to_string(rc));
    f.fill(h.rank, ++salt);
    rc = Cart_halo_exchange(f.u.data(), halo);
    h.check(rc == MPI_SUCCESS && all_ghosts(1, false), mode + ": Cart_halo_exchange after " + after + ": rc " + std::to_string(rc));
    Cart_Request req = CART_REQUEST_NULL;
    rc = Cart_halo_exchange_fields_init(2, arrays, types, halo, MPI_INFO_NULL, &req);
    h.check(rc == MPI_SUCCESS, mode + ": fields init after " + after + ": " + Cart_error_message());
    for (int k = 0; k < 2 && rc == MPI_SUCCESS; ++k) {
      f.fill(h.rank, ++salt);
      const bool ran = Cart_start(&req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS;
      h.check(ran && all_ghosts(2, false), mode + ": persistent fields after " + after);
    }
    if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  }

  // One mismatched call: every rank gets `code` with `words` in its message (`other_words` on
  // ranks that were not the odd one, if given), and no ghost cell of `fields` arrays changed.
  void expect_refused(int rc, int code, const std::string& words, const std::string& what, int fields = 3) {
    const std::string msg = rc == MPI_SUCCESS ? "" : Cart_error_message();
    h.check(rc == code, mode + ": " + what + ": error class " + std::to_string(rc) + ", expected " + std::to_string(code) + " (" + msg + ")");
    h.check(contains(msg, words), mode + ": " + what + ": message '" + msg + "' lacks '" + words + "'");
    h.check(all_ghosts(fields, true), mode + ": " + what + ": a refused call wrote ghost cells");
    good_calls(what);
  }

  void blocking_mismatches() {
    void* udw[3] = {f.u.data(), f.p.data(), f.w.data()};
    const MPI_Datatype dfd[3] = {MPI_DOUBLE, MPI_FLOAT, MPI_DOUBLE}, dd[2] = {MPI_DOUBLE, MPI_DOUBLE}, fd[2] = {MPI_FLOAT, MPI_DOUBLE};
    void* uw[2] = {f.u.data(), f.w.data()};
    void* pu[2] = {f.p.data(), f.u.data()};
    const int odd = 1 % h.size, last = h.size - 1;
    // The number of fields: 3 on one rank, 2 elsewhere.
    f.fill(h.rank, ++salt);
    int rc = Cart_halo_exchange_fields(h.rank == odd ? 3 : 2, udw, dfd, halo);
    expect_refused(rc, MPI_ERR_TRUNCATE, "number of fields differs between ranks (min 2, max 3)", "field count");
    // The sum: double + double (16 bytes) on one rank, double + float (12) elsewhere.
    f.fill(h.rank, ++salt);
    rc = Cart_halo_exchange_fields(2, h.rank == last ? uw : udw, h.rank == last ? dd : dfd, halo);
    expect_refused(rc, MPI_ERR_TRUNCATE, "add up to different sums on different ranks (min 12, max 16", "element size");
    // The same count and sum, other sizes in order: float, double on rank 0.
    f.fill(h.rank, ++salt);
    rc = Cart_halo_exchange_fields(2, h.rank == 0 ? pu : udw, h.rank == 0 ? fd : dfd, halo);
    expect_refused(rc, MPI_ERR_TRUNCATE, "element sizes differ between ranks (field 0: min 4, max 8 bytes", "element sizes in another order");
    // Cart_halo_exchange (the halo's double) against one float field elsewhere.
    f.fill(h.rank, ++salt);
    void* p1[1] = {f.p.data()};
    const MPI_Datatype f1[1] = {MPI_FLOAT};
    rc = h.rank == odd ? Cart_halo_exchange(f.u.data(), halo) : Cart_halo_exchange_fields(1, p1, f1, halo);
    expect_refused(rc, MPI_ERR_TRUNCATE, "(min 4, max 8", "Cart_halo_exchange against a float field");
    // A bad argument on one rank only: every rank returns its class.
    f.fill(h.rank, ++salt);
    void* bad[2] = {f.u.data(), h.rank == 0 ? nullptr : f.p.data()};
    rc = Cart_halo_exchange_fields(2, bad, dfd, halo);
    expect_refused(rc, MPI_ERR_BUFFER, h.rank == 0 ? "arrays[1] is NULL" : "another rank", "NULL array on rank 0");
    // A bad argument on rank 0 and another field count on another rank: the error wins.
    if (h.size > 2) {
      f.fill(h.rank, ++salt);
      rc = Cart_halo_exchange_fields(h.rank == odd ? 3 : 2, h.rank == 0 ? bad : udw, dfd, halo);
      expect_refused(rc, MPI_ERR_BUFFER, h.rank == 0 ? "arrays[1] is NULL" : "another rank", "NULL array on rank 0, 3 fields on rank 1");
    }
  }

  void init_mismatches() {
    void* udw[3] = {f.u.data(), f.p.data(), f.w.data()};
    void* uw[2] = {f.u.data(), f.w.data()};
    const MPI_Datatype dfd[3] = {MPI_DOUBLE, MPI_FLOAT, MPI_DOUBLE}, dd[2] = {MPI_DOUBLE, MPI_DOUBLE};
    const int odd = 1 % h.size;
    Cart_Request req = CART_REQUEST_NULL;
    f.fill(h.rank, ++salt);
    int rc = Cart_halo_exchange_fields_init(h.rank == odd ? 3 : 2, udw, dfd, halo, MPI_INFO_NULL, &req);
    h.check(req == CART_REQUEST_NULL, mode + ": a refused init leaves CART_REQUEST_NULL");
    expect_refused(rc, MPI_ERR_TRUNCATE, "number of fields differs between ranks (min 2, max 3)", "init field count");
    f.fill(h.rank, ++salt);
    rc = Cart_halo_exchange_fields_init(2, h.rank == odd ? uw : udw, h.rank == odd ? dd : dfd, halo, MPI_INFO_NULL, &req);
    h.check(req == CART_REQUEST_NULL, mode + ": a refused init leaves CART_REQUEST_NULL");
    expect_refused(rc, MPI_ERR_TRUNCATE, "add up to different sums on different ranks (min 12, max 16", "init element size");
  }

  void run() {
    good_calls("creation");
    if (h.size < 2) return;  // one rank cannot disagree with itself
    blocking_mismatches();
    init_mismatches();
  }
};

const int kInterior[2] = {kNx, kNy}, kGhost[2] = {1, 1};

MPI_Comm plain_torus(Harness& h) { return open_plain_cart2(h.size); }

// A halo on `cart` (the test fails where it cannot be created: then CART_HALO_NULL).
Cart_Halo create(Harness& h, MPI_Comm cart, MPI_Info info, const std::string& mode) {
  Cart_Halo halo = CART_HALO_NULL;
  const int rc = Cart_halo_create(cart, 2, kInterior, kGhost, kGhost, MPI_DOUBLE, MPI_ORDER_C, info, &halo);
  h.check(rc == MPI_SUCCESS, mode + ": Cart_halo_create: " + (rc == MPI_SUCCESS ? "" : Cart_error_message()));
  return halo;
}

// The Tester's calls on `halo`, which is then freed.
void run_on(Harness& h, MPI_Comm cart, Cart_Halo halo, const std::string& mode) {
  if (halo == CART_HALO_NULL) return;
  Tester t{h, cart, halo, mode, {}};
  t.run();
  Cart_halo_free(&halo);
}

void run_case(Harness& h, MPI_Comm cart, MPI_Info info, const std::string& mode) { run_on(h, cart, create(h, cart, info, mode), mode); }

void from_info(Harness& h) {
  MPI_Comm cart = plain_torus(h);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_check", "collective");
  run_case(h, cart, info, "Info cartplan_check at creation");
  if (h.size > 1) {  // ranks that disagree on checking mode: creation refuses on every rank
    MPI_Info_set(info, "cartplan_check", h.rank == 0 ? "collective" : "none");
    Cart_Halo halo = CART_HALO_NULL;
    const int rc = Cart_halo_create(cart, 2, kInterior, kGhost, kGhost, MPI_DOUBLE, MPI_ORDER_C, info, &halo);
    h.check(rc == MPI_ERR_ARG && halo == CART_HALO_NULL, "cartplan_check differing between ranks: MPI_ERR_ARG, got " + std::to_string(rc));
    // A value that is neither none nor collective on one rank: refused on every rank alike.
    MPI_Info_set(info, "cartplan_check", h.rank == h.size - 1 ? "bogus" : "collective");
    const int bogus = Cart_halo_create(cart, 2, kInterior, kGhost, kGhost, MPI_DOUBLE, MPI_ORDER_C, info, &halo);
    const std::string msg = bogus == MPI_SUCCESS ? "" : Cart_error_message();
    h.check(bogus == MPI_ERR_INFO_VALUE && halo == CART_HALO_NULL, "cartplan_check = 'bogus' on the last rank: MPI_ERR_INFO_VALUE, got " +
                                                                     std::to_string(bogus) + " (" + msg + ")");
    h.check(contains(msg, h.rank == h.size - 1 ? "cartplan_check = 'bogus'" : "another rank"), "cartplan_check = 'bogus': message '" + msg + "'");
  }
  MPI_Info_free(&info);
  MPI_Comm_free(&cart);
}

// The C++ form: a types vector of another length on rank 0 only throws on every rank (agreed),
// and the next exchange fills every ghost cell.
void cpp_form(Harness& h) {
  MPI_Comm cart = plain_torus(h);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_check", "collective");
  cartplan::mpi::Halo halo(cart, {kNx, kNy}, {1, 1}, {1, 1}, MPI_DOUBLE, MPI_ORDER_C, info);
  MPI_Info_free(&info);
  Fields f;
  f.fill(h.rank, 1);
  const std::vector<void*> arrays = {f.u.data(), f.p.data()};
  int code = MPI_SUCCESS;
  std::string msg;
  try {
    halo.exchange(arrays, h.rank == 0 ? std::vector<MPI_Datatype>{MPI_DOUBLE} : std::vector<MPI_Datatype>{MPI_DOUBLE, MPI_FLOAT});
  } catch (const cartplan::mpi::MpiError& e) {
    code = e.code();
    msg = e.what();
  }
  h.check(code == MPI_ERR_ARG && contains(msg, h.rank == 0 ? "one entry per array" : "another rank"),
          "C++: types of another length on rank 0: class " + std::to_string(code) + " '" + msg + "'");
  h.check(ghosts_ok(cart, f.u, 0, 1, true) && ghosts_ok(cart, f.p, 1, 1, true), "C++: the refused exchange wrote ghost cells");
  try {
    halo.exchange(arrays, {MPI_DOUBLE, MPI_FLOAT});
    h.check(ghosts_ok(cart, f.u, 0, 1, false) && ghosts_ok(cart, f.p, 1, 1, false), "C++: exchange after the refusal");
  } catch (const cartplan::mpi::MpiError& e) {
    h.check(false, std::string("C++: exchange after the refusal threw: ") + e.what());
  }
  MPI_Comm_free(&cart);
}

// A type of a double's size whose true extent is 2^50 bytes: a combining plan's temps for it
// cannot be had (more than a 47-bit address space holds).
MPI_Datatype huge_extent_type() {
  MPI_Datatype huge = MPI_DATATYPE_NULL;
  const int lens[2] = {1, 1};
  const MPI_Aint displs[2] = {0, MPI_Aint{1} << 50};
  MPI_Type_create_hindexed(2, lens, displs, MPI_FLOAT, &huge);
  MPI_Type_commit(&huge);
  return huge;
}

// Whether `halo`'s plan stages cells in temp slots (what the out-of-memory cases rely on).
bool stages_in_temps(Cart_Halo halo) {
  char* json = nullptr;
  const bool temps = halo != CART_HALO_NULL && Cart_halo_plan(halo, &json) == MPI_SUCCESS && contains(json, "\"temps\": [{");
  if (json) Cart_free_plan_json(json);
  return temps;
}

// A build that fails on one rank only, after the fields agree: rank 0's second element type
// has the size of a double but a true extent of 2^50 bytes, so the temps a combining plan
// allocates per field cannot be had (more than a 47-bit address space holds) and its build
// reports MPI_ERR_NO_MEM. Checking mode builds before it agrees: every rank returns
// MPI_ERR_NO_MEM and nobody waits for rank 0's messages (a hang fails the run's time limit);
// nothing is written and the next exchange is correct.
void local_build_failure(Harness& h) {
  MPI_Comm cart = plain_torus(h);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_check", "collective");
  MPI_Info_set(info, "cartplan_algorithm", "combining");
  const Cart_Halo halo = create(h, cart, info, "combining, checking");
  MPI_Info_free(&info);
  const bool temps = stages_in_temps(halo);
  h.check(temps, "the combining plan stages cells in temps (else this case tests nothing)");
  if (temps) {
    MPI_Datatype huge = huge_extent_type();
    Fields f;
    f.fill(h.rank, 1);
    void* uw[2] = {f.u.data(), f.w.data()};
    const MPI_Datatype dd[2] = {MPI_DOUBLE, MPI_DOUBLE}, dh[2] = {MPI_DOUBLE, huge};
    int rc = Cart_halo_exchange_fields(2, uw, h.rank == 0 ? dh : dd, halo);
    const std::string msg = rc == MPI_SUCCESS ? "" : Cart_error_message();
    h.check(rc == MPI_ERR_NO_MEM && contains(msg, h.rank == 0 ? "out of memory" : "another rank"),
            "a build out of memory on rank 0 only: every rank MPI_ERR_NO_MEM, got " + std::to_string(rc) + " '" + msg + "'");
    h.check(ghosts_ok(cart, f.u, 0, 1, true) && ghosts_ok(cart, f.w, 2, 1, true), "the refused exchange wrote ghost cells");
    rc = Cart_halo_exchange_fields(2, uw, dd, halo);
    h.check(rc == MPI_SUCCESS && ghosts_ok(cart, f.u, 0, 1, false) && ghosts_ok(cart, f.w, 2, 1, false),
            "exchange after a build out of memory: rc " + std::to_string(rc));
    MPI_Type_free(&huge);
  }
  Cart_Halo freed = halo;
  if (freed != CART_HALO_NULL) Cart_halo_free(&freed);
  MPI_Comm_free(&cart);
}

// A call that ran out of memory on rank 0 only: every rank MPI_ERR_NO_MEM (rank 0's message has
// `rank0_words`, the others' "another rank"), and nothing made (no request, halo, ghost cell).
void expect_no_mem(Harness& h, int rc, bool nothing_made, const std::string& rank0_words, const std::string& what) {
  const std::string msg = rc == MPI_SUCCESS ? "" : Cart_error_message();
  h.check(rc == MPI_ERR_NO_MEM && contains(msg, h.rank == 0 ? rank0_words : "another rank"),
          what + ", out of memory on rank 0 only: every rank MPI_ERR_NO_MEM, got " + std::to_string(rc) + " '" + msg + "'");
  h.check(nothing_made, what + ", out of memory: nothing made");
}

// One persistent init whose build runs out of memory on rank 0 only: no request.
void expect_init_no_mem(Harness& h, int rc, Cart_Request req, const std::string& what) {
  expect_no_mem(h, rc, req == CART_REQUEST_NULL, "out of memory building the halo exchange", what);
}

// A persistent fields init on `halo` of u and w as doubles, started twice: every ghost cell.
bool init_delivers(Harness& h, MPI_Comm cart, Cart_Halo halo, Fields& f) {
  void* uw[2] = {f.u.data(), f.w.data()};
  const MPI_Datatype dd[2] = {MPI_DOUBLE, MPI_DOUBLE};
  Cart_Request req = CART_REQUEST_NULL;
  bool ok = Cart_halo_exchange_fields_init(2, uw, dd, halo, MPI_INFO_NULL, &req) == MPI_SUCCESS;
  for (int salt = 2; salt < 4 && ok; ++salt) {
    f.fill(h.rank, salt);
    ok = Cart_start(&req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS && ghosts_ok(cart, f.u, 0, salt, false) &&
         ghosts_ok(cart, f.w, 2, salt, false);
  }
  if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  return ok;
}

// Persistent inits (default mode: init agrees before any message in every mode) whose build
// runs out of memory on rank 0 only, through the same 2^50-byte extent: the fields form (rank 0's
// second type), and Cart_halo_exchange_init on a halo whose element type is that type on rank 0.
// Each is MPI_ERR_NO_MEM on every rank with no request; an init on the same halo then delivers.
void inits_out_of_memory(Harness& h, MPI_Comm cart, Cart_Halo halo, MPI_Info info) {
  MPI_Datatype huge = huge_extent_type();
  Fields f;
  f.fill(h.rank, 1);
  void* uw[2] = {f.u.data(), f.w.data()};
  const MPI_Datatype dd[2] = {MPI_DOUBLE, MPI_DOUBLE}, dh[2] = {MPI_DOUBLE, huge};
  Cart_Request req = CART_REQUEST_NULL;
  int rc = Cart_halo_exchange_fields_init(2, uw, h.rank == 0 ? dh : dd, halo, MPI_INFO_NULL, &req);
  expect_init_no_mem(h, rc, req, "fields init");
  if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  h.check(init_delivers(h, cart, halo, f), "fields init after one out of memory: every ghost cell");
  Cart_Halo odd = CART_HALO_NULL;
  rc = Cart_halo_create(cart, 2, kInterior, kGhost, kGhost, h.rank == 0 ? huge : MPI_DOUBLE, MPI_ORDER_C, info, &odd);
  h.check(rc == MPI_SUCCESS, "Cart_halo_create with the 2^50-extent element type on rank 0: " + std::to_string(rc));
  if (rc == MPI_SUCCESS) {
    f.fill(h.rank, 1);
    rc = Cart_halo_exchange_init(f.u.data(), odd, MPI_INFO_NULL, &req);
    expect_init_no_mem(h, rc, req, "Cart_halo_exchange_init");
    if (req != CART_REQUEST_NULL) Cart_request_free(&req);
    h.check(init_delivers(h, cart, odd, f), "fields init of doubles on that halo afterwards: every ghost cell");
    Cart_halo_free(&odd);
  }
  MPI_Type_free(&huge);
}

// The combining halo the out-of-memory inits run on, once its plan is seen to stage in temps.
void init_out_of_memory(Harness& h) {
  MPI_Comm cart = plain_torus(h);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", "combining");
  const Cart_Halo halo = create(h, cart, info, "combining");
  const bool temps = stages_in_temps(halo);
  h.check(temps, "init out of memory: the combining plan stages cells in temps (else this case tests nothing)");
  if (temps) inits_out_of_memory(h, cart, halo, info);
  MPI_Info_free(&info);
  Cart_Halo freed = halo;
  if (freed != CART_HALO_NULL) Cart_halo_free(&freed);
  MPI_Comm_free(&cart);
}

// Planning out of memory on rank 0 only (CARTPLAN_TEST_FAIL=halo-plan: std::bad_alloc where a
// halo's planning steps run before its agreements): Cart_halo_create, a persistent init and a
// blocking call in checking mode are MPI_ERR_NO_MEM on every rank (rank 0 "out of memory
// planning the halo", the others "another rank"), with no halo, no request, no ghost cell
// written; then each works.
void expect_planning_no_mem(Harness& h, int rc, bool nothing_made, const std::string& what) {
  expect_no_mem(h, rc, nothing_made, "out of memory planning the halo", what + " (planning)");
}

int with_planning_failure(Harness& h, const std::function<int()>& call) {
  if (h.rank == 0) setenv("CARTPLAN_TEST_FAIL", "halo-plan", 1);
  const int rc = call();
  if (h.rank == 0) unsetenv("CARTPLAN_TEST_FAIL");
  return rc;
}

void planning_out_of_memory(Harness& h) {
  MPI_Comm cart = plain_torus(h);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_check", "collective");
  Cart_Halo halo = CART_HALO_NULL;
  int rc = with_planning_failure(h, [&] { return Cart_halo_create(cart, 2, kInterior, kGhost, kGhost, MPI_DOUBLE, MPI_ORDER_C, info, &halo); });
  expect_planning_no_mem(h, rc, halo == CART_HALO_NULL, "Cart_halo_create");
  halo = create(h, cart, info, "after planning out of memory");
  MPI_Info_free(&info);
  if (halo != CART_HALO_NULL) {
    Fields f;
    f.fill(h.rank, 1);
    void* uw[2] = {f.u.data(), f.w.data()};
    const MPI_Datatype dd[2] = {MPI_DOUBLE, MPI_DOUBLE};
    Cart_Request req = CART_REQUEST_NULL;
    rc = with_planning_failure(h, [&] { return Cart_halo_exchange_fields_init(2, uw, dd, halo, MPI_INFO_NULL, &req); });
    expect_planning_no_mem(h, rc, req == CART_REQUEST_NULL, "fields init");
    if (req != CART_REQUEST_NULL) Cart_request_free(&req);
    h.check(init_delivers(h, cart, halo, f), "fields init after planning out of memory: every ghost cell");
    // Three fields (20 bytes per cell): an element size no rank has planned for yet.
    void* upw[3] = {f.u.data(), f.p.data(), f.w.data()};
    const MPI_Datatype dfd[3] = {MPI_DOUBLE, MPI_FLOAT, MPI_DOUBLE};
    f.fill(h.rank, 5);
    rc = with_planning_failure(h, [&] { return Cart_halo_exchange_fields(3, upw, dfd, halo); });
    const bool untouched = ghosts_ok(cart, f.u, 0, 5, true) && ghosts_ok(cart, f.p, 1, 5, true) && ghosts_ok(cart, f.w, 2, 5, true);
    expect_planning_no_mem(h, rc, untouched, "blocking fields (checking mode)");
    rc = Cart_halo_exchange_fields(3, upw, dfd, halo);
    h.check(rc == MPI_SUCCESS && ghosts_ok(cart, f.u, 0, 5, false) && ghosts_ok(cart, f.p, 1, 5, false) && ghosts_ok(cart, f.w, 2, 5, false),
            "blocking fields after planning out of memory: rc " + std::to_string(rc));
    Cart_halo_free(&halo);
  }
  MPI_Comm_free(&cart);
}

void from_env(Harness& h) {
  MPI_Comm cart = plain_torus(h);
  setenv("CARTPLAN_CHECK", "collective", 1);  // read at creation
  const Cart_Halo halo = create(h, cart, MPI_INFO_NULL, "CARTPLAN_CHECK=collective");
  unsetenv("CARTPLAN_CHECK");
  run_on(h, cart, halo, "CARTPLAN_CHECK=collective");
  MPI_Comm_free(&cart);
}

void from_cartplan_comm(Harness& h) {
  MPI_Comm cart = open_checking_moore(h.size);
  h.check(cart != MPI_COMM_NULL, "Cart_neighborhood_create with cartplan_check=collective");
  if (cart == MPI_COMM_NULL) return;
  run_case(h, cart, MPI_INFO_NULL, "a cartplan communicator's checking mode");
  MPI_Comm_free(&cart);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  from_info(h);
  from_env(h);
  from_cartplan_comm(h);
  if (h.size > 1) cpp_form(h);
  if (h.size > 1) local_build_failure(h);
  if (h.size > 1) init_out_of_memory(h);
  if (h.size > 1) planning_out_of_memory(h);
  return h.finish("halo_check_test");
}
