// Exchange: one bound plan realized with MPI derived datatypes and point-to-point messages
// prepared once (seed 000, Listing 5). Created once, started many times. What comes before it
// has types of its own: the call (exchange_spec.h), the agreement (settle, exchange_settle.h),
// tuning (measure, exchange_measure.h) and reuse (the pool and blocking cache, exchange_reuse.h);
// create() runs them in order.
//
// The exchange runs the program engine::lower() makes from the bound plan and the caller's
// blocks (engine/program.h): lower() decides which messages are packed, which go by datatype,
// which rounds are local copies and where temp slots sit; this file only gives every location
// an address (the caller's blocks, one staging arena, scratch blocks), every message its fixed
// (buffer, count, datatype, peer, tag), and every step a memcpy, a datatype copy or a combine.
// Each phase posts its messages with MPI_Isend and MPI_Irecv and completes them before the
// next phase starts. Packed and staged data travel as MPI_BYTE, which assumes a homogeneous
// system. program() returns what was realized, so tests compare it with lower()'s.
//
// Progress: later phases start inside start/test/wait. Any of them advances every pending
// exchange of the process (not only its own), so requests may be completed in any order on
// different ranks without deadlock: a rank waiting for A still sends B's next phase. Where the
// MPI library offers a progress hook (progress_hook.h; Open MPI does), an exchange with phases
// still to post also advances inside every other MPI call (exchange_progress.cc says why that
// covers every case).
//
//   ExchangeSpec spec = ...;                          // address, count, type per block
//   std::unique_ptr<Exchange> x;
//   MpiStatus s = Exchange::create(*nc, spec, nc->options(), Exchange::Kind::kPersistent, &x);
//   for (...) { x->start(); x->wait(); }
#pragma once

#include <mpi.h>

#include <array>
#include <atomic>
#include <climits>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "backends/mpi/exchange_measure.h"
#include "backends/mpi/exchange_reuse.h"
#include "backends/mpi/exchange_settle.h"
#include "backends/mpi/exchange_spec.h"
#include "backends/mpi/neighborhood_comm.h"
#include "backends/mpi/status.h"
#include "engine/program.h"
#include "ir/plan.h"

