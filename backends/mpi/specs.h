// Turns the MPI-style arguments of the six collectives (counts, displacements, datatypes) into
// ExchangeSpecs: one (address, count, type) per block. Shared by the C and C++ APIs.
//
//   ExchangeSpec s = alltoallv_spec(nc, sbuf, scounts, sdispls, MPI_INT, rbuf, rcounts, rdispls, MPI_INT);
//   // s.invalid names the first bad argument (NULL array, invalid type); Exchange::create reports it
#pragma once

#include <mpi.h>

#include <functional>
#include <memory>

#include "backends/mpi/exchange.h"
#include "backends/mpi/neighborhood_comm.h"

namespace cartplan::mpi {

// Block i at buf + i * count * extent(type), as MPI_Neighbor_alltoall.
ExchangeSpec alltoall_spec(const NeighborhoodComm& nc, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                           void* recvbuf, int recvcount, MPI_Datatype recvtype);
// Block i at buf + displs[i] * extent(type).
ExchangeSpec alltoallv_spec(const NeighborhoodComm& nc, const void* sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                            MPI_Datatype recvtype);
// Block i at buf + displs[i] bytes, with its own datatype.
ExchangeSpec alltoallw_spec(const NeighborhoodComm& nc, const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[]);
ExchangeSpec allgather_spec(const NeighborhoodComm& nc, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype);
ExchangeSpec allgatherv_spec(const NeighborhoodComm& nc, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype);
ExchangeSpec allgatherw_spec(const NeighborhoodComm& nc, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[]);

// The shared path of every collective: finds the neighbourhood of `comm`, applies the Info
// overrides of `info` (MPI_INFO_NULL for none), builds the spec and creates the exchange
// (collective). Errors in any step still take part in the agreement inside Exchange::create.
using SpecMaker = std::function<ExchangeSpec(const NeighborhoodComm&)>;
MpiStatus make_exchange(MPI_Comm comm, MPI_Info info, const SpecMaker& make, std::unique_ptr<Exchange>* out);

// A blocking collective through the same path (Exchange::run_blocking).
MpiStatus run_blocking(MPI_Comm comm, const SpecMaker& make);

}  // namespace cartplan::mpi
