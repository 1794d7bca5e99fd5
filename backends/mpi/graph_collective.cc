// Graph collectives: argument checks, the algorithm, init's agreement, and the three forms.
#include "backends/mpi/graph_collective.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

namespace cartplan::mpi {
namespace {

using ir::graph::GraphAlgorithm;
using ir::graph::GraphOp;

// One side's block: its bytes (-1 when the side is not significant on this rank).
MpiStatus side_bytes(const char* side, const void* buf, int count, MPI_Datatype type, bool significant, std::int64_t* bytes,
                     MPI_Aint* extent) {
  *bytes = -1;
  *extent = 0;
  if (!significant) return {};
  if (buf == MPI_IN_PLACE) return mpi_error(MPI_ERR_ARG, std::string(side) + "buf is MPI_IN_PLACE (neighbourhood collectives have no in-place form)");
  if (count < 0) return mpi_error(MPI_ERR_COUNT, std::string(side) + "count is negative (" + std::to_string(count) + ")");
  if (type == MPI_DATATYPE_NULL) return mpi_error(MPI_ERR_TYPE, std::string(side) + "type is MPI_DATATYPE_NULL");
  MPI_Count size = 0;
  MPI_Aint lb = 0;
  if (MPI_Type_size_x(type, &size) != MPI_SUCCESS || MPI_Type_get_extent(type, &lb, extent) != MPI_SUCCESS)
    return mpi_error(MPI_ERR_TYPE, std::string(side) + "type is not a valid datatype");
  *bytes = static_cast<std::int64_t>(size) * count;
  if (!buf && *bytes > 0) return mpi_error(MPI_ERR_BUFFER, std::string(side) + "buf is NULL");
  return {};
}

// The caller's blocks, as MPI_Neighbor_allgather / alltoall lay them out: send block k at
// sendbuf + k * sendcount * extent (alltoall; allgather has one), recv block j likewise.
MpiStatus make_buffers(const GraphComm& g, const GraphCall& c, GraphBuffers* out) {
  const std::size_t outdeg = g.edges().out.size(), indeg = g.edges().in.size();
  std::int64_t sbytes = -1, rbytes = -1;
  MPI_Aint sext = 0, rext = 0;
  MpiStatus s = side_bytes("send", c.sendbuf, c.sendcount, c.sendtype, outdeg > 0, &sbytes, &sext);
  if (s.ok()) s = side_bytes("recv", c.recvbuf, c.recvcount, c.recvtype, indeg > 0, &rbytes, &rext);
  if (!s.ok()) return s;
  if (sbytes >= 0 && rbytes >= 0 && sbytes != rbytes)
    return mpi_error(MPI_ERR_ARG, "sendcount x sendtype (" + std::to_string(sbytes) + " bytes) and recvcount x recvtype (" +
                                      std::to_string(rbytes) + " bytes) differ: cartplan's graph collectives need one block size on every rank");
  out->block_bytes = std::max<std::int64_t>({sbytes, rbytes, 0});
  const std::size_t sends = outdeg == 0 ? 0 : c.op == GraphOp::kAllgather ? 1 : outdeg;
  const auto* sb = static_cast<const char*>(c.sendbuf);
  auto* rb = static_cast<char*>(c.recvbuf);
  for (std::size_t k = 0; k < sends; ++k)
    out->send.push_back(BlockSpec{sb + static_cast<MPI_Aint>(k) * c.sendcount * sext, c.sendcount, c.sendtype});
  for (std::size_t j = 0; j < indeg; ++j)
    out->recv.push_back(BlockSpec{rb + static_cast<MPI_Aint>(j) * c.recvcount * rext, c.recvcount, c.recvtype});
  return {};
}

// What the algorithm needs before any argument is looked at, so that every rank takes part in
// the same collective set-up whatever its arguments: auto's table, or a forced pattern.
MpiStatus prepare(GraphComm& g, GraphOp op, const GraphOptions& o) {
  GraphAlgorithm a = GraphAlgorithm::kLinear;
  MpiStatus s = g.choose(op, 0, o, &a);  // auto: builds the table (its answer at 0 bytes is not used)
  if (!s.ok() || a == GraphAlgorithm::kLinear) return s;
  ir::graph::RankSchedule unused;
  return g.schedule(op, a, o.theta, &unused);
}

MpiStatus build(GraphComm& g, const GraphCall& c, const GraphOptions& o, GraphExchange::Kind kind, int lane,
                const GraphBuffers& b, std::int64_t bytes, std::unique_ptr<GraphExchange>* out) {
  GraphAlgorithm a = GraphAlgorithm::kLinear;
  MpiStatus s = g.choose(c.op, bytes, o, &a);
  if (!s.ok()) return s;
  ir::graph::RankSchedule sched;
  s = g.schedule(c.op, a, o.theta, &sched);
  if (!s.ok()) return s;
  return GraphExchange::create(g.shared(), a, std::move(sched), b, kind, lane, o.progress_anywhere, out);
}

// The blocking call's cached exchange: reused when the arguments are the same words and both
// datatypes are predefined (a derived type may be freed and its handle reused).
struct BlockingCache {
  std::vector<std::uintptr_t> key;
  std::unique_ptr<GraphExchange> exchange;
};

bool predefined(MPI_Datatype type) {
  int ni = 0, na = 0, nt = 0, combiner = 0;
  return type != MPI_DATATYPE_NULL && MPI_Type_get_envelope(type, &ni, &na, &nt, &combiner) == MPI_SUCCESS &&
         combiner == MPI_COMBINER_NAMED;
}

std::vector<std::uintptr_t> call_key(const GraphCall& c) {
  if (!predefined(c.sendtype) || !predefined(c.recvtype)) return {};
  return {static_cast<std::uintptr_t>(c.op), reinterpret_cast<std::uintptr_t>(c.sendbuf), static_cast<std::uintptr_t>(c.sendcount),
          reinterpret_cast<std::uintptr_t>(c.sendtype), reinterpret_cast<std::uintptr_t>(c.recvbuf),
          static_cast<std::uintptr_t>(c.recvcount), reinterpret_cast<std::uintptr_t>(c.recvtype)};
}

// Init's agreement in one MPI_Allreduce: element 0 says how many MAX entries follow; the rest
// (the persistent-lane bitmap) is OR-ed.
void max_then_or(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const std::int64_t*>(in);
  auto* b = static_cast<std::int64_t*>(inout);
  const int n_max = static_cast<int>(a[0]);
  for (int i = 1; i <= n_max && i < *len; ++i) b[i] = std::max(a[i], b[i]);
  for (int i = n_max + 1; i < *len; ++i) b[i] |= a[i];
}

MPI_Op agreement_op() {
  static MPI_Op op = [] {
    MPI_Op o = MPI_OP_NULL;
    MPI_Op_create(&max_then_or, 1, &o);
    return o;
  }();
  return op;
}

struct Agreed {
  std::int64_t bytes_max = -1, bytes_min = -1;  // over ranks with significant blocks (-1: none)
  int lane = -1;
};

// Collective: errors, algorithm, theta, block size and the lanes held, agreed in one call.
MpiStatus agree_init(GraphComm& g, const MpiStatus& local, const GraphOptions& o, std::int64_t bytes, Agreed* out) {
  const std::int64_t algo = static_cast<std::int64_t>(o.algo);
  const std::int64_t kNone = INT64_MIN / 2;
  std::vector<std::int64_t> v = {7, local.ok() ? 0 : local.code, algo, -algo, o.theta, -o.theta,
                                 bytes >= 0 ? bytes : -1, bytes >= 0 ? -bytes : kNone};
  for (std::uint64_t w : g.shared()->lanes.held()) v.push_back(static_cast<std::int64_t>(w));
  std::vector<std::int64_t> all(v.size(), 0);
  CARTPLAN_MPI_CALL(MPI_Allreduce(v.data(), all.data(), static_cast<int>(v.size()), MPI_INT64_T, agreement_op(), g.shared()->exec));
  if (all[1] != 0) return agreed_error(local, static_cast<int>(all[1]));
  if (all[2] != -all[3] || all[4] != -all[5])
    return mpi_error(MPI_ERR_INFO_VALUE, "ranks passed different cartplan_algorithm or cartplan_theta values to this collective");
  out->bytes_max = all[6];
  out->bytes_min = all[7] == kNone ? -1 : -all[7];
  std::vector<std::uint64_t> held;
  for (std::size_t i = 8; i < all.size(); ++i) held.push_back(static_cast<std::uint64_t>(all[i]));
  out->lane = g.shared()->lanes.first_free(held);
  if (out->lane < 0)
    return mpi_error(MPI_ERR_OTHER, "too many persistent graph requests alive on this communicator (" +
                                        std::to_string(g.shared()->lanes.persistent_lanes()) + "); free some first");
  return {};
}

MpiStatus persistent(GraphComm& g, const GraphCall& c, MPI_Info info, const MpiStatus& caller_error,
                     std::unique_ptr<GraphExchange>* out) {
  GraphOptions o = g.options();
  MpiStatus local = parse_graph_info(info, &o);
  GraphBuffers b;
  if (local.ok()) local = make_buffers(g, c, &b);
  if (local.ok()) local = caller_error;
  const std::int64_t mine = local.ok() && (!b.send.empty() || !b.recv.empty()) ? b.block_bytes : -1;
  Agreed agreed;
  MpiStatus s = agree_init(g, local, o, mine, &agreed);
  if (!s.ok()) return s;
  // The combining schedules forward blocks and keep them in temp slots of one size: they need
  // one block size everywhere. MPI allows sizes that differ between ranks (edge by edge), which
  // linear runs; auto takes it then, a forced combining algorithm is refused on every rank.
  const bool uniform = agreed.bytes_max == agreed.bytes_min;
  if (!uniform) {
    if (o.algo != engine::graph::GraphAlgoChoice::kAuto && o.algo != engine::graph::GraphAlgoChoice::kLinear)
      return mpi_error(MPI_ERR_ARG, "block sizes differ between ranks (" + std::to_string(agreed.bytes_min) + " to " +
                                        std::to_string(agreed.bytes_max) + " bytes): pairing and cumulative need one block size on every rank");
    o.algo = engine::graph::GraphAlgoChoice::kLinear;
  }
  return build(g, c, o, GraphExchange::Kind::kPersistent, agreed.lane, b, std::max<std::int64_t>(agreed.bytes_max, 0), out);
}

}  // namespace

MpiStatus graph_blocking(MPI_Comm comm, const GraphCall& c) {
  GraphComm* g = nullptr;
  MpiStatus s = require_graph(comm, &g);
  if (!s.ok()) return s;
  std::shared_ptr<void>& slot = g->blocking_slot();
  if (!slot) slot = std::make_shared<BlockingCache>();
  auto& cache = *static_cast<BlockingCache*>(slot.get());
  std::vector<std::uintptr_t> key = call_key(c);
  if (key.empty() || key != cache.key || !cache.exchange) {
    cache.exchange.reset();
    cache.key.clear();
    s = prepare(*g, c.op, g->options());
    GraphBuffers b;
    if (s.ok()) s = make_buffers(*g, c, &b);
    if (s.ok()) s = build(*g, c, g->options(), GraphExchange::Kind::kBlocking, Lanes::blocking_lane(), b, b.block_bytes, &cache.exchange);
    if (!s.ok()) return s;
    cache.key = std::move(key);
  }
  s = cache.exchange->run_once();
  if (cache.key.empty() || !s.ok()) {  // derived datatypes may be freed after the call
    cache.exchange.reset();
    cache.key.clear();
  }
  return s;
}

MpiStatus graph_request(MPI_Comm comm, const GraphCall& c, MPI_Info info, GraphExchange::Kind kind,
                        std::unique_ptr<GraphExchange>* out, const MpiStatus& caller_error) {
  GraphComm* g = nullptr;
  MpiStatus s = require_graph(comm, &g);
  if (!s.ok()) return s;
  if (kind == GraphExchange::Kind::kPersistent) {
    // The pattern or table a forced or auto algorithm needs is set up once the ranks agreed on it.
    return persistent(*g, c, info, caller_error, out);
  }
  // The lane is the call's sequence number, taken whatever the arguments: ranks stay in step.
  const int lane = g->shared()->lanes.next_nonblocking();
  s = prepare(*g, c.op, g->options());
  if (!s.ok()) return s;
  if (!caller_error.ok()) return caller_error;
  GraphBuffers b;
  s = make_buffers(*g, c, &b);
  if (s.ok()) s = build(*g, c, g->options(), kind, lane, b, b.block_bytes, out);
  if (!s.ok()) return s;
  (*out)->take_lane(lane);
  return (*out)->start();
}

}  // namespace cartplan::mpi
