// Building neighbourhood-ordered ExchangeSpecs from MPI arguments and running them.
#include "backends/interpose/collectives.h"

#include <cstdint>
#include <functional>
#include <cstdlib>
#include <limits>

#include "backends/interpose/comm_table.h"
#include "backends/interpose/graph_collectives.h"
#include "backends/interpose/guard.h"
#include "backends/interpose/requests.h"
#include "backends/interpose/verdicts.h"
#include "backends/mpi/exchange.h"

namespace cartplan::interpose {
namespace {

using mpi::BlockSpec;
using ir::graph::GraphOp;

GraphOp graph_op(ir::Op op) { return op == ir::Op::kAllgather ? GraphOp::kAllgather : GraphOp::kAlltoall; }

// buf + bytes in integer arithmetic: MPI_BOTTOM (NULL) plus an absolute address is valid MPI.
const void* at(const void* buf, MPI_Aint bytes) {
  return reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(buf) + static_cast<std::uintptr_t>(bytes));
}

bool extent_of(MPI_Datatype type, MPI_Aint* extent) {
  MPI_Aint lb = 0;
  return type != MPI_DATATYPE_NULL && PMPI_Type_get_extent(type, &lb, extent) == MPI_SUCCESS;
}

bool in_place(const void* s, const void* r) { return s == MPI_IN_PLACE || r == MPI_IN_PLACE; }

// The accelerated communicator if the call may be accelerated at all.
inline AcceleratedComm* usable(Form form, MPI_Comm comm, MPI_Request* request) {
  if (form != Form::kBlocking && request == nullptr) return nullptr;
  return ready(find_comm_fast(comm));
}

// The spec in neighbourhood order, every block first set to `fill` (blocks of neighbours
// outside a mesh are not significant; uniform calls still name their size there).
mpi::ExchangeSpec& layout(AcceleratedComm& a, ir::Op op, bool uniform, BlockSpec send_fill, BlockSpec recv_fill) {
  mpi::ExchangeSpec& s = a.scratch;
  const int t = a.nc->nbh().size();
  s.op = op;
  s.uniform = uniform;
  s.invalid = {};
  s.send.assign(op == ir::Op::kAllgather ? 1 : t, send_fill);
  s.recv.assign(t, recv_fill);
  return s;
}

// Whether plain Open MPI handles a persistent init whose agreement failed so: block sizes that
// differ (MPI_ERR_TRUNCATE, found by the agreement, so on every rank alike). Open MPI's init
// then runs on every rank and reports them where plain Open MPI does (at completion, not at
// init; docs/dropin.md, "Erroneous calls"); for the v/w forms, whose block sizes MPI lets vary
// by rank and direction, such a call is not even erroneous. Any other failure (one rank's
// alone, or an agreed one of cartplan's own: different Info options, too many persistent
// requests) is raised: one rank alone in Open MPI's init would leave its peers in cartplan's
// collectives.
bool open_mpi_handles(const mpi::MpiStatus& s) { return s.agreed && s.code == MPI_ERR_TRUNCATE; }

// A persistent init: the do-no-harm verdict is taken after init's agreement (on the agreed
// plan and block sizes, so every rank takes the same one); a declined init returns false and
// goes to Open MPI, and so does one whose agreement found sizes that differ (open_mpi_handles).
bool run_persistent(AcceleratedComm& a, const mpi::ExchangeSpec& spec, MPI_Comm comm, MPI_Info info, MPI_Request* request,
                    int* rc) {
  Inside inside;
  mpi::Options options = a.nc->options();
  mpi::MpiStatus s = mpi::parse_info(info, a.nc->grid().ndims(), &options);
  std::unique_ptr<mpi::Exchange> x;
  auto accept = [&a](const ir::Plan& plan, const std::vector<std::int64_t>& sizes) {
    return accept_agreed(a, plan, sizes, Form::kPersistent);
  };
  if (s.ok()) {
    s = mpi::Exchange::create(*a.nc, spec, options, mpi::Exchange::Kind::kPersistent, &x, accept);
    if (s.ok() && !x) return false;  // declined alike on every rank: Open MPI's algorithm is as good
    if (open_mpi_handles(s)) return false;
  }
  if (s.ok()) {
    const int code = make_persistent(std::move(x), request);
    if (code != MPI_SUCCESS) s = mpi::mpi_error(code, "could not create the request");
  }
  if (s.ok()) count_call(a);
  *rc = raise_status(comm, s);
  return true;
}

// The v/w forms (alltoallv, alltoallw, allgatherv): MPI only requires each message to match
// its receive, so block sizes may differ by rank and by direction; cartplan needs block i to
// have one size everywhere (a combining plan forwards blocks through other ranks). A blocking
// or non-blocking call cannot find out locally, so those forms pass through; the persistent
// init agrees collectively and falls back to Open MPI when the sizes are not uniform.
bool vw_accelerated(Form form) { return form == Form::kPersistent; }

// A blocking or non-blocking uniform call: a repeated call runs (blocking) or restarts
// (non-blocking, once the earlier request completed) the exchange built for the same arguments
// without laying out its spec again. `make` (the spec) becomes a std::function only when the
// exchange is not simply run again. A non-blocking call whose exchange cannot be made (its
// arguments are erroneous, e.g. an allgather's send block larger than its receive blocks)
// returns a request that reports the error at completion (fail_nonblocking), where plain Open
// MPI reports it.
template <class Make>
bool run_keyed(AcceleratedComm& a, Form form, const mpi::CallKey& key, const Make& make, MPI_Comm comm, MPI_Request* request,
               int* rc) {
  Inside inside;
  mpi::MpiStatus s;
  if (form == Form::kBlocking) {
    const int code = mpi::Exchange::rerun_blocking(*a.nc, key);
    if (code == mpi::Exchange::kNotARepeat) s = mpi::Exchange::run_blocking(*a.nc, make, &key);
    else s.code = code;  // only the code is raised (raise_status)
  } else {
    std::unique_ptr<mpi::Exchange> x;
    s = mpi::Exchange::create_nonblocking(*a.nc, key, make, &x);
    const bool made = s.ok();
    const int code = made ? start_nonblocking(std::move(x), request) : fail_nonblocking(s.code, comm, request);
    if (code != MPI_SUCCESS) s = mpi::mpi_error(code, "could not create the request");
    else if (!made) s = {};  // reported at completion
  }
  count_call(a);
  *rc = s.ok() ? MPI_SUCCESS : raise_status(comm, s);
  return true;
}

// The block size of a uniform call, if the datatype has one (else the call passes through).
bool block_bytes(MPI_Datatype type, int count, std::int64_t* bytes) {
  int size = 0;
  if (PMPI_Type_size(type, &size) != MPI_SUCCESS) return false;
  *bytes = static_cast<std::int64_t>(size) * count;
  return true;
}

// Blocking alltoall with large blocks goes to Open MPI: the MPI backend packs several blocks
// for one peer into a staging buffer with memcpy, one copy more per side than Open MPI, which
// loses above ~8 KiB per block (bench/results/.../interpose_summary.md). A performance cut-off,
// not a semantic one; only for blocking calls, which use no per-call lane sequence, and the
// same on every rank because the block size of MPI_Neighbor_alltoall is. Override with
// CARTPLAN_INTERPOSE_MAX_BLOCK_BYTES (0: no limit).
std::int64_t max_blocking_block_bytes() {
  static const std::int64_t limit = [] {
    const char* v = std::getenv("CARTPLAN_INTERPOSE_MAX_BLOCK_BYTES");
    if (!v || !*v) return std::int64_t{8192};
    const long long n = std::atoll(v);
    return n <= 0 ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(n);
  }();
  return limit;
}

// The arguments of a uniform call (alltoall, allgather: one count and datatype per side).
struct Uniform {
  ir::Op op;
  const void* sendbuf;
  int sendcount;
  MPI_Datatype sendtype;
  void* recvbuf;
  int recvcount;
  MPI_Datatype recvtype;
};

bool named(MPI_Datatype type) {
  int ni = 0, na = 0, nd = 0, combiner = 0;
  return PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) == MPI_SUCCESS && combiner == MPI_COMBINER_NAMED;
}

