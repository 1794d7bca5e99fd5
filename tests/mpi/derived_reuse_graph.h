// The graph collectives' blocking cache with derived datatypes (part of derived_reuse_test):
// Cart_graph_neighbor_alltoall on a ring keeps its exchange for the same derived datatypes
// (builds counted by the private copies, type_copies), also for the program's MPI_Type_dup of
// them (another handle, same layout and vouch: a raw-handle key would build again), builds again for a datatype freed and
// created with another layout (also when the allocator gives back the freed handle value, if
// it does), and reuses once a new datatype of the same layout is vouched for; every call byte
// for byte against MPI_Neighbor_alltoall, and Cart_graph_neighbor_alltoallw against
// MPI_Neighbor_alltoallw, on the same graph communicator. Include after count_type_builds.h.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tests/mpi/derived_case.h"
#include "tests/mpi/harness.h"

namespace cartplan::mpitest {

// One ring: each rank receives from and sends to both neighbours (self or parallel edges at np 1, 2).
struct GraphRing {
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<int> send = std::vector<int>(64), mine = std::vector<int>(2 * kElems + 1), ref = std::vector<int>(2 * kElems + 1);
};

inline GraphRing make_ring(int rank, int size, const char* algo) {
  GraphRing r;
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  const int in[2] = {left, right}, out[2] = {right, left};
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", algo);
  Cart_graph_comm_create_adjacent(MPI_COMM_WORLD, 2, in, 2, out, info, &r.comm);
  MPI_Info_free(&info);
  for (std::size_t i = 0; i < r.send.size(); ++i) r.send[i] = rank * 1000 + static_cast<int>(i);
  return r;
}

// Cart_graph_neighbor_alltoall with `stype` (one per block, blocks one extent apart) against
// MPI_Neighbor_alltoall; `copies`: the datatype copies the call made (a build copies each derived one).
inline void graph_call(Harness& h, GraphRing& r, MPI_Datatype stype, MPI_Datatype rtype, long* copies, const std::string& what) {
  r.mine.assign(r.mine.size(), -1);
  r.ref.assign(r.ref.size(), -1);
  const long before = type_copies;
  const int rc = Cart_graph_neighbor_alltoall(r.send.data(), 1, stype, r.mine.data(), 1, rtype, r.comm);
  *copies = type_copies - before;
  MPI_Neighbor_alltoall(r.send.data(), 1, stype, r.ref.data(), 1, rtype, r.comm);
  h.check(rc == MPI_SUCCESS, what + ": Cart_graph_neighbor_alltoall returns MPI_SUCCESS");
  h.check(std::memcmp(r.mine.data(), r.ref.data(), r.mine.size() * sizeof(int)) == 0, what + ": bytes equal MPI_Neighbor_alltoall's");
}

// The w form (built per call) with the same datatypes on both edges, against MPI_Neighbor_alltoallw.
inline void graph_call_w(Harness& h, GraphRing& r, MPI_Datatype stype, MPI_Datatype rtype, MPI_Aint sextent, const std::string& what) {
  const int counts[2] = {1, 1};
  const MPI_Aint sd[2] = {0, sextent}, rd[2] = {0, static_cast<MPI_Aint>(sizeof(int)) * kElems};
  const MPI_Datatype st[2] = {stype, stype}, rt[2] = {rtype, rtype};
  r.mine.assign(r.mine.size(), -1);
  r.ref.assign(r.ref.size(), -1);
  const int rc = Cart_graph_neighbor_alltoallw(r.send.data(), counts, sd, st, r.mine.data(), counts, rd, rt, r.comm);
  MPI_Neighbor_alltoallw(r.send.data(), counts, sd, st, r.ref.data(), counts, rd, rt, r.comm);
  h.check(rc == MPI_SUCCESS, what + ": Cart_graph_neighbor_alltoallw returns MPI_SUCCESS");
  h.check(std::memcmp(r.mine.data(), r.ref.data(), r.mine.size() * sizeof(int)) == 0, what + ": bytes equal MPI_Neighbor_alltoallw's");
}

// A datatype of `stride`, under `wanted`'s handle value if the allocator gives it back within
// 1000 tries (else any): the case a raw-handle key would get wrong.
inline MPI_Datatype strided_under(int stride, MPI_Datatype wanted, bool* same_handle) {
  std::vector<MPI_Datatype> others;
  MPI_Datatype t = strided(stride);
  for (int tries = 0; tries < 1000 && t != wanted; ++tries) {
    others.push_back(t);
    t = strided(stride);
  }
  for (MPI_Datatype& o : others) MPI_Type_free(&o);
  *same_handle = t == wanted;
  return t;
}

inline void graph_case(Harness& h, const char* algo) {
  GraphRing r = make_ring(h.rank, h.size, algo);
  const std::string label = std::string("graph ") + algo + ": ";
  MPI_Datatype rtype = contiguous_block(), a = strided(2);
  long copies = 0;
  graph_call(h, r, a, rtype, &copies, label + "first call");
  h.check(copies == 2, label + "the first call builds with its 2 derived datatypes (" + std::to_string(copies) + " copied)");
  for (int it = 0; it < 3; ++it) {
    graph_call(h, r, a, rtype, &copies, label + "repeated call");
    h.check(copies == 0, label + "a repeated call reuses the exchange (" + std::to_string(copies) + " copied)");
  }
  graph_call_w(h, r, a, rtype, static_cast<MPI_Aint>(sizeof(int)) * (3 * 2 + 1), label + "w, stride 2");
  // The program's duplicate carries the vouch (an attribute): same layout, another handle, reused.
  MPI_Datatype a2;
  MPI_Type_dup(a, &a2);
  graph_call(h, r, a2, rtype, &copies, label + "program's duplicate");
  h.check(copies == 0, label + "a duplicate of a used datatype reuses the exchange (" + std::to_string(copies) + " copied)");
  MPI_Type_free(&a2);
  // Freed, then another layout (under the same handle value when MPI gives it back): built again.
  const MPI_Datatype old_handle = a;
  MPI_Type_free(&a);
  bool same_handle = false;
  MPI_Datatype b = strided_under(3, old_handle, &same_handle);
  if (h.rank == 0) std::printf("derived_reuse_test: %s: new layout under the freed handle value: %s\n", algo, same_handle ? "yes" : "no");
  graph_call(h, r, b, rtype, &copies, label + "new layout");
  h.check(copies >= 1, label + "a new layout builds again");
  graph_call(h, r, b, rtype, &copies, label + "new layout again");
  h.check(copies == 0, label + "the new layout's exchange is reused");
  graph_call_w(h, r, b, rtype, static_cast<MPI_Aint>(sizeof(int)) * (3 * 3 + 1), label + "w, stride 3");
  // The same layout under a fresh datatype: built once (not vouched for yet), then reused.
  MPI_Type_free(&b);
  MPI_Datatype b2 = strided(3);
  graph_call(h, r, b2, rtype, &copies, label + "same layout, new datatype");
  graph_call(h, r, b2, rtype, &copies, label + "same layout, new datatype again");
  h.check(copies == 0, label + "reused once the new datatype is vouched for");
  MPI_Type_free(&b2);
  MPI_Type_free(&rtype);
  MPI_Comm_free(&r.comm);
}

}  // namespace cartplan::mpitest