namespace cartplan::mpi {

// The ops that run through the reduction-aware executor (exchange_reduce.cc): allreduce,
// reduce_scatter and the rooted ops.
bool extended_op(ir::Op op);
// A datatype for `count` elements of `type` when count does not fit in an int (exchange.cc).
MpiStatus large_count_type(MPI_Count count, MPI_Datatype type, MPI_Datatype* out);
// Whether `type`'s elements are adjacent and start at its address (its data is one run of
// bytes: what a memcpy, or Open MPI's single copy above the eager limit, can move).
bool contiguous_type(MPI_Datatype type);
// Whether a block of `type` at address NULL may hold data: MPI_BOTTOM (NULL in Open MPI) with a
// datatype whose true lower bound is an absolute address (MPI_Get_address), as MPI allows in
// every collective. A type whose data starts at its own address (true lower bound 0) at NULL is
// a bad buffer, as Open MPI judges it (MPI_ERR_BUFFER).
bool absolute_type(MPI_Datatype type);
// inout = in (op) inout over n elements, without MPI_Reduce_local's argument checks, for the
// commonest predefined (op, type) pairs; null for anything else (exchange_reduce.cc).
using FastCombine = void (*)(const void* in, void* inout, std::size_t n);
FastCombine fast_combine(MPI_Op op, MPI_Datatype type);

// After MPI itself failed, leaves no request behind: a pending receive is cancelled (and
// completed), a pending send released to complete on its own (exchange.cc).
void abandon_request(MPI_Request* request, bool recv);

// Whether MPI was initialised with MPI_THREAD_MULTIPLE (asked once, after MPI_Init; every
// caller runs after it). Inline: every hold of a registry or pool asks it.
bool query_thread_multiple();  // asks MPI and remembers (exchange_progress.cc)
// Hidden: each library that holds the MPI backend reads its own copy directly (no GOT load).
inline std::atomic<int> thread_multiple_state __attribute__((visibility("hidden"))){-1};  // -1 not asked yet, else 0 / 1
inline bool thread_multiple() {
  const int m = thread_multiple_state.load(std::memory_order_relaxed);
  return m < 0 ? query_thread_multiple() : m == 1;
}

// Guards a communicator's pool and lane holders under MPI_THREAD_MULTIPLE: requests are
// recycled by whichever thread completes them (the drop-in: inside Open MPI's progress engine).
// The mutex form guards a graph communicator's lane holders (GraphShared::mu).
class PoolLock {
 public:
  explicit PoolLock(CommShared& shared) : PoolLock(shared.mu) {}
  explicit PoolLock(std::mutex& mu) : lock_(mu, std::defer_lock) {
    if (thread_multiple()) lock_.lock();
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

// What a request, Cartesian or graph, of `kind` gives back as it is destroyed (its communication
// done): a persistent lane to its communicator's lanes, a non-blocking lane's holder slot if it
// still holds it; a blocking request holds nothing. `Shared`: CommShared or GraphShared; `Kind`:
// ExchangeKind or GraphExchange::Kind.
template <class Shared, class Request, class Kind>
void give_back_lane(Shared* shared, const Request* request, Kind kind, int lane) {
  if (kind == Kind::kPersistent) shared->lanes.release(lane);
  if (kind == Kind::kNonblocking) {
    PoolLock lock(shared->mu);
    if (shared->holder(lane) == request) shared->holder(lane) = nullptr;
  }
}

// The communicator whose error handler reports a request's errors: the user's while it exists,
// else MPI_COMM_SELF. `Shared`: CommShared or GraphShared.
template <class Shared>
MPI_Comm request_error_comm(const Shared* shared) {
  return shared && shared->user != MPI_COMM_NULL ? shared->user : MPI_COMM_SELF;
}

class Exchange {
 public:
  using Kind = ExchangeKind;
  // Whether to build the exchange for the plan every rank agreed on, with the agreed block
  // sizes (one, or one per block): see create().
  using Accept = std::function<bool(const ir::Plan& plan, const std::vector<std::int64_t>& block_bytes)>;

  // kPersistent is collective (MPI-4 init): one agreement on errors, block sizes and Info
  // options, and on a free lane (see lanes.h). kNonblocking is local in the default mode (each
  // rank checks its own arguments; size mismatches are found from what arrives) and agrees
  // like init in checking mode (Options::check_collective).
  // With `accept`, a plan it rejects leaves *out empty with an ok status (after the agreement
  // of a persistent init, so every rank declines alike: the drop-in then passes the call on).
  static MpiStatus create(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options, Kind kind,
                          std::unique_ptr<Exchange>* out, const Accept& accept = {});
  // A non-blocking call identified by `call` (its raw arguments, see CallKey): the exchange of
  // an earlier completed call with the same key on this communicator comes back from the pool
  // (recycle) without its arguments being looked at again (they were checked when it was
  // built; only calls whose datatypes are all predefined are found this way); otherwise `make`
  // gives the spec and create() runs, which may take a pooled exchange by reuse_key (derived
  // datatypes by layout). Either way it takes the next lane.
  static MpiStatus create_nonblocking(NeighborhoodComm& nc, const CallKey& call, const std::function<ExchangeSpec()>& make,
                                      std::unique_ptr<Exchange>* out);
  // A blocking call. Local in the default mode; reuses the exchange of the previous blocking
  // call on this communicator when buffers, counts and datatypes are unchanged (predefined
  // ones by handle, derived ones by layout once vouched for: exchange_reuse.h,
  // datatype_layout.h); then no datatype or message is built. `make` builds the spec only
  // when needed; `key`, if given, identifies a uniform call with predefined datatypes without it.
  static MpiStatus run_blocking(NeighborhoodComm& nc, const std::function<ExchangeSpec()>& make, const CallKey* key);
  // The fast path of run_blocking (the drop-in's repeated blocking calls): when `call` names the
  // same buffers, counts and predefined datatypes as the call the cached blocking exchange was
  // built for (never in checking mode, which agrees on every call), runs that exchange and
  // returns its MPI code (MPI_SUCCESS, or the error's code). kNotARepeat: not such a repeat,
  // nothing done (run_blocking then builds or reuses). Only the code: the caller raises it.
  // Not an MPI code: MPI's are >= 0, and a raw negative code (Open MPI's OMPI_ERROR is -1) must
  // not be read as "not a repeat", which would run the collective a second time.
  static constexpr int kNotARepeat = INT_MIN;
  static int rerun_blocking(NeighborhoodComm& nc, const CallKey& call);
  // A schedule given message by message instead of lowered from an ir::Plan (the halo API,
  // backends/mpi/halo.h): phases of point-to-point messages with fixed arguments and no local
  // steps. `plan_tag` is the message's tag in its plan (below lanes.max_rounds()); the message
  // carries lanes.tag(lane, plan_tag). The exchange takes `owned_types` (freed with it, also
  // on error) and `memory` (scratch the messages point into; its blocks never move).
  struct ScheduledMessage {
    bool recv = false;
    const void* buf = nullptr;
    int count = 0;
    MPI_Datatype type = MPI_BYTE;
    int peer = 0, plan_tag = 0;
  };
  struct Schedule {
    std::vector<std::vector<ScheduledMessage>> phases;
    std::vector<MPI_Datatype> owned_types;
    std::vector<std::vector<unsigned char>> memory;
  };
  // kBlocking runs on the blocking lane (one call at a time on `nc`, complete before the next);
  // kPersistent on `lane`, which the caller chose with an agreement (lanes.h) and which this
  // exchange holds until it is destroyed; kNonblocking on `lane`, the call's
  // Lanes::next_nonblocking (taken by the caller, also for a call that fails, so that the
  // sequence stays the same on every rank), after completing the lane's previous holder here.
  // Local: builds nothing collective.
  // A persistent init may build before its agreement picks the lane: kPersistent with
  // kLaneLater builds a request that holds no lane and must not start until hold_lane.
  static constexpr int kLaneLater = -1;
  static MpiStatus from_schedule(NeighborhoodComm& nc, Schedule schedule, Kind kind, int lane, std::unique_ptr<Exchange>* out);
  // Completes on this rank the exchange that holds non-blocking `lane` of `nc`, if one is
  // pending. A caller that takes the lane before an agreement (checking mode) calls it first
  // on every rank, so that no rank waits there for a peer already in the agreement.
  static void clear_lane(NeighborhoodComm& nc, int lane);
  // The halo API's non-blocking exchanges (built by from_schedule, which runs no ir::Plan): one
  // given a key is kept in its communicator's pool by recycle once complete, and taken back by
  // take_pooled for a later call with the same key, moved to that call's `lane` (null if none).
  void set_pool_key(std::vector<std::uintptr_t> key) { pool_key_ = std::move(key); }
  static std::unique_ptr<Exchange> take_pooled(NeighborhoodComm& nc, const std::vector<std::uintptr_t>& key, int lane);
  // The agreed lane of a persistent exchange built with kLaneLater: its tags, and the lane held
  // until it is destroyed. Allocates nothing (cannot fail after an agreement).
  void hold_lane(int lane) noexcept;
  // False for an exchange made by from_schedule: it runs no ir::Plan (plan() and program() are
  // not to be asked).
  bool has_plan() const { return entry_ != nullptr; }
  ~Exchange();
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  MpiStatus start();           // MPI_ERR_REQUEST if already active
  MpiStatus run_once();        // start and wait (a blocking call)
  MpiStatus test(bool* done);  // advances every pending exchange once; done when this one is
  MpiStatus wait();            // completes the exchange (no-op when inactive)
  bool active() const { return active_; }
  bool pending() const { return pending_; }  // communication still under way
  const ir::Plan& plan() const { return entry_->plan; }
  // The program this exchange runs: engine::lower() of its bound plan for the caller's blocks.
  const engine::Program& program() const { return program_; }
  // The communicator whose error handler reports this request's errors: the user's Cartesian
  // communicator, or MPI_COMM_SELF once that has been freed.
  MPI_Comm error_comm() const;

  // Advances every pending exchange of the process once (Cart_testall uses it), and the other
  // kind of pending work registered below.
  static void progress_all();
  // Another kind of pending work that every cartplan call must advance too: the graph
  // exchanges (graph_progress.cc registers them at load time). How many are pending, and one
  // round of their progress; wait() blocks in MPI alone only when none is pending.
  // (`pending` is read on every blocking call: a counter, not a function to call.)
  struct OtherProgress {
    const std::atomic<std::size_t>* pending = nullptr;
    void (*progress)() = nullptr;
  };
  static void set_other_progress(OtherProgress other);
  // How many Cartesian exchanges of the process are pending.
  static std::size_t pending_count();
  // MPI_Allreduce for the agreements made inside Cart_* calls (persistent init, creation,
  // checking mode): progressing_allreduce (progressing_wait.h), MPI_Iallreduce on every rank
  // whose wait advances every pending exchange while some is pending, because a peer may need
  // this rank's messages of an earlier request before it reaches the same agreement (MPI's
  // progress rule; with cartplan_progress=cartplan or under SMPI nothing else would send
  // them). Returns MPI's code.
  //   CARTPLAN_MPI_CALL(Exchange::agree_allreduce(mine, all, n, MPI_INT64_T, MPI_MAX, comm));
  static int agree_allreduce(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
  // The callback the MPI library's progress engine runs (progress_hook.h) while some pending
  // exchange needs it: progress_all() unless this thread is already inside it, or, under
  // MPI_THREAD_MULTIPLE, another thread is. Returns how many exchanges moved on.
  static int progress_poll();
  // A cheaper test than MPI_Testall for a phase's requests inside progress_poll: false when one
  // of them is surely incomplete, so that the round skips MPI_Testall (which then costs more
  // than everything else in an idle progress round, and runs a nested progress round of its
  // own). Only progress_poll consults it: it already runs inside the MPI library's progress
  // engine, so nothing goes unprogressed; every other step tests with MPI_Testall, which
  // progresses. Set once, before any exchange starts (the drop-in sets one reading Open MPI's
  // requests, backends/interpose/openmpi_request.h); none by default.
  using PhaseProbe = bool (*)(int n, const MPI_Request* requests);
  static void set_phase_probe(PhaseProbe probe);
  // `fn(ctx)` runs each time this exchange's communication finishes (it is no longer pending),
  // on whichever thread progressed it, a cartplan call or the progress engine, after the
  // registry is released. The drop-in completes its MPI requests there. An exchange with a
  // finish callback asks for the progress hook until it finishes.
  using FinishFn = void (*)(void* ctx);
  void on_finish(FinishFn fn, void* ctx);
  // The queue behind those notifications, shared with graph exchanges (graph_exchange.h):
  // defer_finish queues fn(ctx) on this thread; the queue runs once this thread holds neither
  // registry. Both registries' holds count in one thread-local depth (enter_hold/leave_hold:
  // graph_progress.cc's Hold and poll call them), so releasing one while the other is held
  // runs nothing; the release that brings the depth to 0 runs the queue.
  static void defer_finish(FinishFn fn, void* ctx);
  static void run_deferred_finishes();
  static void enter_hold();
  static void leave_hold();
  // Whether this exchange, once started, advances inside any MPI call (the hook, where the
  // MPI library has one) or only inside cartplan's calls (Info cartplan_progress).
  void set_progress_anywhere(bool anywhere) { hook_phases_ = anywhere; }
  // Takes a completed non-blocking exchange back: a later non-blocking call with the same
  // arguments on the same communicator (buffers, counts, and datatypes: predefined by handle,
  // derived by layout once vouched for) reuses it instead of building datatypes and staging
  // again. Anything that cannot be reused is simply destroyed.
  static void recycle(std::unique_ptr<Exchange> x);

 private:
  Exchange() = default;
  // One point-to-point request: enough to check what arrives and to remake it.
  struct Post {
    bool recv = false;
    const void* buf = nullptr;
    int count = 0;
    MPI_Datatype type = MPI_BYTE;
    int peer = 0, tag = 0;
    int phase = 0, round = 0;  // of the plan, for messages
    int plan_tag = 0;          // the round's tag in the plan; tag = lanes.tag(lane, plan_tag)
    // A receive: the bytes it expects (count times the datatype's size), for the arrival check
    // without a call (arrived_whole); SIZE_MAX when unknown.
    std::size_t bytes = SIZE_MAX;
  };
  static void expect_bytes(Post* post);  // sets a receive's bytes (exchange_build.cc)
  struct LocalCopy {
    BlockSpec from, to;
    std::size_t memcpy_bytes;  // > 0: both contiguous, a plain memcpy suffices; 0: datatypes
  };
  // One local step of the program, resolved to addresses.
  struct Action {
    enum class Kind : unsigned char { kMove, kTyped, kCombine };
    Kind kind = Kind::kMove;
    LocalCopy copy{};
    MPI_Aint extent = 0;          // kCombine: of the datatype, to split more than INT_MAX elements
    FastCombine fast = nullptr;   // kCombine: set for predefined (op, type) pairs
  };

  // Realizes the lowered program with addresses and datatypes (exchange_build.cc).
  static MpiStatus build(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options, const Settlement& agreed,
                         int lane, std::unique_ptr<Exchange>* out);
  // build() with, if `own`, private copies of the spec's derived datatypes that the exchange
  // owns (with_own_types): it then never uses the caller's handles, which may be freed.
  static MpiStatus build_owning(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options, const Settlement& agreed,
                                int lane, bool own, std::unique_ptr<Exchange>* out);
  static MpiStatus build_blocking(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options, bool reuse,
                                  bool derived, BlockingCache& cache);
  friend class ExchangeBuilder;
  friend class ExchangePool;  // reads pool_key_, call_ and entry_
  // Measuring mode builds its trials here and marks their sizes agreed (exchange_measure.cc).
  friend MpiStatus measure_candidates(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options,
                                      const MpiStatus& settled, Settlement* agreed);
  static void drive(Exchange* x);
  static MpiStatus confirm(NeighborhoodComm& nc, const MpiStatus& built);
  static MpiStatus create_on_lane(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options, Kind kind,
                                  int nonblocking_lane, std::unique_ptr<Exchange>* out, const Accept& accept);
  // Moves a non-blocking exchange to `lane`, once the lane's previous holder has completed.
  static void attach_lane(Exchange& x, int lane);
  // Runs phases until one is incomplete (or, if `block`, to the end); on the end or on an
  // error the exchange is no longer pending and `error_` holds the outcome.
  // `post_only`: return once a phase's messages are posted, without polling (start()).
  void step(bool block, bool post_only = false);
  // step's parts, shared with run_one_phase. Posts the phase's messages (false: a post failed,
  // the exchange failed).
  bool post_phase(std::size_t first, std::size_t n);
  // After the phase's completion call returned `rc` (`complete`: MPI_Testall's flag): whether
  // the phase moves on (completed, or recovering_ set to finish it request by request).
  bool completed(std::size_t first, std::size_t n, int rc, int complete, bool block);
  bool completion_failed(std::size_t first, std::size_t n, int rc, bool block);
  // Finishes a phase whose completion call failed, request by request (false: not yet, or failed).
  bool recover(std::size_t first, std::size_t n, bool block);
  void post_failed(std::size_t first, std::size_t posted, int rc, bool recv);
  void note_arrival(std::size_t request, const MPI_Status& status);
  // Whether the whole schedule is one phase of messages without local steps (the direct plans),
  // which run_alone runs through run_one_phase; set once built (find_one_phase).
  void find_one_phase();
  void run_one_phase();
  void clear_error();
  void fail(std::size_t first, std::size_t n, MpiStatus s);
  MpiStatus check_arrival(std::size_t request, const MPI_Status& status, bool error_valid);
  inline bool arrived_whole(std::size_t request, const MPI_Status& status) const;
  void note(MpiStatus s);  // keeps the first error of this start
  MpiStatus run_typed(const LocalCopy& c);
  MpiStatus run_actions(const std::vector<Action>& actions);
  // Alone and single-threaded, runs the whole schedule at once (run_once's fast path); false
  // when another exchange is pending or MPI_THREAD_MULTIPLE (exchange_progress.cc).
  bool run_alone();
  void set_pending(bool pending);  // with the registry held (exchange_progress.cc)
  // With the registry held: active, no error yet, from phase 0, pending (start and run_once).
  void begin_run();
  void request_hook();
  static int step_all();
  // Inside progress_poll, with a probe set: whether the probe says a request of the phase is
  // still incomplete (step then returns without MPI_Testall).
  static bool surely_incomplete(int n, const MPI_Request* requests);

  std::shared_ptr<const BoundPlanEntry> entry_;
  std::shared_ptr<CommShared> shared_;
  Kind kind_ = Kind::kBlocking;
  int lane_ = 0;
  std::vector<std::uintptr_t> pool_key_;  // non-blocking: the arguments it was built for
  std::optional<CallKey> call_;           // non-blocking: the raw arguments (create_nonblocking)
  bool layout_keyed_ = false;             // pool_key_ keys some derived datatype by its layout
  std::vector<MPI_Request> requests_;     // per phase: receives, then sends (in flight, else NULL)
  std::vector<Post> posts_;               // how each request was made (to check and remake it)
  std::vector<std::size_t> phase_begin_;  // into requests_, with a final end
  std::vector<MPI_Status> statuses_;
  std::vector<int> indices_;
  std::vector<char> arrived_;  // while recovering: which requests of the phase completed
  std::vector<MPI_Datatype> owned_types_;
  engine::Program program_;                      // what build() realized (engine/lower.h)
  std::vector<unsigned char> arena_;             // the program's staging arena
  std::vector<std::vector<unsigned char>> scratch_;  // its scratch blocks (reductions, rooted ops)
  std::vector<std::vector<Action>> before_, after_;  // per phase: before posting, after completion
  std::vector<Action> final_;                    // after the last phase
  MPI_Op op_ = MPI_OP_NULL;                      // reductions
  std::vector<unsigned char> pack_buffer_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::size_t phase_ = 0;
  bool phase_started_ = false;
  bool recovering_ = false;  // the phase's completion call failed; finishing it one by one
  bool sizes_agreed_ = false;  // every rank agreed on the block sizes: arrivals need no count check
  bool active_ = false;   // started and not yet completed by wait/test (MPI's notion)
  bool pending_ = false;  // communication under way (registered for progress)
  MpiStatus error_;       // the outcome of the last start, reported by wait/test
  int messaging_phases_ = 0;  // phases with messages: more than one needs progress between them
  bool one_phase_ = false;    // one phase of messages and nothing else (find_one_phase)
  bool hook_phases_ = true;   // advance later phases inside any MPI call (the hook)
  bool hooked_ = false;       // counted in the hook's demand
  FinishFn finish_fn_ = nullptr;
  void* finish_ctx_ = nullptr;
};

}  // namespace cartplan::mpi