// The spec of a uniform call in neighbourhood order.
mpi::ExchangeSpec& spec_of(AcceleratedComm& a, const Uniform& u) {
  MPI_Aint sext = 0, rext = 0;
  extent_of(u.sendtype, &sext);
  extent_of(u.recvtype, &rext);
  const bool gather = u.op == ir::Op::kAllgather;
  mpi::ExchangeSpec& s = layout(a, u.op, !gather, {u.sendbuf, u.sendcount, u.sendtype}, {u.recvbuf, u.recvcount, u.recvtype});
  for (int k = 0; !gather && k < a.outdegree; ++k)
    s.send[a.order.send[k]] = {at(u.sendbuf, static_cast<MPI_Aint>(k) * u.sendcount * sext), u.sendcount, u.sendtype};
  for (int j = 0; j < a.indegree; ++j)
    s.recv[a.order.recv[j]] = {at(u.recvbuf, static_cast<MPI_Aint>(j) * u.recvcount * rext), u.recvcount, u.recvtype};
  return s;
}

// Arguments cartplan takes at all (else Open MPI reports its own errors); the block size.
bool usable_arguments(const Uniform& u, std::int64_t* bytes) {
  MPI_Aint sext = 0, rext = 0;
  return !in_place(u.sendbuf, u.recvbuf) && u.sendcount >= 0 && u.recvcount >= 0 && extent_of(u.sendtype, &sext) &&
         extent_of(u.recvtype, &rext) && block_bytes(u.sendtype, u.sendcount, bytes);
}

