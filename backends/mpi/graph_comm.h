// GraphComm: the state cartplan attaches to an MPI distributed-graph communicator
// (MPI_Dist_graph_create_adjacent) on the first graph collective called on it: this rank's
// edge lists as MPI_Dist_graph_neighbors returns them, the options from the communicator's
// Info, one private duplicate (the collectives' messages on their lanes' tags, the set-up's on
// graph_setup.h's setup_tag, its agreements as collectives), the combining patterns of seed
// 003's construction and the agreed table behind algorithm auto.
//
// Creation is collective (it happens inside the first graph collective, which every rank calls):
// one duplicate (progressing_dup: MPI_Comm_idup, whose wait advances the process's pending
// requests) and an agreement on the outcome, its own MPI_Allreduce (require_graph) or,
// when the first graph collective is a persistent init, part of init's (begin_graph,
// finish_graph). A pattern is constructed the first time a request needs it (neighbours,
// friends and partners only, graph_setup.h; a grid's with every rank of the communicator, on
// its virtual grid grid_dims(p, d) for d = 2 to kMaxGridD, 1-dimensional when p is prime); auto's table
// the first time auto runs per (theta, resolved candidate list) (Info cartplan_auto_candidates;
// the default is the grids in a persistent init, with seed 003's pair beside them where p has no
// usable grid, seed 003's pair elsewhere: engine/graph/auto_candidates.h): the patterns, then every rank prices
// its own schedule of each listed candidate at block sizes 0, 1, 2,
// 4, ..., 2^24 bytes and one MPI_Allreduce (MAX) gives every rank the same max-over-ranks
// prices, so every rank picks alike for any size without talking again (a rank's failure is in
// that reduction: agree_prices).
//
//   GraphComm* g = nullptr;
//   MpiStatus s = require_graph(distgraphcomm, &g);      // finds or creates
//   engine::graph::TableCandidate c;                   // algorithm, and grid's d
//   s = g->choose(GraphOp::kAllgather, 8, g->options(), &c);
//   ir::graph::RankSchedule sched;
//   s = g->schedule(GraphOp::kAllgather, c, g->options().theta, &sched);
#pragma once

#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "backends/mpi/graph_setup.h"
#include "backends/mpi/lanes.h"
#include "backends/mpi/status.h"
#include "engine/cost_model.h"
#include "engine/graph/auto_candidates.h"
#include "engine/graph/choose.h"
#include "engine/graph/grid.h"
#include "engine/graph/pattern.h"
#include "engine/graph/price_table.h"
#include "ir/graph/plan.h"

