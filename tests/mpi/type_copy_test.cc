// Derived datatypes that carry the program's attributes: the copies cartplan keeps of a caller's
// datatypes (backends/mpi/type_copy.h) run no attribute copy callback. A keyval whose copy
// callback counts its calls is set on every derived datatype passed to non-blocking
// Cart_ialltoallw, persistent Cart_alltoallw_init, non-blocking and persistent graph alltoallw
// (linear and pairing) and Cart_halo_create; the count stays 0 while the program's own
// MPI_Type_dup counts (so the check can fail), and every received element is checked, also
// with the datatypes freed right after the call or init. The copy itself is compared with its
// source: bounds, size, and MPI_Pack / MPI_Unpack of 3 elements of a resized type with a
// negative lower bound and an extent beyond its data, byte for byte. A datatype the program did
// not commit is still refused (MPI_ERR_TYPE on every rank, no hang), as when MPI saw it; on one
// rank only, a persistent graph init fails on every rank (its outcome agreed).
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends/mpi/type_copy.h"
#include "tests/mpi/derived_case.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::DerivedCase;
using cartplan::mpitest::Harness;
using cartplan::mpitest::kElems;

long callback_copies = 0;  // calls of the program's attribute copy callback

int counting_copy(MPI_Datatype, int, void*, void* in, void* out, int* flag) {
  ++callback_copies;
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}

int keyval() {
  static int key = MPI_KEYVAL_INVALID;
  if (key == MPI_KEYVAL_INVALID) MPI_Type_create_keyval(counting_copy, MPI_TYPE_NULL_DELETE_FN, &key, nullptr);
  return key;
}

// `t` committed, carrying the program's attribute.
MPI_Datatype tagged(MPI_Datatype t) {
  MPI_Type_commit(&t);
  static int value = 42;
  MPI_Type_set_attr(t, keyval(), &value);
  return t;
}

MPI_Datatype strided_tagged(int stride) {
  MPI_Datatype t;
  MPI_Type_vector(kElems, 1, stride, MPI_INT, &t);
  return tagged(t);
}

MPI_Datatype block_tagged() {
  MPI_Datatype t;
  MPI_Type_contiguous(kElems, MPI_INT, &t);
  return tagged(t);
}