// On a graph only the sides this rank uses are looked at: MPI ignores the send side of a rank
// without out-edges (a sink may pass 0 or MPI_DATATYPE_NULL) and the receive side of one
// without in-edges, and a rank that passed the call to Open MPI on that ground alone would
// leave its peers waiting in cartplan's messages.
// The same rule for the datatypes of every form (the v forms too): the extents of the used sides.
bool used_extents(const AcceleratedComm& a, MPI_Datatype sendtype, MPI_Datatype recvtype, MPI_Aint* sext, MPI_Aint* rext) {
  return (a.outdegree == 0 || extent_of(sendtype, sext)) && (a.indegree == 0 || extent_of(recvtype, rext));
}

bool usable_graph_arguments(const AcceleratedComm& a, const Uniform& u) {
  MPI_Aint sext = 0, rext = 0;
  return !in_place(u.sendbuf, u.recvbuf) && (a.outdegree == 0 || u.sendcount >= 0) && (a.indegree == 0 || u.recvcount >= 0) &&
         used_extents(a, u.sendtype, u.recvtype, &sext, &rext);
}

// A stencil's calls are sized by one block size per rank (the verdict's, the messages'), but MPI
// ignores the send side of a rank without out-edges and the receive side of one without
// in-edges (a sink may pass sendcount 7 where its recvcount is 2). So that side takes the used
// side's count and datatype: every rank decides from the size its edges carry, and no message is
// sized from an ignored count. (Found by interpose_graph_ranks_test at np 2, where the chain is
// a stencil: the sink's non-blocking allgather ended in MPI_ERR_TRUNCATE.) The buffer goes with
// them: a sink sending from MPI_BOTTOM with a datatype of absolute addresses must not be judged
// a NULL buffer of the receive type (interpose_graph_test's bottom_allgather, np 2).
Uniform used_sides(const AcceleratedComm& a, Uniform u) {
  if (a.outdegree == 0 && a.indegree > 0) u.sendcount = u.recvcount, u.sendtype = u.recvtype, u.sendbuf = u.recvbuf;
  if (a.indegree == 0 && a.outdegree > 0) u.recvcount = u.sendcount, u.recvtype = u.sendtype, u.recvbuf = const_cast<void*>(u.sendbuf);
  return u;
}

// Open MPI 4.1's MPI_(I)neighbor_alltoall refuses a call whose send and receive blocks differ
// in size at the call, before sending anything (MPI_ERR_TRUNCATE through the communicator's
// error handler): such a call goes to Open MPI, which reports it exactly so. (An allgather's
// are not checked there: plain Open MPI reports the truncation at completion, and so does the
// drop-in, run_keyed.) `send_bytes`: the send block's size.
bool refused_by_open_mpi(const Uniform& u, std::int64_t send_bytes) {
  std::int64_t recv_bytes = 0;
  return !block_bytes(u.recvtype, u.recvcount, &recv_bytes) || recv_bytes != send_bytes;
}

