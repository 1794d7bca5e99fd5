// The graph collectives' non-blocking pool: Cart_graph_ineighbor_alltoall / _allgather with the
// same arguments take back the exchange a completed earlier call built (builds counted by the
// private copies the library makes of each derived datatype it builds with,
// MPI_Type_create_resized), under linear, pairing, cumulative, grid and auto, with no global collective per
// call. Several requests in flight together on their own receive buffers, completed in a
// rank-dependent order; rank 0 reusing while the others build; the C++ request assigned over; a
// pass over as many buffers as the pool holds reuses every one; a
// datatype freed and created with another layout builds again; a predefined-type allgather; the
// communicator freed with exchanges in its pool; allgatherv, alltoallv and alltoallw under a
// linear schedule (pooled and, blocking, cached with their arrays and datatypes; combining ones
// are not). Every receive buffer is compared with Open MPI's
// MPI_Neighbor_* on the same distributed graph, on a graph with parallel and self edges whose
// degrees differ by rank.
#include <mpi.h>

#include <string>
#include <vector>

#include "backends/mpi/cartplan.hpp"
#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/count_collectives.h"
#include "tests/mpi/count_type_builds.h"
#include "tests/mpi/derived_case.h"
#include "tests/mpi/graph_algorithm_info.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;

constexpr int kElems = 3;      // elements per block
constexpr int kInFlight = 3;   // requests in flight together
constexpr int kPoolSize = 8;   // what the pool holds (GraphExchange::kPoolCapacity)

// Rank r's destinations on p ranks: both ring neighbours, a parallel edge on even ranks and a
// self edge on ranks 1 mod 3, so degrees differ between ranks.
std::vector<int> outs_of(int r, int p) {
  std::vector<int> out = {(r + 1) % p, (r + p - 1) % p};
  if (r % 2 == 0) out.push_back((r + 1) % p);
  if (r % 3 == 1) out.push_back(r);
  return out;
}

std::vector<int> ins_of(int r, int p) {
  std::vector<int> in;
  for (int s = 0; s < p; ++s)
    for (int d : outs_of(s, p))
      if (d == r) in.push_back(s);
  return in;
}

MPI_Datatype strided(int stride) {
  MPI_Datatype t;
  MPI_Type_vector(kElems, 1, stride, MPI_INT, &t);
  MPI_Type_commit(&t);
  return t;
}

struct Case {
  Harness& h;
  MPI_Comm comm;
  std::string label;
  int count = 1;  // of the datatype per block
  std::vector<int> send = std::vector<int>(512);
  void set_send(int base) {
    for (std::size_t i = 0; i < send.size(); ++i) send[i] = h.rank * 100000 + base + static_cast<int>(i);
  }
};

// Open MPI's answer for the same call (the reference), into a buffer of `n` ints.
std::vector<int> reference(Case& c, bool allgather, MPI_Datatype stype, MPI_Datatype rtype, std::size_t n) {
  std::vector<int> ref(n, -1);
  const int rc = allgather ? MPI_Neighbor_allgather(c.send.data(), c.count, stype, ref.data(), c.count, rtype, c.comm)
                           : MPI_Neighbor_alltoall(c.send.data(), c.count, stype, ref.data(), c.count, rtype, c.comm);
  c.h.check(rc == MPI_SUCCESS, c.label + "MPI_Neighbor_* (the reference) succeeds");
  return ref;
}

