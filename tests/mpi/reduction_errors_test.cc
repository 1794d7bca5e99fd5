// MPI test of bad input to the reductions and rooted collectives: non-commutative and null
// ops, counts that differ between ranks (checking mode: MPI_ERR_TRUNCATE on every rank; default
// mode: found by a receiving rank, nobody hangs), bad and differing roots, MPI_IN_PLACE, and the
// C++ API's exception (plus the C++ API working), a build out of memory on one rank only. After
// each error a correct call must still work (no stale messages).
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backends/mpi/cartplan.hpp"
#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A 1-d periodic ring over all ranks with offsets +1, -1, +2, 0.
MPI_Comm ring(Harness& h, bool checking) {
  int dims[1] = {h.size}, periods[1] = {1}, offs[4] = {1, -1, 2, 0};
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_check", checking ? "collective" : "none");
  MPI_Comm cart = MPI_COMM_NULL;
  h.check(Cart_neighborhood_create(MPI_COMM_WORLD, 1, dims, periods, 4, offs, MPI_UNWEIGHTED, info, 0, &cart) == MPI_SUCCESS,
          "create ring");
  MPI_Info_free(&info);
  return cart;
}

// The ring's allreduce: rank r receives from r-1, r+1, r-2 and itself.
std::int64_t ring_sum(Harness& h, std::int64_t base) {
  const int p = h.size;
  std::int64_t s = 0;
  for (int d : {-1, 1, -2, 0}) s += base + ((h.rank + d) % p + p) % p;
  return s;
}

// A correct call after an error: nothing of the failed call is left on the lanes.
void still_works(Harness& h, MPI_Comm cart, const std::string& what) {
  std::int64_t mine = 1000 + h.rank, got = -1;
  const int rc = Cart_allreduce(&mine, &got, 1, MPI_INT64_T, MPI_SUM, cart);
  h.check(rc == MPI_SUCCESS && got == ring_sum(h, 1000), what + ": a correct Cart_allreduce afterwards");
}

void not_commutative(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<const int*>(in);
  auto* b = static_cast<int*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = a[i] - b[i];
}

void op_errors(Harness& h) {
  MPI_Op minus = MPI_OP_NULL;
  MPI_Op_create(not_commutative, 0, &minus);
  for (bool checking : {false, true}) {
    const std::string mode = checking ? " (checking mode)" : " (default mode)";
    MPI_Comm cart = ring(h, checking);
    int s = h.rank, r = -1;
    int rc = Cart_allreduce(&s, &r, 1, MPI_INT, minus, cart);
    h.check(rc == MPI_ERR_OP && contains(Cart_error_message(), "not commutative"),
            "non-commutative op" + mode + ": MPI_ERR_OP 'not commutative', got " + std::to_string(rc) + " " + Cart_error_message());
    h.check(r == -1, "non-commutative op" + mode + ": recvbuf untouched");
    Cart_Request req = CART_REQUEST_NULL;
    rc = Cart_reduce_init(&s, &r, 1, MPI_INT, minus, 0, cart, MPI_INFO_NULL, &req);
    h.check(rc == MPI_ERR_OP && req == CART_REQUEST_NULL, "non-commutative op at Cart_reduce_init" + mode);
    rc = Cart_ireduce_scatter(&s, &r, 1, MPI_INT, MPI_OP_NULL, cart, &req);
    h.check(rc == MPI_ERR_OP && contains(Cart_error_message(), "MPI_OP_NULL"), "MPI_OP_NULL" + mode);
    still_works(h, cart, "op errors" + mode);
    MPI_Comm_free(&cart);
  }
  // The C++ API throws the same error on every rank.
  cartplan::mpi::CartComm cart(MPI_COMM_WORLD, {h.size}, {1}, {{1}, {-1}});
  int s = h.rank, r = -1;
  bool threw = false;
  try {
    cartplan::mpi::Collective::allreduce(cart, &s, &r, 1, MPI_INT, minus);
  } catch (const cartplan::mpi::MpiError& e) {
    threw = e.code() == MPI_ERR_OP && contains(e.what(), "not commutative");
  }
  h.check(threw, "C++ Collective::allreduce with a non-commutative op throws MPI_ERR_OP");
  MPI_Op_free(&minus);
  // And the C++ API working: a persistent allreduce and a rooted bcast, run twice each.
  const int p = h.size, left = (h.rank + p - 1) % p, right = (h.rank + 1) % p;
  auto sum = cartplan::mpi::Collective::allreduce(cart, &s, &r, 1, MPI_INT, MPI_SUM);
  for (int epoch = 1; epoch <= 2; ++epoch) {
    s = h.rank * 10 + epoch;
    sum.run();
    h.check(r == left * 10 + epoch + right * 10 + epoch, "C++ Collective::allreduce, epoch " + std::to_string(epoch));
  }
  int b = h.rank == 0 ? 77 : -1;
  auto bcast = cartplan::mpi::Collective::bcast(cart, &b, 1, MPI_INT, 0);
  bcast.run();
  // Rank 0's neighbourhood (offsets +1, -1) reaches ranks 1 and p-1.
  h.check(b == (h.rank == 0 || h.rank == 1 || h.rank == p - 1 ? 77 : -1), "C++ Collective::bcast");
}

