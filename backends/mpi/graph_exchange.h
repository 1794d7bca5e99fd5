// GraphExchange: one rank's schedule of a graph collective (ir/graph/plan.h's RankSchedule,
// linear or combining) realized over MPI for the caller's buffers, created once and run many
// times. Every message of the schedule becomes one MPI_Isend or MPI_Irecv with arguments fixed
// at creation: a message of one part uses the block where it is (the caller's count and
// datatype, or a temp slot as bytes); a message of several parts is one struct datatype over
// MPI_BOTTOM with the parts' absolute addresses, so nothing is packed or copied on the way.
// Temp slots hold a block's bytes (MPI_BYTE), which assumes a homogeneous system, as the
// Cartesian executor's staging does. A phase's receives and sends are posted together and
// completed before the next phase starts; then its copies run (self edges, parallel edges).
//
// Tags: tag = lanes.tag(lane, phase). The phase in the tag keeps a fast peer's message of phase
// f+1 from matching a receive of phase f between the same two ranks, and the schedule's rule
// "the k-th message a sends b in phase f is the k-th b receives from a in phase f" is then
// MPI's non-overtaking order within one tag. The lane separates requests in flight together
// (lanes.h: blocking lane 0, persistent lanes agreed at init, non-blocking lanes by sequence).
//
// Progress: as for Cartesian exchanges (exchange.h), start/test/wait advance every pending
// graph exchange of the process and every pending Cartesian one; with Open MPI a callback in
// its progress engine advances multi-phase graph exchanges inside any MPI call
// (graph_progress.cc).
//
//   std::unique_ptr<GraphExchange> x;
//   MpiStatus s = GraphExchange::create(g->shared(), algorithm, schedule, buffers,
//                                       GraphExchange::Kind::kPersistent, lane, true, &x);
//   for (...) { x->start(); x->wait(); }
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "backends/mpi/exchange.h"
#include "backends/mpi/graph_comm.h"
#include "backends/mpi/graph_sizes.h"
#include "backends/mpi/status.h"
#include "ir/graph/plan.h"

namespace cartplan::mpi {

// The caller's blocks of one graph collective and their sizes in bytes.
struct GraphBuffers {
  std::vector<BlockSpec> send;  // allgather: one; alltoall: one per out-edge (MPI's order)
  std::vector<BlockSpec> recv;  // one per in-edge (MPI's order)
  std::vector<std::int64_t> send_bytes, recv_bytes;  // per block
  // The largest block of this rank (the size auto looks up); for the non-v forms every block's.
  std::int64_t block_bytes = 0;
  // Per temp slot of the schedule (graph_sizes.h learns them for the v forms); empty: every
  // temp slot holds block_bytes.
  std::vector<std::int64_t> temp_bytes;
  bool varied = false;  // a v form: blocks may differ in size
};

class GraphExchange {
 public:
  enum class Kind { kBlocking, kNonblocking, kPersistent };
  // MPI_ERR_TAG if the schedule has more phases than the tag space allows; MPI errors of
  // building datatypes. `lane`: Lanes::blocking_lane(), a persistent lane the ranks agreed on
  // (this exchange holds it until destroyed), or a non-blocking lane (see take_lane).
  static MpiStatus create(const std::shared_ptr<GraphShared>& shared, ir::graph::GraphAlgorithm algorithm,
                          ir::graph::RankSchedule schedule, const GraphBuffers& buffers, Kind kind, int lane,
                          bool progress_anywhere, std::unique_ptr<GraphExchange>* out);
  // A non-blocking v form with a combining schedule: the exchange first runs the size pass
  // (graph_sizes.h) as part of its own progress, then builds its messages, so the call returns
  // without waiting for its peers. `buffers` without temp sizes.
  static MpiStatus create_learning_sizes(const std::shared_ptr<GraphShared>& shared, ir::graph::GraphAlgorithm algorithm,
                                         ir::graph::RankSchedule schedule, const GraphBuffers& buffers, int lane,
                                         bool progress_anywhere, std::unique_ptr<GraphExchange>* out);
  // Communication run by another object for this request: a non-blocking v call that reuses
  // the sizes of its op's previous call (graph_sized_chain.h). step() advances it without
  // blocking and without advancing other requests; true once it is done, its outcome in *result.
  class Delegate {
   public:
    virtual ~Delegate() = default;
    virtual bool step(MpiStatus* result) = 0;
  };
  // A non-blocking request whose communication `delegate` runs on `lane`.
  static MpiStatus create_delegated(const std::shared_ptr<GraphShared>& shared, ir::graph::GraphAlgorithm algorithm, int lane,
                                    bool progress_anywhere, std::unique_ptr<Delegate> delegate, std::unique_ptr<GraphExchange>* out);
  ~GraphExchange();
  GraphExchange(const GraphExchange&) = delete;
  GraphExchange& operator=(const GraphExchange&) = delete;

