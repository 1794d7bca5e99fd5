// MPI test of bad input: mismatched neighbourhoods, bad dims, invalid arguments on one rank,
// block-size mismatches, misuse of requests. In checking mode (cartplan_check=collective) and
// at creation and init, every case must return an error on every rank (never hang: run_mpi.sh
// kills a stuck run) with a message that says what is wrong. In the default mode each rank
// reports its own errors, size mismatches are found by the receiving rank, and a failed call
// leaves nothing behind. Errors also reach the communicator's error handler.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends/mpi/cartplan.hpp"
#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A 1-d periodic ring over all ranks with offsets +1, -1, +2, in checking mode or not.
MPI_Comm ring(Harness& h, bool checking, const char* algorithm = "auto") {
  int dims[1] = {h.size}, periods[1] = {1}, offs[3] = {1, -1, 2};
  MPI_Comm cart = MPI_COMM_NULL;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_check", checking ? "collective" : "none");
  MPI_Info_set(info, "cartplan_algorithm", algorithm);
  h.check(Cart_neighborhood_create(MPI_COMM_WORLD, 1, dims, periods, 3, offs, MPI_UNWEIGHTED, info, 0, &cart) == MPI_SUCCESS,
          "ring creation");
  MPI_Info_free(&info);
  return cart;
}

void expect_error(Harness& h, int rc, int code, const std::string& words, const std::string& what) {
  const std::string msg = Cart_error_message();
  h.check(rc != MPI_SUCCESS, what + ": expected an error, got success");
  // Where every rank agreed (creation, init, checking mode), every rank returns the same class.
  if (code != MPI_SUCCESS) h.check(rc == code, what + ": error class " + std::to_string(rc) + ", expected " + std::to_string(code));
  h.check(!msg.empty(), what + ": empty error message");
  if (!words.empty() && rc != MPI_SUCCESS && h.rank == 0) h.check(contains(msg, words), what + ": message '" + msg + "' lacks '" + words + "'");
}

