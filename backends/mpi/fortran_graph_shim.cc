// Fortran handle shims of the graph collectives (Cart_graph_*, also _c), called by the cartplan_f08 module (backends/fortran/cartplan_f08.f90).
//
// As fortran_shim.cc for the Cartesian calls: each cartplan_f_graph_X converts mpi_f08's Fortran
// handles (MPI_Fint) with MPI_*_f2c and calls Cart_graph_X. The datatype arrays of the w forms
// hold one handle per edge, outdegree send types and indegree receive types, the degrees read
// from the communicator (Cart_graph_comm_create_adjacent's attribute or MPI's distributed graph);
// on a communicator that is neither none are read and Cart_graph_X reports the error. Every
// buffer goes through c_buffer (fortran_sentinels.h): mpi_f08's MPI_BOTTOM and MPI_IN_PLACE arrive
// as C's. Not declared in a public header: these are the module's ABI.
#include <cstddef>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "backends/mpi/fortran_sentinels.h"
#include "backends/mpi/graph_adjacent.h"

namespace {

using cartplan::mpi::c_buffer;

MPI_Comm comm_of(MPI_Fint f) { return MPI_Comm_f2c(f); }
MPI_Datatype type_of(MPI_Fint f) { return MPI_Type_f2c(f); }
MPI_Info info_of(MPI_Fint f) { return MPI_Info_f2c(f); }

// This rank's in- and out-degree on a graph communicator; 0 and 0 on anything else (MPI_COMM_NULL,
// no topology), where the C function that follows returns the error with its message.
void graph_degrees(MPI_Comm comm, int* indegree, int* outdegree) {
  *indegree = *outdegree = 0;
  if (comm == MPI_COMM_NULL) return;
  if (const cartplan::mpi::AdjacentLists* lists = cartplan::mpi::adjacent_lists(comm)) {
    *indegree = static_cast<int>(lists->edges.in.size());
    *outdegree = static_cast<int>(lists->edges.out.size());
    return;
  }
  int topo = MPI_UNDEFINED, weighted = 0;
  if (MPI_Topo_test(comm, &topo) != MPI_SUCCESS || topo != MPI_DIST_GRAPH) return;
  if (MPI_Dist_graph_neighbors_count(comm, indegree, outdegree, &weighted) != MPI_SUCCESS) *indegree = *outdegree = 0;
}

// n Fortran datatype handles as C ones (at least one entry, so that data() is never NULL).
std::vector<MPI_Datatype> types_of(int n, const MPI_Fint* f) {
  std::vector<MPI_Datatype> types(n > 0 ? static_cast<std::size_t>(n) : 1, MPI_DATATYPE_NULL);
  for (int i = 0; f && i < n; ++i) types[static_cast<std::size_t>(i)] = MPI_Type_f2c(f[i]);
  return types;
}

// Both datatype arrays of a w call: outdegree send types, indegree receive types.
struct EdgeTypes {
  std::vector<MPI_Datatype> send, recv;
};
EdgeTypes edge_types_of(MPI_Comm comm, const MPI_Fint* st, const MPI_Fint* rt) {
  int indegree = 0, outdegree = 0;
  graph_degrees(comm, &indegree, &outdegree);
  return {types_of(outdegree, st), types_of(indegree, rt)};
}

}  // namespace