  // A non-blocking exchange takes its lane once the lane's previous holder on this rank has
  // finished its communication (lanes.h says why that suffices).
  void take_lane(int lane);

  // Reuse of non-blocking exchanges (graph_pool.cc): one given a key (graph_collective.cc: the
  // call's op, buffers, counts, datatypes and options) goes back to its communicator's pool once
  // complete (recycle), and a later call with the same key takes it (take_pooled) instead of
  // building datatypes and posts again; the caller then moves it to its own lane (take_lane).
  //   std::unique_ptr<GraphExchange> x = GraphExchange::take_pooled(*g.shared(), key);  // null: build
  //   ...; GraphExchange::recycle(std::move(x));   // at completion (Cart_wait, Cart_test)
  static constexpr std::size_t kPoolCapacity = 8;
  void set_pool_key(std::vector<std::uintptr_t> key) { pool_key_ = std::move(key); }
  static std::unique_ptr<GraphExchange> take_pooled(GraphShared& shared, const std::vector<std::uintptr_t>& key);
  // Keeps a completed, successful exchange that has a key (the oldest is dropped beyond
  // kPoolCapacity); destroys any other, an active one after completing it.
  static void recycle(std::unique_ptr<GraphExchange> x);

  // An error found while building (a v form's size pass) that every start reports, after
  // running the whole schedule so that no peer waits.
  void set_build_error(MpiStatus s) { build_error_ = std::move(s); }
  const MpiStatus& build_error() const { return build_error_; }

  // Datatypes this exchange frees when it is destroyed (private copies of the caller's
  // derived types that a request runs on: graph_collective.cc).
  void adopt_types(const std::vector<MPI_Datatype>& types) { owned_types_.insert(owned_types_.end(), types.begin(), types.end()); }

  MpiStatus start();           // MPI_ERR_REQUEST if already active
  MpiStatus run_once();        // start and wait (a blocking call)
  MpiStatus test(bool* done);  // advances every pending exchange once; done when this one is
  MpiStatus wait();            // completes the exchange (no-op when inactive)
  bool active() const { return active_; }
  bool pending() const { return pending_; }
  bool delegated() const { return delegate_ != nullptr; }
  ir::graph::GraphAlgorithm algorithm() const { return algorithm_; }
  // The dimensions of the virtual grid a grid exchange routes through (0: not grid); set by its
  // maker (graph_collective.cc), reported by Cart_graph_request_grid_dims.
  int grid_ndims() const { return grid_ndims_; }
  void set_grid_ndims(int n) { grid_ndims_ = n; }
  const ir::graph::RankSchedule& schedule() const { return schedule_; }
  // The user's communicator while it exists, else MPI_COMM_SELF (for error handlers).
  MPI_Comm error_comm() const;

  // `fn(ctx)` runs each time this exchange's communication finishes, on whichever thread
  // progressed it, after the registries are released (as Exchange::on_finish; the drop-in
  // completes its MPI requests there). An exchange with a finish callback asks for the
  // progress hook until it finishes, even with a single phase.
  void on_finish(Exchange::FinishFn fn, void* ctx) {
    finish_fn_ = fn;
    finish_ctx_ = ctx;
  }