// One round over `bufs` (each its own key): posts up to kInFlight calls at a time, completes them
// in a rank-dependent order, and checks every buffer and whether each call built (`builds[k]`: 1
// builds, 0 reuses, -1 not counted: predefined datatypes are not copied).
void round_trip(Case& c, bool allgather, MPI_Datatype stype, MPI_Datatype rtype, const std::vector<std::vector<int>*>& bufs, int base,
                const std::vector<int>& builds, const std::string& what) {
  c.set_send(base);
  const std::size_t n = bufs[0]->size();
  const std::vector<int> ref = reference(c, allgather, stype, rtype, n);
  for (std::size_t first = 0; first < bufs.size(); first += kInFlight) {
    std::vector<Cart_Request> reqs;
    for (std::size_t k = first; k < bufs.size() && k < first + kInFlight; ++k) {
      bufs[k]->assign(n, -1);
      Cart_Request r = CART_REQUEST_NULL;
      const long before = type_copies;
      const int rc = allgather ? Cart_graph_ineighbor_allgather(c.send.data(), c.count, stype, bufs[k]->data(), c.count, rtype, c.comm, &r)
                               : Cart_graph_ineighbor_alltoall(c.send.data(), c.count, stype, bufs[k]->data(), c.count, rtype, c.comm, &r);
      const std::string call = c.label + what + ", buffer " + std::to_string(k);
      c.h.check(rc == MPI_SUCCESS, call + ": the call succeeds (" + std::string(rc == MPI_SUCCESS ? "" : Cart_error_message()) + ")");
      const long copies = type_copies - before;
      if (builds[k] >= 0)
        c.h.check(builds[k] ? copies > 0 : copies == 0, call + (builds[k] ? ": builds" : ": reuses a pooled exchange") + " (" +
                                                            std::to_string(copies) + " datatype copies)");
      reqs.push_back(r);
    }
    const int rc = cartplan::mpitest::complete_in_rank_order(c.h.rank, reqs, CART_REQUEST_NULL, Cart_wait, Cart_test);
    c.h.check(rc == MPI_SUCCESS, c.label + what + ": every request completes with MPI_SUCCESS");
  }
  for (std::size_t k = 0; k < bufs.size(); ++k)
    c.h.check(*bufs[k] == ref, c.label + what + ", buffer " + std::to_string(k) + ": equals MPI_Neighbor_*");
}

std::vector<std::vector<int>> buffers(std::size_t count, std::size_t in_degree) {
  return std::vector<std::vector<int>>(count, std::vector<int>(kElems * in_degree + 2, -1));
}

// The buffers round_trip writes into (the pool keys their addresses: never copies).
std::vector<std::vector<int>*> ptrs(std::vector<std::vector<int>>& bufs) {
  std::vector<std::vector<int>*> p;
  for (auto& b : bufs) p.push_back(&b);
  return p;
}

void derived_rounds(Case& c, std::size_t in_degree) {
  MPI_Datatype a = strided(2), rtype;
  MPI_Type_contiguous(kElems, MPI_INT, &rtype);
  MPI_Type_commit(&rtype);
  std::vector<std::vector<int>> bufs = buffers(kInFlight, in_degree);
  round_trip(c, false, a, rtype, ptrs(bufs), 0, {1, 1, 1}, "first round");
  const long collectives = global_collectives;
  for (int r = 1; r <= 3; ++r) round_trip(c, false, a, rtype, ptrs(bufs), 1000 * r, {0, 0, 0}, "round " + std::to_string(r));
  c.h.check(global_collectives == collectives, c.label + "no global collective in reused calls");
  // Freed and created with another layout: built again, then reused.
  MPI_Type_free(&a);
  MPI_Datatype b = strided(3);
  round_trip(c, false, b, rtype, ptrs(bufs), 5000, {1, 1, 1}, "new layout");
  round_trip(c, false, b, rtype, ptrs(bufs), 6000, {0, 0, 0}, "new layout again");
  // As many buffers as the pool holds: every one reused in a second pass.
  std::vector<std::vector<int>> many = buffers(kPoolSize, in_degree);
  round_trip(c, false, b, rtype, ptrs(many), 7000, std::vector<int>(kPoolSize, 1), "pool-sized pass");
  round_trip(c, false, b, rtype, ptrs(many), 8000, std::vector<int>(kPoolSize, 0), "pool-sized pass again");
  MPI_Type_free(&b);
  MPI_Type_free(&rtype);
}