// Whether a blocking or non-blocking uniform call runs through cartplan: the argument checks,
// the large-block cut-off and the do-no-harm verdict. Remembered for the call's shape when its
// datatypes are predefined (their handles never change meaning), so that a repeated shape,
// accelerated or passed through, costs one comparison of a few words (passes()).
bool taken(AcceleratedComm& a, Form form, const Uniform& u) {
  const auto shape = shape_of(u.op == ir::Op::kAllgather, form, u.sendcount, u.sendtype, u.recvcount, u.recvtype);
  if (same_as_last_shape(a, shape)) return a.last_shape_accelerated;
  std::int64_t bytes = 0;
  bool yes = a.graph ? usable_graph_arguments(a, u) : usable_arguments(u, &bytes);
  if (yes && !a.graph && u.op == ir::Op::kAlltoall) yes = !refused_by_open_mpi(u, bytes);
  if (yes && a.graph) yes = graph_taken(a, graph_op(u.op), form, -1);  // sizes may differ by rank (graph_collectives.cc)
  if (yes && !a.graph && form == Form::kBlocking && u.op == ir::Op::kAlltoall) yes = bytes <= max_blocking_block_bytes();
  if (yes && !a.graph) yes = accelerated(a, u.op, form, bytes);
  a.last_shape_valid = named(u.sendtype) && named(u.recvtype);
  a.last_shape = shape;
  a.last_shape_accelerated = yes;
  return yes;
}

// Everything but a repeated pass-through (kept out of line: the pass-through stays small).
bool neighbor_uniform(Form form, const Uniform& given, MPI_Comm comm, MPI_Info info, MPI_Request* request, int* rc) {
  AcceleratedComm* a = usable(form, comm, request);
  if (!a) return false;
  if (a->graph) {
    const Uniform& u = given;
    if (form == Form::kPersistent ? !usable_graph_arguments(*a, u) : !taken(*a, form, u)) return false;
    return graph_uniform(*a, form, graph_op(u.op), u.sendbuf, u.sendcount, u.sendtype, u.recvbuf, u.recvcount, u.recvtype,
                         comm, info, request, rc);
  }
  const Uniform u = used_sides(*a, given);
  if (form == Form::kPersistent) {
    std::int64_t bytes = 0;
    if (!usable_arguments(u, &bytes)) return false;
    return run_persistent(*a, spec_of(*a, u), comm, info, request, rc);
  }
  if (!taken(*a, form, u)) return false;
  const int code = (u.op == ir::Op::kAlltoall ? 100 : 101) + (form == Form::kNonblocking ? 10 : 0);
  const mpi::CallKey key = mpi::uniform_call_key(code, u.sendbuf, u.sendcount, u.sendtype, u.recvbuf, u.recvcount, u.recvtype);
  return run_keyed(*a, form, key, [&] { return spec_of(*a, u); }, comm, request, rc);
}

}  // namespace

int raise_status(MPI_Comm comm, const mpi::MpiStatus& s) {
  if (!s.ok()) PMPI_Comm_call_errhandler(comm, s.code);
  return s.code;
}

int raise_code(MPI_Comm comm, int code) {
  PMPI_Comm_call_errhandler(comm, code);
  return code;
}

bool neighbor_alltoall(Form form, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request, int* rc) {
  return neighbor_uniform(form, {ir::Op::kAlltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype}, comm, info,
                          request, rc);
}

bool neighbor_alltoallv(Form form, const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                        void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                        MPI_Info info, MPI_Request* request, int* rc) {
  AcceleratedComm* a = usable(form, comm, request);
  if (!a || (!a->graph && !vw_accelerated(form)) || in_place(sendbuf, recvbuf)) return false;
  if (a->graph && !graph_taken(*a, GraphOp::kAlltoall, form, -1)) return false;  // the verdict first: a pass-through stays cheap
  if ((a->outdegree && (!sendcounts || !sdispls)) || (a->indegree && (!recvcounts || !rdispls))) return false;
  MPI_Aint sext = 0, rext = 0;
  if (!used_extents(*a, sendtype, recvtype, &sext, &rext)) return false;
  for (int k = 0; k < a->outdegree; ++k)
    if (sendcounts[k] < 0) return false;
  for (int j = 0; j < a->indegree; ++j)
    if (recvcounts[j] < 0) return false;
  if (a->graph) {
    const mpi::GraphCall c = mpi::graph_alltoallv_call(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype);
    return graph_varied(*a, form, c, comm, info, request, rc);
  }
  mpi::ExchangeSpec& s = layout(*a, ir::Op::kAlltoall, false, {}, {});
  for (int k = 0; k < a->outdegree; ++k)
    s.send[a->order.send[k]] = {at(sendbuf, static_cast<MPI_Aint>(sdispls[k]) * sext), sendcounts[k], sendtype};
  for (int j = 0; j < a->indegree; ++j)
    s.recv[a->order.recv[j]] = {at(recvbuf, static_cast<MPI_Aint>(rdispls[j]) * rext), recvcounts[j], recvtype};
  return run_persistent(*a, s, comm, info, request, rc);
}