  // Advances every pending exchange of the process once, Cartesian and graph.
  static void progress_all();
  // One round over the pending graph exchanges (the registry held by the caller).
  static void step_all_pending();
  // The MPI library's progress callback (progress_hook.h): progress_all() unless this thread is
  // already inside it or, under MPI_THREAD_MULTIPLE, another thread is.
  static int progress_poll();

 private:
  GraphExchange() = default;
  static MpiStatus make(const std::shared_ptr<GraphShared>& shared, ir::graph::GraphAlgorithm algorithm,
                        ir::graph::RankSchedule schedule, Kind kind, int lane, bool progress_anywhere,
                        std::unique_ptr<GraphExchange>* out);
  struct Post {
    bool recv = false;
    void* buf = nullptr;
    int count = 0;
    MPI_Datatype type = MPI_BYTE;
    int peer = 0, tag = 0, phase = 0;
    std::int64_t bytes = 0;  // what a receive must bring
  };
  struct LocalCopy {
    BlockSpec from, to;
    std::size_t memcpy_bytes = 0;  // > 0: both contiguous, a memcpy suffices; 0: MPI_Pack/MPI_Unpack
  };
  MpiStatus build(const GraphBuffers& buffers);
  MpiStatus place(const ir::graph::Loc& loc, const GraphBuffers& buffers, BlockSpec* out, std::int64_t* bytes);
  MpiStatus message(const ir::graph::Message& m, bool recv, int phase, const GraphBuffers& buffers, Post* out);
  MpiStatus run_copies(std::size_t phase);
  // Runs phases until one is incomplete (or, with `block`, to the end); `post_only` returns
  // once a phase is posted (start).
  void step(bool block, bool post_only = false);
  // Advances the size pass; once done, builds the messages. True when the data phases can run.
  bool learn_sizes(bool block, bool post_only);
  int wait_whole_phase(std::size_t first, std::size_t n);
  void fail(std::size_t first, std::size_t n, MpiStatus s);
  void note(MpiStatus s);
  void set_pending(bool pending);  // with the registry held (graph_progress.cc)
  void request_hook();
  static void drive(GraphExchange* x);
  static int step_all();

  std::shared_ptr<GraphShared> shared_;
  ir::graph::GraphAlgorithm algorithm_ = ir::graph::GraphAlgorithm::kLinear;
  int grid_ndims_ = 0;
  ir::graph::RankSchedule schedule_;
  Kind kind_ = Kind::kBlocking;
  int lane_ = 0;
  std::vector<std::vector<unsigned char>> temps_;
  std::vector<Post> posts_;
  std::vector<MPI_Request> requests_;
  std::vector<std::size_t> phase_begin_;  // into posts_, with a final end
  std::vector<std::vector<LocalCopy>> copies_;  // per phase
  std::vector<MPI_Datatype> owned_types_;
  std::vector<unsigned char> pack_buffer_;
  std::vector<MPI_Status> statuses_;
  std::vector<int> indices_;
  std::size_t phase_ = 0;
  std::size_t left_ = 0;  // requests of the current phase not yet completed
  bool phase_started_ = false;
  bool active_ = false, pending_ = false;
  MpiStatus error_;
  MpiStatus build_error_;
  int messaging_phases_ = 0;
  bool hook_phases_ = true, hooked_ = false;
  Exchange::FinishFn finish_fn_ = nullptr;
  void* finish_ctx_ = nullptr;
  std::unique_ptr<SizePass> sizes_;       // create_learning_sizes: the pass still to run
  std::unique_ptr<GraphBuffers> unbuilt_;  // and the buffers to build with afterwards
  std::unique_ptr<Delegate> delegate_;     // create_delegated
  std::vector<std::uintptr_t> pool_key_;   // non-empty: recycle keeps it (set_pool_key)
};

}  // namespace cartplan::mpi