// Reuse is each rank's own business: rank 0 takes pooled exchanges on every call while the other
// ranks cycle through more buffers than the pool holds and build on every call (the oldest is
// dropped first); three requests in flight, completed in a rank-dependent order. A pooled
// exchange left on its old lane's tags would not match its peers' fresh ones.
void diverging(Case& c, std::size_t in_degree) {
  MPI_Datatype t;
  MPI_Type_contiguous(kElems, MPI_INT, &t);
  MPI_Type_commit(&t);
  std::vector<std::vector<int>> all = buffers(kPoolSize + 4, in_degree);
  for (int it = 0; it < 8; ++it) {
    std::vector<std::vector<int>*> bufs;
    for (int k = 0; k < kInFlight; ++k) bufs.push_back(&all[static_cast<std::size_t>(c.h.rank == 0 ? k : (it * kInFlight + k) % all.size())]);
    const int expect = c.h.rank == 0 && it > 0 ? 0 : 1;
    round_trip(c, false, t, t, bufs, 20000 + it, std::vector<int>(kInFlight, expect), "diverging reuse " + std::to_string(it));
  }
  MPI_Type_free(&t);
}

// The C++ idiom `r = g.ialltoall(...); r.wait();`: assigning over a completed request recycles its
// exchange, so from the third call on the pool has one for the call (the second call runs before
// the first request is assigned over).
void cpp_assignment(Case& c, std::size_t in_degree) {
  MPI_Datatype t;
  MPI_Type_contiguous(kElems, MPI_INT, &t);
  MPI_Type_commit(&t);
  const cartplan::mpi::DistGraphComm g = cartplan::mpi::DistGraphComm::view(c.comm);
  std::vector<int> recv(kElems * in_degree + 2, -1);
  cartplan::mpi::GraphCollective r = g.ialltoall(c.send.data(), 1, t, recv.data(), 1, t);
  r.wait();
  for (int it = 0; it < 5; ++it) {
    c.set_send(30000 + it);
    const std::vector<int> ref = reference(c, false, t, t, recv.size());
    recv.assign(recv.size(), -1);
    const long before = type_copies;
    r = g.ialltoall(c.send.data(), 1, t, recv.data(), 1, t);
    r.wait();
    const std::string what = c.label + "C++ assignment, call " + std::to_string(it + 2);
    if (it > 0) c.h.check(type_copies == before, what + ": reuses (" + std::to_string(type_copies - before) + " datatype copies)");
    c.h.check(recv == ref, what + ": equals MPI_Neighbor_alltoall");
  }
  MPI_Type_free(&t);
}

// The v forms' arrays of one pass: edge k carries 1 + (its source + shift) % 2 blocks, so counts
// differ by rank and agree at both ends of every edge; `gap` blocks between receive blocks.
struct VArrays {
  std::vector<int> scounts, sdispls, rcounts, rdispls;
  int sendcount = 0;
  VArrays(int rank, const std::vector<int>& in, std::size_t out_degree, int shift, int gap, int send_gap = 0) {
    sendcount = 1 + (rank + shift) % 2;
    for (std::size_t k = 0; k < out_degree; ++k) scounts.push_back(sendcount), sdispls.push_back(static_cast<int>(k) * (2 + send_gap));
    int at = 0;
    for (int src : in) rcounts.push_back(1 + (src + shift) % 2), rdispls.push_back(at), at += 2 + gap;
  }
};

