// Turns the MPI-style arguments of the six collectives (counts, displacements, datatypes) into
// ExchangeSpecs: one (address, count, type) per block. Shared by the C and C++ APIs, and by the
// int and large-count (MPI_Count / MPI_Aint, the Cart_*_c functions) forms: each builder is one
// template over the count and displacement types.
//
//   ExchangeSpec s = alltoallv_spec<int, int>(nc, sbuf, scounts, sdispls, MPI_INT, rbuf, rcounts, rdispls, MPI_INT);
//   // s.invalid names the first bad argument (NULL array, MPI_IN_PLACE, invalid type)
#pragma once

#include <mpi.h>

#include <functional>
#include <memory>

#include "backends/mpi/exchange.h"
#include "backends/mpi/neighborhood_comm.h"

namespace cartplan::mpi {

// Block i at buf + i * count * extent(type), as MPI_Neighbor_alltoall.
template <class Count>
ExchangeSpec alltoall_spec(const NeighborhoodComm& nc, const void* sendbuf, Count sendcount, MPI_Datatype sendtype,
                           void* recvbuf, Count recvcount, MPI_Datatype recvtype);
// Block i at buf + displs[i] * extent(type).
template <class Count, class Displ>
ExchangeSpec alltoallv_spec(const NeighborhoodComm& nc, const void* sendbuf, const Count sendcounts[], const Displ sdispls[],
                            MPI_Datatype sendtype, void* recvbuf, const Count recvcounts[], const Displ rdispls[],
                            MPI_Datatype recvtype);
// Block i at buf + displs[i] bytes, with its own datatype.
template <class Count>
ExchangeSpec alltoallw_spec(const NeighborhoodComm& nc, const void* sendbuf, const Count sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf, const Count recvcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[]);
template <class Count>
ExchangeSpec allgather_spec(const NeighborhoodComm& nc, const void* sendbuf, Count sendcount, MPI_Datatype sendtype,
                            void* recvbuf, Count recvcount, MPI_Datatype recvtype);
template <class Count, class Displ>
ExchangeSpec allgatherv_spec(const NeighborhoodComm& nc, const void* sendbuf, Count sendcount, MPI_Datatype sendtype,
                             void* recvbuf, const Count recvcounts[], const Displ displs[], MPI_Datatype recvtype);
template <class Count>
ExchangeSpec allgatherw_spec(const NeighborhoodComm& nc, const void* sendbuf, Count sendcount, MPI_Datatype sendtype,
                             void* recvbuf, const Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[]);

// The shared path of every non-blocking and persistent collective: finds the neighbourhood of
// `comm`, applies the Info overrides of `info` (MPI_INFO_NULL for none), builds the spec and
// creates the exchange. `caller_error` (e.g. a NULL request pointer) takes part in the
// agreement where there is one, so that every rank returns an error. `key` (a non-blocking
// uniform call without Info and without caller error) takes the drop-in's path,
// Exchange::create_nonblocking: a repeat of a completed call restarts its pooled exchange
// without building the spec or settling the plan again.
using SpecMaker = std::function<ExchangeSpec(const NeighborhoodComm&)>;
MpiStatus make_exchange(MPI_Comm comm, MPI_Info info, Exchange::Kind kind, const SpecMaker& make,
                        std::unique_ptr<Exchange>* out, const MpiStatus& caller_error = {}, const CallKey* key = nullptr);

// A blocking collective through the same path (Exchange::run_blocking). `key` (uniform
// collectives only) lets a repeated call skip building its spec.
MpiStatus run_blocking(MPI_Comm comm, const SpecMaker& make, const CallKey* key = nullptr);

}  // namespace cartplan::mpi