namespace cartplan::mpi {

// Info keys of the graph collectives (at MPI_Dist_graph_create_adjacent, read back with
// MPI_Comm_get_info, or per _init call):
//   cartplan_algorithm  auto | linear | pairing | cumulative | grid
//   cartplan_theta      the friendship threshold of pairing and cumulative (>= 1; default 4, seed 003's)
//   cartplan_grid_dims  auto | d, 2 <= d <= kMaxGridD (30): the virtual grid of grid, grid_dims(p, d)
//                       (auto: auto prices the 2-D, 3-D, 4-D and most-D grids (that one where
//                       GraphComm::most_grid_in_auto: a degree above its dimensions), for allgather and
//                       alltoall(v); forced grid runs the 2-D one; 2, 3 or 4 leaves auto only
//                       that grid and linear, 5 or more only the most-D grid grid_dims(p, kMaxGridD))
//   cartplan_progress   any | cartplan (as for Cartesian communicators)
//   cartplan_auto_candidates  auto | all | a comma-separated list of linear, pairing, cumulative,
//                       grid: the combining candidates auto constructs and prices (default auto:
//                       the grids where auto may run them, with pairing and cumulative too where
//                       p has no usable grid, else pairing and cumulative; agreed at creation; its table
//                       is made once per theta and resolved list, engine/graph/auto_candidates.h)
struct GraphOptions {
  engine::graph::GraphAlgoChoice algo = engine::graph::GraphAlgoChoice::kAuto;
  int theta = 4;
  int grid_dims = 0;  // 0: auto
  engine::graph::AutoCandidates auto_candidates = engine::graph::kAutomaticCandidates;
  bool progress_anywhere = true;
  // cartplan_check=collective (default: CARTPLAN_CHECK): blocking and non-blocking calls agree
  // on their outcome before sending (graph_collective.h). Never set by the drop-in.
  bool check_collective = false;
  // Not an Info key: whether auto may pick grid. Set only by persistent init, once it has agreed
  // one block size over the ranks with edges (ranks without edges then relay blocks of that size)
  // or for a v or w form (its size pass tells every relaying rank its sizes); see
  // engine/graph/price_table.h's without_grid. Blocking and non-blocking calls never agree
  // sizes, so their auto never picks grid.
  bool grid_in_auto = false;
};

// Reads the keys above from `info` on top of *options; MPI_ERR_INFO_VALUE names a bad value.
MpiStatus parse_graph_info(MPI_Info info, GraphOptions* options);

// This rank's edge lists of a communicator the graph collectives accept: the attribute path's
// lists (graph_adjacent.h) or MPI's distributed graph (MPI_Dist_graph_neighbors). Local.
// Errors: MPI_ERR_TOPOLOGY (no distributed graph), MPI_ERR_RANK (MPI_PROC_NULL listed).
//   ir::graph::RankEdges e;
//   MpiStatus s = graph_edges(comm, &e);   // e.in: sources, e.out: destinations
MpiStatus graph_edges(MPI_Comm comm, ir::graph::RankEdges* edges);

// What a forced algorithm (options.algo not auto) runs: grid on grid_dims(p, options.grid_dims),
// 2 when that is auto.
engine::graph::TableCandidate forced_candidate(const GraphOptions& options);

class GraphExchange;

// What requests share with their communicator and may outlive it: the private communicator
// their messages travel on (the state's only one, which it owns and frees), the user's handle
// (for error handlers), the lanes, and which request holds each non-blocking lane. The lanes
// take tags up to tag_ub - 1, the set-up's tag is tag_ub (graph_setup.h: why they never meet).
struct GraphShared {
  GraphShared(MPI_Comm user_comm, MPI_Comm exec_comm, std::int64_t tag_ub);
  ~GraphShared();
  GraphShared(const GraphShared&) = delete;
  GraphShared& operator=(const GraphShared&) = delete;
  MPI_Comm user;  // MPI_COMM_NULL once freed
  MPI_Comm exec;
  Lanes lanes;
  std::mutex mu;  // under MPI_THREAD_MULTIPLE: the lane holders
  std::vector<GraphExchange*> holders;  // by lane - (1 + persistent lanes)
  // Completed non-blocking exchanges kept for a later call with the same arguments (graph_pool.cc,
  // GraphExchange::recycle; under `mu`). Released when the communicator is freed (~GraphComm): a
  // pooled exchange holds this object (a cycle) and runs on `exec`.
  std::shared_ptr<void> pool;
  GraphExchange*& holder(int lane) { return holders[static_cast<std::size_t>(lane - 1 - lanes.persistent_lanes())]; }
};

class GraphComm {
 public:
  GraphComm(MPI_Comm user, MPI_Comm exec, int rank, int size, ir::graph::RankEdges edges, GraphOptions options,
            engine::CostModel model);
  ~GraphComm();
  GraphComm(const GraphComm&) = delete;
  GraphComm& operator=(const GraphComm&) = delete;

  int rank() const { return rank_; }
  const ir::graph::RankEdges& edges() const { return edges_; }
  const GraphOptions& options() const { return options_; }
  const std::shared_ptr<GraphShared>& shared() const { return shared_; }
  // The private communicator (the collectives', the set-up's and the agreements').
  MPI_Comm private_comm() const { return shared_->exec; }

  // Words that ride in the price table's MPI_Allreduce (MAX) when a table is agreed: called on
  // every rank after the candidates' constructions and prices (some of which may have failed on
  // this rank), with the table's candidates; every rank must return as many words.
  using Rider = std::function<std::vector<double>(const std::vector<engine::graph::TableCandidate>&)>;