void creation_errors(Harness& h) {
  int dims[2] = {h.size, 1}, periods[2] = {1, 1};
  MPI_Comm cart = MPI_COMM_NULL;
  // Rank 0 names a different offset than everyone else.
  int offs[4] = {1, 0, 0, 1};
  if (h.rank == 0 && h.size > 1) offs[3] = -1;
  int rc = Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, 2, offs, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &cart);
  if (h.size > 1) {
    h.check(rc == MPI_ERR_ARG, "mismatched offsets: every rank gets MPI_ERR_ARG");
    if (h.rank == 1) h.check(contains(Cart_error_message(), "offset 1 differs: (0,1) here, (0,-1) on rank 0"), std::string("mismatch message: ") + Cart_error_message());
  } else {
    h.check(rc == MPI_SUCCESS, "single rank cannot mismatch");
    MPI_Comm_free(&cart);
  }
  // Different t on one rank.
  int offs3[6] = {1, 0, 0, 1, 1, 1};
  rc = Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, (h.rank == h.size - 1 && h.size > 1) ? 3 : 2, offs3,
                                MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &cart);
  if (h.size > 1) expect_error(h, rc, MPI_ERR_ARG, "", "different t");
  else MPI_Comm_free(&cart);

  // Dims that need more processes than there are.
  int big[2] = {h.size + 1, 1};
  rc = Cart_neighborhood_create(MPI_COMM_WORLD, 2, big, periods, 2, offs3, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &cart);
  expect_error(h, rc, MPI_ERR_DIMS, "dims multiply to more processes", "dims too large");
  // d = 0, t = 0, zero dims, an offset too large: on one rank only, still an error everywhere.
  rc = Cart_neighborhood_create(MPI_COMM_WORLD, h.rank == 0 ? 0 : 2, dims, periods, 2, offs3, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &cart);
  expect_error(h, rc, MPI_ERR_DIMS, "d = 0", "d = 0 on rank 0");
  if (h.rank != 0 && rc != MPI_SUCCESS)  // the others name what rank 0 did (another_rank.h)
    h.check(contains(Cart_error_message(), "another rank passed invalid arguments to Cart_neighborhood_create (error class " +
                                               std::to_string(MPI_ERR_DIMS) + " there)"),
            std::string("d = 0 on rank 0: the other ranks' message: ") + Cart_error_message());
  rc = Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, 0, offs3, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &cart);
  expect_error(h, rc, MPI_ERR_ARG, "t = 0", "t = 0");
  int zero[2] = {0, 1};
  rc = Cart_neighborhood_create(MPI_COMM_WORLD, 2, zero, periods, 2, offs3, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &cart);
  expect_error(h, rc, MPI_ERR_DIMS, "dims[0] = 0", "zero dims");
  int huge[2] = {1 << 30, 0};
  rc = Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, 1, huge, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &cart);
  expect_error(h, rc, MPI_ERR_ARG, "", "huge offset");
  // Bad Info value.
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", "fastest");
  rc = Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, 2, offs3, MPI_UNWEIGHTED, info, 0, &cart);
  expect_error(h, rc, MPI_ERR_INFO_VALUE, "cartplan_algorithm = 'fastest'", "bad Info value");
  MPI_Info_free(&info);
  // The byte-count keys: -1 or a count.
  for (const std::string key : {"cartplan_struct_min_bytes", "cartplan_home_max_bytes", "cartplan_trailer_min_bytes"})
    for (const char* bad : {"-2", "12x", "abc"}) {
      MPI_Info_create(&info);
      MPI_Info_set(info, key.c_str(), bad);
      rc = Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, 2, offs3, MPI_UNWEIGHTED, info, 0, &cart);
      expect_error(h, rc, MPI_ERR_INFO_VALUE, "Info " + key, "bad " + key + " '" + bad + "'");
      MPI_Info_free(&info);
    }
  // The two-valued mode keys: either value creates, anything else is refused naming the key and
  // both values (one parse for the three keys, info_options.cc parse_switch).
  struct TwoValued {
    const char *key, *a, *b;
  };
  for (const TwoValued& k : {TwoValued{"cartplan_check", "none", "collective"}, TwoValued{"cartplan_tune", "model", "measure"},
                             TwoValued{"cartplan_progress", "any", "cartplan"}}) {
    for (const char* value : {k.a, k.b, "bogus"}) {
      MPI_Info_create(&info);
      MPI_Info_set(info, k.key, value);
      rc = Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, 2, offs3, MPI_UNWEIGHTED, info, 0, &cart);
      MPI_Info_free(&info);
      const std::string what = std::string(k.key) + " = '" + value + "'";
      if (std::string(value) != "bogus") {
        h.check(rc == MPI_SUCCESS, what + ": creation fails (" + std::to_string(rc) + ")");
        if (rc == MPI_SUCCESS) MPI_Comm_free(&cart);
      } else {
        expect_error(h, rc, MPI_ERR_INFO_VALUE, "Info " + what + " (expected " + k.a + " or " + k.b + ")", "bad " + what);
      }
    }
  }
  // Trailers change what travels: ranks that differ on them are refused at creation.
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_trailer_min_bytes", h.rank == 0 ? "0" : "-1");
  rc = Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, 2, offs3, MPI_UNWEIGHTED, info, 0, &cart);
  if (h.size > 1) {
    expect_error(h, rc, MPI_ERR_ARG, "", "trailer_min_bytes differs between ranks at creation");
    if (h.rank == 1)
      h.check(contains(Cart_error_message(), "cartplan_trailer_min_bytes"), std::string("trailer mismatch message: ") + Cart_error_message());
  }
  if (rc == MPI_SUCCESS) MPI_Comm_free(&cart);
  MPI_Info_free(&info);
  // C++ API: offsets of the wrong dimension throw on every rank.
  bool threw = false;
  try {
    cartplan::mpi::CartComm c(MPI_COMM_WORLD, {h.size}, {1}, {{1}, {h.rank == 0 ? 1 : 0, 0}});
  } catch (const cartplan::mpi::MpiError& e) {
    threw = true;
    if (h.rank == 0) h.check(contains(e.what(), "offset 1 has 2 coordinates, expected 1"), std::string("C++ message: ") + e.what());
  }
  h.check(threw, "C++ CartComm with a bad offset throws on every rank");
}

