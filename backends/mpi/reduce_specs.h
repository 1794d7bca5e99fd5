// Turns the MPI-style arguments of the reductions and rooted collectives (Cart_allreduce,
// Cart_reduce_scatter, Cart_bcast, Cart_gather, Cart_scatter, Cart_reduce) into ExchangeSpecs
// for the reduction-aware executor (exchange_reduce.cc), for int and MPI_Count counts.
//
// Checks made here, on the calling rank: MPI_IN_PLACE (refused), negative counts, invalid
// datatypes, NULL buffers with data, the op (MPI_OP_NULL, invalid, or not commutative:
// MPI_Op_commutative) and the root (in [0, grid size)). Arguments that MPI calls not
// significant on this rank (recvbuf of gather/reduce away from the root, sendbuf of scatter
// away from it) are never looked at.
//
// Single-buffer rooted ops. Cart_bcast and Cart_scatter have one receive buffer, but on small
// tori or with duplicate offsets several neighbourhood positions i of a process X can name the
// root (X - offset[i] = root). Rule: the lowest such i delivers into the buffer. For bcast every
// such i carries the same data, so this only avoids writing one buffer several times; for
// scatter X receives the root's block i for the lowest such i. At the root, Cart_bcast never
// writes the buffer (it already holds the data). Processes none of whose positions names the
// root keep their buffer untouched.
//
//   ExchangeSpec s = allreduce_spec<int>(nc, sendbuf, recvbuf, 10, MPI_DOUBLE, MPI_SUM);
//   // s.invalid names the first bad argument
#pragma once

#include <mpi.h>

#include "backends/mpi/exchange.h"
#include "backends/mpi/neighborhood_comm.h"

namespace cartplan::mpi {

// recv = op over the send vectors of the t sources (the processes at -offset[i]).
template <class Count>
ExchangeSpec allreduce_spec(const NeighborhoodComm& nc, const void* sendbuf, void* recvbuf, Count count,
                            MPI_Datatype type, MPI_Op op);
// sendbuf holds t blocks of `count` elements; block i goes to +offset[i]; recv = op over the
// blocks that arrive.
template <class Count>
ExchangeSpec reduce_scatter_spec(const NeighborhoodComm& nc, const void* sendbuf, void* recvbuf, Count count,
                                 MPI_Datatype type, MPI_Op op);
template <class Count>
ExchangeSpec bcast_spec(const NeighborhoodComm& nc, void* buffer, Count count, MPI_Datatype type, int root);
// recvbuf (root only) holds t blocks: block i from the process at root - offset[i].
template <class Count>
ExchangeSpec gather_spec(const NeighborhoodComm& nc, const void* sendbuf, Count sendcount, MPI_Datatype sendtype,
                         void* recvbuf, Count recvcount, MPI_Datatype recvtype, int root);
// sendbuf (root only) holds t blocks: block i to the process at root + offset[i].
template <class Count>
ExchangeSpec scatter_spec(const NeighborhoodComm& nc, const void* sendbuf, Count sendcount, MPI_Datatype sendtype,
                          void* recvbuf, Count recvcount, MPI_Datatype recvtype, int root);
template <class Count>
ExchangeSpec reduce_spec(const NeighborhoodComm& nc, const void* sendbuf, void* recvbuf, Count count, MPI_Datatype type,
                         MPI_Op op, int root);

}  // namespace cartplan::mpi
