// The state cartplan attaches to a distributed-graph communicator, and auto's agreed table.
#include "backends/mpi/graph_comm.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "backends/mpi/another_rank.h"
#include "backends/mpi/comm_keyval.h"
#include "backends/mpi/exchange.h"
#include "backends/mpi/graph_adjacent.h"
#include "backends/mpi/graph_setup.h"
#include "backends/mpi/info_options.h"
#include "backends/mpi/model_notice.h"
#include "backends/mpi/neighborhood_comm.h"
#include "backends/mpi/progressing_wait.h"
#include "backends/mpi/test_failure.h"
#include "engine/cost_model_locate.h"
#include "engine/graph/price.h"
#include "engine/graph/grid_schedule.h"
#include "engine/graph/price_table.h"
#include "engine/graph/schedule.h"
#include "engine/graph/sizes.h"
#include "ir/parse_number.h"

namespace cartplan::mpi {
namespace {

using engine::graph::GraphAlgoChoice;
using engine::graph::TableCandidate;
using ir::graph::GraphAlgorithm;
using ir::graph::GraphOp;

// The bits a table's key adds to candidates_key (bits 1-8: auto_candidates.cc) when the table
// holds the 4-D (most-D) grid row: a blocking call's table (no grid may run) and a persistent
// init's with them keep two tables.
constexpr int kTableWithGrid4 = 16, kTableWithMost = 32;

int delete_attr(MPI_Comm, int, void* attr, void*) {
  delete static_cast<GraphComm*>(attr);
  return MPI_SUCCESS;
}

// A duplicate of the user's communicator does not carry the state (MPI_COMM_NULL_COPY_FN): it
// gets its own, with its own private communicator, on its first graph collective.
int keyval() {
  static int key = MPI_KEYVAL_INVALID;
  static const bool created = (create_state_keyval(MPI_COMM_NULL_COPY_FN, delete_attr, &key), true);
  (void)created;
  return key;
}

// MPI_TAG_UB is an attribute of MPI_COMM_WORLD; its value holds for every communicator.
std::int64_t tag_ub() {
  int* ub = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
  return flag && ub ? *ub : 32767;
}

MpiStatus read_edges(MPI_Comm comm, ir::graph::RankEdges* edges) {
  int indegree = 0, outdegree = 0, weighted = 0;
  CARTPLAN_MPI_CALL(MPI_Dist_graph_neighbors_count(comm, &indegree, &outdegree, &weighted));
  edges->in.assign(static_cast<std::size_t>(indegree), 0);
  edges->out.assign(static_cast<std::size_t>(outdegree), 0);
  std::vector<int> in_w(static_cast<std::size_t>(indegree) + 1), out_w(static_cast<std::size_t>(outdegree) + 1);
  CARTPLAN_MPI_CALL(MPI_Dist_graph_neighbors(comm, indegree, edges->in.data(), weighted ? in_w.data() : MPI_UNWEIGHTED,
                                             outdegree, edges->out.data(), weighted ? out_w.data() : MPI_UNWEIGHTED));
  // MPI may let a distributed graph list MPI_PROC_NULL; cartplan's schedules and pattern
  // construction talk to ranks only (as Cart_graph_comm_create_adjacent refuses it: graph_adjacent.h).
  for (const auto& [list, name] : {std::pair{&edges->in, "sources"}, std::pair{&edges->out, "destinations"}})
    for (std::size_t i = 0; i < list->size(); ++i)
      if ((*list)[i] == MPI_PROC_NULL)
        return mpi_error(MPI_ERR_RANK, std::string("the distributed graph's ") + name + "[" + std::to_string(i) +
                                           "] is MPI_PROC_NULL: cartplan's graph collectives need neighbours that are ranks");
  return {};
}

// The lists and Info of Cart_graph_comm_create_adjacent's attribute (graph_adjacent.h) if comm
// carries one, else of MPI's distributed-graph topology. A bad Info value is returned after the
// edges are read (MPI_ERR_INFO_VALUE; the caller still makes its collective calls).
MpiStatus read_graph(MPI_Comm comm, ir::graph::RankEdges* edges, GraphOptions* options) {
  MpiStatus s = graph_edges(comm, edges);
  if (!s.ok()) return s;
  if (s = check_from_env(&options->check_collective); !s.ok()) return s;  // the default, as for Cartesian calls
  if (const AdjacentLists* lists = adjacent_lists(comm))
    return lists->info == MPI_INFO_NULL ? MpiStatus{} : parse_graph_info(lists->info, options);
  MPI_Info info = MPI_INFO_NULL;
  if (MPI_Comm_get_info(comm, &info) == MPI_SUCCESS && info != MPI_INFO_NULL) {
    s = parse_graph_info(info, options);
    MPI_Info_free(&info);
  }
  return s;
}

}  // namespace

MpiStatus graph_edges(MPI_Comm comm, ir::graph::RankEdges* edges) {
  if (const AdjacentLists* lists = adjacent_lists(comm)) {
    *edges = lists->edges;
    return {};
  }
  int topo = MPI_UNDEFINED;
  CARTPLAN_MPI_CALL(MPI_Topo_test(comm, &topo));
  if (topo != MPI_DIST_GRAPH)
    return mpi_error(MPI_ERR_TOPOLOGY, "the communicator is not a distributed-graph communicator (make it with Cart_graph_comm_create_adjacent, MPI_Dist_graph_create_adjacent or MPI_Dist_graph_create)");
  return read_edges(comm, edges);
}

MpiStatus parse_graph_info(MPI_Info info, GraphOptions* o) {
  bool present = false;
  std::string v = info_value(info, "cartplan_algorithm", &present);
  if (present) {
    if (v == "auto") o->algo = GraphAlgoChoice::kAuto;
    else if (v == "linear") o->algo = GraphAlgoChoice::kLinear;
    else if (v == "pairing") o->algo = GraphAlgoChoice::kPairing;
    else if (v == "cumulative") o->algo = GraphAlgoChoice::kCumulative;
    else if (v == "grid") o->algo = GraphAlgoChoice::kGrid;
    else return mpi_error(MPI_ERR_INFO_VALUE, "Info cartplan_algorithm = '" + v + "' (expected auto, linear, pairing, cumulative or grid)");
  }
  v = info_value(info, "cartplan_theta", &present);
  if (present) {
    Result<int> theta = parse_int(v, 1, 1 << 20);
    if (!theta) return mpi_error(MPI_ERR_INFO_VALUE, "Info cartplan_theta: " + theta.error() + " (expected an integer >= 1)");
    o->theta = *theta;
  }
  v = info_value(info, "cartplan_grid_dims", &present);
  if (present) {
    Result<int> d = v == "auto" ? Result<int>(0) : parse_int(v, 2, engine::graph::kMaxGridD);
    if (!d)
      return mpi_error(MPI_ERR_INFO_VALUE, "Info cartplan_grid_dims = '" + v + "': " + d.error() + " (expected auto or an integer from 2 to " +
                                               std::to_string(engine::graph::kMaxGridD) + ")");
    o->grid_dims = *d;
  }
  v = info_value(info, "cartplan_auto_candidates", &present);
  if (present) {
    Result<engine::graph::AutoCandidates> a = engine::graph::parse_auto_candidates(v);
    if (!a) return mpi_error(MPI_ERR_INFO_VALUE, "Info cartplan_auto_candidates: " + a.error());
    o->auto_candidates = *a;
  }
  if (MpiStatus s = parse_check(info, &o->check_collective); !s.ok()) return s;
  return parse_progress(info, &o->progress_anywhere);
}

TableCandidate forced_candidate(const GraphOptions& o) {
  switch (o.algo) {
    case GraphAlgoChoice::kPairing: return {GraphAlgorithm::kPairing, 0};
    case GraphAlgoChoice::kCumulative: return {GraphAlgorithm::kCumulative, 0};
    case GraphAlgoChoice::kGrid: return {GraphAlgorithm::kGrid, o.grid_dims == 0 ? 2 : o.grid_dims};
    case GraphAlgoChoice::kLinear:
    case GraphAlgoChoice::kAuto: break;
  }
  return {};
}

// tag_ub itself is the set-up's (graph_setup.h's setup_tag): the lanes stay below it.
GraphShared::GraphShared(MPI_Comm user_comm, MPI_Comm exec_comm, std::int64_t tag_ub)
    : user(user_comm), exec(exec_comm), lanes(tag_ub - 1) {
  holders.assign(static_cast<std::size_t>(lanes.nonblocking_lanes()), nullptr);
}

GraphShared::~GraphShared() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && exec != MPI_COMM_NULL) MPI_Comm_free(&exec);
}