  // The algorithm (and for grid its d) for `op` with blocks of `block_bytes` under `options`
  // (auto: the agreed table; on first use collective, see above). Every rank must call it at the
  // same point with the same options and size. With `rider`: if this call agrees the table, the
  // rider's words are reduced with it and *rider_all gets their MAX over the ranks (left empty
  // when no table was agreed here: forced, linear, or a table agreed before).
  MpiStatus choose(ir::graph::GraphOp op, std::int64_t block_bytes, const GraphOptions& options,
                   engine::graph::TableCandidate* out, const Rider* rider = nullptr, std::vector<double>* rider_all = nullptr);
  // This rank's schedule (pairing, cumulative and grid: collective the first time, see above). A
  // failed construction is final: the same error is returned for that pattern from then on,
  // without constructing again (except a grid constructed in a forced-grid persistent init
  // that failed: drop_grid). A grid construction that fails part-way on some rank reaches
  // only some ranks (graph_setup.h); callers with an agreement after it (persistent init, auto's
  // table, the drop-in's preparation) agree on it there. `spread`, for callers without one
  // (blocking and non-blocking calls): every rank runs the verdict sweep first, once per grid
  // (SetupChannel::agree_grid, collective), unless an agreement already vouched for the grid
  // (grid_agreed); then every rank holds the grid, or the failure, of the largest error class.
  MpiStatus schedule(ir::graph::GraphOp op, const engine::graph::TableCandidate& c, int theta, ir::graph::RankSchedule* out,
                     bool spread = false);
  // What schedule() constructs for candidate c (its pattern or grid; collective the first time,
  // errors as there), without making the schedule: for callers that need the set-up done on
  // every rank alike but take their schedule elsewhere (a chain's, a cached exchange's).
  MpiStatus set_up(const engine::graph::TableCandidate& c, int theta, bool spread = false);
  // An agreement after grid candidate c's construction succeeded on every rank (every rank
  // holds its grid): a later `spread` schedule needs no sweep. Local; no-op for other candidates.
  void grid_agreed(const engine::graph::TableCandidate& c);
  // Whether this communicator keeps an outcome of grid candidate c's construction (its grid, a
  // failure or a bare verdict). The same on every rank at the same call: every rank constructs
  // each grid in the same call and keeps an outcome (only drop_grid removes one, on every rank).
  // Local; allocates nothing.
  bool grid_kept(const engine::graph::TableCandidate& c) const noexcept;
  // A persistent init whose agreement failed on every rank, after c's grid was constructed in
  // that very init (grid_kept false before it) and not vouched for: every rank forgets that
  // construction's outcome (its grid, its failure, or its pending bare verdict), so that the next
  // forced-grid init or call constructs again on every rank. A failure kept there would outlive
  // what caused it: a pending bare verdict on one rank (grid-record-room) failed every later init
  // into its agreement and made the next call's sweep fail for good. Local; erases only.
  void drop_grid(const engine::graph::TableCandidate& c) noexcept;
  // Auto's candidates on this communicator (every rank the same, from its size): linear, pairing,
  // cumulative, the 2-D grid, the 3-D (4-D) grid where grid_dims(p, 3) (grid_dims(p, 4)) has
  // 3 (4) dimensions, and the most-D grid grid_dims(p, kMaxGridD) where it has more than 4; the
  // 4-D grid only `with_grid4`, the most-D one only `with_most` (graph auto: where it may run
  // grid, a persistent init, unless Info cartplan_grid_dims names another grid; for allgather and
  // alltoall(v) alike; the most-D one only where most_grid_in_auto, in the drop-in too).
  std::vector<engine::graph::TableCandidate> auto_candidates(bool with_grid4 = true, bool with_most = true) const;
  // How many dimensions the virtual grid of a grid candidate has here (1 to kMaxGridD; 0 for p = 1).
  int grid_ndims(int grid_d) const;
  // Whether graph auto constructs and prices the most-D grid under Info cartplan_grid_dims
  // `grid_d` (engine/graph/grid.h's auto_prices_most_grid with the agreed degree):
  // under auto (0) only where some rank's in- or out-degree exceeds its number of dimensions.
  bool most_grid_in_auto(int grid_d) const;
  // The largest in- or out-degree over the ranks, agreed at creation (finish_graph; 0 before).
  int max_degree() const { return max_degree_; }
  void set_max_degree(int degree) { max_degree_ = degree; }
  // Collective: every rank prices its own schedules of `candidates` for both ops with `model`
  // (constructing their patterns), and one MPI_Allreduce (MAX) gives every rank the same
  // max-over-ranks table in *out (the rows of other candidates stay 0). A rank whose
  // construction or pricing fails still takes part in every construction and in the reduction,
  // with its error class in it: no rank waits for it, and every rank returns an error of the
  // largest class (its own message on a rank that failed). Graph auto's table and the drop-in's
  // graph verdicts (backends/interpose/graph_verdicts.h) are made by it.
  // With `rider` (choose's), its words travel in the same reduction, their MAX in *rider_all.
  MpiStatus agree_prices(const std::vector<engine::graph::TableCandidate>& candidates, int theta, const engine::CostModel& model,
                         engine::graph::PriceTable* out, const Rider* rider = nullptr, std::vector<double>* rider_all = nullptr);

