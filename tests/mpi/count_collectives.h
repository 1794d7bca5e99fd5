// The global collectives cartplan could call on a communicator, defined by the test program
// itself (the MPI profiling interface): each call is counted in global_collectives and
// forwarded to PMPI_*. Include it in exactly one file of a test program.
//
//   const long before = global_collectives;  ...;  check(global_collectives == before);
#pragma once

#include <mpi.h>

inline long global_collectives = 0;

// The global collectives cartplan could call on a communicator, counted and forwarded.
extern "C" {
int MPI_Allreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  ++global_collectives;
  return PMPI_Allreduce(s, r, n, t, op, c);
}
int MPI_Iallreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c, MPI_Request* q) {
  ++global_collectives;
  return PMPI_Iallreduce(s, r, n, t, op, c, q);
}
int MPI_Bcast(void* b, int n, MPI_Datatype t, int root, MPI_Comm c) {
  ++global_collectives;
  return PMPI_Bcast(b, n, t, root, c);
}
int MPI_Ibcast(void* b, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request* q) {
  ++global_collectives;
  return PMPI_Ibcast(b, n, t, root, c, q);
}
int MPI_Barrier(MPI_Comm c) {
  ++global_collectives;
  return PMPI_Barrier(c);
}
int MPI_Ibarrier(MPI_Comm c, MPI_Request* q) {
  ++global_collectives;
  return PMPI_Ibarrier(c, q);
}
int MPI_Allgather(const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm c) {
  ++global_collectives;
  return PMPI_Allgather(s, sc, st, r, rc, rt, c);
}
int MPI_Reduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c) {
  ++global_collectives;
  return PMPI_Reduce(s, r, n, t, op, root, c);
}
int MPI_Alltoall(const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm c) {
  ++global_collectives;
  return PMPI_Alltoall(s, sc, st, r, rc, rt, c);
}
int MPI_Comm_dup(MPI_Comm c, MPI_Comm* out) {
  ++global_collectives;
  return PMPI_Comm_dup(c, out);
}
int MPI_Comm_idup(MPI_Comm c, MPI_Comm* out, MPI_Request* q) {
  ++global_collectives;
  return PMPI_Comm_idup(c, out, q);
}
int MPI_Comm_split(MPI_Comm c, int color, int key, MPI_Comm* out) {
  ++global_collectives;
  return PMPI_Comm_split(c, color, key, out);
}
}