// One private communicator for the collectives' messages, the set-up's and the agreements: the
// set-up channel receives only on setup_tag (tag_ub), the lanes' tags stay below it
// (GraphShared), and collectives never match point-to-point messages (graph_setup.h).
GraphComm::GraphComm(MPI_Comm user, MPI_Comm exec, int rank, int size, ir::graph::RankEdges edges, GraphOptions options,
                     engine::CostModel model)
    : rank_(rank), size_(size), edges_(std::move(edges)), options_(options), model_(model), setup_(exec, tag_ub()) {
  shared_ = std::make_shared<GraphShared>(user, exec, tag_ub());
  for (int d = 2; d <= engine::graph::kMaxGridD; ++d) dims_by_d_[static_cast<std::size_t>(d)] = engine::graph::grid_dims(size, d);
  // Every lane tag, and the spare one above them, stays below the set-up's tag (graph_setup.h).
  assert(shared_->lanes.max_rounds() * shared_->lanes.count() < setup_tag(tag_ub()));
}

// The private communicator is shared_'s: freed with the last request that holds it.
GraphComm::~GraphComm() {
  std::shared_ptr<void> pool;  // destroyed after the lock is released: each exchange's destructor locks
  PoolLock lock(shared_->mu);
  shared_->user = MPI_COMM_NULL;
  pool.swap(shared_->pool);
}