// The copy against its source: bounds and size, and 3 elements packed and unpacked alike.
void copy_semantics(Harness& h) {
  MPI_Datatype vec, t, copy = MPI_DATATYPE_NULL;
  MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
  MPI_Type_create_resized(vec, -4, 28, &t);  // lb -4, extent 7 ints (true extent 5)
  MPI_Type_free(&vec);
  t = tagged(t);
  const long before = callback_copies;
  h.check(cartplan::mpi::communication_copy(t, MPI_COMM_WORLD, &copy).ok(), "communication_copy succeeds");
  h.check(callback_copies == before, "communication_copy runs no attribute copy callback");
  void* attr = nullptr;
  int found = 1;
  MPI_Type_get_attr(copy, keyval(), &attr, &found);
  h.check(!found, "the copy carries no attribute of the program");
  h.check(cartplan::mpi::is_communication_copy(copy) && !cartplan::mpi::is_communication_copy(t),
          "the copy, not its source, carries cartplan's marker (datatype_layout asserts on it)");
  MPI_Aint lb[2], ext[2], tlb[2], text[2];
  MPI_Count size[2];
  for (int k = 0; k < 2; ++k) {
    MPI_Datatype x = k == 0 ? t : copy;
    MPI_Type_get_extent(x, &lb[k], &ext[k]);
    MPI_Type_get_true_extent(x, &tlb[k], &text[k]);
    MPI_Type_size_x(x, &size[k]);
  }
  h.check(lb[0] == lb[1] && ext[0] == ext[1] && tlb[0] == tlb[1] && text[0] == text[1] && size[0] == size[1],
          "the copy has the same lower bound, extent, true extent and size");
  std::vector<int> src(32);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = h.rank * 1000 + static_cast<int>(i);
  std::vector<char> packed[2];
  std::vector<int> unpacked[2];
  for (int k = 0; k < 2; ++k) {
    MPI_Datatype x = k == 0 ? t : copy;
    int bytes = 0, pos = 0;
    MPI_Pack_size(3, x, MPI_COMM_SELF, &bytes);
    packed[k].assign(static_cast<std::size_t>(bytes), 0);
    MPI_Pack(src.data() + 1, 3, x, packed[k].data(), bytes, &pos, MPI_COMM_SELF);
    packed[k].resize(static_cast<std::size_t>(pos));
    unpacked[k].assign(src.size(), -1);
    pos = 0;
    MPI_Unpack(packed[k].data(), static_cast<int>(packed[k].size()), &pos, unpacked[k].data() + 1, 3, x, MPI_COMM_SELF);
  }
  h.check(packed[0] == packed[1] && !packed[0].empty(), "3 elements pack to the same bytes");
  h.check(unpacked[0] == unpacked[1], "3 elements unpack to the same places (every other int untouched)");
  MPI_Type_free(&copy);
  MPI_Type_free(&t);
  // A datatype the program did not commit: refused (MPI would refuse to send it), no copy.
  MPI_Comm quiet;  // errors return
  MPI_Comm_dup(MPI_COMM_SELF, &quiet);
  MPI_Comm_set_errhandler(quiet, MPI_ERRORS_RETURN);
  MPI_Datatype loose;
  MPI_Type_vector(3, 1, 2, MPI_INT, &loose);
  const cartplan::mpi::MpiStatus s = cartplan::mpi::communication_copy(loose, quiet, &copy);
  MPI_Comm_free(&quiet);
  h.check(s.code == MPI_ERR_TYPE && copy == MPI_DATATYPE_NULL, "an uncommitted datatype is MPI_ERR_TYPE: " + s.message);
  h.check(cartplan::mpi::communication_copy(loose, MPI_COMM_NULL, &copy).ok(), "unchecked (MPI_COMM_NULL), it is copied");
  MPI_Type_free(&copy);
  MPI_Type_free(&loose);
}

// Uncommitted datatypes on every rank: the non-blocking Cartesian call and the persistent graph
// init return MPI_ERR_TYPE on every rank (as when MPI refused the caller's handle), no request.
void uncommitted(Harness& h) {
  DerivedCase c = cartplan::mpitest::make_derived_case(h.rank, h.size, "combining");
  MPI_Comm_set_errhandler(c.cart, MPI_ERRORS_RETURN);
  MPI_Datatype loose, r = block_tagged();
  MPI_Type_vector(kElems, 1, 2, MPI_INT, &loose);
  const std::vector<MPI_Datatype> st(c.t, loose), rt(c.t, r);
  std::vector<int> recv(static_cast<std::size_t>(kElems * c.t), -1);
  Cart_Request req = CART_REQUEST_NULL;
  int rc = Cart_ialltoallw(c.send.data(), c.counts.data(), c.sdispls.data(), st.data(), recv.data(), c.counts.data(),
                           c.rdispls.data(), rt.data(), c.cart, &req);
  int cls = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  h.check(cls == MPI_ERR_TYPE && req == CART_REQUEST_NULL, std::string("uncommitted send type: Cart_ialltoallw is MPI_ERR_TYPE: ") + Cart_error_message());
  MPI_Comm_free(&c.cart);
  const int p = h.size, in[2] = {(h.rank + p - 1) % p, (h.rank + 1) % p}, out[2] = {in[1], in[0]};
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", "pairing");
  MPI_Info_set(info, "cartplan_theta", "1");
  MPI_Comm g = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, in, MPI_UNWEIGHTED, 2, out, MPI_UNWEIGHTED, info, 0, &g);
  MPI_Info_free(&info);
  MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
  const int counts[2] = {1, 1};
  const MPI_Aint d[2] = {0, 64};
  const MPI_Datatype gs[2] = {loose, loose}, gr[2] = {r, r};
  std::vector<int> send(64, 1), grecv(64, -1);
  rc = Cart_graph_neighbor_alltoallw_init(send.data(), counts, d, gs, grecv.data(), counts, d, gr, g, MPI_INFO_NULL, &req);
  cls = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  h.check(cls == MPI_ERR_TYPE && req == CART_REQUEST_NULL,
          std::string("uncommitted send type: graph alltoallw init is MPI_ERR_TYPE: ") + Cart_error_message());
  if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  MPI_Comm_free(&g);
  MPI_Type_free(&loose);
  MPI_Type_free(&r);
}

