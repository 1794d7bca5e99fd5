// The graph collectives behind the C API's Cart_graph_neighbor_* functions: argument checks,
// the choice of algorithm, and the blocking, non-blocking and persistent forms over
// GraphExchange (graph_exchange.h) on any distributed-graph communicator (graph_comm.h).
//
// Blocking and non-blocking calls talk to neighbours only: each rank checks its own arguments
// and returns its own error; a block size that differs between ranks is found on arrival
// (MPI_ERR_TRUNCATE). The first graph collective on a communicator creates cartplan's state
// there (collective: one duplicate, MPI_Comm_idup; with auto, or a forced combining algorithm, the pattern
// construction among neighbours and friends; with auto one MPI_Allreduce for the agreed price
// table). Persistent init is collective: one MPI_Allreduce agrees on errors, the algorithm,
// theta, the block size and a free lane; a second one after building agrees on the outcome (a
// pattern construction or a datatype check may fail on one rank only), so that every rank fails
// or succeeds together. An auto init that agrees auto's price table (its first on the
// communicator, per theta and candidate list) makes every row's exchange before that table's
// MPI_Allreduce and agrees on the outcome in it, so that no second one follows; except for a v
// or w form whose pick is a combining schedule (its size pass runs after the table).
//
//   GraphCall c = graph_uniform_call(GraphOp::kAllgather, sbuf, 1, MPI_INT, rbuf, 1, MPI_INT);
//   std::unique_ptr<GraphExchange> x;
//   MpiStatus s = graph_request(comm, c, MPI_INFO_NULL, GraphExchange::Kind::kPersistent, &x);
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "backends/mpi/graph_exchange.h"
#include "backends/mpi/status.h"
#include "ir/graph/topology.h"

namespace cartplan::mpi {

// A counts or displacements array of a v or w form as the caller passed it: MPI's int array,
// or the large-count form's (MPI_Count counts, MPI_Aint displacements). Read, never copied, so
// the int forms cost nothing extra.
//   CountArray c = recvcounts;   // const int* or const MPI_Count*
//   std::int64_t n = c[j];
template <class Wide>
struct IntOrWide {
  const int* narrow = nullptr;
  const Wide* wide = nullptr;
  IntOrWide() = default;
  IntOrWide(const int* p) : narrow(p) {}    // NOLINT: implicit, as the builders take either
  IntOrWide(const Wide* p) : wide(p) {}     // NOLINT
  bool null() const { return !narrow && !wide; }
  std::int64_t operator[](std::size_t i) const { return narrow ? narrow[i] : static_cast<std::int64_t>(wide[i]); }
};
using CountArray = IntOrWide<MPI_Count>;
using DisplArray = IntOrWide<MPI_Aint>;

// The arguments of MPI_Neighbor_allgather(v) / MPI_Neighbor_alltoall(v/w), int or large-count
// form: the v forms set `varied` and the arrays (allgatherv: recvcounts and rdispls; alltoallv:
// all four); alltoallw also sets `per_edge_types` and the arrays at the end (sendtype, recvtype,
// sdispls and rdispls are then not used).
struct GraphCall {
  ir::graph::GraphOp op = ir::graph::GraphOp::kAllgather;
  const void* sendbuf = nullptr;
  MPI_Count sendcount = 0;
  MPI_Datatype sendtype = MPI_DATATYPE_NULL;
  void* recvbuf = nullptr;
  MPI_Count recvcount = 0;
  MPI_Datatype recvtype = MPI_DATATYPE_NULL;
  bool varied = false;
  CountArray sendcounts;
  DisplArray sdispls;
  CountArray recvcounts;
  DisplArray rdispls;
  // Replaces the communicator's options (algorithm, theta, progress) for this call; the
  // drop-in runs the algorithm its verdict picked (backends/interpose/graph_verdicts.h).
  const GraphOptions* options = nullptr;
  // A uniform call (one count per side) whose block sizes may differ between ranks, as MPI
  // allows on a graph (a rank that sends 16 bytes and receives 8): it runs as its v form, a
  // combining schedule after the size pass (graph_sizes.h), and is never cached.
  bool learn_sizes = false;
  // Persistent init only: called on every rank after init's agreement with the agreed range
  // of block sizes over ranks with significant blocks (-1, -1: none); sets the algorithm in
  // *options, or returns false: init declines on every rank alike (ok, *out stays empty).
  std::function<bool(std::int64_t bytes_min, std::int64_t bytes_max, GraphOptions* options)> decide = nullptr;
  // alltoallw (with `varied`): edge k's datatype and its displacement in bytes from the buffer,
  // as MPI_Neighbor_alltoallw has them. Blocks forwarded by a combining schedule travel as the
  // bytes of their type signature (packed by MPI at the origin, unpacked at the target).
  bool per_edge_types = false;
  const MPI_Datatype* sendtypes = nullptr;
  const MPI_Datatype* recvtypes = nullptr;
  const MPI_Aint* sdispls_bytes = nullptr;
  const MPI_Aint* rdispls_bytes = nullptr;
};

// The calls of the MPI forms, one builder each, for the C API (c_api.cc) and the drop-in; each
// takes the int form's arguments and the large-count form's (MPI_Neighbor_alltoallv_c's).
// MPI_Neighbor_allgather's or MPI_Neighbor_alltoall's arguments (`op`) as a call.
GraphCall graph_uniform_call(ir::graph::GraphOp op, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                             MPI_Count recvcount, MPI_Datatype recvtype);
// MPI_Neighbor_allgatherv's arguments as a call.
GraphCall graph_allgatherv_call(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, CountArray recvcounts,
                                DisplArray rdispls, MPI_Datatype recvtype);
// MPI_Neighbor_alltoallv's arguments as a call.
GraphCall graph_alltoallv_call(const void* sendbuf, CountArray sendcounts, DisplArray sdispls, MPI_Datatype sendtype, void* recvbuf,
                               CountArray recvcounts, DisplArray rdispls, MPI_Datatype recvtype);
// MPI_Neighbor_alltoallw's arguments as a call (per-edge types, byte displacements).
GraphCall graph_alltoallw_call(const void* sendbuf, CountArray sendcounts, const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                               void* recvbuf, CountArray recvcounts, const MPI_Aint rdispls[], const MPI_Datatype recvtypes[]);

MpiStatus graph_blocking(MPI_Comm comm, const GraphCall& call);
// kNonblocking (started, unless `start` is false: the caller starts it) or kPersistent
// (inactive); `info` overrides the communicator's keys (persistent only; MPI_INFO_NULL for
// none). `caller_error` (a NULL request pointer) takes part in init's agreement.
MpiStatus graph_request(MPI_Comm comm, const GraphCall& call, MPI_Info info, GraphExchange::Kind kind,
                        std::unique_ptr<GraphExchange>* out, const MpiStatus& caller_error = {}, bool start = true);

}  // namespace cartplan::mpi