MpiStatus GraphComm::pattern(bool cumulative, int theta, const engine::graph::RankPattern** out) {
  const std::pair<bool, int> key{cumulative, theta};
  if (auto failed = failed_patterns_.find(key); failed != failed_patterns_.end()) return failed->second;
  auto it = patterns_.find(key);
  if (it == patterns_.end()) {
    engine::graph::PairingOptions po;
    po.cumulative = cumulative;
    po.theta = theta;
    engine::graph::RankPattern p;
    SetupCounts counts;
    MpiStatus s = setup_.construct(rank_, edges_, po, &p, &counts);
    const char* const step = cumulative ? "pattern-cumulative" : "pattern-pairing";  // this algorithm's only
    if (s.ok() && test_failure("pattern")) s = injected_failure("pattern");  // after the construction's messages
    if (s.ok() && test_failure(step)) s = injected_failure(step);
    // A failure is kept like a success: each construction runs once per key on every rank, so
    // the set-up channel's sequence numbers stay in step and a later call does not start a
    // construction (a collective) that ranks which succeeded never join.
    if (!s.ok()) return failed_patterns_.emplace(key, s).first->second;
    it = patterns_.emplace(key, std::move(p)).first;
  }
  *out = &it->second;
  return {};
}

namespace {

// Why a rank returns a class kept in a bare verdict (no text was kept with it).
enum class BareWhen {
  kPending,   // this rank could not record its construction's outcome (no sweep yet)
  kThisCall,  // this call's sweep, whose outcome this rank had no room to record
  kEarlier,   // a sweep of an earlier call
};

// The failure a rank returns from a bare verdict: the class always; its text only if that fits
// in memory.
MpiStatus bare_failure(int code, BareWhen when) noexcept {
  MpiStatus s;
  s.code = code;
  try {
    const std::string cls = std::to_string(code);
    if (when == BareWhen::kPending)
      s.message = "out of memory on this rank recording the grid construction's outcome on this communicator";
    else if (when == BareWhen::kThisCall)
      s.message = "out of memory on this rank recording the grid construction's verdict (every rank fails with error class " + cls + ")";
    else
      s.message = "an earlier grid construction on this communicator failed (error class " + cls +
                  " on every rank; this rank ran out of memory keeping its details)";
  } catch (const std::bad_alloc&) {
  }
  return s;
}

// A kept failure, returned after the sweep: its class always (the one every rank agreed on),
// its text only if copying it fits in memory.
MpiStatus kept_failure(const MpiStatus& kept) noexcept {
  MpiStatus s;
  s.code = kept.code;
  s.agreed = kept.agreed;
  try {
    inject_out_of_memory("grid-verdict-copy");
    s.message = kept.message;
  } catch (const std::bad_alloc&) {
  }
  return s;
}

}  // namespace

const std::vector<int>& GraphComm::dims_of(int grid_d) const {
  assert(grid_d >= 2 && grid_d <= engine::graph::kMaxGridD && "a grid's d is 2 .. kMaxGridD (parse_graph_info, auto_candidates)");
  return dims_by_d_[static_cast<std::size_t>(std::clamp(grid_d, 2, engine::graph::kMaxGridD))];
}

// The grid is the communicator's: every rank computes the same dims from its size alone. Keyed by
// dims, so a d whose grid is the other's (grid_dims(p, 3) with an extent of 1) constructs nothing
// new. From the construction's start to the sweep's end no allocation here can take a rank out:
// the dims are made with the state, the room to record either outcome before the construction.
MpiStatus GraphComm::grid_pattern(int grid_d, bool spread, const engine::graph::GridPattern** out) {
  const std::vector<int>& dims = dims_of(grid_d);
  const BareVerdict* bare = bare_verdict(dims);
  if (bare && bare->swept) return bare_failure(bare->code, BareWhen::kEarlier);  // the agreed failure
  if (!bare && !failed_grids_.count(dims) && !grids_.count(dims)) {
    construct_and_keep(dims);
    bare = bare_verdict(dims);
  }
  // A pending bare verdict: no agreement vouched for the grid (this rank failed), so a spread
  // call sweeps, as its line peers do.
  if (bare) return spread ? spread_grid(dims, bare->code) : bare_failure(bare->code, BareWhen::kPending);
  if (spread && !agreed(dims)) {
    MpiStatus s = spread_grid(dims, 0);
    if (!s.ok()) return s;
  }
  if (auto failed = failed_grids_.find(dims); failed != failed_grids_.end()) return kept_failure(failed->second);
  *out = &grids_.at(dims);
  return {};
}