// A uniform persistent graph init (allgather) whose outcome differs between ranks: the last
// rank's send datatype is uncommitted (linear and pairing), then (pairing, a fresh theta) rank
// 0's pattern construction fails (CARTPLAN_TEST_FAIL=pattern set on rank 0 only). Init agrees on
// its outcome: every rank gets an error and no request (before, the other ranks got a request
// whose start waited forever). A request returned anyway is freed unstarted, so a failing check
// does not hang.
void one_rank_fails(Harness& h) {
  const int p = h.size, in[2] = {(h.rank + p - 1) % p, (h.rank + 1) % p}, out[2] = {in[1], in[0]};
  MPI_Comm g = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, in, MPI_UNWEIGHTED, 2, out, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
  MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
  MPI_Datatype vec;
  MPI_Type_vector(kElems, 1, 2, MPI_INT, &vec);
  const bool loose = h.rank == p - 1;
  if (!loose) MPI_Type_commit(&vec);
  std::vector<int> send(2 * kElems, h.rank), recv(2 * kElems, -1);
  struct Case { const char* algo; const char* theta; bool pattern_fails; };
  for (const Case& k : {Case{"linear", "1", false}, Case{"pairing", "1", false}, Case{"pairing", "2", true}}) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cartplan_algorithm", k.algo);
    MPI_Info_set(info, "cartplan_theta", k.theta);
    const bool fails_here = k.pattern_fails ? h.rank == 0 : loose;
    if (k.pattern_fails && h.rank == 0) setenv("CARTPLAN_TEST_FAIL", "pattern", 1);
    MPI_Datatype st = k.pattern_fails ? MPI_INT : vec;
    const int sc = k.pattern_fails ? kElems : 1;
    Cart_Request req = CART_REQUEST_NULL;
    const int rc = Cart_graph_neighbor_allgather_init(send.data(), sc, st, recv.data(), kElems, MPI_INT, g, info, &req);
    unsetenv("CARTPLAN_TEST_FAIL");
    MPI_Info_free(&info);
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    const int expected = k.pattern_fails ? MPI_ERR_OTHER : MPI_ERR_TYPE;
    h.check(cls == expected && req == CART_REQUEST_NULL,
            std::string(k.algo) + (k.pattern_fails ? ": pattern failed on rank 0" : ": send type uncommitted on the last rank") +
                (fails_here ? " (here)" : " (elsewhere)") + ": allgather init fails on every rank: " + Cart_error_message());
    if (req != CART_REQUEST_NULL) Cart_request_free(&req);
  }
  MPI_Comm_free(&g);
  MPI_Type_free(&vec);
}