// MPI_BOTTOM with a datatype holding the block's absolute address is a valid buffer (MPI-4
// Sect. 4.1.12): Cart_allgather delivers the same blocks as from the buffer itself.
void bottom_allgather(Harness& h, MPI_Comm cart, std::vector<int>* sb) {
  MPI_Aint at = 0;
  MPI_Get_address(sb->data(), &at);
  const int two = 2;
  MPI_Datatype absolute = MPI_DATATYPE_NULL;
  MPI_Type_create_hindexed(1, &two, &at, MPI_INT, &absolute);
  MPI_Type_commit(&absolute);
  (*sb)[0] = 10 * h.rank + 1, (*sb)[1] = 10 * h.rank + 2;
  std::vector<int> ref(64, -1), got(64, -1);
  const int ref_rc = Cart_allgather(sb->data(), 2, MPI_INT, ref.data(), 2, MPI_INT, cart);
  const int rc = Cart_allgather(MPI_BOTTOM, 1, absolute, got.data(), 2, MPI_INT, cart);
  h.check(ref_rc == MPI_SUCCESS && rc == MPI_SUCCESS && got == ref,
          std::string("Cart_allgather from MPI_BOTTOM with an absolute datatype: ") + Cart_error_message());
  MPI_Type_free(&absolute);
  sb->assign(64, 1);
}