// Made before the construction, so that recording its outcome allocates nothing: a rank that
// ran out of memory there would skip the sweep its line peers wait in.
struct GraphComm::RecordRoom {
  std::map<std::vector<int>, engine::graph::GridPattern>::node_type grid;  // grids_'s entry
  std::map<std::vector<int>, MpiStatus>::node_type failure;                // failed_grids_'s
};

std::optional<GraphComm::RecordRoom> GraphComm::record_room(const std::vector<int>& dims) noexcept {
  try {
    inject_out_of_memory("grid-record-room");
    std::map<std::vector<int>, engine::graph::GridPattern> grid;
    grid.emplace(dims, engine::graph::GridPattern{});
    std::map<std::vector<int>, MpiStatus> failure;
    failure.emplace(dims, MpiStatus{});
    return RecordRoom{grid.extract(grid.begin()), failure.extract(failure.begin())};
  } catch (const std::bad_alloc&) {
    return std::nullopt;
  }
}

// A rank without the room still runs the whole construction (its line peers wait for its
// messages), then keeps its class in a pending bare verdict.
void GraphComm::construct_and_keep(const std::vector<int>& dims) {
  std::optional<RecordRoom> room = record_room(dims);
  engine::graph::GridPattern p;
  SetupCounts counts;
  MpiStatus s = setup_.construct_grid(rank_, dims, edges_, &p, &counts);
  if (s.ok() && test_failure("pattern")) s = injected_failure("pattern");  // after the construction's messages
  if (s.ok() && test_failure("pattern-grid")) s = injected_failure("pattern-grid");
  if (s.ok() && dims.size() == 4 && test_failure("pattern-grid4")) s = injected_failure("pattern-grid4");  // the 4-D grid's only
  if (s.ok() && dims.size() > 4 && test_failure("pattern-gridmost")) s = injected_failure("pattern-gridmost");  // above 4-D only
  if (!room) {
    const bool kept = keep_bare_verdict(dims, std::max(s.code, static_cast<int>(MPI_ERR_NO_MEM)), false);
    assert(kept && "a slot per grid");
    (void)kept;
    return;
  }
  // Kept, as pattern()'s: the construction runs once on every rank. Moves into the room and
  // node insertions: nothing allocates.
  if (s.ok()) {
    room->grid.mapped() = std::move(p);
    grids_.insert(std::move(room->grid));
  } else {
    room->failure.mapped() = std::move(s);
    failed_grids_.insert(std::move(room->failure));
  }
}

// What recording the verdict sweep's outcome needs on this rank, made before the sweep, so that
// recording it afterwards allocates nothing and cannot stop half-way: a rank marked agreed
// without its outcome would construct alone at its next forced-grid call, one swept but not
// marked would sweep alone; either waits for good.
struct GraphComm::SweepRoom {
  std::map<std::vector<int>, MpiStatus>::node_type failure;  // failed_grids_'s new or replacing entry
};

GraphComm::SweepRoom GraphComm::sweep_room(const std::vector<int>& dims, std::size_t kept_message) {
  std::map<std::vector<int>, MpiStatus> failure;
  failure.emplace(dims, MpiStatus{});
  SweepRoom room{failure.extract(failure.begin())};
  room.failure.mapped().message.reserve(kept_message + 128);  // the longest note below, with its digits
  return room;
}

const GraphComm::BareVerdict* GraphComm::bare_verdict(const std::vector<int>& dims) const {
  for (const BareVerdict& b : bare_verdicts_)
    if (b.code != 0 && b.ndims == static_cast<int>(dims.size()) && std::equal(dims.begin(), dims.end(), b.dims.begin())) return &b;
  return nullptr;
}

bool GraphComm::keep_bare_verdict(const std::vector<int>& dims, int code, bool swept) noexcept {
  assert(code > 0 && dims.size() <= engine::graph::kMaxGridD && "a bare verdict is a failure of one grid");
  BareVerdict* slot = nullptr;
  for (BareVerdict& b : bare_verdicts_)  // dims' pending one (now swept), else a free one
    if (&b == bare_verdict(dims) || (!slot && b.code == 0)) slot = &b;
  if (!slot) return false;  // more grids than d's of 2 .. kMaxGridD: kGridDs is wrong
  slot->ndims = static_cast<int>(dims.size());
  std::copy(dims.begin(), dims.end(), slot->dims.begin());
  slot->code = code;
  slot->swept = swept;
  return true;
}