// Cart_ialltoallw on fresh buffers every round (each call builds), then with the datatypes
// freed right after the call; Cart_alltoallw_init with the datatypes freed right after init.
void cartesian(Harness& h, const char* algo) {
  DerivedCase c = cartplan::mpitest::make_derived_case(h.rank, h.size, algo);
  const std::string label = std::string(algo) + ": ";
  const long before = callback_copies;
  for (int round = 0; round < 4; ++round) {
    const bool free_now = round == 3;
    MPI_Datatype s = strided_tagged(2), r = block_tagged();
    const std::vector<MPI_Datatype> st(c.t, s), rt(c.t, r);
    std::vector<int> recv(static_cast<std::size_t>(kElems * c.t + round), -1);  // a new buffer: a new build
    c.set_send(h.rank, 1000 * round);
    Cart_Request req = CART_REQUEST_NULL;
    int rc = Cart_ialltoallw(c.send.data(), c.counts.data(), c.sdispls.data(), st.data(), recv.data(), c.counts.data(),
                             c.rdispls.data(), rt.data(), c.cart, &req);
    if (free_now) {  // right after the call (MPI allows it)
      MPI_Type_free(&s);
      MPI_Type_free(&r);
    }
    if (rc == MPI_SUCCESS) rc = Cart_wait(&req);
    h.check(rc == MPI_SUCCESS, label + "Cart_ialltoallw and Cart_wait succeed");
    recv.resize(static_cast<std::size_t>(kElems * c.t));
    h.check(c.holds(recv, 2, 1000 * round), label + "round " + std::to_string(round) + " delivers every element");
    if (!free_now) {
      MPI_Type_free(&s);
      MPI_Type_free(&r);
    }
  }
  MPI_Datatype s = strided_tagged(3), r = block_tagged();
  const std::vector<MPI_Datatype> st(c.t, s), rt(c.t, r);
  std::vector<int> recv(static_cast<std::size_t>(kElems * c.t), -1);
  Cart_Request req = CART_REQUEST_NULL;
  const int rc = Cart_alltoallw_init(c.send.data(), c.counts.data(), c.sdispls.data(), st.data(), recv.data(), c.counts.data(),
                                     c.rdispls.data(), rt.data(), c.cart, MPI_INFO_NULL, &req);
  h.check(rc == MPI_SUCCESS, label + "Cart_alltoallw_init succeeds");
  MPI_Type_free(&s);
  MPI_Type_free(&r);
  for (int start = 0; rc == MPI_SUCCESS && start < 3; ++start) {
    c.set_send(h.rank, 50000 + start);
    recv.assign(recv.size(), -1);
    h.check(Cart_start(&req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS, label + "persistent start and wait");
    h.check(c.holds(recv, 3, 50000 + start), label + "persistent start " + std::to_string(start) + " delivers every element");
  }
  if (rc == MPI_SUCCESS) Cart_request_free(&req);
  h.check(callback_copies == before, label + "no attribute copy callback ran (" + std::to_string(callback_copies - before) + " did)");
  MPI_Comm_free(&c.cart);
}

// A ring as a distributed graph: in {left, right}, out {right, left}; edge k sends kElems ints
// at stride 2 from block k (kSpacing ints apart), received as kElems contiguous ints.
void graph(Harness& h, const char* algo) {
  const int p = h.size, me = h.rank, left = (me + p - 1) % p, right = (me + 1) % p;
  const int in[2] = {left, right}, out[2] = {right, left};
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", algo);
  MPI_Info_set(info, "cartplan_theta", "1");
  MPI_Comm g = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, in, MPI_UNWEIGHTED, 2, out, MPI_UNWEIGHTED, info, 0, &g);
  MPI_Info_free(&info);
  const std::string label = std::string("graph ") + algo + ": ";
  const int counts[2] = {1, 1};
  const MPI_Aint sd[2] = {0, cartplan::mpitest::kSpacing * static_cast<MPI_Aint>(sizeof(int))},
                 rd[2] = {0, kElems * static_cast<MPI_Aint>(sizeof(int))};
  std::vector<int> send(2 * cartplan::mpitest::kSpacing), recv(2 * kElems);
  auto right_data = [&](int base) {
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < kElems; ++i)
        if (recv[j * kElems + i] != in[j] * 10000 + j * cartplan::mpitest::kSpacing + 2 * i + base) return false;
    return true;
  };
  auto fill = [&](int base) {
    for (std::size_t e = 0; e < send.size(); ++e) send[e] = me * 10000 + static_cast<int>(e) + base;
    recv.assign(recv.size(), -1);
  };
  const long before = callback_copies;
  for (int persistent = 0; persistent < 2; ++persistent) {
    MPI_Datatype s = strided_tagged(2), r = block_tagged();
    const MPI_Datatype st[2] = {s, s}, rt[2] = {r, r};
    fill(0);
    Cart_Request req = CART_REQUEST_NULL;
    int rc = persistent ? Cart_graph_neighbor_alltoallw_init(send.data(), counts, sd, st, recv.data(), counts, rd, rt, g, MPI_INFO_NULL, &req)
                        : Cart_graph_ineighbor_alltoallw(send.data(), counts, sd, st, recv.data(), counts, rd, rt, g, &req);
    MPI_Type_free(&s);  // right after the call or init (MPI allows it)
    MPI_Type_free(&r);
    for (int start = 0; rc == MPI_SUCCESS && start < (persistent ? 3 : 1); ++start) {
      if (persistent) fill(700 + start);
      if (persistent) rc = Cart_start(&req);
      if (rc == MPI_SUCCESS) rc = Cart_wait(&req);
      h.check(rc == MPI_SUCCESS && right_data(persistent ? 700 + start : 0),
              label + (persistent ? "persistent start " + std::to_string(start) : std::string("non-blocking call")) +
                  " delivers every element (" + Cart_error_message() + ")");
    }
    if (persistent && req != CART_REQUEST_NULL) Cart_request_free(&req);
    h.check(rc == MPI_SUCCESS, label + (persistent ? "persistent" : "non-blocking") + " succeeds");
  }
  h.check(callback_copies == before, label + "no attribute copy callback ran (" + std::to_string(callback_copies - before) + " did)");
  MPI_Comm_free(&g);
}