// One v call (alltoallv or allgatherv; blocking, or non-blocking + wait) into `recv`; returns the
// datatype copies it made.
long v_call(Case& c, bool allgather, bool blocking, MPI_Datatype t, const VArrays& v, std::vector<int>& recv, const std::string& what) {
  recv.assign(recv.size(), -1);
  const long before = type_copies;
  if (blocking) {
    const int rc = allgather ? Cart_graph_neighbor_allgatherv(c.send.data(), v.sendcount, t, recv.data(), v.rcounts.data(), v.rdispls.data(), t, c.comm)
                             : Cart_graph_neighbor_alltoallv(c.send.data(), v.scounts.data(), v.sdispls.data(), t, recv.data(), v.rcounts.data(),
                                                             v.rdispls.data(), t, c.comm);
    c.h.check(rc == MPI_SUCCESS, what + ": the call succeeds");
    return type_copies - before;
  }
  Cart_Request r = CART_REQUEST_NULL;
  const int rc = allgather ? Cart_graph_ineighbor_allgatherv(c.send.data(), v.sendcount, t, recv.data(), v.rcounts.data(), v.rdispls.data(), t, c.comm, &r)
                           : Cart_graph_ineighbor_alltoallv(c.send.data(), v.scounts.data(), v.sdispls.data(), t, recv.data(), v.rcounts.data(),
                                                            v.rdispls.data(), t, c.comm, &r);
  c.h.check(rc == MPI_SUCCESS && Cart_wait(&r) == MPI_SUCCESS, what + ": the call and its wait succeed");
  return type_copies - before;
}

// allgatherv and alltoallv, non-blocking and blocking: under a linear schedule (forced, or auto,
// which runs v forms linear) the same arrays take back the pooled (non-blocking) or cached
// (blocking) exchange; other counts or displacements build again. Non-blocking calls with a
// combining schedule build every call (sizes travel with the data; blocking ones are not counted:
// their sized calls lay out derived types without copies). Every result equals
// MPI_Neighbor_allgatherv / alltoallv.
void v_rounds(Case& c, const std::vector<int>& in, std::size_t out_degree, bool linear, bool blocking) {
  MPI_Datatype t;
  MPI_Type_contiguous(kElems, MPI_INT, &t);
  MPI_Type_commit(&t);
  std::vector<int> recv(in.size() * 4 * kElems + 8), ref(recv.size());
  const VArrays a(c.h.rank, in, out_degree, 0, 0), other_counts(c.h.rank, in, out_degree, 1, 0), other_displs(c.h.rank, in, out_degree, 0, 1),
      other_sdispls(c.h.rank, in, out_degree, 0, 1, 1);
  for (bool allgather : {false, true}) {
    const std::pair<const VArrays*, const char*> passes[] = {
        {&a, "first"}, {&a, "again"}, {&a, "third"}, {&other_counts, "other counts"}, {&other_displs, "other displacements"},
        {&other_displs, "other displacements again"}, {&other_sdispls, "other send displacements"}};
    const VArrays* previous = nullptr;
    for (int it = 0; it < 7; ++it) {
      if (allgather && passes[it].first == &other_sdispls) continue;  // allgatherv has none
      const auto& [v, name] = passes[it];
      const std::string what = c.label + (blocking ? "blocking " : "") + (allgather ? "allgatherv " : "alltoallv ") + name;
      c.set_send(40000 + it);
      const long copies = v_call(c, allgather, blocking, t, *v, recv, what);
      const bool reuse = linear && v == previous;
      if (linear || !blocking)
        c.h.check(reuse ? copies == 0 : copies > 0, what + (reuse ? ": reuses a pooled exchange" : ": builds") + " (" + std::to_string(copies) + " datatype copies)");
      ref.assign(ref.size(), -1);
      const int rc = allgather ? MPI_Neighbor_allgatherv(c.send.data(), v->sendcount, t, ref.data(), v->rcounts.data(), v->rdispls.data(), t, c.comm)
                               : MPI_Neighbor_alltoallv(c.send.data(), v->scounts.data(), v->sdispls.data(), t, ref.data(), v->rcounts.data(),
                                                        v->rdispls.data(), t, c.comm);
      c.h.check(rc == MPI_SUCCESS && recv == ref, what + ": equals MPI_Neighbor_*v");
      previous = v;
    }
  }
  MPI_Type_free(&t);
}