// Every rank runs it at the same point (the same call, with the same kept state: every rank
// constructed the grid in the same earlier call, and no agreement vouched for it), whether its
// construction failed or not. A rank that runs out of memory making the room (the sends'
// requests, the maps' entries), or kept its construction's outcome in a pending bare verdict
// (`pending`, its class), still takes part in the sweep with its class (without requests:
// SetupChannel::agree_grid), so the call fails on every rank; it keeps the agreed class in a
// swept bare verdict (fixed room), so that its later calls return that class as the others'
// failed_grids_ do, without a sweep of its own.
MpiStatus GraphComm::spread_grid(const std::vector<int>& dims, int pending) {
  auto failed = failed_grids_.find(dims);
  assert((failed == failed_grids_.end() || failed->second.code > 0) && "a kept failure has an error class");
  int mine = pending != 0 ? pending : failed == failed_grids_.end() ? 0 : failed->second.code;
  bool reserved = false;
  std::optional<SweepRoom> room;
  if (pending == 0) {  // a pending rank has nothing of its own to record the outcome in
    try {
      inject_out_of_memory("grid-sweep-room");
      setup_.reserve_sweep(dims);
      reserved = true;
      room = sweep_room(dims, failed == failed_grids_.end() ? 0 : failed->second.message.size());
    } catch (const std::bad_alloc&) {
      mine = std::max(mine, static_cast<int>(MPI_ERR_NO_MEM));
    }
  }
  int verdict = 0;
  SetupCounts counts;
  MpiStatus s = setup_.agree_grid(rank_, dims, mine, reserved, &verdict, &counts);
  if (!s.ok()) return s;
  if (!room) {  // verdict >= MPI_ERR_NO_MEM: every rank fails and keeps it
    if (!keep_bare_verdict(dims, verdict, true)) return bare_failure(MPI_ERR_INTERN, BareWhen::kThisCall);
    return bare_failure(verdict, BareWhen::kThisCall);
  }
  if (verdict != 0) {
    MpiStatus& note = room->failure.mapped();  // its message's room is reserved: appending allocates nothing
    char digits[16];
    const std::string_view cls(digits, static_cast<std::size_t>(std::to_chars(digits, digits + sizeof digits, verdict).ptr - digits));
    note.code = verdict;
    if (failed == failed_grids_.end()) {  // a peer failed: this rank drops its grid, as every rank does
      note.message.append("another rank ").append(another_rank_did(verdict)).append("the grid construction or its verdict sweep (error class ");
      note.message.append(cls).append(" there)");
      grids_.erase(dims);
      failed_grids_.insert(std::move(room->failure));
    } else if (failed->second.code != verdict) {  // another rank failed with a larger class: that one, everywhere
      note.message.append(failed->second.message).append(" (and another rank ").append(another_rank_did(verdict));
      note.message.append("the grid construction or its verdict sweep, error class ").append(cls).append(" there)");
      std::swap(failed->second, note);
    }
  }
  mark_agreed(dims);  // last
  return {};
}

void GraphComm::grid_agreed(const TableCandidate& c) {
  if (c.algorithm == GraphAlgorithm::kGrid) mark_agreed(dims_of(c.grid_d));
}

bool GraphComm::agreed(const std::vector<int>& dims) const noexcept {
  for (int d = 2; d <= engine::graph::kMaxGridD; ++d)
    if (agreed_by_d_[static_cast<std::size_t>(d)] && dims_by_d_[static_cast<std::size_t>(d)] == dims) return true;
  return false;
}

void GraphComm::mark_agreed(const std::vector<int>& dims) noexcept {
  for (int d = 2; d <= engine::graph::kMaxGridD; ++d)
    if (dims_by_d_[static_cast<std::size_t>(d)] == dims) agreed_by_d_[static_cast<std::size_t>(d)] = true;
}

bool GraphComm::grid_kept(const TableCandidate& c) const noexcept {
  if (c.algorithm != GraphAlgorithm::kGrid) return false;
  const std::vector<int>& dims = dims_of(c.grid_d);
  return bare_verdict(dims) || grids_.count(dims) || failed_grids_.count(dims);
}

// Nothing vouched for the grid (only a sweep or a successful agreement does, and neither ran
// since its construction) and nothing swept it: asserted.
void GraphComm::drop_grid(const TableCandidate& c) noexcept {
  if (c.algorithm != GraphAlgorithm::kGrid) return;
  const std::vector<int>& dims = dims_of(c.grid_d);
  assert(!agreed(dims) && "a grid constructed in the failed init was vouched for by nothing");
  if (const BareVerdict* bare = bare_verdict(dims)) {
    assert(!bare->swept && "no sweep runs in a persistent init");
    bare_verdicts_[static_cast<std::size_t>(bare - bare_verdicts_.data())] = BareVerdict{};  // code 0: free
  }
  grids_.erase(dims);
  failed_grids_.erase(dims);
}

int GraphComm::grid_ndims(int grid_d) const { return static_cast<int>(engine::graph::grid_dims(size_, grid_d).size()); }

bool GraphComm::most_grid_in_auto(int grid_d) const {
  return engine::graph::auto_prices_most_grid(grid_ndims(engine::graph::kMaxGridD), grid_d, max_degree_);
}

