// The drop-in's verdicts for distributed graphs that are not a Cartesian stencil: whether
// cartplan's graph collectives (backends/mpi/graph_collective.h: linear, seed 003's pairing,
// cumulative pairing, the 2-D, 3-D and 4-D grids) run a call instead of Open MPI, and with which algorithm.
//
// Creation (collective, right after detection declined the stencil; every rank in the same
// order): the native graph state is attached to the communicator (mpi::require_graph: one
// MPI_Comm_dup; one more for a later MPI_Comm_idup, idup_spare.h), one MPI_Allreduce agrees on its options (theta, an algorithm asked for in the
// Info), the combining patterns are constructed among neighbours, friends and partners only
// (graph_setup.h), and every rank prices its own schedule of each candidate at block sizes 0, 1,
// 2, ..., 2^24 bytes (engine/graph/price_table.h) with the cost model detection located, its
// phase term scaled for oversubscription exactly as for the stencil's verdicts (policy.h); a
// second MPI_Allreduce (MAX) gives every rank the same table (mpi::GraphComm::agree_prices, as
// graph auto's; a failure on one rank is in that reduction: the graph passes through on every
// rank). Nothing global happens per call.
//
// Per call shape (op, form, block size), from the agreed table alone, so every rank decides alike:
//     price(best combining) + overhead(form) + completion(form)  <=  (1 - kClearMargin) * price(linear)
// where linear is Open MPI's algorithm (one message per edge) and overhead/completion are
// policy.h's, plus, for non-blocking calls, the exchange a graph request builds on every call. Linear through cartplan is Open MPI's algorithm plus overhead: never taken in auto.
// The v forms of blocking and non-blocking calls have sizes that differ per rank, so their
// verdict cannot depend on the size: they are taken only where one combining candidate passes
// the rule at every size of the table; a non-blocking v call adds its size pass to the price,
// a blocking one does not (it reuses the previous call's sizes: mpi/graph_sized_calls.h). CARTPLAN_INTERPOSE_ALGORITHM=combining takes every call
// (the cheaper combining candidate at the call's size; at 0 bytes for v forms), =direct runs
// linear through cartplan; a graph Info cartplan_algorithm other than auto is obeyed.
//
//   std::unique_ptr<GraphVerdicts> v;
//   std::string why;
//   SpareComms spare;
//   if (graph_detect(graph, info, det, &v, &spare, &why)) ...     // collective
//   GraphPick p = graph_pick(*v, GraphOp::kAllgather, Form::kNonblocking, 8, false, reporter, serial);
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/interpose/detect.h"
#include "backends/interpose/idup_spare.h"
#include "backends/interpose/policy.h"
#include "backends/mpi/graph_comm.h"
#include "engine/graph/price_table.h"

namespace cartplan::interpose {

struct GraphPick {
  bool accelerate = false;
  ir::graph::GraphAlgorithm algorithm = ir::graph::GraphAlgorithm::kLinear;
  int grid_d = 0;  // grid: the d of its virtual grid grid_dims(p, d), 2, 3, 4 or kMaxGridD (most-D)
};

struct GraphVerdicts {
  engine::graph::PriceTable prices{};  // agreed: the max over ranks
  engine::CostModel model;             // alpha prices overhead(form)
  double per_core = 1.0;
  mpi::GraphOptions options;  // the native state's, with the creation Info's keys on top
  struct Decision {
    ir::graph::GraphOp op;
    Form form;
    std::int64_t bytes;  // -1: a v form (any size)
    bool grid_agreed;    // grid was a candidate (graph_pick)
    GraphPick pick;
  };
  std::vector<Decision> decisions;  // remembered, newest last
};

// Collective over `graph` (detection declined it, det.graph_candidate set). False with the
// reason (the same on every rank) when the graph collectives cannot take it. *spare gets the
// communicators of a later MPI_Comm_idup's duplicate (idup_spare.h; made before the first
// agreement, which includes their outcome).
bool graph_detect(MPI_Comm graph, MPI_Info info, const Detection& det, std::unique_ptr<GraphVerdicts>* out,
                  SpareComms* spare, std::string* why);

// Collective over `comm`, a graph with these verdicts (MPI_Comm_dup): the native state, the spare
// communicators of a later MPI_Comm_idup and every pattern the verdicts may pick, so that no
// later call constructs one (a non-blocking call must not wait for peers). Its outcome is agreed
// (two MPI_Allreduce on `comm`): an error on one rank is an error on every rank, so the duplicate
// is accelerated everywhere or nowhere.
mpi::MpiStatus graph_prepare(MPI_Comm comm, const GraphVerdicts& v, SpareComms* spare);

// An Info's algorithm choice and an algorithm, both ways (auto: linear).
ir::graph::GraphAlgorithm algorithm_of(engine::graph::GraphAlgoChoice c);
engine::graph::GraphAlgoChoice choice_of(ir::graph::GraphAlgorithm a);

// The verdict for one call shape (`bytes` -1: sizes that may differ by rank, the blocking and
// non-blocking calls); remembered, and with `reporter` printed once on stderr with its numbers.
// Grid is a candidate (of auto and of CARTPLAN_INTERPOSE_ALGORITHM=combining) only with
// `grid_agreed`, for a persistent init that agreed one block size on every rank with edges
// (ranks without edges relay blocks of that size): grid relays blocks through any rank, so ranks
// choosing from their own sizes could pick differently and hang.
GraphPick graph_pick(GraphVerdicts& v, ir::graph::GraphOp op, Form form, std::int64_t bytes, bool grid_agreed, bool reporter,
                     int serial);

}  // namespace cartplan::interpose