// alltoallw's arrays of one pass: every edge one block of `t` (kElems ints) at byte
// displacements with `gap` blocks between receive blocks; `first`: the first send edge's
// datatype (t, or kElems ints at a stride: the same type signature, other memory).
struct WArrays {
  std::vector<int> scounts, rcounts;
  std::vector<MPI_Aint> sdispls, rdispls;
  std::vector<MPI_Datatype> stypes, rtypes;
  WArrays(std::size_t in_degree, std::size_t out_degree, MPI_Datatype t, int gap, MPI_Datatype first) {
    const MPI_Aint block = kElems * static_cast<MPI_Aint>(sizeof(int));
    for (std::size_t k = 0; k < out_degree; ++k) {
      scounts.push_back(1), stypes.push_back(k == 0 ? first : t), sdispls.push_back(static_cast<MPI_Aint>(k) * 2 * block);
    }
    for (std::size_t k = 0; k < in_degree; ++k) rcounts.push_back(1), rtypes.push_back(t), rdispls.push_back(static_cast<MPI_Aint>(k) * (1 + gap) * block);
  }
};

// alltoallw, non-blocking and blocking, as v_rounds: the same arrays reuse under a linear
// schedule; other receive displacements or another send datatype build again; every result
// equals MPI_Neighbor_alltoallw.
void w_rounds(Case& c, std::size_t in_degree, std::size_t out_degree, bool linear, bool blocking) {
  MPI_Datatype t;
  MPI_Type_contiguous(kElems, MPI_INT, &t);
  MPI_Type_commit(&t);
  std::vector<int> recv(in_degree * 2 * kElems + 8), ref(recv.size());
  MPI_Datatype strided2 = strided(2);
  const WArrays a(in_degree, out_degree, t, 0, t), other_displs(in_degree, out_degree, t, 1, t), other_type(in_degree, out_degree, t, 0, strided2);
  // Back to t after the strided type: the key must tell the datatypes apart (the blocking slot
  // holds the strided one's exchange then; the pool holds both: not counted, data checked).
  const std::pair<const WArrays*, const char*> passes[] = {{&a, "first"}, {&a, "again"}, {&other_displs, "other displacements"},
                                                           {&other_displs, "other displacements again"}, {&other_type, "another send type"},
                                                           {&other_type, "another send type again"}, {&a, "back to the first"}};
  const WArrays* previous = nullptr;
  for (int it = 0; it < 7; ++it) {
    const auto& [w, name] = passes[it];
    const std::string what = c.label + (blocking ? "blocking " : "") + "alltoallw " + name;
    c.set_send(60000 + it);
    recv.assign(recv.size(), -1);
    const long before = type_copies;
    int rc = MPI_SUCCESS;
    if (blocking) {
      rc = Cart_graph_neighbor_alltoallw(c.send.data(), w->scounts.data(), w->sdispls.data(), w->stypes.data(), recv.data(), w->rcounts.data(),
                                         w->rdispls.data(), w->rtypes.data(), c.comm);
    } else {
      Cart_Request r = CART_REQUEST_NULL;
      rc = Cart_graph_ineighbor_alltoallw(c.send.data(), w->scounts.data(), w->sdispls.data(), w->stypes.data(), recv.data(), w->rcounts.data(),
                                          w->rdispls.data(), w->rtypes.data(), c.comm, &r);
      if (rc == MPI_SUCCESS) rc = Cart_wait(&r);
    }
    const long copies = type_copies - before;
    c.h.check(rc == MPI_SUCCESS, what + ": succeeds");
    const bool reuse = linear && w == previous;
    if ((linear || !blocking) && it < 6)
      c.h.check(reuse ? copies == 0 : copies > 0, what + (reuse ? ": reuses" : ": builds") + " (" + std::to_string(copies) + " datatype copies)");
    ref.assign(ref.size(), -1);
    MPI_Neighbor_alltoallw(c.send.data(), w->scounts.data(), w->sdispls.data(), w->stypes.data(), ref.data(), w->rcounts.data(), w->rdispls.data(),
                           w->rtypes.data(), c.comm);
    c.h.check(recv == ref, what + ": equals MPI_Neighbor_alltoallw");
    previous = w;
  }
  MPI_Type_free(&strided2);
  MPI_Type_free(&t);
}