std::vector<TableCandidate> GraphComm::auto_candidates(bool with_grid4, bool with_most) const {
  std::vector<TableCandidate> out = {{GraphAlgorithm::kLinear, 0}, {GraphAlgorithm::kPairing, 0}, {GraphAlgorithm::kCumulative, 0},
                                     {GraphAlgorithm::kGrid, 2}};
  if (grid_ndims(3) == 3) out.push_back({GraphAlgorithm::kGrid, 3});
  if (with_grid4 && grid_ndims(4) == 4) out.push_back({GraphAlgorithm::kGrid, 4});
  if (with_most && grid_ndims(engine::graph::kMaxGridD) > 4) out.push_back({GraphAlgorithm::kGrid, engine::graph::kMaxGridD});
  return out;
}

MpiStatus GraphComm::set_up(const TableCandidate& c, int theta, bool spread) {
  if (c.algorithm == GraphAlgorithm::kLinear) return {};
  if (c.algorithm == GraphAlgorithm::kGrid) {
    const engine::graph::GridPattern* g = nullptr;
    return grid_pattern(c.grid_d, spread, &g);
  }
  const engine::graph::RankPattern* p = nullptr;
  return pattern(c.algorithm == GraphAlgorithm::kCumulative, theta, &p);
}

MpiStatus GraphComm::schedule(GraphOp op, const TableCandidate& c, int theta, ir::graph::RankSchedule* out, bool spread) {
  if (c.algorithm == GraphAlgorithm::kLinear) {
    *out = engine::graph::linear_schedule(op, edges_, rank_);
    return {};
  }
  if (c.algorithm == GraphAlgorithm::kGrid) {
    const engine::graph::GridPattern* g = nullptr;
    MpiStatus s = grid_pattern(c.grid_d, spread, &g);
    if (s.ok()) *out = engine::graph::grid_schedule(op, edges_, rank_, *g);
    return s;
  }
  const engine::graph::RankPattern* p = nullptr;
  MpiStatus s = pattern(c.algorithm == GraphAlgorithm::kCumulative, theta, &p);
  if (!s.ok()) return s;
  *out = engine::graph::schedule_from_pattern(op, edges_, rank_, *p);
  return {};
}

// Every rank prices its own schedules; the max over ranks is what each candidate costs
// (engine/graph/choose.h's max_rank_us), the same numbers everywhere after one MPI_Allreduce.
MpiStatus GraphComm::agree_prices(const std::vector<TableCandidate>& candidates, int theta, const engine::CostModel& model,
                                  Table* out, const Rider* rider, std::vector<double>* rider_all) {
  Table mine{};
  MpiStatus s;
  for (GraphOp op : {GraphOp::kAllgather, GraphOp::kAlltoall}) {
    for (const TableCandidate& a : candidates) {
      ir::graph::RankSchedule sched;
      MpiStatus built = schedule(op, a, theta, &sched);  // after a failure too: the next pattern's construction needs this rank
      if (built.ok()) engine::graph::add_prices(op, a, sched, model, &mine);
      else if (s.ok()) s = built;
    }
  }
  if (s.ok() && test_failure("pricing")) s = injected_failure("pricing");
  // This rank's error class (0: none) travels in the table's reduction, so every rank reaches
  // the same collective whatever happened here, and the largest class is everyone's answer.
  // The rider's words follow (a persistent init's outcome: graph_collective.cc).
  std::vector<double> words(mine.begin(), mine.end());
  words.push_back(s.ok() ? 0.0 : static_cast<double>(s.code));
  const std::vector<double> extra = rider ? (*rider)(candidates) : std::vector<double>{};
  words.insert(words.end(), extra.begin(), extra.end());
  std::vector<double> all(words.size(), 0.0);
  CARTPLAN_MPI_CALL(Exchange::agree_allreduce(words.data(), all.data(), static_cast<int>(all.size()), MPI_DOUBLE, MPI_MAX, setup_.comm()));
  const int worst = static_cast<int>(all[mine.size()]);
  if (worst != MPI_SUCCESS)
    return mpi_error(worst, s.ok() ? another_rank_failed(worst, "the construction or pricing of the graph schedules") : s.message);
  for (const TableCandidate& a : candidates) grid_agreed(a);  // every rank constructed every candidate's pattern
  std::copy(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(mine.size()), out->begin());
  if (rider_all) rider_all->assign(all.begin() + static_cast<std::ptrdiff_t>(mine.size()) + 1, all.end());
  return {};
}

// Only the allowed candidates are constructed and priced (a row left out stays 0: not a
// candidate). Every rank passes the same theta and list (choose's contract), so every rank
// constructs the same patterns in the same order and joins the same reduction.
MpiStatus GraphComm::table(int theta, const engine::graph::AutoCandidates& allowed, bool with_grid4, bool with_most, const Table** out,
                           const Rider* rider, std::vector<double>* rider_all) {
  const std::pair<int, int> key{theta, engine::graph::candidates_key(allowed) | (with_grid4 ? kTableWithGrid4 : 0) |
                                           (with_most ? kTableWithMost : 0)};
  if (auto failed = failed_tables_.find(key); failed != failed_tables_.end()) return failed->second;
  auto it = tables_.find(key);
  if (it == tables_.end()) {
    Table all{};
    MpiStatus s = agree_prices(engine::graph::restrict_candidates(auto_candidates(with_grid4, with_most), allowed), theta, model_, &all,
                               rider, rider_all);
    if (!s.ok()) return failed_tables_.emplace(key, s).first->second;  // agreed: kept, so no later call agrees again
    it = tables_.emplace(key, all).first;
  }
  *out = &it->second;
  return {};
}