extern "C" {

int cartplan_f_graph_comm_create_adjacent(MPI_Fint comm, int indegree, const int* sources, int outdegree, const int* destinations,
                                          MPI_Fint info, MPI_Fint* graphcomm) {
  MPI_Comm g = MPI_COMM_NULL;
  const int rc = Cart_graph_comm_create_adjacent(comm_of(comm), indegree, sources, outdegree, destinations, info_of(info), &g);
  *graphcomm = MPI_Comm_c2f(g);
  return rc;
}

// Blocking.
int cartplan_f_graph_neighbor_allgather(const void* sb, int sc, MPI_Fint st, void* rb, int rc, MPI_Fint rt, MPI_Fint comm) {
  return Cart_graph_neighbor_allgather(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, type_of(rt), comm_of(comm));
}
int cartplan_f_graph_neighbor_alltoall(const void* sb, int sc, MPI_Fint st, void* rb, int rc, MPI_Fint rt, MPI_Fint comm) {
  return Cart_graph_neighbor_alltoall(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, type_of(rt), comm_of(comm));
}
int cartplan_f_graph_neighbor_allgatherv(const void* sb, int sc, MPI_Fint st, void* rb, const int* rc, const int* rd, MPI_Fint rt,
                                         MPI_Fint comm) {
  return Cart_graph_neighbor_allgatherv(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, rd, type_of(rt), comm_of(comm));
}
int cartplan_f_graph_neighbor_alltoallv(const void* sb, const int* sc, const int* sd, MPI_Fint st, void* rb, const int* rc,
                                        const int* rd, MPI_Fint rt, MPI_Fint comm) {
  return Cart_graph_neighbor_alltoallv(c_buffer(sb), sc, sd, type_of(st), c_buffer(rb), rc, rd, type_of(rt), comm_of(comm));
}
int cartplan_f_graph_neighbor_alltoallw(const void* sb, const int* sc, const MPI_Aint* sd, const MPI_Fint* st, void* rb,
                                        const int* rc, const MPI_Aint* rd, const MPI_Fint* rt, MPI_Fint comm) {
  const EdgeTypes t = edge_types_of(comm_of(comm), st, rt);
  return Cart_graph_neighbor_alltoallw(c_buffer(sb), sc, sd, t.send.data(), c_buffer(rb), rc, rd, t.recv.data(), comm_of(comm));
}

// Non-blocking.
int cartplan_f_graph_ineighbor_allgather(const void* sb, int sc, MPI_Fint st, void* rb, int rc, MPI_Fint rt, MPI_Fint comm,
                                         Cart_Request* r) {
  return Cart_graph_ineighbor_allgather(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, type_of(rt), comm_of(comm), r);
}
int cartplan_f_graph_ineighbor_alltoall(const void* sb, int sc, MPI_Fint st, void* rb, int rc, MPI_Fint rt, MPI_Fint comm,
                                        Cart_Request* r) {
  return Cart_graph_ineighbor_alltoall(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, type_of(rt), comm_of(comm), r);
}
int cartplan_f_graph_ineighbor_allgatherv(const void* sb, int sc, MPI_Fint st, void* rb, const int* rc, const int* rd, MPI_Fint rt,
                                          MPI_Fint comm, Cart_Request* r) {
  return Cart_graph_ineighbor_allgatherv(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, rd, type_of(rt), comm_of(comm), r);
}
int cartplan_f_graph_ineighbor_alltoallv(const void* sb, const int* sc, const int* sd, MPI_Fint st, void* rb, const int* rc,
                                         const int* rd, MPI_Fint rt, MPI_Fint comm, Cart_Request* r) {
  return Cart_graph_ineighbor_alltoallv(c_buffer(sb), sc, sd, type_of(st), c_buffer(rb), rc, rd, type_of(rt), comm_of(comm), r);
}
int cartplan_f_graph_ineighbor_alltoallw(const void* sb, const int* sc, const MPI_Aint* sd, const MPI_Fint* st, void* rb,
                                         const int* rc, const MPI_Aint* rd, const MPI_Fint* rt, MPI_Fint comm, Cart_Request* r) {
  const EdgeTypes t = edge_types_of(comm_of(comm), st, rt);
  return Cart_graph_ineighbor_alltoallw(c_buffer(sb), sc, sd, t.send.data(), c_buffer(rb), rc, rd, t.recv.data(), comm_of(comm),
                                        r);
}

// Persistent.
int cartplan_f_graph_neighbor_allgather_init(const void* sb, int sc, MPI_Fint st, void* rb, int rc, MPI_Fint rt, MPI_Fint comm,
                                             MPI_Fint info, Cart_Request* r) {
  return Cart_graph_neighbor_allgather_init(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, type_of(rt), comm_of(comm),
                                            info_of(info), r);
}
int cartplan_f_graph_neighbor_alltoall_init(const void* sb, int sc, MPI_Fint st, void* rb, int rc, MPI_Fint rt, MPI_Fint comm,
                                            MPI_Fint info, Cart_Request* r) {
  return Cart_graph_neighbor_alltoall_init(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, type_of(rt), comm_of(comm),
                                           info_of(info), r);
}
int cartplan_f_graph_neighbor_allgatherv_init(const void* sb, int sc, MPI_Fint st, void* rb, const int* rc, const int* rd,
                                              MPI_Fint rt, MPI_Fint comm, MPI_Fint info, Cart_Request* r) {
  return Cart_graph_neighbor_allgatherv_init(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, rd, type_of(rt), comm_of(comm),
                                             info_of(info), r);
}
int cartplan_f_graph_neighbor_alltoallv_init(const void* sb, const int* sc, const int* sd, MPI_Fint st, void* rb, const int* rc,
                                             const int* rd, MPI_Fint rt, MPI_Fint comm, MPI_Fint info, Cart_Request* r) {
  return Cart_graph_neighbor_alltoallv_init(c_buffer(sb), sc, sd, type_of(st), c_buffer(rb), rc, rd, type_of(rt), comm_of(comm),
                                            info_of(info), r);
}
int cartplan_f_graph_neighbor_alltoallw_init(const void* sb, const int* sc, const MPI_Aint* sd, const MPI_Fint* st, void* rb,
                                             const int* rc, const MPI_Aint* rd, const MPI_Fint* rt, MPI_Fint comm, MPI_Fint info,
                                             Cart_Request* r) {
  const EdgeTypes t = edge_types_of(comm_of(comm), st, rt);
  return Cart_graph_neighbor_alltoallw_init(c_buffer(sb), sc, sd, t.send.data(), c_buffer(rb), rc, rd, t.recv.data(),
                                            comm_of(comm), info_of(info), r);
}

// Large-count forms (Cart_graph_..._c): MPI_Count counts, MPI_Aint displacements.
// Blocking.
int cartplan_f_graph_neighbor_allgather_c(const void* sb, MPI_Count sc, MPI_Fint st, void* rb, MPI_Count rc, MPI_Fint rt,
                                          MPI_Fint comm) {
  return Cart_graph_neighbor_allgather_c(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, type_of(rt), comm_of(comm));
}
int cartplan_f_graph_neighbor_alltoall_c(const void* sb, MPI_Count sc, MPI_Fint st, void* rb, MPI_Count rc, MPI_Fint rt,
                                         MPI_Fint comm) {
  return Cart_graph_neighbor_alltoall_c(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, type_of(rt), comm_of(comm));
}
int cartplan_f_graph_neighbor_allgatherv_c(const void* sb, MPI_Count sc, MPI_Fint st, void* rb, const MPI_Count* rc,
                                           const MPI_Aint* rd, MPI_Fint rt, MPI_Fint comm) {
  return Cart_graph_neighbor_allgatherv_c(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, rd, type_of(rt), comm_of(comm));
}
int cartplan_f_graph_neighbor_alltoallv_c(const void* sb, const MPI_Count* sc, const MPI_Aint* sd, MPI_Fint st, void* rb,
                                          const MPI_Count* rc, const MPI_Aint* rd, MPI_Fint rt, MPI_Fint comm) {
  return Cart_graph_neighbor_alltoallv_c(c_buffer(sb), sc, sd, type_of(st), c_buffer(rb), rc, rd, type_of(rt), comm_of(comm));
}
int cartplan_f_graph_neighbor_alltoallw_c(const void* sb, const MPI_Count* sc, const MPI_Aint* sd, const MPI_Fint* st, void* rb,
                                          const MPI_Count* rc, const MPI_Aint* rd, const MPI_Fint* rt, MPI_Fint comm) {
  const EdgeTypes t = edge_types_of(comm_of(comm), st, rt);
  return Cart_graph_neighbor_alltoallw_c(c_buffer(sb), sc, sd, t.send.data(), c_buffer(rb), rc, rd, t.recv.data(), comm_of(comm));
}

// Non-blocking, large counts.
int cartplan_f_graph_ineighbor_allgather_c(const void* sb, MPI_Count sc, MPI_Fint st, void* rb, MPI_Count rc, MPI_Fint rt,
                                           MPI_Fint comm, Cart_Request* r) {
  return Cart_graph_ineighbor_allgather_c(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, type_of(rt), comm_of(comm), r);
}
int cartplan_f_graph_ineighbor_alltoall_c(const void* sb, MPI_Count sc, MPI_Fint st, void* rb, MPI_Count rc, MPI_Fint rt,
                                          MPI_Fint comm, Cart_Request* r) {
  return Cart_graph_ineighbor_alltoall_c(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, type_of(rt), comm_of(comm), r);
}
int cartplan_f_graph_ineighbor_allgatherv_c(const void* sb, MPI_Count sc, MPI_Fint st, void* rb, const MPI_Count* rc,
                                            const MPI_Aint* rd, MPI_Fint rt, MPI_Fint comm, Cart_Request* r) {
  return Cart_graph_ineighbor_allgatherv_c(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, rd, type_of(rt), comm_of(comm), r);
}
int cartplan_f_graph_ineighbor_alltoallv_c(const void* sb, const MPI_Count* sc, const MPI_Aint* sd, MPI_Fint st, void* rb,
                                           const MPI_Count* rc, const MPI_Aint* rd, MPI_Fint rt, MPI_Fint comm,
                                           Cart_Request* r) {
  return Cart_graph_ineighbor_alltoallv_c(c_buffer(sb), sc, sd, type_of(st), c_buffer(rb), rc, rd, type_of(rt), comm_of(comm), r);
}
int cartplan_f_graph_ineighbor_alltoallw_c(const void* sb, const MPI_Count* sc, const MPI_Aint* sd, const MPI_Fint* st, void* rb,
                                           const MPI_Count* rc, const MPI_Aint* rd, const MPI_Fint* rt, MPI_Fint comm,
                                           Cart_Request* r) {
  const EdgeTypes t = edge_types_of(comm_of(comm), st, rt);
  return Cart_graph_ineighbor_alltoallw_c(c_buffer(sb), sc, sd, t.send.data(), c_buffer(rb), rc, rd, t.recv.data(),
                                          comm_of(comm), r);
}

// Persistent, large counts.
int cartplan_f_graph_neighbor_allgather_init_c(const void* sb, MPI_Count sc, MPI_Fint st, void* rb, MPI_Count rc, MPI_Fint rt,
                                               MPI_Fint comm, MPI_Fint info, Cart_Request* r) {
  return Cart_graph_neighbor_allgather_init_c(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, type_of(rt), comm_of(comm),
                                              info_of(info), r);
}
int cartplan_f_graph_neighbor_alltoall_init_c(const void* sb, MPI_Count sc, MPI_Fint st, void* rb, MPI_Count rc, MPI_Fint rt,
                                              MPI_Fint comm, MPI_Fint info, Cart_Request* r) {
  return Cart_graph_neighbor_alltoall_init_c(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, type_of(rt), comm_of(comm),
                                             info_of(info), r);
}
int cartplan_f_graph_neighbor_allgatherv_init_c(const void* sb, MPI_Count sc, MPI_Fint st, void* rb, const MPI_Count* rc,
                                                const MPI_Aint* rd, MPI_Fint rt, MPI_Fint comm, MPI_Fint info,
                                                Cart_Request* r) {
  return Cart_graph_neighbor_allgatherv_init_c(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, rd, type_of(rt), comm_of(comm),
                                               info_of(info), r);
}
int cartplan_f_graph_neighbor_alltoallv_init_c(const void* sb, const MPI_Count* sc, const MPI_Aint* sd, MPI_Fint st, void* rb,
                                               const MPI_Count* rc, const MPI_Aint* rd, MPI_Fint rt, MPI_Fint comm,
                                               MPI_Fint info, Cart_Request* r) {
  return Cart_graph_neighbor_alltoallv_init_c(c_buffer(sb), sc, sd, type_of(st), c_buffer(rb), rc, rd, type_of(rt),
                                              comm_of(comm), info_of(info), r);
}
int cartplan_f_graph_neighbor_alltoallw_init_c(const void* sb, const MPI_Count* sc, const MPI_Aint* sd, const MPI_Fint* st,
                                               void* rb, const MPI_Count* rc, const MPI_Aint* rd, const MPI_Fint* rt,
                                               MPI_Fint comm, MPI_Fint info, Cart_Request* r) {
  const EdgeTypes t = edge_types_of(comm_of(comm), st, rt);
  return Cart_graph_neighbor_alltoallw_init_c(c_buffer(sb), sc, sd, t.send.data(), c_buffer(rb), rc, rd, t.recv.data(),
                                              comm_of(comm), info_of(info), r);
}

}  // extern "C"