void collective_errors(Harness& h) {
  MPI_Comm cart = ring(h, true);
  std::vector<int> sb(64, 1), rb(64, 0);
  // A communicator without a neighbourhood.
  int rc = Cart_alltoall(sb.data(), 1, MPI_INT, rb.data(), 1, MPI_INT, MPI_COMM_WORLD);
  expect_error(h, rc, MPI_ERR_TOPOLOGY, "no cartplan neighbourhood", "plain communicator");
  // NULL buffer on the last rank only.
  rc = Cart_alltoall(h.rank == h.size - 1 ? nullptr : sb.data(), 2, MPI_INT, rb.data(), 2, MPI_INT, cart);
  expect_error(h, rc, MPI_ERR_BUFFER, "", "NULL sendbuf on one rank");
  if (h.rank == h.size - 1) h.check(contains(Cart_error_message(), "NULL"), std::string("NULL message: ") + Cart_error_message());
  bottom_allgather(h, cart, &sb);
  // Negative count on rank 0 only.
  int counts[3] = {1, 1, 1}, displs[3] = {0, 1, 2};
  int neg[3] = {1, h.rank == 0 ? -1 : 1, 1};
  rc = Cart_alltoallv(sb.data(), neg, displs, MPI_INT, rb.data(), counts, displs, MPI_INT, cart);
  expect_error(h, rc, MPI_ERR_COUNT, "", "negative count on rank 0");
  if (h.rank == 0) h.check(contains(Cart_error_message(), "negative count -1"), std::string("negative message: ") + Cart_error_message());
  // Block 0 bigger on rank 0 than elsewhere: a size mismatch the v variant must detect.
  int bigger[3] = {h.rank == 0 ? 2 : 1, 1, 1};
  rc = Cart_alltoallv(sb.data(), bigger, displs, MPI_INT, rb.data(), bigger, displs, MPI_INT, cart);
  if (h.size > 1) expect_error(h, rc, MPI_ERR_TRUNCATE, "block 0 must have the same size", "block size mismatch across ranks");
  // Send and recv sizes of one block differ on every rank.
  int two[3] = {2, 1, 1};
  rc = Cart_alltoallv(sb.data(), two, displs, MPI_INT, rb.data(), counts, displs, MPI_INT, cart);
  expect_error(h, rc, MPI_ERR_TRUNCATE, "from 4 to 8 bytes", "send/recv size mismatch");
  // NULL counts array.
  rc = Cart_alltoallv(sb.data(), nullptr, displs, MPI_INT, rb.data(), counts, displs, MPI_INT, cart);
  expect_error(h, rc, MPI_ERR_ARG, "NULL", "NULL counts");
  // A NULL request pointer on rank 0 only: in checking mode every rank fails, none hangs.
  Cart_Request nbreq = CART_REQUEST_NULL;
  rc = Cart_ialltoall(sb.data(), 1, MPI_INT, rb.data(), 1, MPI_INT, cart, h.rank == 0 ? nullptr : &nbreq);
  expect_error(h, rc, MPI_ERR_REQUEST, "", "NULL request to Cart_ialltoall on rank 0 (checking mode)");
  h.check(nbreq == CART_REQUEST_NULL, "no request is returned when the call fails");
  // MPI_IN_PLACE is not allowed in neighbourhood collectives.
  rc = Cart_alltoall(MPI_IN_PLACE, 2, MPI_INT, rb.data(), 2, MPI_INT, cart);
  expect_error(h, rc, MPI_ERR_ARG, "MPI_IN_PLACE", "MPI_IN_PLACE as sendbuf");
  // Different algorithms requested per rank for one persistent request.
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", h.rank == 0 ? "direct" : "combining");
  Cart_Request req = CART_REQUEST_NULL;
  rc = Cart_alltoall_init(sb.data(), 1, MPI_INT, rb.data(), 1, MPI_INT, cart, info, &req);
  if (h.size > 1) expect_error(h, rc, MPI_ERR_INFO_VALUE, "different cartplan Info options", "Info mismatch at init");
  if (rc == MPI_SUCCESS) Cart_request_free(&req);
  MPI_Info_free(&info);
  // The same for trailers per request: a rank with them and one without would exchange
  // messages of different sizes.
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_trailer_min_bytes", h.rank == 0 ? "0" : "-1");
  rc = Cart_alltoall_init(sb.data(), 1, MPI_INT, rb.data(), 1, MPI_INT, cart, info, &req);
  if (h.size > 1) expect_error(h, rc, MPI_ERR_INFO_VALUE, "different cartplan Info options", "trailer mismatch at init");
  if (rc == MPI_SUCCESS) Cart_request_free(&req);
  MPI_Info_free(&info);

  // Request misuse.
  h.check(Cart_alltoall_init(sb.data(), 1, MPI_INT, rb.data(), 1, MPI_INT, cart, MPI_INFO_NULL, &req) == MPI_SUCCESS, "init");
  h.check(Cart_start(&req) == MPI_SUCCESS, "first start");
  expect_error(h, Cart_start(&req), MPI_ERR_REQUEST, "already active", "start twice");
  expect_error(h, Cart_request_free(&req), MPI_ERR_REQUEST, "active request", "free while active");
  h.check(Cart_wait(&req) == MPI_SUCCESS, "wait");
  h.check(Cart_request_free(&req) == MPI_SUCCESS && req == CART_REQUEST_NULL, "free");
  expect_error(h, Cart_start(&req), MPI_ERR_REQUEST, "NULL request", "start a freed request");
  h.check(Cart_wait(&req) == MPI_SUCCESS, "wait on CART_REQUEST_NULL is a no-op");
  Cart_Request nb = CART_REQUEST_NULL;
  h.check(Cart_ialltoall(sb.data(), 1, MPI_INT, rb.data(), 1, MPI_INT, cart, &nb) == MPI_SUCCESS, "ialltoall");
  expect_error(h, Cart_start(&nb), MPI_ERR_REQUEST, "non-persistent", "start a non-blocking request");
  h.check(Cart_wait(&nb) == MPI_SUCCESS && nb == CART_REQUEST_NULL, "wait frees a non-blocking request");

  // Queries with bad arguments.
  int r = 0, rel[1] = {1};
  expect_error(h, Cart_relative_rank(MPI_COMM_WORLD, rel, &r), MPI_ERR_TOPOLOGY, "", "relative rank on a plain communicator");
  expect_error(h, Cart_relative_coord(cart, h.size, rel), MPI_ERR_RANK, "not in the grid", "relative coord of a bad rank");
  int src[1], dst[1];
  expect_error(h, Cart_neighbor_get(cart, 1, src, MPI_UNWEIGHTED, 1, dst, MPI_UNWEIGHTED), MPI_ERR_ARG, "at least t = 3",
               "neighbor_get with short arrays");
  MPI_Comm_free(&cart);
}

// Init is collective in every mode: a NULL request on one rank fails on every rank.
void init_errors(Harness& h) {
  MPI_Comm cart = ring(h, false);
  std::vector<int> sb(8, 1), rb(8, 0);
  Cart_Request req = CART_REQUEST_NULL;
  int rc = Cart_alltoall_init(sb.data(), 1, MPI_INT, rb.data(), 1, MPI_INT, cart, MPI_INFO_NULL, h.rank == 0 ? nullptr : &req);
  expect_error(h, rc, MPI_ERR_REQUEST, "", "NULL request to Cart_alltoall_init on rank 0");
  h.check(req == CART_REQUEST_NULL, "no request after a failed init");
  MPI_Comm_free(&cart);
}

