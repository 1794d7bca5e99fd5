// Graph v calls without a size pass per call (docs/graphs-mpi.md, "Blocking v calls without a size
// pass per call", "Non-blocking ..."): an allgatherv/alltoallv(/w, and the uniform calls that run
// as v forms) with a combining schedule remembers, per communicator, op and schedule, the previous
// call's block sizes, the temp slot sizes it learned and the messages laid out for them (one
// layout set per buffer set, for the last 4 buffer sets used, so double buffering builds each
// set's layouts once). The next call sends each message of the schedule in one of two modes:
//   - *as before*: every part has the size it had in the previous call (the origin's own send
//     blocks unchanged, temp blocks that arrived as before in this call) and the message is not
//     empty: the data alone, in the receiver's cached layout, on the data tag
//     lanes.tag(lane, phase) (lane 0 for blocking calls, the request's lane for non-blocking);
//   - *with sizes*: otherwise (and for everything on the first call): a 0-byte marker on the
//     data tag, and on the tag lanes.tag(lane, kWithSizesRound + phase) one packed message, the
//     parts' 64-bit sizes followed by their bytes.
// The receiver posts its cached layout on the data tag: data means as before; 0 bytes means a
// marker, and it then takes the with-sizes message (a probe, a receive; a large-count byte type
// above INT_MAX bytes), resizes its temp slots, checks recv blocks against its own counts
// (MPI_ERR_TRUNCATE naming the block; the schedule still runs so nobody waits) and unpacks. A
// block that did not arrive whole is forwarded as lost (poisoned), never as data. A change so travels with the data, along
// the schedule's edges, only as far as the changed blocks go; no agreement, no extra message
// in the steady state. Why it is safe is argued where it happens (graph_sized_calls.cc).
//
// "The previous call" must be the same call on every rank. For blocking calls (lane 0) it is
// the previous blocking call of this op: MPI forbids a blocking collective to match a
// non-blocking one, and it completed before the next one started. Non-blocking calls keep their
// own SizedCalls per op and schedule (graph_sized_chain.h), which runs their calls one after
// another on each rank, in call order, each on its request's lane, stepped without blocking
// (begin/advance/end) by the request's progress.
//
//   SizedCalls calls(shared, schedule);       // per communicator, op and schedule
//   MpiStatus s = calls.run(buffers);         // each blocking call
//   calls.begin(buffers, lane); while (!calls.advance(false)) {...} s = calls.end();  // a request's
#pragma once

#include <mpi.h>

#include <cstdint>
#include <list>
#include <memory>
#include <vector>

#include "backends/mpi/graph_comm.h"
#include "backends/mpi/graph_exchange.h"
#include "backends/mpi/graph_layout.h"
#include "backends/mpi/graph_sizes.h"
#include "backends/mpi/status.h"
#include "ir/graph/plan.h"

namespace cartplan::mpi {

// The first round of the with-sizes messages' tags, on the call's lane. Tags are distinct from
// every other message on the internal communicator: tag = round x lanes + lane, and no other
// request uses the call's lane meanwhile (lane 0: blocking calls only; a non-blocking lane: this
// request only, lanes.h); on it the data rounds are below kSizeRound (schedules have at most 65
// phases: asserted, and argued, in the constructor), a size pass with reuse off uses
// kSizeRound + phase < kWithSizesRound, and this range is above both.
inline constexpr int kWithSizesRound = kSizeRound + 70;

// Counters of this process (a test and benchmark hook): blocking v calls run here, messages
// sent as before and with sizes, and message layouts built.
// `requests`: the calls among them that non-blocking requests ran (graph_sized_chain.h).
struct SizedCallStats {
  std::uint64_t calls = 0, as_before = 0, with_sizes = 0, layouts = 0, requests = 0;
};
SizedCallStats sized_call_stats();
// On by default; off: blocking and non-blocking v calls run the size pass on every call (a
// benchmark's baseline). Every rank must switch at the same point, between calls, with no
// non-blocking v call in flight.
void set_size_reuse(bool on);
bool size_reuse();
// A test hook: messages with sizes above `bytes` (at most, and by default, INT_MAX) go with a
// large-count byte type, as those above INT_MAX must; every rank sets the same value between calls.
void set_large_message_bytes(std::size_t bytes);
// A test hook: on, this process's send blocks cannot be packed into messages with sizes (as a
// non-contiguous block too large for MPI_Pack): they go as lost blocks and the call fails here.
void set_unsendable_send_blocks(bool on);

class SizedCalls {
 public:
  SizedCalls(std::shared_ptr<GraphShared> shared, ir::graph::RankSchedule schedule);
  ~SizedCalls();
  SizedCalls(const SizedCalls&) = delete;
  SizedCalls& operator=(const SizedCalls&) = delete;

