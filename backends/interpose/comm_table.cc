// Registering, duplicating and releasing accelerated communicators.
#include "backends/interpose/comm_table.h"

#include <cstdio>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "backends/interpose/detect.h"
#include "backends/interpose/guard.h"
#include "engine/neighborhood.h"

namespace cartplan::interpose {
namespace {

struct Table {
  std::shared_mutex mu;  // taken only under MPI_THREAD_MULTIPLE
  std::unordered_map<MPI_Comm, std::unique_ptr<AcceleratedComm>> comms;
  std::atomic<std::size_t> size{0};
  std::atomic<int> serial{0};
};


Table& table() {
  static Table t;
  return t;
}

// The last lookup (last_lookup, not under MPI_THREAD_MULTIPLE): programs call one communicator
// many times in a row, and a pass-through call must cost next to nothing. Cleared whenever the
// table changes (a freed handle may come back for another communicator).
void forget_last() { last_lookup = LastLookup{}; }

// The table's lock, taken only under MPI_THREAD_MULTIPLE: shared to read, unique to change.
template <class Lock>
class Locked {
 public:
  Locked() : lock_(table().mu, std::defer_lock) {
    if (mpi::thread_multiple()) lock_.lock();
  }

 private:
  Lock lock_;
};
using Reading = Locked<std::shared_lock<std::shared_mutex>>;
using Writing = Locked<std::unique_lock<std::shared_mutex>>;

void insert(MPI_Comm comm, std::unique_ptr<AcceleratedComm> acc) {
  Writing writing;
  table().comms[comm] = std::move(acc);
  table().size = table().comms.size();
  forget_last();
}

std::string join(const std::vector<int>& v, const char* sep) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

// Rank 0 with CARTPLAN_VERBOSE=1: one line per distributed-graph communicator; the verdicts of
// its calls follow, one line per call shape (verdicts.cc, graph_verdicts.cc).
void report(MPI_Comm graph, const Detection& det, AcceleratedComm* acc, int serial, const std::string& graph_why) {
  if (!verbose()) return;
  int rank = 0, size = 0;
  PMPI_Comm_rank(graph, &rank);
  PMPI_Comm_size(graph, &size);
  if (rank != 0) return;
  std::string line;
  if (acc && acc->nc) {
    line = "stencil found: grid " + join(det.dims, "x") + " periods " + join(det.periods, ",") + " (from " +
           det.grid_source + "), t=" + std::to_string(acc->nc->nbh().nonzero_count()) + " offsets (" +
           std::to_string(acc->nc->nbh().size()) + " blocks); each call shape is accelerated or passed through as below";
  } else if (acc) {
    line = "no stencil (" + det.why + "); cartplan's graph collectives (theta " + std::to_string(acc->graph->options.theta) +
           "): each call shape is accelerated or passed through as below";
  } else {
    line = "not accelerated: " + det.why + (graph_why.empty() ? "" : "; graph collectives: " + graph_why);
  }
  std::fprintf(stderr, "cartplan_interpose: communicator %d (%d ranks) %s\n", serial, size, line.c_str());
}

// A stencil's entry: cartplan addresses peers by row-major grid rank on its internal communicator.
std::unique_ptr<AcceleratedComm> stencil_entry(MPI_Comm graph, Detection& det) {
  MPI_Comm internal = MPI_COMM_NULL;
  const int rc = det.row_major ? PMPI_Comm_dup(graph, &internal) : PMPI_Comm_split(graph, 0, det.grid_rank, &internal);
  if (rc != MPI_SUCCESS) {
    det.why = "MPI_Comm_dup of the graph communicator failed";
    return nullptr;
  }
  PMPI_Comm_set_errhandler(internal, MPI_ERRORS_RETURN);
  std::vector<bool> per(det.periods.begin(), det.periods.end());
  engine::Grid grid = *engine::Grid::create(det.dims, per);
  engine::Neighborhood nbh = *engine::Neighborhood::create(static_cast<int>(det.dims.size()), det.nbh);
  auto acc = std::make_unique<AcceleratedComm>();
  acc->nc = std::make_unique<mpi::NeighborhoodComm>(internal, std::move(nbh), std::move(grid), det.coords, det.options);
  acc->nc->shared()->user = graph;
  acc->order = std::move(det.order);
  make_spare(internal, &acc->spare);  // one more PMPI_Comm_dup: the next MPI_Comm_idup's (idup_stencil_entry)
  return acc;
}

// The duplicate's entry. A stencil's gets `internal`; a graph's copies the verdicts (the same
// graph), its native state is made by the caller or at its first accelerated call.
std::unique_ptr<AcceleratedComm> copy_of(const AcceleratedComm& old, MPI_Comm internal, MPI_Comm user) {
  auto acc = std::make_unique<AcceleratedComm>();
  if (old.graph) {
    acc->graph = std::make_unique<GraphVerdicts>(*old.graph);
  } else {
    acc->nc = std::make_unique<mpi::NeighborhoodComm>(*old.nc, internal);
    acc->nc->shared()->user = user;
  }
  acc->order = old.order;
  acc->indegree = old.indegree;
  acc->outdegree = old.outdegree;
  acc->serial = ++table().serial;
  acc->reporter = old.reporter;
  acc->per_core = old.per_core;
  return acc;
}

// Rank 0 with CARTPLAN_VERBOSE=1: why an MPI_Comm_idup duplicate passes its calls through.
void report_idup_passed(const AcceleratedComm& old, int serial, const char* why) {
  if (old.reporter)
    std::fprintf(stderr, "cartplan_interpose: communicator %d (MPI_Comm_idup of communicator %d) passed through: %s\n", serial, old.serial, why);
}
constexpr const char* kNoSpare =
    "no spare private communicator left (one MPI_Comm_idup per communicator made by graph creation or MPI_Comm_dup)";

// An MPI_Comm_idup duplicate of a graph: the old state's copy on the old one's spare communicator.
//
// Why this cannot hang: it sends, receives and waits for nothing, here or later. The duplicate
// has the same edges and weights, so the old state's patterns and agreed verdicts are its own;
// the private communicator it needs was made while every rank was in the blocking call that
// created the old communicator (graph creation or MPI_Comm_dup); ready() attaches the state at
// the duplicate's first use, a local MPI_Comm_set_attr. Every rank takes the same branch: the
// old state's outcome was agreed, and whether a spare is left depends only on the sequence of
// MPI_Comm_idup calls on the old communicator, which MPI makes the same on every rank.
// Started internal MPI_Comm_idup's (what the stencil path did before) were rejected: waiting on one
// at the first call needs every rank to progress it, and Open MPI allocates context ids one
// parent at a time (lowest id first, ompi/communicator/comm_cid.c), so a peer blocked in a
// creation on a communicator with a lower id, waiting for this rank, never progresses it; and
// passing calls through until a local MPI_Test succeeds lets ranks switch at different calls.
// So a second MPI_Comm_idup of the same communicator, or one of an MPI_Comm_idup duplicate,
// finds no spare and passes its calls through (correct, not accelerated).
std::unique_ptr<AcceleratedComm> idup_graph_entry(AcceleratedComm& old, MPI_Comm old_comm, MPI_Comm new_comm) {
  std::unique_ptr<AcceleratedComm> acc = copy_of(old, MPI_COMM_NULL, new_comm);
  const mpi::GraphComm* state = mpi::attached_graph(old_comm);  // the caller's ready() attached a pending state
  const bool ready = old.graph_state == AcceleratedComm::GraphState::kReady && old.spare.ready() && state;
  acc->graph_state = ready ? AcceleratedComm::GraphState::kReady : AcceleratedComm::GraphState::kFailed;
  if (ready) {
    acc->pending_graph = state->copy_for(new_comm, old.spare.exec);
    old.spare.release();  // owned by the duplicate's state now
  } else {
    report_idup_passed(old, acc->serial, old.graph_state != AcceleratedComm::GraphState::kReady ? "the original's graph state failed" : kNoSpare);
  }
  return acc;
}

// An MPI_Comm_idup duplicate of a stencil: the old one's neighbourhood on its spare internal
// communicator, or nullptr (not accelerated: every call passes through) when none is left.
// It cannot hang for the reasons idup_graph_entry gives: no communication here or later (the
// spare, a duplicate of the old internal communicator with its row-major rank order, was made
// while every rank was in the graph's creation or in MPI_Comm_dup), and every rank takes the
// same branch (a spare is left or not after the same sequence of MPI_Comm_idup calls). Caveat:
// a spare's PMPI_Comm_dup that failed on one rank only (stencil_entry, on_comm_dup) is not
// agreed, as the stencil's own internal duplicate never was (agreeing would cost an
// MPI_Allreduce per creation and dup); that rank would then pass the duplicate through alone.
std::unique_ptr<AcceleratedComm> idup_stencil_entry(AcceleratedComm& old, MPI_Comm new_comm) {
  if (!old.spare.ready()) {
    report_idup_passed(old, ++table().serial, kNoSpare);
    return nullptr;
  }
  std::unique_ptr<AcceleratedComm> acc = copy_of(old, old.spare.exec, new_comm);
  old.spare.release();  // owned by the duplicate's NeighborhoodComm now
  return acc;
}

}  // namespace

void on_graph_created(MPI_Comm graph, MPI_Info info) {
  Inside inside;
  Detection det = detect(graph, info);
  const int serial = ++table().serial;
  std::unique_ptr<AcceleratedComm> acc;
  std::unique_ptr<GraphVerdicts> verdicts;
  std::string graph_why;
  if (det.accelerated) {
    acc = stencil_entry(graph, det);
  } else {
    auto entry = std::make_unique<AcceleratedComm>();  // holds the spare communicators (freed on a refusal)
    if (graph_detect(graph, info, det, &verdicts, &entry->spare, &graph_why)) {  // collective, agreed: all ranks or none
      acc = std::move(entry);
      acc->graph = std::move(verdicts);
    }
  }
  if (acc) {
    acc->indegree = det.indegree;
    acc->outdegree = det.outdegree;
    acc->serial = serial;
    acc->per_core = det.per_core;
    int rank = 0;
    PMPI_Comm_rank(graph, &rank);
    acc->reporter = verbose() && rank == 0;
  }
  report(graph, det, acc.get(), serial, graph_why);
  if (acc) insert(graph, std::move(acc));
}

void on_comm_dup(MPI_Comm old_comm, MPI_Comm new_comm) {
  AcceleratedComm* old = ready(find_comm(old_comm));
  if (!old || new_comm == MPI_COMM_NULL) return;
  Inside inside;
  if (old->graph) {
    // The duplicate's native state and the patterns its verdicts may pick now, while every
    // rank is here: built inside a later non-blocking call, their set-up messages could wait
    // for a peer that waits for this rank (rank 0: MPI_Ineighbor_*, MPI_Send to 1; rank 1:
    // MPI_Recv from 0, then MPI_Ineighbor_*). Pattern construction talks to neighbours,
    // friends and partners only (graph_setup.h).
    std::unique_ptr<AcceleratedComm> acc = copy_of(*old, MPI_COMM_NULL, new_comm);
    const bool ok = graph_prepare(new_comm, *acc->graph, &acc->spare).ok();
    acc->graph_state = ok ? AcceleratedComm::GraphState::kReady : AcceleratedComm::GraphState::kFailed;
    insert(new_comm, std::move(acc));
    return;
  }
  MPI_Comm internal = MPI_COMM_NULL;
  if (PMPI_Comm_dup(old->nc->internal(), &internal) != MPI_SUCCESS) return;
  PMPI_Comm_set_errhandler(internal, MPI_ERRORS_RETURN);
  std::unique_ptr<AcceleratedComm> acc = copy_of(*old, internal, new_comm);
  make_spare(internal, &acc->spare);  // one more PMPI_Comm_dup: the next MPI_Comm_idup's
  insert(new_comm, std::move(acc));
}

void on_comm_idup(MPI_Comm old_comm, MPI_Comm new_comm) {
  AcceleratedComm* old = ready(find_comm(old_comm));
  if (!old || new_comm == MPI_COMM_NULL) return;
  Inside inside;
  std::unique_ptr<AcceleratedComm> acc = old->graph ? idup_graph_entry(*old, old_comm, new_comm) : idup_stencil_entry(*old, new_comm);
  if (acc) insert(new_comm, std::move(acc));
}

AcceleratedComm* attach_pending(AcceleratedComm* a) {
  Inside inside;
  // Local. MPI_Comm_set_attr fails only when memory runs out, which nothing here survives; the
  // state is then failed on this rank alone.
  if (!mpi::attach_graph(std::move(a->pending_graph)).ok()) a->graph_state = AcceleratedComm::GraphState::kFailed;
  return a;
}

void on_comm_free(MPI_Comm comm) {
  if (table().size == 0) return;
  std::unique_ptr<AcceleratedComm> gone;
  {
    Writing writing;
    auto& comms = table().comms;
    auto it = comms.find(comm);
    if (it == comms.end()) return;
    gone = std::move(it->second);
    comms.erase(it);
    table().size = comms.size();
    forget_last();
  }
  Inside inside;
  gone->pending_graph.reset();  // never used: freed with its private communicators, not attached
  gone.reset();  // pending exchanges finish first (Exchange's destructor)
}

void clear_comms() {
  Inside inside;
  Writing writing;
  for (auto& [comm, acc] : table().comms) acc->pending_graph.reset();  // never attached: freed here
  table().comms.clear();
  table().size = 0;
  forget_last();
}

AcceleratedComm* find_comm(MPI_Comm comm) {
  Table& t = table();
  if (t.size == 0) return nullptr;
  const bool multiple = mpi::thread_multiple();
  Reading reading;
  auto it = t.comms.find(comm);
  AcceleratedComm* found = it == t.comms.end() ? nullptr : it->second.get();
  if (!multiple) last_lookup = {comm, found};
  return found;
}

std::size_t accelerated_count() { return table().size; }

}  // namespace cartplan::interpose