MpiStatus GraphComm::choose(GraphOp op, std::int64_t block_bytes, const GraphOptions& o, TableCandidate* out, const Rider* rider,
                            std::vector<double>* rider_all) {
  if (o.algo != GraphAlgoChoice::kAuto) {
    *out = forced_candidate(o);
    return {};
  }
  // The default list (auto) becomes the grids where auto may run them (with seed 003's pair too
  // where p has no usable grid), else seed 003's pair: grid_in_auto is agreed (persistent init)
  // or false everywhere, p and grid_dims are the same everywhere, so every rank resolves alike.
  const engine::graph::AutoCandidates allowed = engine::graph::resolve_candidates(o.auto_candidates, o.grid_in_auto, size_, o.grid_dims);
  // No combining candidate left (Info cartplan_auto_candidates=linear, or grid alone where grid
  // may not run): linear, with nothing constructed or agreed (every rank has the same options).
  if (!engine::graph::any_combining(allowed, o.grid_in_auto)) {
    *out = {};
    return {};
  }
  const Table* t = nullptr;
  // The 4-D (most-D) grid only where auto may pick it: p has one, grid is allowed (persistent
  // init) and Info cartplan_grid_dims does not name another grid (4; 5 or more names the most-D
  // row); for allgather and alltoall(v) alike. The most-D one under cartplan_grid_dims auto only
  // where the degree agreed at creation exceeds its dimensions (most_grid_in_auto). Info,
  // grid_in_auto and that degree are the same on every rank; both ops share one table per
  // (theta, list, with_grid4, with_most).
  const bool high = o.grid_in_auto && allowed.grid;
  const bool with_grid4 = high && grid_ndims(4) == 4 && (o.grid_dims == 0 || o.grid_dims == 4);
  const bool with_most = high && most_grid_in_auto(o.grid_dims);
  MpiStatus s = table(o.theta, allowed, with_grid4, with_most, &t, rider, rider_all);
  if (!s.ok()) return s;
  // Every rank has the same table, size and options, hence the same answer (price_table.h). Grid
  // only where init agreed one block size over the ranks with edges (grid_in_auto): it relays
  // through any rank, and a rank without edges relays blocks of that size.
  const engine::graph::CandidatePrices us = engine::graph::only_grid_d(engine::graph::table_prices(*t, op, block_bytes), o.grid_dims);
  *out = engine::graph::allowed_pick(engine::graph::pick_from_prices(o.grid_in_auto ? us : engine::graph::without_grid(us)), allowed);
  return {};
}

std::unique_ptr<GraphComm> GraphComm::copy_for(MPI_Comm user, MPI_Comm exec) const {
  auto g = std::make_unique<GraphComm>(user, exec, rank_, size_, edges_, options_, model_);
  g->patterns_ = patterns_;
  g->tables_ = tables_;
  g->failed_tables_ = failed_tables_;
  g->failed_patterns_ = failed_patterns_;
  g->grids_ = grids_;
  g->failed_grids_ = failed_grids_;  // else a rank whose construction failed would construct again alone
  g->agreed_by_d_ = agreed_by_d_;  // the duplicate holds the same outcome: no sweep again
  g->bare_verdicts_ = bare_verdicts_;
  g->max_degree_ = max_degree_;      // agreed at this one's creation: the same edges
  return g;
}

GraphComm* attached_graph(MPI_Comm comm) {
  void* attr = nullptr;
  int flag = 0;
  if (comm == MPI_COMM_NULL || MPI_Comm_get_attr(comm, keyval(), &attr, &flag) != MPI_SUCCESS || !flag) return nullptr;
  return static_cast<GraphComm*>(attr);
}

MpiStatus attach_graph(std::unique_ptr<GraphComm> g) {
  CARTPLAN_MPI_CALL(MPI_Comm_set_attr(g->shared()->user, keyval(), g.get()));
  g.release();  // the attribute's delete callback frees it with the communicator
  return {};
}