// Default mode: every rank checks its own arguments; consistent bad arguments fail everywhere
// without any agreement, and a size mismatch is reported by the rank that receives it.
void default_mode_errors(Harness& h) {
  MPI_Comm cart = ring(h, false, "direct");
  std::vector<int> sb(64), rb(64, -7);
  int counts[3] = {1, 1, 1}, displs[3] = {0, 1, 2};
  int neg[3] = {1, -1, 1};
  int rc = Cart_alltoallv(sb.data(), neg, displs, MPI_INT, rb.data(), counts, displs, MPI_INT, cart);
  expect_error(h, rc, MPI_ERR_COUNT, "negative count -1", "negative count (default mode)");
  rc = Cart_allgather(sb.data(), 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, cart);
  expect_error(h, rc, MPI_ERR_ARG, "MPI_IN_PLACE", "MPI_IN_PLACE as recvbuf (default mode)");
  Cart_Request nb = CART_REQUEST_NULL;
  rc = Cart_ialltoall(MPI_IN_PLACE, 1, MPI_INT, rb.data(), 1, MPI_INT, cart, &nb);
  expect_error(h, rc, MPI_ERR_ARG, "MPI_IN_PLACE", "MPI_IN_PLACE to Cart_ialltoall");
  int bad_type_counts[3] = {1, 1, 1};
  MPI_Datatype types[3] = {MPI_INT, MPI_DATATYPE_NULL, MPI_INT};
  MPI_Aint bdispls[3] = {0, 4, 8};
  rc = Cart_alltoallw(sb.data(), bad_type_counts, bdispls, types, rb.data(), bad_type_counts, bdispls, types, cart);
  expect_error(h, rc, MPI_ERR_TYPE, "MPI_DATATYPE_NULL", "MPI_DATATYPE_NULL for a block that travels");

  // Block 0 has 2 ints on rank 0 and 1 elsewhere. Rank 0 sends 2 ints to rank 1 (offset +1)
  // and expects 2 from its source, which sends 1: both see MPI_ERR_TRUNCATE, the others succeed.
  for (int i = 0; i < 64; ++i) sb[i] = h.rank * 100 + i;
  int bigger[3] = {h.rank == 0 ? 2 : 1, 1, 1}, bdisp[3] = {0, 2, 3};
  rc = Cart_alltoallv(sb.data(), bigger, bdisp, MPI_INT, rb.data(), bigger, bdisp, MPI_INT, cart);
  if (h.size == 1) {
    h.check(rc == MPI_SUCCESS, "one rank: the mismatch stays local");
  } else if (h.rank == 0 || h.rank == 1) {
    h.check(rc == MPI_ERR_TRUNCATE, "size mismatch seen by the receiving rank: " + std::to_string(rc));
    h.check(contains(Cart_error_message(), h.rank == 1 ? "larger than expected" : "smaller than expected"),
            std::string("mismatch message: ") + Cart_error_message());
  } else {
    h.check(rc == MPI_SUCCESS, "ranks that see no mismatch succeed");
  }
  // The same mismatch through Cart_ialltoallv: the failed wait reports it, frees the request,
  // and leaves nothing behind either.
  Cart_Request mis = CART_REQUEST_NULL;
  h.check(Cart_ialltoallv(sb.data(), bigger, bdisp, MPI_INT, rb.data(), bigger, bdisp, MPI_INT, cart, &mis) == MPI_SUCCESS,
          "Cart_ialltoallv with a mismatch starts (checks are local)");
  rc = Cart_wait(&mis);
  h.check(mis == CART_REQUEST_NULL, "a failed wait frees the non-blocking request");
  if (h.size > 1 && (h.rank == 0 || h.rank == 1)) h.check(rc == MPI_ERR_TRUNCATE, "non-blocking mismatch seen at wait");
  else h.check(rc == MPI_SUCCESS, "non-blocking: ranks that see no mismatch succeed");
  // Nothing is left behind: the next (correct) calls deliver the right data everywhere.
  for (int round = 0; round < 3; ++round) {
    std::fill(rb.begin(), rb.end(), -7);
    rc = Cart_alltoallv(sb.data(), counts, displs, MPI_INT, rb.data(), counts, displs, MPI_INT, cart);
    h.check(rc == MPI_SUCCESS, "a correct call after the mismatch");
    const int from[3] = {(h.rank - 1 + h.size) % h.size, (h.rank + 1) % h.size, ((h.rank - 2) % h.size + h.size) % h.size};
    for (int i = 0; i < 3; ++i) h.check(rb[i] == from[i] * 100 + i, "block " + std::to_string(i) + " after the mismatch: " + std::to_string(rb[i]) + " round " + std::to_string(round));
  }
  MPI_Comm_free(&cart);
}