// Blocking alltoall (the counts, say) and alltoallv (the data) in turn, as programs exchange
// them: each keeps its own cached exchange, so from the second turn on neither builds.
void alternating(Case& c, const std::vector<int>& in, std::size_t out_degree) {
  MPI_Datatype t;
  MPI_Type_contiguous(kElems, MPI_INT, &t);
  MPI_Type_commit(&t);
  const VArrays v(c.h.rank, in, out_degree, 0, 0);
  std::vector<int> uniform(kElems * in.size() + 2), varied(in.size() * 4 * kElems + 8), ref(uniform.size());
  for (int turn = 0; turn < 3; ++turn) {
    const std::string what = c.label + "alternating turn " + std::to_string(turn);
    c.set_send(50000 + turn);
    long before = type_copies;
    uniform.assign(uniform.size(), -1);
    c.h.check(Cart_graph_neighbor_alltoall(c.send.data(), 1, t, uniform.data(), 1, t, c.comm) == MPI_SUCCESS, what + ": alltoall succeeds");
    const long uniform_copies = type_copies - before;
    ref.assign(ref.size(), -1);
    MPI_Neighbor_alltoall(c.send.data(), 1, t, ref.data(), 1, t, c.comm);
    c.h.check(uniform == ref, what + ": alltoall equals MPI_Neighbor_alltoall");
    const long varied_copies = v_call(c, false, true, t, v, varied, what + " alltoallv");
    if (turn > 0)
      c.h.check(uniform_copies == 0 && varied_copies == 0, what + ": both reuse their cached exchanges (" + std::to_string(uniform_copies) + " and " +
                                                             std::to_string(varied_copies) + " datatype copies)");
  }
  MPI_Type_free(&t);
}

void run(Harness& h, const char* algo) {
  const std::vector<int> in = ins_of(h.rank, h.size), out = outs_of(h.rank, h.size);
  Case c{h, cartplan::mpitest::graph_with_algorithm(in, out, algo, "1"), std::string(algo) + ": "};
  derived_rounds(c, in.size());
  diverging(c, in.size());
  cpp_assignment(c, in.size());
  const bool linear = std::string(algo) == "linear" || std::string(algo) == "auto";
  for (bool blocking : {false, true}) v_rounds(c, in, out.size(), linear, blocking);
  for (bool blocking : {false, true}) w_rounds(c, in.size(), out.size(), linear, blocking);
  if (linear) alternating(c, in, out.size());
  // Allgather: a derived block type (built, then reused), then MPI_INT (keyed by handle; data only).
  std::vector<std::vector<int>> bufs = buffers(kInFlight, in.size());
  MPI_Datatype block;
  MPI_Type_contiguous(kElems, MPI_INT, &block);
  MPI_Type_commit(&block);
  for (int r = 0; r < 3; ++r)
    round_trip(c, true, block, block, ptrs(bufs), 9000 + r, std::vector<int>(kInFlight, r == 0 ? 1 : 0), "allgather round " + std::to_string(r));
  MPI_Type_free(&block);
  c.count = kElems;
  for (int r = 0; r < 3; ++r) round_trip(c, true, MPI_INT, MPI_INT, ptrs(bufs), 9500 + r, {-1, -1, -1}, "MPI_INT allgather round " + std::to_string(r));
  // Freed with exchanges in its pool: they go with it (a leak shows under --config=asan).
  MPI_Comm_free(&c.comm);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  for (const char* algo : {"linear", "pairing", "cumulative", "grid", "auto"}) run(h, algo);
  return h.finish("graph_pool_test");
}