  // The state of a duplicate of the user's communicator (MPI_Comm_idup: the same edges and
  // weights), made without any communication: this one's edges, options, model, constructed
  // patterns and agreed tables, on `exec`, a private communicator the caller made beforehand
  // (this state owns it from now on: it frees it). Attach it with attach_graph once `user` may
  // be used.
  std::unique_ptr<GraphComm> copy_for(MPI_Comm user, MPI_Comm exec) const;

  // Storage for the last blocking call's exchange (typed by graph_collective.cc), released
  // with the communicator.
  std::shared_ptr<void>& blocking_slot() { return blocking_slot_; }

 private:
  using Table = engine::graph::PriceTable;  // auto's table (price_table.h): max-over-ranks us
  MpiStatus pattern(bool cumulative, int theta, const engine::graph::RankPattern** out);
  MpiStatus grid_pattern(int grid_d, bool spread, const engine::graph::GridPattern** out);
  // The grid construction on dims (every rank at the same call), its outcome kept: in grids_ or
  // failed_grids_, in room made before it starts (record_room); without that room, in a pending
  // bare verdict (MPI_ERR_NO_MEM or this rank's larger class).
  void construct_and_keep(const std::vector<int>& dims);
  struct RecordRoom;  // graph_comm.cc
  static std::optional<RecordRoom> record_room(const std::vector<int>& dims) noexcept;
  // The verdict sweep on dims' kept outcome (constructed already), once: afterwards every rank
  // holds the grid or every rank a failure of one class (mark_agreed). Returns MPI's failure,
  // or, on a rank that kept its outcome in a bare verdict (`pending`: its class) or had no room
  // to record the sweep's, the agreed class (bare_failure), kept in a swept bare verdict.
  MpiStatus spread_grid(const std::vector<int>& dims, int pending);
  struct SweepRoom;  // graph_comm.cc
  static SweepRoom sweep_room(const std::vector<int>& dims, std::size_t kept_message);
  // Auto's agreed table for (theta, candidates_key of the allowed candidates, with_grid4, with_most).
  MpiStatus table(int theta, const engine::graph::AutoCandidates& allowed, bool with_grid4, bool with_most, const Table** out,
                  const Rider* rider, std::vector<double>* rider_all);

