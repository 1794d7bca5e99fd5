// The non-blocking pool with derived datatypes: Cart_ialltoallw with the same derived datatypes
// builds an exchange per request in flight once, and later calls take them back from the pool
// (builds counted by the private copies, MPI_Type_create_resized, the library makes of each
// derived datatype it builds with; it never calls MPI_Type_dup) with no global collective per call; several requests are in flight together and
// completed in a rank-dependent order (wait in order, in reverse, or test round-robin); a
// program's duplicate of a used datatype reuses; a datatype freed and created again with
// another layout builds again and its data is right; the program frees its datatypes while its
// requests are in flight (MPI allows it) and the data is still right (the exchange posts later
// phases on its own copies); a persistent request keeps copies of its datatypes, so the
// program may free them right after init.
#include <mpi.h>

#include <string>
#include <vector>

#include "tests/mpi/count_collectives.h"
#include "tests/mpi/count_type_builds.h"
#include "tests/mpi/derived_case.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::DerivedCase;
using cartplan::mpitest::Harness;
using cartplan::mpitest::kElems;
using cartplan::mpitest::strided;

constexpr int kInFlight = 3;  // requests in flight together, each with its own receive buffer

// The requests in flight and their receive buffers, kept from round to round (the pool keys
// addresses: a round's calls find the exchanges of the last round's only in the same buffers).
struct Round {
  std::vector<std::vector<int>> recv = std::vector<std::vector<int>>(kInFlight);
  std::vector<Cart_Request> requests = std::vector<Cart_Request>(kInFlight, CART_REQUEST_NULL);
  long dups[kInFlight] = {};  // datatype copies made by each request's Cart_ialltoallw
};

// Posts kInFlight Cart_ialltoallw with send datatype `stype` and receive datatype `rtype` on
// every block, request k into round->recv[k] (the same buffers every round: the pool keys
// addresses). `after_post(k)`, if given, runs after request k was posted.
template <class AfterPost>
void post(Harness& h, DerivedCase& c, Round* round, MPI_Datatype stype, MPI_Datatype rtype, const std::string& what,
          const AfterPost& after_post) {
  const std::vector<MPI_Datatype> st(c.t, stype), rt(c.t, rtype);
  for (int k = 0; k < kInFlight; ++k) {
    round->recv[k].assign(static_cast<std::size_t>(kElems * c.t), -1);
    const long before = type_copies, dups_before = type_dups;
    const int rc = Cart_ialltoallw(c.send.data(), c.counts.data(), c.sdispls.data(), st.data(), round->recv[k].data(),
                                   c.counts.data(), c.rdispls.data(), rt.data(), c.cart, &round->requests[k]);
    round->dups[k] = type_copies - before;
    h.check(rc == MPI_SUCCESS, what + ": Cart_ialltoallw returns MPI_SUCCESS");
    h.check(type_dups == dups_before, what + ": Cart_ialltoallw calls no MPI_Type_dup");
    after_post(k);
  }
}

void complete(Harness& h, Round* round, const std::string& what) {
  const int rc = cartplan::mpitest::complete_in_rank_order(h.rank, round->requests, CART_REQUEST_NULL, Cart_wait, Cart_test);
  h.check(rc == MPI_SUCCESS, what + ": every request completes with MPI_SUCCESS");
}

// One round: post, complete, check every buffer (stride `stride`, send values shifted by `base`)
// and the builds of each call: the first `builds` requests are expected to build (2 copies:
// the send and the receive datatype), the others to take a pooled exchange
// (none). With `free_in_flight` the program frees both datatypes once every request is posted.
void round_trip(Harness& h, DerivedCase& c, Round& round, MPI_Datatype stype, MPI_Datatype rtype, int stride, int base, int builds,
                const std::string& what, bool free_in_flight = false) {
  c.set_send(h.rank, base);
  post(h, c, &round, stype, rtype, what, [&](int k) {
    if (free_in_flight && k == kInFlight - 1) {
      MPI_Type_free(&stype);
      MPI_Type_free(&rtype);
    }
  });
  complete(h, &round, what);
  for (int k = 0; k < kInFlight; ++k) {
    const std::string req = what + ": request " + std::to_string(k);
    h.check(c.holds(round.recv[k], stride, base), req + " holds its sources' elements");
    const long expected = k < builds ? 2 : 0;
    h.check(round.dups[k] == expected, req + (k < builds ? " builds" : " reuses a pooled exchange") + " (" +
                                           std::to_string(round.dups[k]) + " datatypes copied, expected " +
                                           std::to_string(expected) + ")");
  }
}