// Arguments of blocks without a neighbour are not significant (MPICH's neighb_alltoallw2):
// count -1, displacement -1 and MPI_DATATYPE_NULL must not be touched.
void insignificant_blocks(Harness& h) {
  int dims[1] = {h.size}, periods[1] = {0}, offs[2] = {1, 2};
  MPI_Comm cart = MPI_COMM_NULL;
  h.check(Cart_neighborhood_create(MPI_COMM_WORLD, 1, dims, periods, 2, offs, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &cart) == MPI_SUCCESS,
          "chain creation");
  int src[2], dst[2];
  Cart_neighbor_get(cart, 2, src, MPI_UNWEIGHTED, 2, dst, MPI_UNWEIGHTED);
  int sb[2] = {h.rank * 10, h.rank * 10 + 1}, rb[2] = {-5, -5};
  int scounts[2], rcounts[2];
  MPI_Aint sdispls[2], rdispls[2];
  MPI_Datatype stypes[2], rtypes[2];
  for (int i = 0; i < 2; ++i) {
    const bool out = dst[i] != MPI_PROC_NULL, in = src[i] != MPI_PROC_NULL;
    scounts[i] = out ? 1 : -1;
    sdispls[i] = out ? static_cast<MPI_Aint>(i * sizeof(int)) : -1;
    stypes[i] = out ? MPI_INT : MPI_DATATYPE_NULL;
    rcounts[i] = in ? 1 : -1;
    rdispls[i] = in ? static_cast<MPI_Aint>(i * sizeof(int)) : -1;
    rtypes[i] = in ? MPI_INT : MPI_DATATYPE_NULL;
  }
  h.check(Cart_alltoallw(sb, scounts, sdispls, stypes, rb, rcounts, rdispls, rtypes, cart) == MPI_SUCCESS,
          std::string("alltoallw with MPI_DATATYPE_NULL for absent neighbours: ") + Cart_error_message());
  for (int i = 0; i < 2; ++i)
    h.check(rb[i] == (src[i] == MPI_PROC_NULL ? -5 : src[i] * 10 + i), "alltoallw block " + std::to_string(i));
  rb[0] = rb[1] = -5;
  h.check(Cart_allgatherw(sb, 1, MPI_INT, rb, rcounts, rdispls, rtypes, cart) == MPI_SUCCESS,
          std::string("allgatherw with MPI_DATATYPE_NULL for absent sources: ") + Cart_error_message());
  for (int i = 0; i < 2; ++i) h.check(rb[i] == (src[i] == MPI_PROC_NULL ? -5 : src[i] * 10), "allgatherw block " + std::to_string(i));
  MPI_Comm_free(&cart);
}

// Errors reach the error handler of the communicator concerned, with the class returned.
int handler_calls = 0, handler_code = MPI_SUCCESS;
void count_errors(MPI_Comm*, int* code, ...) {
  ++handler_calls;
  handler_code = *code;
}

void error_handlers(Harness& h) {
  MPI_Comm cart = ring(h, false);
  MPI_Errhandler eh;
  MPI_Comm_create_errhandler(count_errors, &eh);
  MPI_Comm_set_errhandler(cart, eh);
  std::vector<int> rb(8);
  handler_calls = 0;
  int rc = Cart_alltoall(MPI_IN_PLACE, 1, MPI_INT, rb.data(), 1, MPI_INT, cart);
  h.check(handler_calls == 1 && handler_code == MPI_ERR_ARG && rc == MPI_ERR_ARG, "the cart communicator's handler sees MPI_ERR_ARG");
  int r = 0;
  rc = Cart_relative_rank(cart, nullptr, &r);
  h.check(handler_calls == 2 && rc == MPI_ERR_ARG, "queries report through the handler too");
  Cart_Request req = CART_REQUEST_NULL;
  std::vector<int> sb(8);
  h.check(Cart_alltoall_init(sb.data(), 1, MPI_INT, rb.data(), 1, MPI_INT, cart, MPI_INFO_NULL, &req) == MPI_SUCCESS, "init");
  h.check(Cart_start(&req) == MPI_SUCCESS, "start");
  rc = Cart_request_free(&req);
  h.check(handler_calls == 3 && rc == MPI_ERR_REQUEST, "request errors go to the request's communicator");
  h.check(Cart_wait(&req) == MPI_SUCCESS && Cart_request_free(&req) == MPI_SUCCESS, "wait and free");
  handler_calls = 0;
  rc = Cart_wait(nullptr);
  h.check(handler_calls == 0 && rc == MPI_ERR_REQUEST, "an error with no communicator goes to MPI_COMM_SELF's handler");
  MPI_Errhandler_free(&eh);
  MPI_Comm_free(&cart);
}

}  // namespace