  int rank_;
  int size_;
  ir::graph::RankEdges edges_;
  GraphOptions options_;
  engine::CostModel model_;
  int max_degree_ = 0;  // agreed at creation (finish_graph)
  SetupChannel setup_;
  std::shared_ptr<GraphShared> shared_;
  std::map<std::pair<bool, int>, engine::graph::RankPattern> patterns_;  // (cumulative, theta)
  // (cumulative, theta): this rank's failed construction, returned from then on
  std::map<std::pair<bool, int>, MpiStatus> failed_patterns_;
  // By the grid's dims (grid_dims(p, 2), (p, 3), (p, 4) and (p, kMaxGridD) may be one grid): constructed once each (a
  // grid does not depend on theta); this rank's failed constructions, kept.
  std::map<std::vector<int>, engine::graph::GridPattern> grids_;
  std::map<std::vector<int>, MpiStatus> failed_grids_;
  // Per d (index 2 .. kMaxGridD): is dims_of(d)'s outcome known to be every rank's (swept, or
  // vouched for by an agreement)? Fixed room, so marking allocates nothing: a rank that ran out of
  // memory marking would sweep alone at its next call. Every d of the same dims is marked alike.
  std::array<bool, engine::graph::kMaxGridD + 1> agreed_by_d_{};
  bool agreed(const std::vector<int>& dims) const noexcept;
  void mark_agreed(const std::vector<int>& dims) noexcept;
  // The virtual grid of each d (grid_dims(size_, d), index d = 2 .. kMaxGridD), made with this
  // state: a grid call looks its dims up without allocating before its construction starts.
  std::array<std::vector<int>, engine::graph::kMaxGridD + 1> dims_by_d_;
  const std::vector<int>& dims_of(int grid_d) const;
  // A grid's outcome on a rank that ran out of memory making the room to record it in the maps
  // above, written without allocating and read before anything else (grid_pattern). Pending
  // (not swept): the construction ran, this rank failed with `code` (MPI_ERR_NO_MEM or larger)
  // and the others hold what they hold; its next `spread` call sweeps with them (without room),
  // a call with an agreement after returns `code` into that agreement (a forced-grid persistent
  // init that constructed this grid then frees the slot, as the others drop their outcome:
  // drop_grid). Swept: `code` is the
  // class every rank agreed on (the others keep it in failed_grids_); returned from then on,
  // without a sweep of its own. A communicator has at most one grid per d of 2 .. kMaxGridD
  // (Info cartplan_grid_dims, auto's 2, 3, 4 and kMaxGridD), so kMaxGridD - 1 slots hold every
  // grid it can construct (kGridDs); code 0: free.
  struct BareVerdict {
    int ndims = 0;
    std::array<int, engine::graph::kMaxGridD> dims{};
    int code = 0;
    bool swept = false;
  };
  static constexpr int kGridDs = engine::graph::kMaxGridD - 1;  // d = 2 .. kMaxGridD
  std::array<BareVerdict, kGridDs> bare_verdicts_{};
  const BareVerdict* bare_verdict(const std::vector<int>& dims) const;  // nullptr if none
  // Writes dims' slot (a free one, or its pending one, now swept); allocates nothing. False
  // only if no slot is free, which kGridDs rules out (the caller returns MPI_ERR_INTERN then).
  bool keep_bare_verdict(const std::vector<int>& dims, int code, bool swept) noexcept;
  // (theta, table_key: candidates_key with kTableWithGrid4 (kTableWithMost) where the 4-D (most-D) grid row is in)
  std::map<std::pair<int, int>, Table> tables_;
  // The same key: an agreed failure of table(), returned from then on
  std::map<std::pair<int, int>, MpiStatus> failed_tables_;
  std::shared_ptr<void> blocking_slot_;
};

// The graph state of `comm`, created on first use (collective then): MPI_ERR_COMM for
// MPI_COMM_NULL, MPI_ERR_TOPOLOGY when comm is not a distributed-graph communicator,
// MPI_ERR_RANK when its lists hold MPI_PROC_NULL, MPI_ERR_INFO_VALUE for a bad Info value at
// its creation. Creation ends in one MPI_Allreduce: it succeeds on every rank or none (the
// largest error class on every rank).
MpiStatus require_graph(MPI_Comm comm, GraphComm** out);

// require_graph in two halves, for a caller that agrees on the creation inside an agreement of
// its own (a persistent init: one MPI_Allreduce instead of two). begin_graph makes the state
// without attaching it (collective: the duplicate; it returns only MPI's failure of
// that, and the state's own error in `status`); the caller reduces `words` with MPI_MAX over
// the communicator (every rank, in the same collective call) and hands the result to
// finish_graph, which returns require_graph's error, or attaches the state and gives it in *out.
//
//   PendingGraph pending;
//   MpiStatus s = begin_graph(comm, &pending);
//   std::array<int, PendingGraph::kWords> all;    // MPI_MAX of pending.words over the ranks
//   s = finish_graph(std::move(pending), all, &g);
struct PendingGraph {
  static constexpr int kWords = 12;
  std::unique_ptr<GraphComm> state;
  MpiStatus status;  // this rank's error (its graph or Info refused)
  std::array<int, kWords> words{};  // that error's class, the Info values as v, -v, this rank's max(in-, out-degree), the checking mode as v, -v
};
MpiStatus begin_graph(MPI_Comm comm, PendingGraph* out);
MpiStatus finish_graph(PendingGraph&& pending, const std::array<int, PendingGraph::kWords>& all, GraphComm** out);

// The state attached to `comm`, or nullptr (never creates one).
GraphComm* attached_graph(MPI_Comm comm);
// Local: attaches `g` (from copy_for) to its user communicator, which then owns it.
MpiStatus attach_graph(std::unique_ptr<GraphComm> g);

}  // namespace cartplan::mpi