void run(Harness& h, const char* algo) {
  DerivedCase c = cartplan::mpitest::make_derived_case(h.rank, h.size, algo);
  Round round;
  const std::string label = std::string(algo) + ": ";
  MPI_Datatype rtype = cartplan::mpitest::contiguous_block();
  MPI_Datatype a = strided(2);
  // Every request of the first round builds (its receive buffer is its own: another key).
  round_trip(h, c, round, a, rtype, 2, 0, kInFlight, label + "first round");
  const long collectives = global_collectives;
  for (int r = 1; r <= 3; ++r) round_trip(h, c, round, a, rtype, 2, 100000 * r, 0, label + "round " + std::to_string(r));
  h.check(global_collectives == collectives, label + "no global collective per call");

  // The program's duplicate of a used datatype has its layout (and its vouch): reused.
  MPI_Datatype a2;
  MPI_Type_dup(a, &a2);
  round_trip(h, c, round, a2, rtype, 2, 500000, 0, label + "program's duplicate");
  MPI_Type_free(&a2);

  // Freed, then created again with another layout: built again, then pooled and reused.
  MPI_Type_free(&a);
  MPI_Datatype b = strided(3);
  round_trip(h, c, round, b, rtype, 3, 0, kInFlight, label + "new layout");
  round_trip(h, c, round, b, rtype, 3, 600000, 0, label + "new layout again");
  MPI_Type_free(&b);

  // The same layouts under new handles, which the program frees while its requests are in
  // flight (MPI allows it): the first request checks the new handles with a build, the others
  // take pooled exchanges of those layouts; every exchange runs on its own copies.
  round_trip(h, c, round, strided(3), cartplan::mpitest::contiguous_block(), 3, 700000, 1, label + "types freed in flight", true);
  MPI_Type_free(&rtype);
  MPI_Comm_free(&c.cart);
}

// A persistent request with derived datatypes that the program frees right after init (MPI
// allows it): init copies both (2 copies, no MPI_Type_dup), and every start runs on its
// copies, also after the program created types of another layout that may take the freed
// handles' memory.
void persistent_freed_types(Harness& h, const char* algo) {
  DerivedCase c = cartplan::mpitest::make_derived_case(h.rank, h.size, algo);
  const std::string label = std::string(algo) + ": persistent, types freed after init: ";
  MPI_Datatype a = strided(2), rtype = cartplan::mpitest::contiguous_block();
  const std::vector<MPI_Datatype> st(c.t, a), rt(c.t, rtype);
  std::vector<int> recv(static_cast<std::size_t>(kElems * c.t), -1);
  Cart_Request req = CART_REQUEST_NULL;
  const long before = type_copies, dups_before = type_dups;
  const int rc = Cart_alltoallw_init(c.send.data(), c.counts.data(), c.sdispls.data(), st.data(), recv.data(), c.counts.data(),
                                     c.rdispls.data(), rt.data(), c.cart, MPI_INFO_NULL, &req);
  h.check(rc == MPI_SUCCESS, label + "Cart_alltoallw_init returns MPI_SUCCESS");
  h.check(type_copies - before == 2 && type_dups == dups_before,
          label + "init copies both datatypes (" + std::to_string(type_copies - before) + " copies, " +
              std::to_string(type_dups - dups_before) + " MPI_Type_dup)");
  MPI_Type_free(&a);
  MPI_Type_free(&rtype);
  std::vector<MPI_Datatype> others;
  for (int k = 0; k < 4; ++k) others.push_back(strided(3 + k));
  for (int start = 0; start < 3; ++start) {
    const int base = 100000 * (start + 1);
    c.set_send(h.rank, base);
    recv.assign(recv.size(), -1);
    h.check(Cart_start(&req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS, label + "start and wait succeed");
    h.check(c.holds(recv, 2, base), label + "start " + std::to_string(start) + " delivers every block at stride 2");
  }
  Cart_request_free(&req);
  for (MPI_Datatype& t : others) MPI_Type_free(&t);
  MPI_Comm_free(&c.cart);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  for (const char* algo : {"direct", "combining"}) run(h, algo);
  for (const char* algo : {"direct", "combining"}) persistent_freed_types(h, algo);
  return h.finish("derived_pool_test");
}