void count_errors(Harness& h) {
  // Checking mode: every rank learns of the mismatch and returns the same class.
  {
    MPI_Comm cart = ring(h, true);
    std::vector<std::int64_t> s(3, h.rank), r(3, -1);
    const int count = h.rank == 0 ? 2 : 3;
    int rc = Cart_allreduce(s.data(), r.data(), count, MPI_INT64_T, MPI_SUM, cart);
    if (h.size > 1)
      h.check(rc == MPI_ERR_TRUNCATE && contains(Cart_error_message(), "same size"),
              "count mismatch in checking mode: MPI_ERR_TRUNCATE on every rank, got " + std::to_string(rc) + " " +
                  Cart_error_message());
    else
      h.check(rc == MPI_SUCCESS, "one rank cannot mismatch");
    rc = Cart_bcast(s.data(), count, MPI_INT64_T, 0, cart);
    if (h.size > 1) h.check(rc == MPI_ERR_TRUNCATE, "count mismatch in checking mode, Cart_bcast");
    // A rooted op whose sizes differ on the root's two sides.
    // The root finds it (MPI_ERR_TRUNCATE); the agreement makes it the same error everywhere.
    rc = Cart_gather(s.data(), 1, MPI_INT64_T, r.data(), 2, MPI_INT64_T, 0, cart);
    h.check(rc == MPI_ERR_TRUNCATE, "gather with recvcount != sendcount at the root: MPI_ERR_TRUNCATE on every rank, got " +
                                        std::to_string(rc));
    still_works(h, cart, "count mismatch (checking mode)");
    MPI_Comm_free(&cart);
  }
  // Default mode: local; the ranks that receive a message of the wrong size say so, none hangs.
  {
    MPI_Comm cart = ring(h, false);
    std::vector<std::int64_t> s(3, h.rank), r(3, -1);
    const int count = h.rank == 0 ? 3 : 2;
    const int rc = Cart_allreduce(s.data(), r.data(), count, MPI_INT64_T, MPI_SUM, cart);
    h.check(rc == MPI_SUCCESS || rc == MPI_ERR_TRUNCATE, "count mismatch in the default mode: success or MPI_ERR_TRUNCATE");
    if (h.size > 1 && h.rank == 0) h.check(rc == MPI_ERR_TRUNCATE, "rank 0 receives smaller messages: MPI_ERR_TRUNCATE");
    still_works(h, cart, "count mismatch (default mode)");
    MPI_Comm_free(&cart);
  }
}

void root_errors(Harness& h) {
  for (bool checking : {false, true}) {
    const std::string mode = checking ? " (checking mode)" : " (default mode)";
    MPI_Comm cart = ring(h, checking);
    std::int64_t s = h.rank, r = -1;
    int rc = Cart_reduce(&s, &r, 1, MPI_INT64_T, MPI_SUM, h.size, cart);
    h.check(rc == MPI_ERR_ROOT && contains(Cart_error_message(), "root"), "root = size" + mode + ": MPI_ERR_ROOT");
    rc = Cart_bcast(&s, 1, MPI_INT64_T, -1, cart);
    h.check(rc == MPI_ERR_ROOT, "root = -1" + mode + ": MPI_ERR_ROOT");
    Cart_Request req = CART_REQUEST_NULL;
    rc = Cart_gather_init(&s, 1, MPI_INT64_T, &r, 1, MPI_INT64_T, h.size + 3, cart, MPI_INFO_NULL, &req);
    h.check(rc == MPI_ERR_ROOT && req == CART_REQUEST_NULL, "bad root at Cart_gather_init" + mode);
    if (checking && h.size > 1) {
      std::vector<std::int64_t> sb(4, h.rank);
      rc = Cart_scatter(sb.data(), 1, MPI_INT64_T, &r, 1, MPI_INT64_T, h.rank == 0 ? 0 : 1, cart);
      h.check(rc == MPI_ERR_ROOT && contains(Cart_error_message(), "different roots"),
              "roots that differ between ranks (checking mode): MPI_ERR_ROOT on every rank, got " + std::to_string(rc) + " " +
                  Cart_error_message());
    }
    still_works(h, cart, "root errors" + mode);
    MPI_Comm_free(&cart);
  }
}