// The cost model found without an Info key: a CARTPLAN_COST_MODEL that does not load is an
// error naming the variable on every rank; one that loads is used, and an Info key wins over it.
void cost_model_lookup(Harness& h) {
  int dims[1] = {h.size}, periods[1] = {1}, offs[2] = {1, -1};
  MPI_Comm cart = MPI_COMM_NULL;
  setenv("CARTPLAN_COST_MODEL", "/nonexistent/cartplan_cost_model.json", 1);
  int rc = Cart_neighborhood_create(MPI_COMM_WORLD, 1, dims, periods, 2, offs, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &cart);
  expect_error(h, rc, MPI_ERR_ARG, "CARTPLAN_COST_MODEL: cannot read '/nonexistent/cartplan_cost_model.json'",
               "unreadable CARTPLAN_COST_MODEL");
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp ? tmp : "/tmp") + "/errors_test_cm" + std::to_string(h.rank) + ".json";
  if (FILE* f = std::fopen(path.c_str(), "w")) {
    std::fputs(R"({"schema": "cartplan.cost_model/1", "alpha_us": 0.5, "beta_us_per_byte": 0.001})", f);
    std::fclose(f);
  }
  setenv("CARTPLAN_COST_MODEL", path.c_str(), 1);
  rc = Cart_neighborhood_create(MPI_COMM_WORLD, 1, dims, periods, 2, offs, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &cart);
  h.check(rc == MPI_SUCCESS, std::string("a version-1 file in CARTPLAN_COST_MODEL loads: ") + Cart_error_message());
  if (rc == MPI_SUCCESS) {
    std::vector<int> sb(2, h.rank), rb(2, -1);
    h.check(Cart_alltoall(sb.data(), 1, MPI_INT, rb.data(), 1, MPI_INT, cart) == MPI_SUCCESS, "exchange with the found model");
    h.check(rb[0] == (h.rank - 1 + h.size) % h.size && rb[1] == (h.rank + 1) % h.size, "exchange result");
    MPI_Comm_free(&cart);
  }
  // The Info key is used instead of the (broken) environment.
  setenv("CARTPLAN_COST_MODEL", "/nonexistent/cartplan_cost_model.json", 1);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_cost_model", path.c_str());
  rc = Cart_neighborhood_create(MPI_COMM_WORLD, 1, dims, periods, 2, offs, MPI_UNWEIGHTED, info, 0, &cart);
  MPI_Info_free(&info);
  h.check(rc == MPI_SUCCESS, std::string("the Info key wins over CARTPLAN_COST_MODEL: ") + Cart_error_message());
  unsetenv("CARTPLAN_COST_MODEL");
  // Per-request models that differ in a price other than alpha and beta (phase_us here) could
  // make ranks choose different plans: init must refuse them on every rank.
  if (rc == MPI_SUCCESS && h.size > 1) {
    const std::string own = std::string(tmp ? tmp : "/tmp") + "/errors_test_phase" + std::to_string(h.rank) + ".json";
    if (FILE* f = std::fopen(own.c_str(), "w")) {
      std::fprintf(f, R"({"schema": "cartplan.cost_model/2", "alpha_us": 0.5, "beta_us_per_byte": 0.001, "phase_us": %s, )"
                      R"("copy_us_per_byte": 0.0001, "rendezvous_us": 2, "eager_limit_bytes": 4096})",
                   h.rank == 0 ? "0.5" : "9");
      std::fclose(f);
    }
    MPI_Info_create(&info);
    MPI_Info_set(info, "cartplan_cost_model", own.c_str());
    std::vector<int> sb(2, h.rank), rb(2, -1);
    Cart_Request req = CART_REQUEST_NULL;
    const int init_rc = Cart_alltoall_init(sb.data(), 1, MPI_INT, rb.data(), 1, MPI_INT, cart, info, &req);
    expect_error(h, init_rc, MPI_ERR_INFO_VALUE, "different cartplan Info options", "per-rank phase prices at init");
    if (init_rc == MPI_SUCCESS) Cart_request_free(&req);
    MPI_Info_free(&info);
  }
  if (rc == MPI_SUCCESS) MPI_Comm_free(&cart);
}