// Cart_halo_create with a derived element type carrying the attribute (the halo keeps a copy):
// a 1-D periodic ring, 4 interior cells and one ghost cell per side.
void halo(Harness& h) {
  int dims[1] = {h.size}, periods[1] = {1};
  MPI_Comm cart = MPI_COMM_NULL;
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
  MPI_Datatype cell;
  MPI_Type_contiguous(1, MPI_INT, &cell);
  cell = tagged(cell);
  const long before = callback_copies;
  const int interior[1] = {4}, ghost[1] = {1};
  Cart_Halo halo = CART_HALO_NULL;
  int rc = Cart_halo_create(cart, 1, interior, ghost, ghost, cell, MPI_ORDER_C, MPI_INFO_NULL, &halo);
  h.check(rc == MPI_SUCCESS, std::string("Cart_halo_create succeeds: ") + Cart_error_message());
  MPI_Type_free(&cell);  // the halo keeps its own copy
  std::vector<int> u(6, -1);
  for (int i = 1; i <= 4; ++i) u[i] = h.rank * 100 + i;
  if (rc == MPI_SUCCESS) rc = Cart_halo_exchange(u.data(), halo);
  const int left = (h.rank + h.size - 1) % h.size, right = (h.rank + 1) % h.size;
  h.check(rc == MPI_SUCCESS && u[0] == left * 100 + 4 && u[5] == right * 100 + 1, "the halo fills both ghost cells");
  h.check(callback_copies == before, "Cart_halo_create runs no attribute copy callback");
  if (halo != CART_HALO_NULL) Cart_halo_free(&halo);
  MPI_Comm_free(&cart);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  // The callback counts (the checks below could fail): the program's own MPI_Type_dup runs it.
  MPI_Datatype t = strided_tagged(2), d;
  MPI_Type_dup(t, &d);
  h.check(callback_copies == 1, "the program's MPI_Type_dup runs the copy callback once");
  MPI_Type_free(&d);
  MPI_Type_free(&t);
  copy_semantics(h);
  for (const char* algo : {"direct", "combining"}) cartesian(h, algo);
  for (const char* algo : {"linear", "pairing"}) graph(h, algo);
  halo(h);
  uncommitted(h);
  one_rank_fails(h);
  int key = keyval();
  MPI_Type_free_keyval(&key);
  return h.finish("type_copy_test");
}
