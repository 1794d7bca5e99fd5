// Graph collectives: argument checks, the algorithm, init's agreement, and the three forms.
#include "backends/mpi/graph_collective.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <climits>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <new>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "backends/mpi/exchange.h"
#include "backends/mpi/exchange_reuse.h"
#include "backends/mpi/graph_sized_calls.h"
#include "backends/mpi/graph_sized_chain.h"
#include "backends/mpi/graph_sizes.h"
#include "backends/mpi/out_of_memory.h"
#include "backends/mpi/test_failure.h"
#include "engine/graph/auto_candidates.h"

namespace cartplan::mpi {
namespace {

using engine::graph::TableCandidate;
using ir::graph::GraphAlgorithm;
using ir::graph::GraphOp;

// One side's datatype and buffer: the type's size and extent (size -1 when the side is not
// significant on this rank).
MpiStatus side_type(const char* side, const void* buf, MPI_Datatype type, bool significant, MPI_Count* size, MPI_Aint* extent) {
  *size = -1;
  *extent = 0;
  if (!significant) return {};
  if (buf == MPI_IN_PLACE) return mpi_error(MPI_ERR_ARG, std::string(side) + "buf is MPI_IN_PLACE (neighbourhood collectives have no in-place form)");
  if (type == MPI_DATATYPE_NULL) return mpi_error(MPI_ERR_TYPE, std::string(side) + "type is MPI_DATATYPE_NULL");
  MPI_Aint lb = 0;
  if (MPI_Type_size_x(type, size) != MPI_SUCCESS || MPI_Type_get_extent(type, &lb, extent) != MPI_SUCCESS)
    return mpi_error(MPI_ERR_TYPE, std::string(side) + "type is not a valid datatype");
  return {};
}

// Block i of one side: `c` elements of a type of `size` bytes at buf + at (bytes). A block at
// address NULL with data is MPI_ERR_BUFFER unless its type holds absolute addresses (MPI_BOTTOM:
// absolute_type); a v or w form's block on MPI_BOTTOM is at its displacement, an address.
MpiStatus add_block(const char* side, const std::string& count_name, const void* buf, MPI_Count c, MPI_Aint at, MPI_Count size,
                    MPI_Datatype type, std::vector<BlockSpec>* blocks, std::vector<std::int64_t>* bytes) {
  if (c < 0) return mpi_error(MPI_ERR_COUNT, count_name + " is negative (" + std::to_string(c) + ")");
  if (size > 0 && c > std::numeric_limits<std::int64_t>::max() / size)
    return mpi_error(MPI_ERR_COUNT, count_name + " (" + std::to_string(c) + ") x the type's size overflows 64 bits");
  const std::int64_t b = static_cast<std::int64_t>(size) * c;
  // Integer arithmetic: MPI_BOTTOM plus an absolute address is no C++ pointer sum. MPI_BOTTOM is
  // address 0 (Open MPI's is NULL, SMPI's (void*)-111).
  const std::uintptr_t base = buf == MPI_BOTTOM ? 0 : reinterpret_cast<std::uintptr_t>(buf);
  const auto* addr = reinterpret_cast<const void*>(base + static_cast<std::uintptr_t>(at));
  if (!addr && b > 0 && !absolute_type(type)) return mpi_error(MPI_ERR_BUFFER, std::string(side) + "buf is NULL");
  blocks->push_back(BlockSpec{addr, c, type});
  bytes->push_back(b);
  return {};
}

// a x b x c, or false where it overflows 64 bits (a large-count form's count or displacement
// times an extent).
bool product(std::int64_t a, std::int64_t b, std::int64_t c, MPI_Aint* out) {
  std::int64_t ab = 0;
  return !__builtin_mul_overflow(a, b, &ab) && !__builtin_mul_overflow(ab, c, out);
}

// Blocks of one side: block i has counts[i] elements at buf + displs[i] * extent (`v`, the v
// forms), or `count` elements at buf + i * count * extent.
MpiStatus side_blocks(const char* side, const void* buf, MPI_Count count, bool v, CountArray counts, DisplArray displs,
                      MPI_Datatype type, std::size_t n, std::vector<BlockSpec>* blocks, std::vector<std::int64_t>* bytes) {
  MPI_Count size = 0;
  MPI_Aint extent = 0;
  MpiStatus s = side_type(side, buf, type, n > 0, &size, &extent);
  if (!s.ok() || n == 0) return s;
  if (v && (counts.null() || displs.null())) return mpi_error(MPI_ERR_ARG, std::string(side) + "counts or " + side + "displs is NULL");
  for (std::size_t i = 0; s.ok() && i < n; ++i) {
    const std::string name = std::string(side) + (v ? "counts[" + std::to_string(i) + "]" : "count");
    const MPI_Count c = v ? counts[i] : count;
    MPI_Aint at = 0;  // an empty block's displacement is never used (it may be anything, as in MPI)
    if (c != 0 && (v ? !product(displs[i], 1, extent, &at) : !product(static_cast<std::int64_t>(i), count, extent, &at)))
      return mpi_error(MPI_ERR_ARG, std::string(side) + (v ? "displs[" + std::to_string(i) + "]" : "count") + " x the type's extent overflows");
    s = add_block(side, name, buf, c, at, size, type, blocks, bytes);
  }
  return s;
}

// Blocks of one side of alltoallw: block i has counts[i] elements of types[i] at buf + displs[i]
// bytes. Every type is looked at (a datatype must be valid even for an empty block, as in MPI).
MpiStatus side_blocks_w(const char* side, const void* buf, CountArray counts, const MPI_Aint* displs, const MPI_Datatype* types,
                        std::size_t n, std::vector<BlockSpec>* blocks, std::vector<std::int64_t>* bytes) {
  if (n == 0) return {};
  if (counts.null() || !displs || !types)
    return mpi_error(MPI_ERR_ARG, std::string(side) + "counts, " + side + "displs or " + side + "types is NULL");
  MpiStatus s;
  for (std::size_t i = 0; s.ok() && i < n; ++i) {
    MPI_Count size = 0;
    MPI_Aint extent = 0;
    const std::string at = "[" + std::to_string(i) + "]";
    s = side_type(side, buf, types[i], true, &size, &extent);
    if (s.code == MPI_ERR_TYPE) s.message.replace(0, std::strlen(side) + 4, std::string(side) + "types" + at);  // "sendtypes[i] is ..."
    if (s.ok()) s = add_block(side, std::string(side) + "counts" + at, buf, counts[i], displs[i], size, types[i], blocks, bytes);
  }
  return s;
}

// A rank without edges has no block of its own, but a grid schedule may route others' blocks
// through it (temp slots of the block size): a uniform call's sendcount x sendtype, else
// recvcount x recvtype, when they name a datatype (0 otherwise: then such a rank cannot relay,
// and its peers see MPI_ERR_TRUNCATE, as for sizes that differ between ranks).
std::int64_t edgeless_block_bytes(const GraphCall& c) {
  for (const auto& [count, type] : {std::pair{c.sendcount, c.sendtype}, std::pair{c.recvcount, c.recvtype}}) {
    MPI_Count size = 0;
    if (count > 0 && type != MPI_DATATYPE_NULL && MPI_Type_size_x(type, &size) == MPI_SUCCESS && size > 0 &&
        count <= std::numeric_limits<std::int64_t>::max() / size)
      return static_cast<std::int64_t>(count) * size;
  }
  return 0;
}

// The caller's blocks, as MPI_Neighbor_allgather(v) / alltoall(v/w) lay them out.
MpiStatus make_buffers(const GraphComm& g, const GraphCall& c, GraphBuffers* out) {
  const std::size_t outdeg = g.edges().out.size(), indeg = g.edges().in.size();
  const std::size_t sends = outdeg == 0 ? 0 : c.op == GraphOp::kAllgather ? 1 : outdeg;
  out->varied = c.varied || c.learn_sizes;
  const bool v_send = c.varied && c.op == GraphOp::kAlltoall;  // allgatherv sends one block of sendcount
  MpiStatus s;
  if (c.per_edge_types) {
    s = side_blocks_w("send", c.sendbuf, c.sendcounts, c.sdispls_bytes, c.sendtypes, sends, &out->send, &out->send_bytes);
    if (s.ok()) s = side_blocks_w("recv", c.recvbuf, c.recvcounts, c.rdispls_bytes, c.recvtypes, indeg, &out->recv, &out->recv_bytes);
  } else {
    s = side_blocks("send", c.sendbuf, c.sendcount, v_send, c.sendcounts, c.sdispls, c.sendtype, sends, &out->send, &out->send_bytes);
    if (s.ok())
      s = side_blocks("recv", c.recvbuf, c.recvcount, c.varied, c.recvcounts, c.rdispls, c.recvtype, indeg, &out->recv, &out->recv_bytes);
  }
  if (!s.ok()) return s;
  std::int64_t largest = 0;
  for (const auto* list : {&out->send_bytes, &out->recv_bytes})
    for (std::int64_t b : *list) largest = std::max(largest, b);
  out->block_bytes = largest;
  if (out->varied) return {};
  if (out->send_bytes.empty() && out->recv_bytes.empty() && !c.per_edge_types) out->block_bytes = edgeless_block_bytes(c);
  const std::int64_t sbytes = out->send_bytes.empty() ? -1 : out->send_bytes[0], rbytes = out->recv_bytes.empty() ? -1 : out->recv_bytes[0];
  if (sbytes >= 0 && rbytes >= 0 && sbytes != rbytes)
    return mpi_error(MPI_ERR_ARG, "sendcount x sendtype (" + std::to_string(sbytes) + " bytes) and recvcount x recvtype (" +
                                      std::to_string(rbytes) + " bytes) differ: cartplan's graph collectives need one block size on every rank");
  return {};
}

// What the algorithm needs before any argument is looked at, so that every rank takes part in
// the same collective set-up whatever its arguments: auto's table, or a forced pattern.
// `agreement_after`: the caller agrees on the outcome afterwards (persistent init). Blocking and
// non-blocking calls do not, so a forced grid's outcome is spread to every rank here
// (GraphComm::set_up's `spread`: once per grid); forced pairing and cumulative are not.
MpiStatus prepare(GraphComm& g, GraphOp op, const GraphOptions& o, bool agreement_after) {
  TableCandidate a;
  MpiStatus s = g.choose(op, 0, o, &a);  // auto: builds the table (its answer at 0 bytes is not used)
  if (!s.ok()) return s;
  return g.set_up(a, o.theta, !agreement_after);
}

// A blocking call's cached exchange: reused when the arguments have the same key (reuse_key) and
// its derived datatypes are vouched for (datatype_layout.h).
struct CachedCall {
  std::vector<std::uintptr_t> key;
  std::unique_ptr<GraphExchange> exchange;
  void clear() {
    exchange.reset();
    key.clear();
  }
};

// A communicator's blocking calls: one cached uniform call and one cached linear v call (apart,
// so that the common pattern of exchanging counts with alltoall, then data with alltoallv,
// reuses both).
struct GraphBlockingCache {
  CachedCall uniform, varied;
  // Blocking v calls with a combining schedule, per sized_key: the previous call's sizes and
  // layouts (graph_sized_calls.h).
  std::map<std::tuple<int, int, int>, std::unique_ptr<SizedCalls>> sized;
  // Non-blocking v calls with a combining schedule, per sized_key: the chain of calls that reuse
  // the previous call's sizes (graph_sized_chain.h); requests in flight share it.
  std::map<std::tuple<int, int, int>, std::shared_ptr<SizedChain>> chains;
};

// (op, table row of the schedule, theta): one schedule per key (the row tells the grids apart).
std::tuple<int, int, int> sized_key(GraphOp op, const TableCandidate& a, int theta) {
  return {static_cast<int>(op), engine::graph::candidate_index(a), theta};
}

GraphBlockingCache& call_cache(GraphComm& g) {
  std::shared_ptr<void>& slot = g.blocking_slot();
  if (!slot) slot = std::make_shared<GraphBlockingCache>();
  return *static_cast<GraphBlockingCache*>(slot.get());
}

// A non-blocking v call with a combining schedule, reusing sizes: queued on its chain. The
// schedule is made only for a new chain (the first call of its key): a chain keeps its own.
MpiStatus chained(GraphComm& g, GraphOp op, const TableCandidate& a, const GraphOptions& o, int lane, GraphBuffers b,
                  std::unique_ptr<GraphExchange>* out) {
  std::shared_ptr<SizedChain>& chain = call_cache(g).chains[sized_key(op, a, o.theta)];
  if (!chain) {
    ir::graph::RankSchedule sched;
    MpiStatus s = g.schedule(op, a, o.theta, &sched);
    if (!s.ok()) return s;
    chain = std::make_shared<SizedChain>(g.shared(), std::move(sched));
  }
  return GraphExchange::create_delegated(g.shared(), a.algorithm, lane, o.progress_anywhere, queue_sized_call(chain, std::move(b), lane), out);
}

// A v call that did not run through its op's chains on this rank (an error, reuse off, a
// combining schedule built with a size pass): they forget at this point in call order. All ranks
// run linear alike, which leaves the combining chains alone.
void forget_unless_chained(GraphComm& g, GraphOp op, const MpiStatus& s, const GraphExchange* x) {
  if (x && (x->delegated() || (s.ok() && x->algorithm() == GraphAlgorithm::kLinear))) return;
  for (auto& [k, chain] : call_cache(g).chains)
    if (std::get<0>(k) == static_cast<int>(op) && chain) chain->forget();
}



// GraphExchange::create with running out of memory (temp slots, posts or pack buffers too large
// to hold) as this rank's MPI_ERR_NO_MEM: a persistent init agrees on it afterwards, where an
// exception would leave the ranks that built in that agreement, waiting for this one.
MpiStatus create_exchange(GraphComm& g, GraphAlgorithm algorithm, ir::graph::RankSchedule sched, const GraphBuffers& b,
                          GraphExchange::Kind kind, int lane, bool progress_anywhere, std::unique_ptr<GraphExchange>* out) {
  const std::size_t slots = sched.temps.size();
  try {
    return GraphExchange::create(g.shared(), algorithm, std::move(sched), b, kind, lane, progress_anywhere, out);
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
  out->reset();
  // A temp slot's size: temp_bytes' entry (v/w forms, from the size pass), else block_bytes.
  std::int64_t largest = b.temp_bytes.empty() ? b.block_bytes : 0;
  for (std::int64_t t : b.temp_bytes) largest = std::max(largest, t);
  const std::string temps = slots == 0   ? std::string("no temp slots")
                            : slots == 1 ? "1 temp slot of " + std::to_string(largest) + " bytes"
                                         : std::to_string(slots) + " temp slots, the largest of " + std::to_string(largest) + " bytes";
  return mpi_error(MPI_ERR_NO_MEM, std::string("out of memory making the ") + ir::graph::to_string(algorithm) + " exchange (" + temps + ")");
}

// A grid exchange records its virtual grid's dimensions (Cart_graph_request_grid_dims).
void note_grid(const GraphComm& g, const TableCandidate& a, GraphExchange* x) {
  if (x && a.algorithm == GraphAlgorithm::kGrid) x->set_grid_ndims(g.grid_ndims(a.grid_d));
}

// The caller's blocks of *b moved onto private copies of its derived datatypes (with_own_types),
// which the caller owns in *owned from then on (also on error: b's blocks are then unusable).
MpiStatus copy_caller_types(const GraphComm& g, GraphBuffers* b, std::vector<MPI_Datatype>* owned) {
  ExchangeSpec spec, own;
  spec.send = std::move(b->send);
  spec.recv = std::move(b->recv);
  MpiStatus s = with_own_types(spec, g.shared()->exec, &own, owned);
  b->send = std::move(own.send);
  b->recv = std::move(own.recv);
  return s;
}

// The exchange of algorithm `a`. v forms with a combining schedule: a non-blocking
// call joins its op's chain (graph_sized_chain.h: no size pass), or with reuse off runs the size
// pass inside the request's progress; persistent init (and a blocking call with reuse off) runs
// it first (graph_sizes.h). If the pass finds counts that differ between the ends of an edge,
// the exchange is still built and runs (so nobody waits for this rank) and reports that error.
MpiStatus build_schedule(GraphComm& g, const GraphCall& c, const GraphOptions& o, GraphExchange::Kind kind, int lane, GraphBuffers b,
                         const TableCandidate& a, std::unique_ptr<GraphExchange>* out) {
  const bool combining_v = b.varied && a.algorithm != GraphAlgorithm::kLinear;
  // A non-blocking call runs its size pass as part of its progress: it returns at once.
  if (combining_v && kind == GraphExchange::Kind::kNonblocking && size_reuse()) return chained(g, c.op, a, o, lane, std::move(b), out);
  ir::graph::RankSchedule sched;
  MpiStatus s = g.schedule(c.op, a, o.theta, &sched);
  if (!s.ok()) return s;
  MpiStatus sizes;
  if (combining_v) {
    if (kind == GraphExchange::Kind::kNonblocking)
      return GraphExchange::create_learning_sizes(g.shared(), a.algorithm, std::move(sched), b, lane, o.progress_anywhere, out);
    SizePass pass(*g.shared(), lane, sched, b.send_bytes, b.recv_bytes);
    sizes = pass.run();
    if (sizes.code != MPI_SUCCESS && sizes.code != MPI_ERR_TRUNCATE) return sizes;
    b.temp_bytes = pass.temp_bytes();
  }
  s = create_exchange(g, a.algorithm, std::move(sched), b, kind, lane, o.progress_anywhere, out);
  if (s.ok()) (*out)->set_build_error(sizes);
  return s;
}

// The call's algorithm (choose: the same on every rank), then its exchange.
MpiStatus build(GraphComm& g, const GraphCall& c, const GraphOptions& o, GraphExchange::Kind kind, int lane, GraphBuffers b,
                std::int64_t bytes, std::unique_ptr<GraphExchange>* out) {
  TableCandidate a;
  MpiStatus s = g.choose(c.op, bytes, o, &a);
  if (s.ok()) s = build_schedule(g, c, o, kind, lane, std::move(b), a, out);
  if (s.ok()) note_grid(g, a, out->get());
  return s;
}

// Non-blocking and persistent requests outlive their call, and MPI lets the caller free its
// datatypes right after it (pending communication completes normally; a non-blocking v or w
// call even builds its messages later, after its size pass): such a request runs on private
// copies of the caller's derived datatypes (type_copy.h: no attributes copied), which it owns.
// `owned`: the copies b's blocks are on; the exchange adopts them, else they are freed. `before`:
// the copy's status (not ok: nothing is built).
MpiStatus build_on_copies(GraphComm& g, const GraphCall& c, const GraphOptions& o, GraphExchange::Kind kind, int lane, GraphBuffers b,
                          std::int64_t bytes, std::vector<MPI_Datatype>& owned, const MpiStatus& before, std::unique_ptr<GraphExchange>* out) {
  MpiStatus s = before;
  if (s.ok())  // out of memory: this rank's error, so that the copies are freed below
    s = out_of_memory_as_error("building the graph exchange", [&] { return build(g, c, o, kind, lane, std::move(b), bytes, out); });
  if (s.ok() && *out) {
    (*out)->adopt_types(owned);
    return s;
  }
  for (MPI_Datatype& t : owned) MPI_Type_free(&t);
  return s;
}

MpiStatus build_request(GraphComm& g, const GraphCall& c, const GraphOptions& o, GraphExchange::Kind kind, int lane, GraphBuffers b,
                        std::int64_t bytes, std::unique_ptr<GraphExchange>* out) {
  std::vector<MPI_Datatype> owned;
  const MpiStatus s = copy_caller_types(g, &b, &owned);
  return build_on_copies(g, c, o, kind, lane, std::move(b), bytes, owned, s, out);
}

// A persistent auto init that agrees auto's table: its outcome rides in the table's
// MPI_Allreduce (one global collective fewer). The caller's datatypes are copied first, then,
// after the constructions, this rank makes the exchange of every table row (a local step) and
// hands its error per row, with the copy's, to the reduction: the row the agreed table picks
// then has an agreed outcome on every rank. A row is "not made" (its flag stays 1) where this
// rank did not call GraphExchange::create for it: a v or w form's combining row (its size pass
// talks along that schedule and may only run once every rank has it, after the table, which
// agrees on the constructions), a row whose schedule failed (the table's word fails the init),
// and a row whose temp slots would take more than temp_budget() (made only if picked). A
// picked row not made on some rank is built after the table and its outcome agreed afterwards.
struct Prebuilt {
  static constexpr int kRows = engine::graph::kPriceCandidates;
  static constexpr std::int64_t kBudgetFloor = std::int64_t{1} << 20;  // bytes
  GraphComm& g;
  const GraphCall& c;
  const GraphOptions& o;
  int lane;
  GraphBuffers b;  // on the copies of the caller's datatypes
  std::vector<MPI_Datatype> owned;
  MpiStatus types;  // copying them
  std::array<MpiStatus, kRows> errors;
  std::array<std::unique_ptr<GraphExchange>, kRows> made;
  ~Prebuilt() {
    drop();
    for (MPI_Datatype& t : owned) MPI_Type_free(&t);
  }
  void drop() {  // each releases the lane: a kept exchange holds it again (take)
    for (auto& x : made) x.reset();
  }
  // The temp bytes a row may take to be made before it is picked: the caller's own block bytes
  // (send and receive), at least kBudgetFloor.
  std::int64_t temp_budget() const {
    std::int64_t caller = 0;
    for (const auto* list : {&b.send_bytes, &b.recv_bytes})
      for (std::int64_t x : *list) caller += x;
    return std::max(caller, kBudgetFloor);
  }
  // Row a's exchange into made[i] and errors[i] (MPI_ERR_NO_MEM when memory runs out).
  void make_row(const TableCandidate& a, std::size_t i, ir::graph::RankSchedule sched) {
    errors[i] = create_exchange(g, a.algorithm, std::move(sched), b, GraphExchange::Kind::kPersistent, lane, o.progress_anywhere, &made[i]);
    const std::string step = std::string("prebuilt-") + ir::graph::to_string(a.algorithm);
    if (errors[i].ok() && test_failure(step)) errors[i] = injected_failure(step);
    if (!errors[i].ok()) made[i].reset();
    note_grid(g, a, made[i].get());
  }
  // Words: the copy's error class, each row's, then a flag per row: 0 once this rank made it.
  std::vector<double> words(const std::vector<TableCandidate>& rows) {
    std::vector<double> w(1 + 2 * kRows, 0.0);
    std::fill(w.begin() + 1 + kRows, w.end(), 1.0);  // not made (until create is called)
    w[0] = types.ok() ? 0.0 : static_cast<double>(types.code);
    if (!types.ok()) return w;
    for (const TableCandidate& a : rows) {
      const std::size_t i = static_cast<std::size_t>(engine::graph::candidate_index(a));
      ir::graph::RankSchedule sched;
      if (b.varied && a.algorithm != GraphAlgorithm::kLinear) continue;  // its size pass comes first
      if (!g.schedule(c.op, a, o.theta, &sched).ok()) continue;  // a failed construction: the table's word
      if (static_cast<std::int64_t>(sched.temps.size()) * (b.block_bytes + 1) > temp_budget()) continue;
      make_row(a, i, std::move(sched));
      w[1 + kRows + i] = 0.0;
      w[1 + i] = errors[i].ok() ? 0.0 : static_cast<double>(errors[i].code);
    }
    return w;
  }
  void take_types(GraphExchange* x) {
    x->adopt_types(owned);
    owned.clear();
  }
  // Row i's exchange (made on this rank), owning the datatype copies; the others are freed.
  void take(std::size_t i, std::unique_ptr<GraphExchange>* out) {
    assert(made[i]);
    *out = std::move(made[i]);
    take_types(out->get());
    drop();
    g.shared()->lanes.hold(lane);
  }
};

// Auto's persistent build (Prebuilt). *agreed: the status returned is every rank's already;
// otherwise (no table agreed here: one agreed before, or none needed; or a picked row not made
// on every rank) the exchange is built as build_request builds it and the caller agrees on the
// outcome.
MpiStatus build_auto(GraphComm& g, const GraphCall& c, const GraphOptions& o, int lane, GraphBuffers b, std::int64_t bytes,
                     std::unique_ptr<GraphExchange>* out, bool* agreed) {
  Prebuilt pre{g, c, o, lane, {}, {}, {}, {}, {}};
  pre.types = copy_caller_types(g, &b, &pre.owned);
  pre.b = std::move(b);
  const GraphComm::Rider rider = [&pre](const std::vector<TableCandidate>& rows) { return pre.words(rows); };
  std::vector<double> all;
  TableCandidate a;
  MpiStatus s = g.choose(c.op, bytes, o, &a, &rider, &all);
  *agreed = !s.ok();  // a table's failure is agreed (and kept) on every rank
  if (!s.ok()) return s;
  const std::size_t i = static_cast<std::size_t>(engine::graph::candidate_index(a));
  if (!all.empty() && all[0] != 0.0) {
    *agreed = true;
    return agreed_error(pre.types, static_cast<int>(all[0]));
  }
  if (!all.empty() && all[1 + Prebuilt::kRows + i] == 0.0) {  // made on every rank
    *agreed = true;
    if (all[1 + i] != 0.0) return agreed_error(pre.errors[i], static_cast<int>(all[1 + i]));
    pre.take(i, out);
    return {};
  }
  if (!pre.types.ok()) return pre.types;
  pre.drop();
  s = build_schedule(g, c, o, GraphExchange::Kind::kPersistent, lane, pre.b, a, out);
  const std::string step = std::string("late-") + ir::graph::to_string(a.algorithm);
  if (s.ok() && test_failure(step)) {
    s = injected_failure(step);
    out->reset();
  }
  if (s.ok()) note_grid(g, a, out->get());
  if (s.ok() && *out) pre.take_types(out->get());
  return s;
}

// The options a call runs with: auto on a v form that is not persistent runs linear, since
// choosing alike on every rank would need the sizes of every rank (persistent init agrees on them).
// Checking mode (GraphOptions::check_collective): a blocking or non-blocking call agrees twice
// across the graph's ranks, so that a bad argument, a failed set-up or a failed build on one
// rank fails the call on every rank, where in the default mode its peers would wait for messages
// it never sends. First before anything is built or sent: the outcome so far and, for a uniform
// call, one block size over the ranks with edges (`bytes`, -1 for none; sizes that differ would
// truncate and could let auto choose differently per rank). Then after building: the build's
// outcome. Default mode: `local` unchanged, no collective.
MpiStatus checked(GraphComm& g, bool checking, const MpiStatus& local, std::int64_t bytes = -1) {
  if (!checking) return local;
  constexpr std::int64_t kNone = INT64_MIN / 2;
  const std::int64_t mine[3] = {local.ok() ? 0 : local.code, bytes >= 0 ? bytes : kNone, bytes >= 0 ? -bytes : kNone};
  std::int64_t v[3] = {0, 0, 0};
  CARTPLAN_MPI_CALL(Exchange::agree_allreduce(mine, v, 3, MPI_INT64_T, MPI_MAX, g.shared()->exec));
  if (v[0] != 0) return agreed_error(local, static_cast<int>(v[0]));
  if (v[1] != kNone && v[1] != -v[2])
    return mpi_error(MPI_ERR_TRUNCATE, "block sizes differ between ranks (" + std::to_string(-v[2]) + " to " + std::to_string(v[1]) +
                                           " bytes): cartplan's graph collectives need one block size on every rank with edges");
  return {};
}

// A uniform call's block size for checked's first agreement: -1 for a v or w form (sizes per
// edge) and on a rank without edges.
std::int64_t uniform_bytes(const GraphComm& g, const GraphCall& c, const GraphBuffers& b) {
  const bool edges = !g.edges().out.empty() || !g.edges().in.empty();
  return !c.varied && !c.learn_sizes && edges ? b.block_bytes : -1;
}

// make_buffers, out of memory as this rank's error (so that checking mode still agrees).
MpiStatus lay_out(const GraphComm& g, const GraphCall& c, GraphBuffers* b) {
  return out_of_memory_as_error("laying out the graph collective's blocks", [&] { return make_buffers(g, c, b); });
}

GraphOptions call_options(const GraphComm& g, const GraphCall& c) {
  GraphOptions o = c.options ? *c.options : g.options();
  if ((c.varied || c.learn_sizes) && o.algo == engine::graph::GraphAlgoChoice::kAuto) o.algo = engine::graph::GraphAlgoChoice::kLinear;
  return o;
}

// The previous blocking call of `op` in every SizedCalls: its next call sends everything with sizes.
void forget_sized(GraphBlockingCache& cache, GraphOp op) {
  for (auto& [k, entry] : cache.sized)
    if (std::get<0>(k) == static_cast<int>(op) && entry) entry->forget();
}

// A blocking v call (or a uniform call whose sizes may differ by rank). With a combining
// schedule it reuses the previous call's sizes (graph_sized_calls.h); linear, or reuse off,
// builds the exchange for this call (a combining one after the size pass). A rank whose call
// does not run through SizedCalls forgets the previous call of the op there: it then sends
// everything with sizes, which every receiver accepts, so nothing needs agreeing.
MpiStatus blocking_varied(GraphComm& g, const GraphCall& c, GraphBlockingCache& cache) {
  const GraphOptions o = call_options(g, c);
  // A v call's algorithm does not depend on sizes (auto runs linear): it is known first. Once
  // this schedule's SizedCalls exists, its set-up (prepare's pattern) is done on every rank, and
  // the call neither builds the schedule again nor looks it up.
  TableCandidate a;
  MpiStatus s = g.choose(c.op, 0, o, &a);
  std::unique_ptr<SizedCalls>* calls = nullptr;
  if (s.ok() && a.algorithm != GraphAlgorithm::kLinear && size_reuse()) calls = &cache.sized[sized_key(c.op, a, o.theta)];
  if (s.ok() && !(calls && *calls)) s = prepare(g, c.op, o, false);
  GraphBuffers b;
  if (s.ok()) s = lay_out(g, c, &b);
  if (s.ok() && calls && !*calls) {
    ir::graph::RankSchedule sched;
    s = g.schedule(c.op, a, o.theta, &sched);
    if (s.ok()) *calls = std::make_unique<SizedCalls>(g.shared(), std::move(sched));
  }
  s = checked(g, o.check_collective, s);  // before the build's size pass (size reuse off)
  std::unique_ptr<GraphExchange> x;
  if (s.ok() && !calls) {
    const std::int64_t bytes = b.block_bytes;
    s = out_of_memory_as_error("building the graph exchange", [&] {
      return build(g, c, o, GraphExchange::Kind::kBlocking, Lanes::blocking_lane(), std::move(b), bytes, &x);
    });
  }
  s = checked(g, o.check_collective, s);
  if (s.ok() && calls) return (*calls)->run(b);
  if (!s.ok() || a.algorithm != GraphAlgorithm::kLinear) forget_sized(cache, c.op);
  return s.ok() ? x->run_once() : s;
}

// What a uniform blocking call's cached exchange is bound to: op, buffers, counts and the
// datatype_key of each datatype (exchange_reuse.h: predefined ones by handle, derived ones by
// layout id, so a freed handle that MPI gives to another layout never matches). A side this
// rank does not use is keyed 0 and its datatype not looked at (a rank without edges: its block
// size instead). Empty: not reusable.
std::vector<std::uintptr_t> call_key(const GraphComm& g, const GraphCall& c, DerivedTypes* derived) {
  std::vector<std::uintptr_t> key;
  key.reserve(16);  // one allocation: every blocking and non-blocking uniform call makes a key
  key.push_back(static_cast<std::uintptr_t>(c.op));
  auto add = [&](const void* buf, MPI_Count count, MPI_Datatype type, bool used) {
    std::uintptr_t word = 0, kind = 0;
    if (used && !datatype_key(type, derived, &word, &kind)) return false;
    key.insert(key.end(), {reinterpret_cast<std::uintptr_t>(used ? buf : nullptr), static_cast<std::uintptr_t>(used ? count : 0), word, kind});
    return true;
  };
  if (!add(c.sendbuf, c.sendcount, c.sendtype, !g.edges().out.empty()) ||
      !add(c.recvbuf, c.recvcount, c.recvtype, !g.edges().in.empty()))
    return {};
  // A rank without edges still relays grid blocks of the call's size (edgeless_block_bytes).
  if (g.edges().out.empty() && g.edges().in.empty()) key.push_back(static_cast<std::uintptr_t>(edgeless_block_bytes(c)));
  return key;
}

// Init's agreement in one MPI_Allreduce of one element, the whole vector as a contiguous type
// (MPI may cut a vector of MPI_INT64_T into segments between ranks, as Open MPI's
// reduce-scatter allreduce does at 32 ranks, and a segment does not start at word 0): word 0
// says how many MAX words follow; the rest (the persistent-lane bitmap) is OR-ed.
void max_then_or(void* in, void* inout, int* len, MPI_Datatype* type) {
  int bytes = 0;
  MPI_Type_size(*type, &bytes);
  const int words = bytes / static_cast<int>(sizeof(std::int64_t));
  for (int e = 0; e < *len; ++e) {
    const std::int64_t* a = static_cast<const std::int64_t*>(in) + static_cast<std::ptrdiff_t>(e) * words;
    std::int64_t* b = static_cast<std::int64_t*>(inout) + static_cast<std::ptrdiff_t>(e) * words;
    const int n_max = static_cast<int>(a[0]);
    for (int i = 1; i <= n_max && i < words; ++i) b[i] = std::max(a[i], b[i]);
    for (int i = n_max + 1; i < words; ++i) b[i] |= a[i];
  }
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

// Collective: errors, algorithm, theta, grid dims, auto's candidates, block size and the lanes held, agreed in one call;
// with `pending` (the communicator's state made by this init: begin_graph), its creation too, so
// that a first init makes one MPI_Allreduce here and not two; finish_graph attaches the state.
// `bytes`: this rank's block size, -1 without significant blocks (a rank without edges).
MpiStatus agree_init(GraphComm& g, const MpiStatus& local, const GraphOptions& o, std::int64_t bytes, PendingGraph* pending, Agreed* out) {
  const std::int64_t algo = static_cast<std::int64_t>(o.algo);
  const std::int64_t kNone = INT64_MIN / 2;
  const std::int64_t candidates = engine::graph::candidates_key(o.auto_candidates);  // auto constructs only these
  constexpr int kMax = 11 + PendingGraph::kWords;  // entries reduced with MAX
  std::vector<std::int64_t> v = {kMax, local.ok() ? 0 : local.code, algo, -algo, o.theta, -o.theta, o.grid_dims, -o.grid_dims,
                                 bytes >= 0 ? bytes : -1, bytes >= 0 ? -bytes : kNone, candidates, -candidates};
  for (int i = 0; i < PendingGraph::kWords; ++i) v.push_back(pending ? pending->words[static_cast<std::size_t>(i)] : 0);  // 0: neutral
  for (std::uint64_t w : g.shared()->lanes.held()) v.push_back(static_cast<std::int64_t>(w));
  std::vector<std::int64_t> all(v.size(), 0);
  // One element: max_then_or sees the vector from word 0. Freed on every way out, also when the
  // agreement's progress of other requests throws.
  struct Whole {
    MPI_Datatype t = MPI_DATATYPE_NULL;
    ~Whole() {
      if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
    }
  } whole;
  CARTPLAN_MPI_CALL(MPI_Type_contiguous(static_cast<int>(v.size()), MPI_INT64_T, &whole.t));
  CARTPLAN_MPI_CALL(MPI_Type_commit(&whole.t));
  CARTPLAN_MPI_CALL(Exchange::agree_allreduce(v.data(), all.data(), 1, whole.t, agreement_op(), g.shared()->exec));
  if (pending) {  // the creation's verdict first, as require_graph would have given it
    std::array<int, PendingGraph::kWords> created{};
    for (int i = 0; i < PendingGraph::kWords; ++i) created[static_cast<std::size_t>(i)] = static_cast<int>(all[12 + static_cast<std::size_t>(i)]);
    GraphComm* attached = nullptr;
    MpiStatus s = finish_graph(std::move(*pending), created, &attached);
    if (!s.ok()) return s;
  }
  if (all[1] != 0) return agreed_error(local, static_cast<int>(all[1]));
  if (all[2] != -all[3] || all[4] != -all[5] || all[6] != -all[7] || all[10] != -all[11])
    return mpi_error(MPI_ERR_INFO_VALUE, "ranks passed different cartplan_algorithm, cartplan_theta, cartplan_grid_dims or "
                                         "cartplan_auto_candidates values to this collective");
  out->bytes_max = all[8];
  out->bytes_min = all[9] == kNone ? -1 : -all[9];
  std::vector<std::uint64_t> held;
  for (std::size_t i = 12 + PendingGraph::kWords; i < all.size(); ++i) held.push_back(static_cast<std::uint64_t>(all[i]));
  out->lane = g.shared()->lanes.first_free(held);
  if (out->lane < 0)
    return mpi_error(MPI_ERR_OTHER, "too many persistent graph requests alive on this communicator (" +
                                        std::to_string(g.shared()->lanes.persistent_lanes()) + "); free some first");
  return {};
}

// A persistent init's forced algorithm: prepare's pattern, then the exchange (out of memory is
// this rank's error for the outcome's agreement in persistent). A v or w form with a combining
// algorithm runs its size pass along the schedule inside the build (build_schedule), before
// that agreement: ranks whose pattern (a construction failing part-way tells only some ranks)
// or datatypes' copies failed would wait in the agreement while the others wait for them in
// the pass. There prepare's and the copy's outcome are agreed first, in one MPI_Allreduce (init
// only); if it fails, *agreed: the status returned is every rank's already.
MpiStatus build_forced(GraphComm& g, const GraphCall& c, const GraphOptions& o, int lane, GraphBuffers b, std::int64_t bytes,
                       std::unique_ptr<GraphExchange>* out, bool* agreed) {
  const auto kind = GraphExchange::Kind::kPersistent;
  MpiStatus s = prepare(g, c.op, o, true);
  if (!c.varied || o.algo == engine::graph::GraphAlgoChoice::kLinear) {
    if (!s.ok()) return s;
    return out_of_memory_as_error("building the graph exchange", [&] { return build_request(g, c, o, kind, lane, std::move(b), bytes, out); });
  }
  std::vector<MPI_Datatype> owned;
  if (s.ok()) s = out_of_memory_as_error("copying the caller's datatypes", [&] { return copy_caller_types(g, &b, &owned); });
  const int mine = s.ok() ? 0 : s.code;
  int worst = 0;
  MpiStatus reduced = from_mpi(Exchange::agree_allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, g.shared()->exec), "MPI_Allreduce");
  if (reduced.ok() && worst != 0) reduced = agreed_error(s, worst);
  *agreed = !reduced.ok();
  return build_on_copies(g, c, o, kind, lane, std::move(b), bytes, owned, reduced, out);
}

// `pending`: the state of a communicator this init is the first graph collective on (begin_graph),
// attached by agree_init once every rank made it; nullptr when it is attached already.
MpiStatus persistent(GraphComm& g, const GraphCall& c, MPI_Info info, const MpiStatus& caller_error, PendingGraph* pending,
                     std::unique_ptr<GraphExchange>* out) {
  GraphOptions o = c.options ? *c.options : g.options();
  MpiStatus local = pending ? pending->status : MpiStatus{};  // a refused graph: no buffers looked at
  if (local.ok()) local = parse_graph_info(info, &o);
  GraphBuffers b;
  // Running out of memory laying out the blocks is this rank's MPI_ERR_NO_MEM for agree_init.
  if (local.ok())
    local = out_of_memory_as_error("laying out the graph collective's blocks", [&] {
      inject_out_of_memory("graph-buffers");
      return make_buffers(g, c, &b);
    });
  if (local.ok()) local = caller_error;
  const bool edgeless = b.send.empty() && b.recv.empty();
  const std::int64_t mine = local.ok() && !edgeless ? b.block_bytes : -1;
  Agreed agreed;
  MpiStatus s = agree_init(g, local, o, mine, pending, &agreed);
  if (!s.ok()) return s;
  // The combining schedules forward blocks and keep them in temp slots of one size: they need
  // one block size on every rank with blocks. MPI allows sizes that differ between ranks (edge by
  // edge), which linear runs; auto takes it then, a forced combining algorithm is refused on every
  // rank. v and w forms learn every temp slot's size in their size pass (graph_sizes.h).
  const bool uniform = agreed.bytes_max == agreed.bytes_min || c.varied;
  // Grid also relays through ranks without edges, whose own arguments MPI never looks at: such a
  // rank relays blocks of the agreed size (its temp slots; a v or w form's come from the size
  // pass, which runs through it too), so it never vetoes grid. Grid is safe wherever the sizes
  // are, and auto may pick it (without_grid).
  if (edgeless && !c.varied && agreed.bytes_max >= 0) b.block_bytes = agreed.bytes_max;
  o.grid_in_auto = uniform;
  if (c.decide && !c.decide(agreed.bytes_min, agreed.bytes_max, &o)) return {};  // declined everywhere
  if (!uniform) {
    if (o.algo != engine::graph::GraphAlgoChoice::kAuto && o.algo != engine::graph::GraphAlgoChoice::kLinear)
      return mpi_error(MPI_ERR_ARG, "block sizes differ between ranks (" + std::to_string(agreed.bytes_min) + " to " +
                                        std::to_string(agreed.bytes_max) + " bytes over ranks with edges): "
                                        "combining schedules need one block size on every rank");
    o.algo = engine::graph::GraphAlgoChoice::kLinear;
  }
  // Every rank constructs what the algorithm needs before anything of its own can fail (its
  // datatypes are checked and copied in build_request or build_forced): no rank leaves a
  // construction early.
  // Auto agreeing its table here agrees on the outcome in the same reduction (build_auto).
  const std::int64_t bytes = std::max<std::int64_t>(agreed.bytes_max, 0);
  bool outcome_agreed = false;
  // A forced grid constructed in this init (every rank the same: GraphComm::grid_kept) is
  // forgotten on every rank if the init fails (drop_grid): the next init or call constructs again.
  const bool forced_grid = o.algo == engine::graph::GraphAlgoChoice::kGrid;
  const bool fresh_grid = forced_grid && !g.grid_kept(forced_candidate(o));
  if (o.algo == engine::graph::GraphAlgoChoice::kAuto) {
    s = build_auto(g, c, o, agreed.lane, std::move(b), bytes, out, &outcome_agreed);
  } else {
    s = build_forced(g, c, o, agreed.lane, std::move(b), bytes, out, &outcome_agreed);
  }
  if (outcome_agreed) {
    if (!s.ok()) out->reset();
    if (!s.ok() && fresh_grid) g.drop_grid(forced_candidate(o));
    return s;
  }
  // A pattern construction, a datatype check (an uncommitted type) or a v form's size pass may
  // fail on some ranks only: one more agreement on the outcome (init is collective), so that a
  // failed init frees its request and fails on every rank together; nobody is left waiting.
  const MpiStatus local_build = !s.ok() ? s : (*out)->build_error();
  const int mine_code = local_build.ok() ? 0 : local_build.code;
  int worst = 0;
  CARTPLAN_MPI_CALL(Exchange::agree_allreduce(&mine_code, &worst, 1, MPI_INT, MPI_MAX, g.shared()->exec));
  if (worst == 0) {
    if (forced_grid) g.grid_agreed(forced_candidate(o));  // built on every rank
    return {};
  }
  out->reset();
  if (fresh_grid) g.drop_grid(forced_candidate(o));
  return agreed_error(local_build, worst);
}

// A v call's arrays, which its exchange is laid out from: the counts and displacements of every
// edge (alltoallv: both sides; allgatherv: the receive side, its one send count is in call_key).
void add_varied_arrays(const GraphComm& g, const GraphCall& c, std::vector<std::uintptr_t>* key) {
  auto add = [&](CountArray counts, DisplArray displs, std::size_t degree) {
    for (std::size_t k = 0; k < degree; ++k)
      key->insert(key->end(), {static_cast<std::uintptr_t>(counts[k]), static_cast<std::uintptr_t>(displs[k])});
  };
  if (c.op == GraphOp::kAlltoall) add(c.sendcounts, c.sdispls, g.edges().out.size());
  add(c.recvcounts, c.rdispls, g.edges().in.size());
}

// An alltoallw call's arrays: per edge its count, byte displacement and datatype key (a derived
// datatype by its layout, as call_key keys them). False: a datatype that cannot be keyed. A
// handle repeated on consecutive edges (the usual case: one type for every edge) is looked up
// once: within one call a handle has one layout.
bool add_w_arrays(const GraphComm& g, const GraphCall& c, DerivedTypes* derived, std::vector<std::uintptr_t>* key) {
  MPI_Datatype last = MPI_DATATYPE_NULL;
  bool have_last = false;
  std::uintptr_t word = 0, kind = 0;
  auto add = [&](CountArray counts, const MPI_Aint* displs, const MPI_Datatype* types, std::size_t degree) {
    for (std::size_t k = 0; k < degree; ++k) {
      if (!have_last || types[k] != last) {
        if (!datatype_key(types[k], derived, &word, &kind)) return false;
        last = types[k], have_last = true;
      }
      key->insert(key->end(), {static_cast<std::uintptr_t>(counts[k]), static_cast<std::uintptr_t>(displs[k]), word, kind});
    }
    return true;
  };
  return add(c.sendcounts, c.sdispls_bytes, c.sendtypes, g.edges().out.size()) &&
         add(c.recvcounts, c.rdispls_bytes, c.recvtypes, g.edges().in.size());
}

// Whether a v or w call's exchange can be kept for a later call with the same arguments:
// allgatherv, alltoallv and alltoallw with a linear schedule (forced, or auto, which runs them
// linear). Such an exchange depends on this rank's arguments alone: every message is one edge's
// block, laid out from this rank's counts, displacements (and datatypes). A combining schedule's
// layouts are for one call's sizes, which peers may change (they go through the sized calls,
// graph_sized_calls.h); uniform calls that learn their sizes (the drop-in's) are not kept.
bool keepable_varied(const GraphCall& c, const GraphOptions& o) {
  return c.varied && !c.learn_sizes && o.algo == engine::graph::GraphAlgoChoice::kLinear;
}

// call_key, and for a keepable v call its arrays. Empty: not kept.
std::vector<std::uintptr_t> reuse_key(const GraphComm& g, const GraphCall& c, const GraphOptions& o, DerivedTypes* derived) {
  if ((c.varied || c.learn_sizes) && !keepable_varied(c, o)) return {};
  // Null arrays where the rank has edges: the caller's error, which the build names; not read here.
  const bool in = !g.edges().in.empty(), out = !g.edges().out.empty() && c.op == GraphOp::kAlltoall;
  if (c.per_edge_types ? (in && (c.recvcounts.null() || !c.rdispls_bytes || !c.recvtypes)) ||
                             (out && (c.sendcounts.null() || !c.sdispls_bytes || !c.sendtypes))
                       : c.varied && ((in && (c.recvcounts.null() || c.rdispls.null())) || (out && (c.sendcounts.null() || c.sdispls.null()))))
    return {};
  std::vector<std::uintptr_t> key = call_key(g, c, derived);
  if (key.empty() || !c.varied) return key;
  key.push_back(c.per_edge_types ? 2 : 1);  // apart from a uniform call's key with the same buffers and zero counts
  if (!c.per_edge_types) add_varied_arrays(g, c, &key);
  else if (!add_w_arrays(g, c, derived, &key)) return {};
  return key;
}

// What a non-blocking call's exchange is bound to in its communicator's pool: reuse_key and the
// options it was built under (the drop-in sets them per call). Empty (never pooled): what
// reuse_key does not keep, checking mode (every call agrees, so every call builds alike on every
// rank), an argument error.
std::vector<std::uintptr_t> pool_key(const GraphComm& g, const GraphCall& c, const GraphOptions& o, const MpiStatus& caller_error,
                                     DerivedTypes* derived) {
  if (o.check_collective || !caller_error.ok()) return {};
  std::vector<std::uintptr_t> key = reuse_key(g, c, o, derived);
  if (key.empty()) return key;
  for (int word : {static_cast<int>(o.algo), o.theta, o.grid_dims, engine::graph::candidates_key(o.auto_candidates),
                   o.progress_anywhere ? 1 : 0, o.grid_in_auto ? 1 : 0})
    key.push_back(static_cast<std::uintptr_t>(static_cast<std::intptr_t>(word)));
  return key;
}

// A non-blocking call's exchange: a pooled one built by an earlier call with the same key on this
// rank, else a new one. Reuse is this rank's own business: the earlier call made the pattern and
// choice (prepare, choose) this call would make, on every rank alike, and a rank that builds
// instead makes the same schedule, so peers need not agree on it.
MpiStatus nonblocking(GraphComm& g, const GraphCall& c, const MpiStatus& caller_error, int lane, std::unique_ptr<GraphExchange>* out) {
  const GraphOptions o = call_options(g, c);
  DerivedTypes derived;
  std::vector<std::uintptr_t> key = pool_key(g, c, o, caller_error, &derived);
  // A derived datatype not vouched for yet builds again, which checks it (as the blocking cache).
  if (!key.empty() && derived.unvouched.empty() && (*out = GraphExchange::take_pooled(*g.shared(), key))) return {};
  MpiStatus s = prepare(g, c.op, o, false);
  if (s.ok()) s = caller_error;
  GraphBuffers b;
  if (s.ok()) s = lay_out(g, c, &b);
  s = checked(g, o.check_collective, s, uniform_bytes(g, c, b));
  const std::int64_t bytes = b.block_bytes;
  if (s.ok())
    s = out_of_memory_as_error("building the graph exchange",
                               [&] { return build_request(g, c, o, GraphExchange::Kind::kNonblocking, lane, std::move(b), bytes, out); });
  s = checked(g, o.check_collective, s);
  if (!s.ok()) {
    out->reset();
    return s;
  }
  if (!key.empty()) {
    (*out)->set_pool_key(std::move(key));
    vouch_for(derived);  // these datatypes passed the checks of a build (with_own_types)
  }
  return s;
}

}  // namespace

GraphCall graph_uniform_call(GraphOp op, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                             MPI_Count recvcount, MPI_Datatype recvtype) {
  GraphCall c;
  c.op = op;
  c.sendbuf = sendbuf, c.sendcount = sendcount, c.sendtype = sendtype;
  c.recvbuf = recvbuf, c.recvcount = recvcount, c.recvtype = recvtype;
  return c;
}

GraphCall graph_allgatherv_call(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, CountArray recvcounts,
                                DisplArray rdispls, MPI_Datatype recvtype) {
  GraphCall c = graph_uniform_call(GraphOp::kAllgather, sendbuf, sendcount, sendtype, recvbuf, 0, recvtype);
  c.varied = true;
  c.recvcounts = recvcounts, c.rdispls = rdispls;
  return c;
}

GraphCall graph_alltoallv_call(const void* sendbuf, CountArray sendcounts, DisplArray sdispls, MPI_Datatype sendtype, void* recvbuf,
                               CountArray recvcounts, DisplArray rdispls, MPI_Datatype recvtype) {
  GraphCall c = graph_uniform_call(GraphOp::kAlltoall, sendbuf, 0, sendtype, recvbuf, 0, recvtype);
  c.varied = true;
  c.sendcounts = sendcounts, c.sdispls = sdispls, c.recvcounts = recvcounts, c.rdispls = rdispls;
  return c;
}

GraphCall graph_alltoallw_call(const void* sendbuf, CountArray sendcounts, const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                               void* recvbuf, CountArray recvcounts, const MPI_Aint rdispls[], const MPI_Datatype recvtypes[]) {
  GraphCall c = graph_uniform_call(GraphOp::kAlltoall, sendbuf, 0, MPI_DATATYPE_NULL, recvbuf, 0, MPI_DATATYPE_NULL);
  c.varied = true, c.per_edge_types = true;
  c.sendcounts = sendcounts, c.recvcounts = recvcounts;
  c.sendtypes = sendtypes, c.recvtypes = recvtypes, c.sdispls_bytes = sdispls, c.rdispls_bytes = rdispls;
  return c;
}

MpiStatus graph_blocking(MPI_Comm comm, const GraphCall& c) {
  GraphComm* g = nullptr;
  MpiStatus s = require_graph(comm, &g);
  if (!s.ok()) return s;
  GraphBlockingCache& cache = call_cache(*g);
  const GraphOptions o = call_options(*g, c);
  if ((c.varied || c.learn_sizes) && !keepable_varied(c, o)) return blocking_varied(*g, c, cache);
  CachedCall& cached = c.varied ? cache.varied : cache.uniform;
  DerivedTypes derived;
  std::vector<std::uintptr_t> key = reuse_key(*g, c, o, &derived);
  // Derived datatypes not vouched for yet build again (which checks them), as in Cart_alltoallw.
  // Checking mode builds every call, so that every rank makes its two agreements alike.
  const bool checking = o.check_collective;
  if (checking || key.empty() || key != cached.key || !cached.exchange || !derived.unvouched.empty()) {
    cached.clear();
    s = prepare(*g, c.op, o, false);
    GraphBuffers b;
    if (s.ok()) s = lay_out(*g, c, &b);
    s = checked(*g, checking, s, uniform_bytes(*g, c, b));
    const std::int64_t bytes = b.block_bytes;
    // A kept exchange with derived datatypes runs on private copies of them (build_request): the
    // program may free its handles after the call and a later call of the same layout reuses it.
    const bool own = !key.empty() && derived.any;
    if (s.ok())
      s = out_of_memory_as_error("building the graph exchange", [&] {
        return (own ? build_request : build)(*g, c, o, GraphExchange::Kind::kBlocking, Lanes::blocking_lane(), std::move(b), bytes,
                                             &cached.exchange);
      });
    s = checked(*g, checking, s);
    if (s.ok()) cached.key = std::move(key);
  }
  if (!s.ok()) {
    cached.clear();
    if (c.varied) forget_sized(cache, c.op);  // as blocking_varied does after an error
    return s;
  }
  s = cached.exchange->run_once();
  if (s.ok()) vouch_for(derived);  // these datatypes passed the checks of a call that built
  if (cached.key.empty() || !s.ok()) cached.clear();  // not keyable, or failed: not run again
  return s;
}

MpiStatus graph_request(MPI_Comm comm, const GraphCall& c, MPI_Info info, GraphExchange::Kind kind,
                        std::unique_ptr<GraphExchange>* out, const MpiStatus& caller_error, bool start) {
  GraphComm* g = nullptr;
  if (kind == GraphExchange::Kind::kPersistent) {
    // The pattern or table a forced or auto algorithm needs is set up once the ranks agreed on
    // it. The first graph collective on the communicator creates its state here, agreed in
    // init's own agreement (agree_init) rather than in one of its own (require_graph).
    if (comm != MPI_COMM_NULL && (g = attached_graph(comm))) return persistent(*g, c, info, caller_error, nullptr, out);
    PendingGraph pending;
    MpiStatus s = begin_graph(comm, &pending);
    if (!s.ok()) return s;
    GraphComm& fresh = *pending.state;  // attached by agree_init on success, else freed with `pending`
    return persistent(fresh, c, info, caller_error, &pending, out);
  }
  MpiStatus s = require_graph(comm, &g);
  if (!s.ok()) return s;
  // The lane is the call's sequence number, taken whatever the arguments: ranks stay in step.
  const int lane = g->shared()->lanes.next_nonblocking();
  s = nonblocking(*g, c, caller_error, lane, out);
  if (c.varied || c.learn_sizes) forget_unless_chained(*g, c.op, s, out->get());
  if (!s.ok()) return s;
  (*out)->take_lane(lane);
  return start ? (*out)->start() : MpiStatus{};
}

}  // namespace cartplan::mpi