// What Info cartplan_progress selects, observed: a combining Cart_ialltoall (two phases on a
// 2-D grid whose sides are both >= 2; one int per block, rank-dependent) is started and then
// only MPI_Allreduce is called, no Cart_* call. With "any" the later phase is posted inside
// MPI_Allreduce (Open MPI's progress callback), so every block arrives before Cart_wait; with
// "cartplan" no rank posts it, so the blocks that a neighbour relays cannot arrive (a time bound
// for "any", a few rounds for "cartplan"). Cart_wait then completes both correctly. On grids
// with a side of 1 (np 1, 2, 3) the plan has one phase with messages, which never asks for the
// callback (its blocks are unpacked by Cart_wait): only the completion is checked there.
void progress_modes(Harness& h) {
  int dims[2] = {0, 0}, periods[2] = {1, 1};
  MPI_Dims_create(h.size, 2, dims);
  const bool two_phases = dims[0] >= 2 && dims[1] >= 2;
  int moore[16], t = 0;
  const bool made = Cart_neighbors_count(2, CART_CHEBYSHEV, 1, 1, &t) == MPI_SUCCESS && t == 8 &&
                    Cart_neighbors(2, CART_CHEBYSHEV, 1, 1, 8, moore) == MPI_SUCCESS;
  h.check(made, "the Moore neighbourhood of radius 1: 8 offsets");
  if (!made) return;
  for (const std::string mode : {"cartplan", "any"}) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cartplan_progress", mode.c_str());
    MPI_Info_set(info, "cartplan_algorithm", "combining");
    MPI_Comm cart = MPI_COMM_NULL;
    const int rc = Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, t, moore, MPI_UNWEIGHTED, info, 0, &cart);
    MPI_Info_free(&info);
    h.check(rc == MPI_SUCCESS, "cartplan_progress = " + mode + ": creation");
    if (rc != MPI_SUCCESS) continue;
    int me = 0;
    MPI_Comm_rank(cart, &me);
    std::vector<int> send(t), recv(t, -1), want(t);
    for (int k = 0; k < t; ++k) {
      int from = MPI_PROC_NULL, to = MPI_PROC_NULL;
      Cart_relative_shift(cart, &moore[2 * k], &from, &to);
      send[k] = 1000 * me + k;
      want[k] = 1000 * from + k;
    }
    Cart_Request req = CART_REQUEST_NULL;
    h.check(Cart_ialltoall(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, cart, &req) == MPI_SUCCESS, mode + ": Cart_ialltoall");
    // Flags {every block here, still in time}, the minimum over the ranks: all stop together.
    const double t0 = MPI_Wtime();
    int flags[2] = {0, 1};
    for (int round = 0; two_phases && flags[0] == 0 && flags[1] == 1; ++round) {
      const bool in_time = mode == "any" ? MPI_Wtime() - t0 < 10.0 : round < 20;
      int mine[2] = {recv == want ? 1 : 0, in_time ? 1 : 0};
      MPI_Allreduce(mine, flags, 2, MPI_INT, MPI_MIN, cart);
    }
    if (two_phases)
      h.check(flags[0] == (mode == "any" ? 1 : 0), "cartplan_progress = " + mode + ": the blocks " +
                                                      (flags[0] ? "arrive" : "do not arrive") + " inside MPI_Allreduce");
    h.check(Cart_wait(&req) == MPI_SUCCESS && recv == want, mode + ": Cart_wait completes the exchange");
    MPI_Comm_free(&cart);
  }
}

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  // The cases below check returned classes: errors must return instead of aborting.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  creation_errors(h);
  collective_errors(h);
  init_errors(h);
  default_mode_errors(h);
  insignificant_blocks(h);
  error_handlers(h);
  cost_model_lookup(h);
  progress_modes(h);
  return h.finish("errors_test");
}