void in_place(Harness& h) {
  MPI_Comm cart = ring(h, false);
  std::int64_t x = h.rank;
  int rc = Cart_allreduce(MPI_IN_PLACE, &x, 1, MPI_INT64_T, MPI_SUM, cart);
  h.check(rc == MPI_ERR_ARG && contains(Cart_error_message(), "MPI_IN_PLACE"), "MPI_IN_PLACE in Cart_allreduce: MPI_ERR_ARG");
  rc = Cart_bcast(MPI_IN_PLACE, 1, MPI_INT64_T, 0, cart);
  h.check(rc == MPI_ERR_ARG, "MPI_IN_PLACE in Cart_bcast: MPI_ERR_ARG");
  rc = Cart_reduce(&x, nullptr, -1, MPI_INT64_T, MPI_SUM, 0, cart);
  h.check(rc == MPI_ERR_COUNT, "negative count in Cart_reduce: MPI_ERR_COUNT");
  still_works(h, cart, "in place");
  MPI_Comm_free(&cart);
}

// A reduction whose build runs out of memory on rank 0 only, after the agreement: rank 0's type
// has the signature of two floats (like the others' MPI_Type_contiguous(2, MPI_FLOAT)) but a true
// extent of 2^50 bytes, and a reduction's scratch blocks span one block's true extent. A
// persistent init (default mode) and a blocking call in checking mode agree on it: every rank
// MPI_ERR_NO_MEM (rank 0 "out of memory building the exchange", the others "another rank"), no
// request, no hang (the run's time limit fails one); a correct call then works. Not under ASan:
// its operator new dies on an allocation it cannot make instead of throwing std::bad_alloc.
void scratch_out_of_memory(Harness& h) {
#ifndef __SANITIZE_ADDRESS__
  MPI_Datatype wide = MPI_DATATYPE_NULL, pair = MPI_DATATYPE_NULL;
  const int lens[2] = {1, 1};
  const MPI_Aint displs[2] = {0, MPI_Aint{1} << 50};
  MPI_Type_create_hindexed(2, lens, displs, MPI_FLOAT, &wide);
  MPI_Type_commit(&wide);
  MPI_Type_contiguous(2, MPI_FLOAT, &pair);
  MPI_Type_commit(&pair);
  const MPI_Datatype type = h.rank == 0 ? wide : pair;
  const std::string expected = h.rank == 0 ? "out of memory building the exchange" : "another rank";
  float send[2] = {1.0f, 2.0f}, recv[2] = {0.0f, 0.0f};  // never started: the init fails
  for (bool checking : {false, true}) {
    MPI_Comm cart = ring(h, checking);
    const std::string what = checking ? "blocking allreduce, checking mode" : "persistent allreduce init";
    Cart_Request req = CART_REQUEST_NULL;
    const int rc = checking ? Cart_allreduce(send, recv, 1, type, MPI_SUM, cart)
                            : Cart_allreduce_init(send, recv, 1, type, MPI_SUM, cart, MPI_INFO_NULL, &req);
    const std::string msg = rc == MPI_SUCCESS ? "" : Cart_error_message();
    h.check(rc == MPI_ERR_NO_MEM && contains(msg, expected),
            what + ", scratch out of memory on rank 0 only: every rank MPI_ERR_NO_MEM, got " + std::to_string(rc) + " '" + msg + "'");
    h.check(req == CART_REQUEST_NULL, what + ", scratch out of memory: no request");
    if (req != CART_REQUEST_NULL) Cart_request_free(&req);
    still_works(h, cart, what + ", scratch out of memory");
    MPI_Comm_free(&cart);
  }
  MPI_Type_free(&wide);
  MPI_Type_free(&pair);
#else
  (void)h;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  op_errors(h);
  count_errors(h);
  root_errors(h);
  in_place(h);
  if (h.size > 1) scratch_out_of_memory(h);
  return h.finish("reduction_errors_test");
}