bool neighbor_alltoallw(Form form, const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                        const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                        const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request* request, int* rc) {
  AcceleratedComm* a = usable(form, comm, request);
  if (!a || (!a->graph && !vw_accelerated(form)) || in_place(sendbuf, recvbuf)) return false;
  // On a graph alltoallw has alltoallv's verdict (the same schedules, sizes learned alike).
  if (a->graph && !graph_taken(*a, GraphOp::kAlltoall, form, -1)) return false;
  if ((a->outdegree && (!sendcounts || !sdispls || !sendtypes)) || (a->indegree && (!recvcounts || !rdispls || !recvtypes)))
    return false;
  for (int k = 0; k < a->outdegree; ++k)
    if (sendcounts[k] < 0 || sendtypes[k] == MPI_DATATYPE_NULL) return false;
  for (int j = 0; j < a->indegree; ++j)
    if (recvcounts[j] < 0 || recvtypes[j] == MPI_DATATYPE_NULL) return false;
  if (a->graph) {
    const mpi::GraphCall c = mpi::graph_alltoallw_call(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes);
    return graph_varied(*a, form, c, comm, info, request, rc);
  }
  mpi::ExchangeSpec& s = layout(*a, ir::Op::kAlltoall, false, {}, {});
  for (int k = 0; k < a->outdegree; ++k) s.send[a->order.send[k]] = {at(sendbuf, sdispls[k]), sendcounts[k], sendtypes[k]};
  for (int j = 0; j < a->indegree; ++j) s.recv[a->order.recv[j]] = {at(recvbuf, rdispls[j]), recvcounts[j], recvtypes[j]};
  return run_persistent(*a, s, comm, info, request, rc);
}

bool neighbor_allgather(Form form, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request, int* rc) {
  return neighbor_uniform(form, {ir::Op::kAllgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype}, comm, info,
                          request, rc);
}

bool neighbor_allgatherv(Form form, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                         MPI_Request* request, int* rc) {
  AcceleratedComm* a = usable(form, comm, request);
  if (!a || (!a->graph && !vw_accelerated(form)) || in_place(sendbuf, recvbuf) || (a->outdegree && sendcount < 0)) return false;
  if (a->graph && !graph_taken(*a, GraphOp::kAllgather, form, -1)) return false;
  if (a->indegree && (!recvcounts || !displs)) return false;
  MPI_Aint sext = 0, rext = 0;
  if (!used_extents(*a, sendtype, recvtype, &sext, &rext)) return false;
  for (int j = 0; j < a->indegree; ++j)
    if (recvcounts[j] < 0) return false;
  if (a->graph) {
    const mpi::GraphCall c = mpi::graph_allgatherv_call(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
    return graph_varied(*a, form, c, comm, info, request, rc);
  }
  // A sink's send side is ignored by MPI: its block takes the used side's size and place, its
  // first receive block (used_sides).
  const bool sink = a->outdegree == 0 && a->indegree > 0;
  const BlockSpec send = sink ? BlockSpec{at(recvbuf, static_cast<MPI_Aint>(displs[0]) * rext), recvcounts[0], recvtype}
                              : BlockSpec{sendbuf, sendcount, sendtype};
  mpi::ExchangeSpec& s = layout(*a, ir::Op::kAllgather, false, send, {});
  for (int j = 0; j < a->indegree; ++j)
    s.recv[a->order.recv[j]] = {at(recvbuf, static_cast<MPI_Aint>(displs[j]) * rext), recvcounts[j], recvtype};
  return run_persistent(*a, s, comm, info, request, rc);
}

}  // namespace cartplan::interpose