  // One blocking call on `b` (every rank of the graph calls it at the same point): the whole
  // schedule runs; MPI_ERR_TRUNCATE if a block's size differs between the ends of an edge.
  MpiStatus run(const GraphBuffers& b);
  // The same call in steps, on `lane` (a non-blocking request's: every rank runs its calls of
  // this SizedCalls in the same order, one at a time). `b` lives until end(). advance(false)
  // never blocks and never advances other requests (it runs inside their progress); true when
  // the call's communication is done. end() gives its outcome.
  void begin(const GraphBuffers& b, int lane);
  bool advance(bool block);
  MpiStatus end();
  // Forgets the previous call (after a call that did not run here on this rank): the next call
  // sends everything with sizes, which every receiver accepts.
  void forget();

 private:
  struct Wire;  // one phase's requests and with-sizes buffers
  struct Layouts;  // the messages laid out for one buffer set
  MpiStatus lay_out(const GraphBuffers& b);
  bool data(std::size_t f, Wire* w, bool block);
  void arrived(std::size_t f, std::size_t m, const MPI_Status& st, bool failed, Wire* w);
  bool sized(std::size_t f, Wire* w, bool block);
  bool sends_done(Wire* w, bool block);
  void stop(MpiStatus s);
  MpiStatus layout(const ir::graph::Message& m, std::vector<MPI_Datatype>* owned, MessageLayout* out, std::int64_t* bytes);
  void place(const ir::graph::Loc& loc, BlockSpec* out, std::int64_t* bytes) const;
  std::int64_t size_now(const ir::graph::Loc& loc) const;
  bool as_before(const ir::graph::Message& m) const;
  MpiStatus post(std::size_t f, Wire* w);
  void pack(const ir::graph::Message& m, std::vector<unsigned char>* out);
  void unpack(std::size_t f, const ir::graph::Message& m, const std::vector<unsigned char>& in);
  void arrived_as_before(const ir::graph::Message& m);
  void poison(const ir::graph::Message& m);
  void resize_slot(std::size_t t, std::int64_t bytes);
  void run_copies(std::size_t f);
  void note(MpiStatus s);
  void free_layouts();
  MpiStatus build(std::vector<std::uintptr_t> key);

  std::shared_ptr<GraphShared> shared_;
  ir::graph::RankSchedule schedule_;
  bool known_ = false;  // a previous call ran here
  std::vector<std::int64_t> send_, recv_, temps_;  // its sizes
  // The temp slots (size + 1 bytes, never empty) keep their addresses and the previous call's
  // sizes: every layout set of the pool is for them. False: reallocated at the next call, and
  // the pool emptied.
  bool slots_kept_ = false;
  std::vector<std::vector<unsigned char>> slots_;
  std::list<Layouts> pool_;  // most recently used first, at most kLayoutSets
  const Layouts* lay_ = nullptr;  // this call's (nullptr: the first call, everything with sizes)
  // This call's state.
  const GraphBuffers* b_ = nullptr;
  int lane_ = 0;
  std::size_t phase_ = 0;
  std::unique_ptr<Wire> wire_;
  MpiStatus stop_;  // an MPI error: the schedule stops after the phase's sends
  std::vector<std::int64_t> now_;  // temp sizes known in this call (kUnknown: not yet; kPoisoned)
  std::vector<char> resized_;      // temp slots resized in this call
  MpiStatus error_;
  std::vector<ir::graph::Loc> unsent_;  // blocks this rank could not send in this call
};

}  // namespace cartplan::mpi