MpiStatus begin_graph(MPI_Comm comm, PendingGraph* out) {
  *out = PendingGraph{};
  if (comm == MPI_COMM_NULL) return mpi_error(MPI_ERR_COMM, "the communicator is MPI_COMM_NULL");
  ir::graph::RankEdges edges;
  GraphOptions options;
  MpiStatus s = read_graph(comm, &edges, &options);  // kept in out->status: the dups below are made anyway
  if (const char* p = std::getenv("CARTPLAN_PROGRESS"); p && std::string(p) == "cartplan") options.progress_anywhere = false;
  int rank = 0;
  CARTPLAN_MPI_CALL(MPI_Comm_rank(comm, &rank));
  int size = 1;
  CARTPLAN_MPI_CALL(MPI_Comm_size(comm, &size));
  // The model: a calibration if one is found (engine/cost_model_locate.h), else the built-in
  // defaults. A rank whose lookup fails uses the defaults; auto's agreed table keeps ranks alike.
  // With CARTPLAN_VERBOSE=1 rank 0 says which, once per process, as the Cartesian path does.
  Result<engine::LocatedModel> located = engine::locate_cost_model(std::nullopt, size, std::getenv);
  const engine::CostModel model = located ? located->model : engine::CostModel{};
  if (located) verbose_model_notice(*located, comm, size);
  else verbose_model_lookup_failed(located.error(), comm);
  // The duplicate is made even after an error of read_graph (a bad Info value, a communicator
  // without a graph, an MPI_PROC_NULL neighbour), so that every rank makes the same collective
  // calls whatever happened here (the agreement follows it). One duplicate carries all of the
  // state's traffic: GraphComm's constructor says why set-up and collectives cannot collide.
  // It is this call's first wait for its peers, so it advances the process's pending requests
  // meanwhile (progressing_wait.h: a peer may need one of them to reach this call).
  MPI_Comm exec = MPI_COMM_NULL;
  CARTPLAN_MPI_CALL(progressing_dup(comm, &exec));
  MPI_Comm_set_errhandler(exec, MPI_ERRORS_RETURN);
  // The Info values are agreed too (max of v and of -v): blocking and non-blocking calls
  // construct the forced algorithm's schedule with their peers, so ranks that differ would wait
  // for messages that never come; cartplan_auto_candidates too (a blocking auto call constructs
  // the listed candidates' patterns).
  const int algo = static_cast<int>(options.algo), list = engine::graph::candidates_key(options.auto_candidates);
  // This rank's larger degree (MPI's counts): its MAX is the agreed degree that decides, before
  // any construction, whether auto constructs the most-D grid (GraphComm::most_grid_in_auto).
  const int degree = static_cast<int>(std::max(edges.in.size(), edges.out.size()));
  // The checking mode too: a checking rank agrees in every call, and its peers must as well.
  const int check = options.check_collective ? 1 : 0;
  out->words = {s.ok() ? 0 : s.code, algo, -algo, options.theta, -options.theta, options.grid_dims, -options.grid_dims, list, -list, degree,
                check, -check};
  out->status = s;
  out->state = std::make_unique<GraphComm>(comm, exec, rank, size, std::move(edges), options, model);  // frees the dup
  return {};
}

MpiStatus finish_graph(PendingGraph&& pending, const std::array<int, PendingGraph::kWords>& all, GraphComm** out) {
  *out = nullptr;
  if (!pending.status.ok()) return mpi_error(all[0], pending.status.message);
  if (all[0] != 0)
    return mpi_error(all[0], "another rank's distributed graph or Info was refused (error class " + std::to_string(all[0]) + " there)");
  if (all[1] != -all[2] || all[3] != -all[4] || all[5] != -all[6] || all[7] != -all[8])
    return mpi_error(MPI_ERR_INFO_VALUE,
                     "ranks passed different cartplan_algorithm, cartplan_theta, cartplan_grid_dims or cartplan_auto_candidates "
                     "values in the graph communicator's Info");
  if (all[10] != -all[11])
    return mpi_error(MPI_ERR_INFO_VALUE, "ranks asked for different checking modes (cartplan_check in the graph communicator's Info, "
                                         "or CARTPLAN_CHECK)");
  GraphComm* g = pending.state.get();
  g->set_max_degree(all[9]);
  MpiStatus s = attach_graph(std::move(pending.state));
  if (s.ok()) *out = g;
  return s;
}

MpiStatus require_graph(MPI_Comm comm, GraphComm** out) {
  *out = nullptr;
  if (comm == MPI_COMM_NULL) return mpi_error(MPI_ERR_COMM, "the communicator is MPI_COMM_NULL");
  if ((*out = attached_graph(comm))) return {};
  PendingGraph pending;
  MpiStatus s = begin_graph(comm, &pending);
  if (!s.ok()) return s;
  // Creation only: every rank makes the state or none, so that a rank whose graph or Info is
  // refused (an MPI_PROC_NULL in its lists alone, say) does not leave its peers in a
  // construction or an agreement without it. A failure attaches nothing anywhere.
  std::array<int, PendingGraph::kWords> all{};
  CARTPLAN_MPI_CALL(Exchange::agree_allreduce(pending.words.data(), all.data(), PendingGraph::kWords, MPI_INT, MPI_MAX, pending.state->private_comm()));
  return finish_graph(std::move(pending), all, out);
}

}  // namespace cartplan::mpi
