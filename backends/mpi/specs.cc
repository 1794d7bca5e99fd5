// Building ExchangeSpecs from the collectives' MPI-style buffer arguments (int and large-count
// forms from one template each).
#include "backends/mpi/specs.h"

#include <cstdint>
#include <string>

namespace cartplan::mpi {
namespace {

// buf + bytes in integer arithmetic: MPI_BOTTOM (address 0; SMPI's is (void*)-111) plus an
// absolute address is valid MPI, no C++ pointer sum.
const void* at(const void* buf, MPI_Aint bytes) {
  const std::uintptr_t base = buf == MPI_BOTTOM ? 0 : reinterpret_cast<std::uintptr_t>(buf);
  return reinterpret_cast<const void*>(base + static_cast<std::uintptr_t>(bytes));
}

// Extent of `type` for count/displacement arithmetic; MPI_DATATYPE_NULL is only an error if used.
bool extent_of(MPI_Datatype type, MPI_Aint* extent) {
  *extent = 0;
  if (type == MPI_DATATYPE_NULL) return true;
  MPI_Aint lb = 0;
  return MPI_Type_get_extent(type, &lb, extent) == MPI_SUCCESS;
}

// MPI_Neighbor_alltoall/allgather address block i from the buffer start, so a NULL buffer
// with data to move is an error, unless it is MPI_BOTTOM with a datatype of absolute addresses
// (absolute_type; the v and w forms' displacements may be addresses too).
template <class Count>
bool null_with_data(const void* buf, Count count, MPI_Datatype type) {
  if (buf != nullptr || count <= 0 || type == MPI_DATATYPE_NULL) return false;
  int size = 0;
  return MPI_Type_size(type, &size) == MPI_SUCCESS && size > 0 && !absolute_type(type);
}

ExchangeSpec start(ir::Op op, int t) {
  ExchangeSpec s;
  s.op = op;
  s.recv.resize(t);
  s.send.resize(op == ir::Op::kAllgather ? 1 : t);
  return s;
}

ExchangeSpec invalid(ir::Op op, int code, std::string message, bool uniform = false) {
  ExchangeSpec s;
  s.op = op;
  s.uniform = uniform;
  s.invalid = mpi_error(code, std::move(message));
  return s;
}

// Neighbourhood collectives have no in-place form (MPI-4, Sect. 8.6): Open MPI's
// MPI_Neighbor_alltoall returns MPI_ERR_ARG too.
bool in_place(const void* sendbuf, const void* recvbuf) { return sendbuf == MPI_IN_PLACE || recvbuf == MPI_IN_PLACE; }
const char* kInPlace = "MPI_IN_PLACE is not allowed in neighbourhood collectives (separate send and recv buffers are needed)";

}  // namespace

template <class Count>
ExchangeSpec alltoall_spec(const NeighborhoodComm& nc, const void* sendbuf, Count sendcount, MPI_Datatype sendtype,
                           void* recvbuf, Count recvcount, MPI_Datatype recvtype) {
  const int t = nc.nbh().size();
  if (in_place(sendbuf, recvbuf)) return invalid(ir::Op::kAlltoall, MPI_ERR_ARG, kInPlace, true);
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

template <class Count, class Displ>
ExchangeSpec alltoallv_spec(const NeighborhoodComm& nc, const void* sendbuf, const Count sendcounts[], const Displ sdispls[],
                            MPI_Datatype sendtype, void* recvbuf, const Count recvcounts[], const Displ rdispls[],
                            MPI_Datatype recvtype) {
  const int t = nc.nbh().size();
  if (in_place(sendbuf, recvbuf)) return invalid(ir::Op::kAlltoall, MPI_ERR_ARG, kInPlace);
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

template <class Count>
ExchangeSpec alltoallw_spec(const NeighborhoodComm& nc, const void* sendbuf, const Count sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf, const Count recvcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[]) {
  const int t = nc.nbh().size();
  if (in_place(sendbuf, recvbuf)) return invalid(ir::Op::kAlltoall, MPI_ERR_ARG, kInPlace);
  if (!sendcounts || !sdispls || !sendtypes || !recvcounts || !rdispls || !recvtypes)
    return invalid(ir::Op::kAlltoall, MPI_ERR_ARG, "a counts, displacements or datatypes array is NULL");
  ExchangeSpec s = start(ir::Op::kAlltoall, t);
  for (int i = 0; i < t; ++i) {
    s.send[i] = {at(sendbuf, sdispls[i]), sendcounts[i], sendtypes[i]};
    s.recv[i] = {at(recvbuf, rdispls[i]), recvcounts[i], recvtypes[i]};
  }
  return s;
}

template <class Count>
ExchangeSpec allgather_spec(const NeighborhoodComm& nc, const void* sendbuf, Count sendcount, MPI_Datatype sendtype,
                            void* recvbuf, Count recvcount, MPI_Datatype recvtype) {
  const int t = nc.nbh().size();
  if (in_place(sendbuf, recvbuf)) return invalid(ir::Op::kAllgather, MPI_ERR_ARG, kInPlace);
  MPI_Aint rext = 0;
  if (!extent_of(recvtype, &rext)) return invalid(ir::Op::kAllgather, MPI_ERR_TYPE, "invalid datatype");
  if (null_with_data(recvbuf, recvcount, recvtype))
    return invalid(ir::Op::kAllgather, MPI_ERR_BUFFER, "NULL recvbuf with a non-zero count");
  ExchangeSpec s = start(ir::Op::kAllgather, t);
  s.send[0] = {sendbuf, sendcount, sendtype};
  for (int i = 0; i < t; ++i) s.recv[i] = {at(recvbuf, static_cast<MPI_Aint>(i) * recvcount * rext), recvcount, recvtype};
  return s;
}

template <class Count, class Displ>
ExchangeSpec allgatherv_spec(const NeighborhoodComm& nc, const void* sendbuf, Count sendcount, MPI_Datatype sendtype,
                             void* recvbuf, const Count recvcounts[], const Displ displs[], MPI_Datatype recvtype) {
  const int t = nc.nbh().size();
  if (in_place(sendbuf, recvbuf)) return invalid(ir::Op::kAllgather, MPI_ERR_ARG, kInPlace);
  if (!recvcounts || !displs) return invalid(ir::Op::kAllgather, MPI_ERR_ARG, "recvcounts or displs is NULL");
  MPI_Aint rext = 0;
  if (!extent_of(recvtype, &rext)) return invalid(ir::Op::kAllgather, MPI_ERR_TYPE, "invalid datatype");
  ExchangeSpec s = start(ir::Op::kAllgather, t);
  s.send[0] = {sendbuf, sendcount, sendtype};
  for (int i = 0; i < t; ++i) s.recv[i] = {at(recvbuf, static_cast<MPI_Aint>(displs[i]) * rext), recvcounts[i], recvtype};
  return s;
}

template <class Count>
ExchangeSpec allgatherw_spec(const NeighborhoodComm& nc, const void* sendbuf, Count sendcount, MPI_Datatype sendtype,
                             void* recvbuf, const Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[]) {
  const int t = nc.nbh().size();
  if (in_place(sendbuf, recvbuf)) return invalid(ir::Op::kAllgather, MPI_ERR_ARG, kInPlace);
  if (!recvcounts || !rdispls || !recvtypes) return invalid(ir::Op::kAllgather, MPI_ERR_ARG, "recvcounts, rdispls or recvtypes is NULL");
  ExchangeSpec s = start(ir::Op::kAllgather, t);
  s.send[0] = {sendbuf, sendcount, sendtype};
  for (int i = 0; i < t; ++i) s.recv[i] = {at(recvbuf, rdispls[i]), recvcounts[i], recvtypes[i]};
  return s;
}

// The int form (MPI_Neighbor_*) and the large-count form (MPI_Neighbor_*_c of MPI-4).
#define CARTPLAN_SPECS(Count, Displ)                                                                                     \
  template ExchangeSpec alltoall_spec<Count>(const NeighborhoodComm&, const void*, Count, MPI_Datatype, void*, Count,   \
                                             MPI_Datatype);                                                              \
  template ExchangeSpec alltoallv_spec<Count, Displ>(const NeighborhoodComm&, const void*, const Count[], const Displ[], \
                                                     MPI_Datatype, void*, const Count[], const Displ[], MPI_Datatype);   \
  template ExchangeSpec alltoallw_spec<Count>(const NeighborhoodComm&, const void*, const Count[], const MPI_Aint[],    \
                                              const MPI_Datatype[], void*, const Count[], const MPI_Aint[],             \
                                              const MPI_Datatype[]);                                                     \
  template ExchangeSpec allgather_spec<Count>(const NeighborhoodComm&, const void*, Count, MPI_Datatype, void*, Count,  \
                                              MPI_Datatype);                                                             \
  template ExchangeSpec allgatherv_spec<Count, Displ>(const NeighborhoodComm&, const void*, Count, MPI_Datatype, void*, \
                                                      const Count[], const Displ[], MPI_Datatype);                       \
  template ExchangeSpec allgatherw_spec<Count>(const NeighborhoodComm&, const void*, Count, MPI_Datatype, void*,        \
                                               const Count[], const MPI_Aint[], const MPI_Datatype[]);
CARTPLAN_SPECS(int, int)
CARTPLAN_SPECS(MPI_Count, MPI_Aint)
#undef CARTPLAN_SPECS

MpiStatus run_blocking(MPI_Comm comm, const SpecMaker& make, const CallKey* key) {
  NeighborhoodComm* nc = nullptr;
  MpiStatus s = require_neighborhood(comm, &nc);
  if (!s.ok()) return s;
  return Exchange::run_blocking(*nc, [&] { return make(*nc); }, key);
}

MpiStatus make_exchange(MPI_Comm comm, MPI_Info info, Exchange::Kind kind, const SpecMaker& make,
                        std::unique_ptr<Exchange>* out, const MpiStatus& caller_error, const CallKey* key) {
  NeighborhoodComm* nc = nullptr;
  MpiStatus s = require_neighborhood(comm, &nc);
  if (!s.ok()) return s;  // same communicator on every rank: every rank fails here alike
  // Without Info the options are the communicator's, as create_nonblocking takes them.
  if (key && kind == Exchange::Kind::kNonblocking && info == MPI_INFO_NULL && caller_error.ok())
    return Exchange::create_nonblocking(*nc, *key, [&] { return make(*nc); }, out);
  Options options = nc->options();
  ExchangeSpec spec = make(*nc);
  if (spec.invalid.ok() && !caller_error.ok()) spec.invalid = caller_error;
  if (spec.invalid.ok()) {
    MpiStatus parsed = parse_info(info, nc->nbh().ndims(), &options);
    if (!parsed.ok()) spec.invalid = parsed;
  }
  return Exchange::create(*nc, spec, options, kind, out);
}

}  // namespace cartplan::mpi
