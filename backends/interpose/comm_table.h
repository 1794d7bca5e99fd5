// The table of accelerated communicators: for each distributed-graph communicator that
// detection accepted, cartplan's neighbourhood state (with its private internal communicator)
// and the block orders that map the program's list positions to the neighbourhood; for each
// other graph the graph collectives may take (graph_verdicts.h), their agreed verdicts. Kept up to
// date by the interposed MPI_Dist_graph_create[_adjacent], MPI_Comm_dup[_with_info],
// MPI_Comm_idup, MPI_Comm_free and MPI_Finalize.
//
//   on_graph_created(graph, info);            // collective: detection, then maybe an entry
//   if (AcceleratedComm* a = find_comm(graph)) ... a->nc, a->order
#pragma once

#include <mpi.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/mpi/exchange.h"
#include "backends/interpose/graph_verdicts.h"
#include "backends/interpose/idup_spare.h"
#include "backends/interpose/policy.h"
#include "backends/mpi/neighborhood_comm.h"
#include "engine/edge_match.h"

namespace cartplan::interpose {

struct AcceleratedComm {
  // A Cartesian stencil (nc, order, scratch) or, for a graph that is none, the graph
  // collectives' verdicts (graph; nc is then null).
  std::unique_ptr<mpi::NeighborhoodComm> nc;
  std::unique_ptr<GraphVerdicts> graph;
  // A graph's native state and patterns: ready, or failed for good (on every rank alike: its
  // calls pass through, no retry) when graph_prepare's agreement failed, or for an
  // MPI_Comm_idup duplicate of a communicator whose state failed or that had no spare
  // communicators left (on_comm_idup).
  enum class GraphState { kReady, kFailed };
  GraphState graph_state = GraphState::kReady;
  // The communicators for the next MPI_Comm_idup's duplicate (idup_spare.h; a stencil's: its
  // internal one; a graph's: its state's one); none once used, and none on an MPI_Comm_idup
  // duplicate.
  SpareComms spare;
  // An MPI_Comm_idup duplicate's native state, made inside MPI_Comm_idup from the original's,
  // attached to the duplicate at its first use (ready()), once the program completed its request.
  std::unique_ptr<mpi::GraphComm> pending_graph;
  engine::EdgeOrder order;  // user position -> neighbourhood index
  int indegree = 0, outdegree = 0;
  mpi::ExchangeSpec scratch;  // reused by blocking calls (no allocation per call)
  int serial = 0;             // the n-th communicator detection accepted (CARTPLAN_VERBOSE lines)
  bool reporter = false;      // rank 0 with CARTPLAN_VERBOSE=1 says what happens to each call shape
  double per_core = 1.0;      // processes per core on the fullest node (Detection::per_core)
  std::atomic<long> calls{0};  // collective calls cartplan ran itself (CARTPLAN_Accelerated_calls)
  // The do-no-harm verdicts per call shape, newest last (verdicts.h).
  struct Decision {
    ir::Op op;
    Form form;
    std::int64_t bytes;
    bool accelerate;
  };
  std::vector<Decision> decisions;
  // The last blocking or non-blocking uniform call's shape (collectives.h: kind, counts and
  // datatypes, predefined ones only) and whether it ran through cartplan: a repeated shape is
  // one comparison.
  std::array<std::uintptr_t, 5> last_shape{};
  bool last_shape_valid = false, last_shape_accelerated = false;
};

// Collective over `graph` (just created). Registers the communicator if detection accepts it;
// with CARTPLAN_VERBOSE=1, rank 0 prints one line either way.
void on_graph_created(MPI_Comm graph, MPI_Info info);
// Collective (inside MPI_Comm_dup): the duplicate of an accelerated communicator is accelerated
// too, with its own internal communicator.
void on_comm_dup(MPI_Comm old_comm, MPI_Comm new_comm);
// Inside MPI_Comm_idup (non-blocking): nothing here or later sends, receives or waits
// (comm_table.cc, idup_graph_entry, says why nothing may). The first MPI_Comm_idup of an
// accelerated communicator takes the spare communicators made at its creation or MPI_Comm_dup
// (idup_spare.h): a stencil's duplicate gets the neighbourhood on the spare internal
// communicator, a graph's a copy of the old state. A second MPI_Comm_idup of the same
// communicator, an MPI_Comm_idup of an MPI_Comm_idup duplicate, or (graph) one of a communicator
// whose state failed pass their calls through, on every rank alike (rank 0 says why with
// CARTPLAN_VERBOSE=1).
void on_comm_idup(MPI_Comm old_comm, MPI_Comm new_comm);
// Attaches a graph duplicate's pending state (see on_comm_idup) at its first use; returns `a`.
AcceleratedComm* attach_pending(AcceleratedComm* a);
inline AcceleratedComm* ready(AcceleratedComm* a) { return a && a->pending_graph ? attach_pending(a) : a; }
// Before PMPI_Comm_free: releases the entry (pending exchanges finish first).
void on_comm_free(MPI_Comm comm);
// Before PMPI_Finalize: releases every entry.
void clear_comms();

// nullptr when `comm` is not accelerated. Cheap: the last lookup is remembered (one comparison
// for a repeated communicator; not under MPI_THREAD_MULTIPLE), else one hash lookup under a
// shared lock (MPI_THREAD_MULTIPLE: communicators are created and freed by several threads).
AcceleratedComm* find_comm(MPI_Comm comm);
struct LastLookup {
  MPI_Comm comm{};  // a null handle: no communicator is ever this
  AcceleratedComm* found = nullptr;
};
inline LastLookup last_lookup __attribute__((visibility("hidden")));  // comm_table.cc keeps it (hidden: no GOT load)
inline AcceleratedComm* find_comm_fast(MPI_Comm comm) {
  return comm == last_lookup.comm ? last_lookup.found : find_comm(comm);
}
std::size_t accelerated_count();

// One more collective call cartplan ran on `a` (AcceleratedComm::calls). Not a read-modify-write:
// MPI lets only one collective run on a communicator at a time, so only readers
// (CARTPLAN_Accelerated_calls) can be concurrent, and a locked increment costs a blocking call's
// time for nothing.
inline void count_call(AcceleratedComm& a) {
  a.calls.store(a.calls.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

}  // namespace cartplan::interpose
