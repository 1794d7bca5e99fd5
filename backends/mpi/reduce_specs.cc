// Building ExchangeSpecs for the reductions and rooted collectives (int and large-count forms
// from one template each).
#include "backends/mpi/reduce_specs.h"

#include <limits>
#include <string>
#include <vector>

#include "backends/mpi/predefined.h"

namespace cartplan::mpi {
namespace {

// One buffer argument (count elements of type at buf) checked; its size in bytes and the
// extent of the type (for block addressing) are returned.
template <class Count>
MpiStatus check_side(const char* what, const void* buf, Count count, MPI_Datatype type, std::int64_t* bytes,
                     MPI_Aint* extent) {
  *bytes = 0;
  *extent = 0;
  if (count < 0) return mpi_error(MPI_ERR_COUNT, std::string(what) + ": negative count " + std::to_string(count));
  if (type == MPI_DATATYPE_NULL) {
    if (count == 0) return {};
    return mpi_error(MPI_ERR_TYPE, std::string(what) + ": MPI_DATATYPE_NULL with count " + std::to_string(count));
  }
  MPI_Count size = 0;
  MPI_Aint lb = 0;
  if (MPI_Type_size_x(type, &size) != MPI_SUCCESS || size == MPI_UNDEFINED ||
      MPI_Type_get_extent(type, &lb, extent) != MPI_SUCCESS)
    return mpi_error(MPI_ERR_TYPE, std::string(what) + ": invalid datatype");
#ifdef CARTPLAN_SMPI
  // SimGrid SMPI (3.32) misreports derived types' bounds (a subarray's extent and true extent are
  // its old type's; a resized type's true bounds are its new ones), so the scratch blocks these
  // ops lay out like one block of the call would be too short (a combining or rooted plan wrote
  // past them: a segmentation fault), and SMPI's MPI_Reduce_local refuses derived types anyway.
  if (count > 0 && !predefined_type(type))
    return mpi_error(MPI_ERR_TYPE, std::string(what) +
                                       ": a derived datatype; under SimGrid SMPI, whose datatype bounds are wrong for "
                                       "subarray and resized types, neighbourhood reductions and rooted collectives take "
                                       "predefined datatypes only (docs/smpi.md)");
#endif
  if (size > 0 && static_cast<MPI_Count>(count) > std::numeric_limits<std::int64_t>::max() / size)
    return mpi_error(MPI_ERR_COUNT, std::string(what) + ": count times datatype size overflows");
  *bytes = static_cast<std::int64_t>(size) * static_cast<std::int64_t>(count);
  if (*bytes > 0 && buf == nullptr)
    return mpi_error(MPI_ERR_BUFFER, std::string(what) + ": NULL buffer with " + std::to_string(*bytes) + " bytes");
  return {};
}

MpiStatus check_op(MPI_Op op) {
  if (op == MPI_OP_NULL) return mpi_error(MPI_ERR_OP, "the op is MPI_OP_NULL");
  int commute = 0;
  if (MPI_Op_commutative(op, &commute) != MPI_SUCCESS) return mpi_error(MPI_ERR_OP, "invalid op");
  if (!commute)
    return mpi_error(MPI_ERR_OP,
                     "the op is not commutative (MPI_Op_commutative says 0): neighbourhood reductions combine "
                     "contributions in an order that depends on the plan, so only commutative ops are allowed (create "
                     "user ops with MPI_Op_create(fn, 1, &op))");
  return {};
}

MpiStatus check_root(const NeighborhoodComm& nc, int root) {
  if (root < 0 || root >= nc.grid().size())
    return mpi_error(MPI_ERR_ROOT, "root " + std::to_string(root) + " is not a rank of the Cartesian communicator (0.." +
                                       std::to_string(nc.grid().size() - 1) + ")");
  return {};
}

bool in_place(const void* a, const void* b) { return a == MPI_IN_PLACE || b == MPI_IN_PLACE; }
const char* kInPlace = "MPI_IN_PLACE is not allowed in neighbourhood collectives (separate send and recv buffers are needed)";

ExchangeSpec invalid(ir::Op op, MpiStatus s) {
  ExchangeSpec spec;
  spec.op = op;
  spec.uniform = true;
  spec.invalid = std::move(s);
  return spec;
}

ExchangeSpec start(const NeighborhoodComm& nc, ir::Op op) {
  const int t = nc.nbh().size();
  ExchangeSpec s;
  s.op = op;
  s.uniform = true;
  s.send.resize(ir::personalized_send(op) ? t : 1);
  const int nrecv = ir::one_recv_block(op) ? 1 : t;
  s.recv.resize(nrecv);
  s.recv_user.assign(nrecv, 0);
  return s;
}

// The lowest i with this process - offset[i] = root, or -1 (see "Single-buffer rooted ops").
int first_from_root(const NeighborhoodComm& nc, int root) {
  for (int i = 0; i < nc.nbh().size(); ++i) {
    ir::Offset back = nc.nbh()[i];
    for (int& x : back) x = -x;
    if (nc.grid().relative_rank(nc.coords(), back) == root) return i;
  }
  return -1;
}

const void* at(const void* buf, MPI_Aint bytes) { return static_cast<const char*>(buf) + bytes; }

// The side a rank gives t blocks of: `count` elements of `type` each, one after another from buf.
template <class Count>
void consecutive_blocks(const void* buf, Count count, MPI_Datatype type, MPI_Aint extent, std::vector<BlockSpec>* blocks) {
  for (std::size_t i = 0; i < blocks->size(); ++i)
    (*blocks)[i] = {at(buf, static_cast<MPI_Aint>(i) * static_cast<MPI_Aint>(count) * extent), static_cast<MPI_Count>(count), type};
}

// gather and scatter: every rank's one block and the root's t blocks (gather receives them,
// scatter sends them), which only the root's arguments describe. Sizes in bytes (-1: the root's
// side away from the root, not looked at) and extents, the send side checked first.
struct RootedSides {
  std::int64_t sbytes = 0, rbytes = 0;
  MPI_Aint sextent = 0, rextent = 0;
};

template <class Count>
MpiStatus check_rooted(const NeighborhoodComm& nc, int root, bool root_receives, const void* sendbuf, Count sendcount,
                       MPI_Datatype sendtype, const void* recvbuf, Count recvcount, MPI_Datatype recvtype, RootedSides* out) {
  const bool at_root = nc.rank() == root;
  const void* one = root_receives ? sendbuf : recvbuf;
  const void* many = root_receives ? recvbuf : sendbuf;
  if (one == MPI_IN_PLACE || (at_root && many == MPI_IN_PLACE)) return mpi_error(MPI_ERR_ARG, kInPlace);
  MpiStatus s = check_root(nc, root);
  (root_receives ? out->rbytes : out->sbytes) = -1;
  if (s.ok() && (root_receives || at_root))
    s = check_side(root_receives ? "sendbuf" : "sendbuf (t blocks)", sendbuf, sendcount, sendtype, &out->sbytes, &out->sextent);
  if (s.ok() && (!root_receives || at_root))
    s = check_side(root_receives ? "recvbuf (t blocks)" : "recvbuf", recvbuf, recvcount, recvtype, &out->rbytes, &out->rextent);
  return s;
}

// allreduce, reduce_scatter and reduce share everything but the blocks.
template <class Count>
ExchangeSpec reduction(const NeighborhoodComm& nc, ir::Op op, const void* sendbuf, void* recvbuf, Count count,
                       MPI_Datatype type, MPI_Op reduce_op, int root) {
  if (in_place(sendbuf, recvbuf)) return invalid(op, mpi_error(MPI_ERR_ARG, kInPlace));
  MpiStatus s = check_op(reduce_op);
  if (s.ok() && ir::is_rooted(op)) s = check_root(nc, root);
  const bool personalized = ir::personalized_send(op);
  std::int64_t bytes = 0;
  MPI_Aint extent = 0;
  if (s.ok()) s = check_side(personalized ? "sendbuf (t blocks)" : "sendbuf", sendbuf, count, type, &bytes, &extent);
  const bool result_here = !ir::is_rooted(op) || nc.rank() == root;
  if (s.ok() && result_here) {
    std::int64_t rbytes = 0;
    MPI_Aint rextent = 0;
    s = check_side("recvbuf", recvbuf, count, type, &rbytes, &rextent);
  }
  if (!s.ok()) return invalid(op, s);
  ExchangeSpec spec = start(nc, op);
  spec.reduce_op = reduce_op;
  spec.root = ir::is_rooted(op) ? root : -1;
  spec.unit = {nullptr, static_cast<MPI_Count>(count), type};
  consecutive_blocks(sendbuf, count, type, extent, &spec.send);
  spec.send_bytes = spec.recv_bytes = bytes;
  if (result_here) {
    spec.recv[0] = {recvbuf, static_cast<MPI_Count>(count), type};
    spec.recv_user[0] = 1;
  }
  return spec;
}

}  // namespace

template <class Count>
ExchangeSpec allreduce_spec(const NeighborhoodComm& nc, const void* sendbuf, void* recvbuf, Count count,
                            MPI_Datatype type, MPI_Op op) {
  return reduction(nc, ir::Op::kAllreduce, sendbuf, recvbuf, count, type, op, -1);
}

template <class Count>
ExchangeSpec reduce_scatter_spec(const NeighborhoodComm& nc, const void* sendbuf, void* recvbuf, Count count,
                                 MPI_Datatype type, MPI_Op op) {
  return reduction(nc, ir::Op::kReduceScatter, sendbuf, recvbuf, count, type, op, -1);
}

template <class Count>
ExchangeSpec reduce_spec(const NeighborhoodComm& nc, const void* sendbuf, void* recvbuf, Count count, MPI_Datatype type,
                         MPI_Op op, int root) {
  return reduction(nc, ir::Op::kReduce, sendbuf, recvbuf, count, type, op, root);
}

template <class Count>
ExchangeSpec bcast_spec(const NeighborhoodComm& nc, void* buffer, Count count, MPI_Datatype type, int root) {
  const ir::Op op = ir::Op::kBcast;
  if (buffer == MPI_IN_PLACE) return invalid(op, mpi_error(MPI_ERR_ARG, kInPlace));
  MpiStatus s = check_root(nc, root);
  std::int64_t bytes = 0;
  MPI_Aint extent = 0;
  if (s.ok()) s = check_side("buffer", buffer, count, type, &bytes, &extent);
  if (!s.ok()) return invalid(op, s);
  ExchangeSpec spec = start(nc, op);
  spec.root = root;
  spec.unit = {nullptr, static_cast<MPI_Count>(count), type};
  spec.send[0] = {buffer, static_cast<MPI_Count>(count), type};
  spec.send_bytes = spec.recv_bytes = bytes;
  const int first = nc.rank() == root ? -1 : first_from_root(nc, root);
  if (first >= 0) {
    spec.recv[first] = {buffer, static_cast<MPI_Count>(count), type};
    spec.recv_user[first] = 1;
  }
  return spec;
}

template <class Count>
ExchangeSpec gather_spec(const NeighborhoodComm& nc, const void* sendbuf, Count sendcount, MPI_Datatype sendtype,
                         void* recvbuf, Count recvcount, MPI_Datatype recvtype, int root) {
  const ir::Op op = ir::Op::kGather;
  RootedSides sides;
  MpiStatus s = check_rooted(nc, root, true, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, &sides);
  if (!s.ok()) return invalid(op, s);
  ExchangeSpec spec = start(nc, op);
  spec.root = root;
  spec.unit = {nullptr, static_cast<MPI_Count>(sendcount), sendtype};
  spec.send[0] = {sendbuf, static_cast<MPI_Count>(sendcount), sendtype};
  spec.send_bytes = sides.sbytes;
  spec.recv_bytes = sides.rbytes;
  if (nc.rank() == root) {
    consecutive_blocks(recvbuf, recvcount, recvtype, sides.rextent, &spec.recv);
    spec.recv_user.assign(spec.recv.size(), 1);
  }
  return spec;
}

template <class Count>
ExchangeSpec scatter_spec(const NeighborhoodComm& nc, const void* sendbuf, Count sendcount, MPI_Datatype sendtype,
                          void* recvbuf, Count recvcount, MPI_Datatype recvtype, int root) {
  const ir::Op op = ir::Op::kScatter;
  const bool at_root = nc.rank() == root;
  RootedSides sides;
  MpiStatus s = check_rooted(nc, root, false, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, &sides);
  if (!s.ok()) return invalid(op, s);
  ExchangeSpec spec = start(nc, op);
  spec.root = root;
  spec.unit = at_root ? BlockSpec{nullptr, static_cast<MPI_Count>(sendcount), sendtype}
                      : BlockSpec{nullptr, static_cast<MPI_Count>(recvcount), recvtype};
  if (at_root) consecutive_blocks(sendbuf, sendcount, sendtype, sides.sextent, &spec.send);
  spec.send_bytes = sides.sbytes;
  spec.recv_bytes = sides.rbytes;
  const int first = first_from_root(nc, root);
  if (first >= 0) {
    spec.recv[first] = {recvbuf, static_cast<MPI_Count>(recvcount), recvtype};
    spec.recv_user[first] = 1;
  }
  return spec;
}

#define CARTPLAN_REDUCE_SPECS(Count)                                                                                   \
  template ExchangeSpec allreduce_spec<Count>(const NeighborhoodComm&, const void*, void*, Count, MPI_Datatype, MPI_Op); \
  template ExchangeSpec reduce_scatter_spec<Count>(const NeighborhoodComm&, const void*, void*, Count, MPI_Datatype,   \
                                                   MPI_Op);                                                            \
  template ExchangeSpec bcast_spec<Count>(const NeighborhoodComm&, void*, Count, MPI_Datatype, int);                  \
  template ExchangeSpec gather_spec<Count>(const NeighborhoodComm&, const void*, Count, MPI_Datatype, void*, Count,    \
                                           MPI_Datatype, int);                                                         \
  template ExchangeSpec scatter_spec<Count>(const NeighborhoodComm&, const void*, Count, MPI_Datatype, void*, Count,   \
                                            MPI_Datatype, int);                                                        \
  template ExchangeSpec reduce_spec<Count>(const NeighborhoodComm&, const void*, void*, Count, MPI_Datatype, MPI_Op, int);
CARTPLAN_REDUCE_SPECS(int)
CARTPLAN_REDUCE_SPECS(MPI_Count)
#undef CARTPLAN_REDUCE_SPECS

}  // namespace cartplan::mpi
