// The Fortran module's buffer addresses as the C API takes them: mpi_f08's MPI_BOTTOM and MPI_IN_PLACE become C's.
//
// mpi_f08's MPI_BOTTOM and MPI_IN_PLACE are Fortran variables; passed as a buffer, their address
// reaches the shims (fortran_shim.cc, fortran_graph_shim.cc), not C's MPI_BOTTOM or MPI_IN_PLACE.
// Every shim passes each buffer through c_buffer, which compares it with the sentinels' addresses
// as Open MPI's own Fortran bindings do. Only Open MPI's sentinels are recognised
// (fortran_sentinels.cc says how); under another MPI every address passes unchanged.
//
//   return Cart_alltoall(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, type_of(rt), comm_of(comm));
#pragma once

namespace cartplan::mpi {

// `buf` as C sees it: the address of mpi_f08's MPI_BOTTOM is MPI_BOTTOM, that of its
// MPI_IN_PLACE is MPI_IN_PLACE, any other address (NULL too) is returned unchanged.
const void* c_buffer(const void* buf);
void* c_buffer(void* buf);

}  // namespace cartplan::mpi
