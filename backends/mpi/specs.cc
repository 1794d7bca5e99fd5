// Building ExchangeSpecs from the collectives' MPI-style buffer arguments.
#include "backends/mpi/specs.h"

#include <string>

namespace cartplan::mpi {
namespace {

const void* at(const void* buf, MPI_Aint bytes) {
  return static_cast<const char*>(buf) + bytes;  // MPI_BOTTOM (NULL) + absolute address is valid
}

// Extent of `type` for count/displacement arithmetic; MPI_DATATYPE_NULL is only an error if used.
bool extent_of(MPI_Datatype type, MPI_Aint* extent) {
  *extent = 0;
  if (type == MPI_DATATYPE_NULL) return true;
  MPI_Aint lb = 0;
  return MPI_Type_get_extent(type, &lb, extent) == MPI_SUCCESS;
}

// MPI_Neighbor_alltoall/allgather address block i from the buffer start, so a NULL buffer
// with data to move is an error (the v and w forms may use MPI_BOTTOM with absolute addresses).
bool null_with_data(const void* buf, int count, MPI_Datatype type) {
  if (buf != nullptr || count <= 0 || type == MPI_DATATYPE_NULL) return false;
  int size = 0;
  return MPI_Type_size(type, &size) == MPI_SUCCESS && size > 0;
}

ExchangeSpec start(ir::Op op, int t) {
  ExchangeSpec s;
  s.op = op;
  s.recv.resize(t);
  s.send.resize(op == ir::Op::kAllgather ? 1 : t);
  return s;
}

// `uniform` must match what the valid path would set: it decides the length of the agreement
// reduction, which every rank must call with the same count.
ExchangeSpec invalid(ir::Op op, int code, std::string message, bool uniform = false) {
  ExchangeSpec s;
  s.op = op;
  s.uniform = uniform;
  s.invalid = mpi_error(code, std::move(message));
  return s;
}

}  // namespace

ExchangeSpec alltoall_spec(const NeighborhoodComm& nc, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                           void* recvbuf, int recvcount, MPI_Datatype recvtype) {
  const int t = nc.nbh().size();
  MPI_Aint sext = 0, rext = 0;
  if (!extent_of(sendtype, &sext) || !extent_of(recvtype, &rext)) return invalid(ir::Op::kAlltoall, MPI_ERR_TYPE, "invalid datatype", true);
  if (null_with_data(sendbuf, sendcount, sendtype) || null_with_data(recvbuf, recvcount, recvtype))
    return invalid(ir::Op::kAlltoall, MPI_ERR_BUFFER, "NULL buffer with a non-zero count", true);
  ExchangeSpec s = start(ir::Op::kAlltoall, t);
  s.uniform = true;
  for (int i = 0; i < t; ++i) {
    s.send[i] = {at(sendbuf, static_cast<MPI_Aint>(i) * sendcount * sext), sendcount, sendtype};
    s.recv[i] = {at(recvbuf, static_cast<MPI_Aint>(i) * recvcount * rext), recvcount, recvtype};
  }
  return s;
}

ExchangeSpec alltoallv_spec(const NeighborhoodComm& nc, const void* sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                            MPI_Datatype recvtype) {
  const int t = nc.nbh().size();
  if (!sendcounts || !sdispls || !recvcounts || !rdispls)
    return invalid(ir::Op::kAlltoall, MPI_ERR_ARG, "a counts or displacements array is NULL");
  MPI_Aint sext = 0, rext = 0;
  if (!extent_of(sendtype, &sext) || !extent_of(recvtype, &rext)) return invalid(ir::Op::kAlltoall, MPI_ERR_TYPE, "invalid datatype");
  ExchangeSpec s = start(ir::Op::kAlltoall, t);
  for (int i = 0; i < t; ++i) {
    s.send[i] = {at(sendbuf, static_cast<MPI_Aint>(sdispls[i]) * sext), sendcounts[i], sendtype};
    s.recv[i] = {at(recvbuf, static_cast<MPI_Aint>(rdispls[i]) * rext), recvcounts[i], recvtype};
  }
  return s;
}

ExchangeSpec alltoallw_spec(const NeighborhoodComm& nc, const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[]) {
  const int t = nc.nbh().size();
  if (!sendcounts || !sdispls || !sendtypes || !recvcounts || !rdispls || !recvtypes)
    return invalid(ir::Op::kAlltoall, MPI_ERR_ARG, "a counts, displacements or datatypes array is NULL");
  ExchangeSpec s = start(ir::Op::kAlltoall, t);
  for (int i = 0; i < t; ++i) {
    s.send[i] = {at(sendbuf, sdispls[i]), sendcounts[i], sendtypes[i]};
    s.recv[i] = {at(recvbuf, rdispls[i]), recvcounts[i], recvtypes[i]};
  }
  return s;
}

ExchangeSpec allgather_spec(const NeighborhoodComm& nc, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype) {
  const int t = nc.nbh().size();
  MPI_Aint rext = 0;
  if (!extent_of(recvtype, &rext)) return invalid(ir::Op::kAllgather, MPI_ERR_TYPE, "invalid datatype");
  if (null_with_data(recvbuf, recvcount, recvtype))
    return invalid(ir::Op::kAllgather, MPI_ERR_BUFFER, "NULL recvbuf with a non-zero count");
  ExchangeSpec s = start(ir::Op::kAllgather, t);
  s.send[0] = {sendbuf, sendcount, sendtype};
  for (int i = 0; i < t; ++i) s.recv[i] = {at(recvbuf, static_cast<MPI_Aint>(i) * recvcount * rext), recvcount, recvtype};
  return s;
}

ExchangeSpec allgatherv_spec(const NeighborhoodComm& nc, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype) {
  const int t = nc.nbh().size();
  if (!recvcounts || !displs) return invalid(ir::Op::kAllgather, MPI_ERR_ARG, "recvcounts or displs is NULL");
  MPI_Aint rext = 0;
  if (!extent_of(recvtype, &rext)) return invalid(ir::Op::kAllgather, MPI_ERR_TYPE, "invalid datatype");
  ExchangeSpec s = start(ir::Op::kAllgather, t);
  s.send[0] = {sendbuf, sendcount, sendtype};
  for (int i = 0; i < t; ++i) s.recv[i] = {at(recvbuf, static_cast<MPI_Aint>(displs[i]) * rext), recvcounts[i], recvtype};
  return s;
}

ExchangeSpec allgatherw_spec(const NeighborhoodComm& nc, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[]) {
  const int t = nc.nbh().size();
  if (!recvcounts || !rdispls || !recvtypes) return invalid(ir::Op::kAllgather, MPI_ERR_ARG, "recvcounts, rdispls or recvtypes is NULL");
  ExchangeSpec s = start(ir::Op::kAllgather, t);
  s.send[0] = {sendbuf, sendcount, sendtype};
  for (int i = 0; i < t; ++i) s.recv[i] = {at(recvbuf, rdispls[i]), recvcounts[i], recvtypes[i]};
  return s;
}

MpiStatus run_blocking(MPI_Comm comm, const SpecMaker& make) {
  NeighborhoodComm* nc = nullptr;
  MpiStatus s = require_neighborhood(comm, &nc);
  if (!s.ok()) return s;
  return Exchange::run_blocking(*nc, make(*nc), nc->options());
}

MpiStatus make_exchange(MPI_Comm comm, MPI_Info info, const SpecMaker& make, std::unique_ptr<Exchange>* out) {
  NeighborhoodComm* nc = nullptr;
  MpiStatus s = require_neighborhood(comm, &nc);
  if (!s.ok()) return s;  // same communicator on every rank: every rank fails here alike
  Options options = nc->options();
  ExchangeSpec spec = make(*nc);
  if (spec.invalid.ok()) {
    MpiStatus parsed = parse_info(info, nc->nbh().ndims(), &options);
    if (!parsed.ok()) spec.invalid = parsed;
  }
  return Exchange::create(*nc, spec, options, out);
}

}  // namespace cartplan::mpi
