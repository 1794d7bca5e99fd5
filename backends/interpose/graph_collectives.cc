// Running the drop-in's graph calls through cartplan's graph collectives.
#include "backends/interpose/graph_collectives.h"

#include <algorithm>
#include <functional>
#include <memory>

#include "backends/interpose/collectives.h"
#include "backends/interpose/guard.h"
#include "backends/interpose/requests.h"

namespace cartplan::interpose {
namespace {

using engine::graph::GraphAlgoChoice;
using ir::graph::GraphAlgorithm;

// One call with the verdict's algorithm. A persistent init whose agreement fails or declines
// (on every rank alike: graph_collective.h) goes to Open MPI, which reports its own errors.
bool run(AcceleratedComm& a, Form form, const GraphPick& pick, mpi::GraphCall call, MPI_Comm comm, MPI_Info info,
         MPI_Request* request, int* rc) {
  Inside inside;
  mpi::GraphOptions options = a.graph->options;
  options.algo = choice_of(pick.algorithm);
  if (pick.algorithm == GraphAlgorithm::kGrid) options.grid_dims = pick.grid_d;
  options.check_collective = false;  // the drop-in behaves as MPI: no agreement MPI would not make
  call.options = &options;
  mpi::MpiStatus s;
  if (form == Form::kBlocking) {
    s = mpi::graph_blocking(comm, call);
  } else {
    const bool persistent = form == Form::kPersistent;
    std::unique_ptr<mpi::GraphExchange> x;
    s = mpi::graph_request(comm, call, persistent ? info : MPI_INFO_NULL,
                           persistent ? mpi::GraphExchange::Kind::kPersistent : mpi::GraphExchange::Kind::kNonblocking, &x, {},
                           /*start=*/false);
    if (persistent && (!s.ok() || !x)) return false;
    // A non-blocking call that cannot run reports its error at completion (fail_nonblocking).
    const bool made = s.ok();
    const int code = !made       ? fail_nonblocking(s.code, comm, request)
                     : persistent ? make_persistent(std::move(x), request)
                                  : start_nonblocking(std::move(x), request);
    if (code != MPI_SUCCESS) s = mpi::mpi_error(code, "could not create the request");
    else if (!made) s = {};  // reported at completion
  }
  count_call(a);
  *rc = raise_status(comm, s);
  return true;
}

// A persistent init's verdict, taken inside init after its agreement on the block sizes of
// every rank (so the same everywhere): one size on every rank, priced at that size; sizes that
// differ between ranks go to Open MPI (linear through cartplan never pays).
std::function<bool(std::int64_t, std::int64_t, mpi::GraphOptions*)> persistent_verdict(AcceleratedComm& a, ir::graph::GraphOp op) {
  return [&a, op](std::int64_t lo, std::int64_t hi, mpi::GraphOptions* o) {
    if (lo != hi) return false;
    const GraphPick pick = graph_pick(*a.graph, op, Form::kPersistent, std::max<std::int64_t>(hi, 0), o->grid_in_auto, a.reporter, a.serial);
    o->algo = choice_of(pick.algorithm);
    if (pick.algorithm == GraphAlgorithm::kGrid) o->grid_dims = pick.grid_d;
    return pick.accelerate;
  };
}

// The duplicate's native state failed on every rank alike (graph_prepare's agreement, or an
// MPI_Comm_idup duplicate of a failed state or without a spare: comm_table.cc): pass through.
bool state_ready(const AcceleratedComm& a) { return a.graph_state == AcceleratedComm::GraphState::kReady; }

}  // namespace

bool graph_taken(AcceleratedComm& a, ir::graph::GraphOp op, Form form, std::int64_t bytes) {
  return state_ready(a) && graph_pick(*a.graph, op, form, bytes, false, a.reporter, a.serial).accelerate;
}

// MPI lets block sizes differ between ranks on a graph (a sink passes sendcount 0, a rank may
// send 16 bytes and receive 8), so no rank may decide from its own sizes: a persistent init
// decides after its agreement (persistent_verdict); blocking and non-blocking calls take the
// size-free verdict of the v forms and run as their v form (learn_sizes), which is right for
// any sizes MPI allows.
bool graph_uniform(AcceleratedComm& a, Form form, ir::graph::GraphOp op, const void* sendbuf, int sendcount,
                   MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                   MPI_Request* request, int* rc) {
  if (!state_ready(a)) return false;
  mpi::GraphCall call = mpi::graph_uniform_call(op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  if (form == Form::kPersistent) {
    call.decide = persistent_verdict(a, op);
    return run(a, form, GraphPick{}, call, comm, info, request, rc);  // the algorithm: decide's
  }
  const GraphPick pick = graph_pick(*a.graph, op, form, -1, false, a.reporter, a.serial);
  if (!pick.accelerate) return false;
  call.learn_sizes = true;
  return run(a, form, pick, call, comm, info, request, rc);
}

bool graph_varied(AcceleratedComm& a, Form form, const mpi::GraphCall& call, MPI_Comm comm, MPI_Info info,
                  MPI_Request* request, int* rc) {
  if (!state_ready(a)) return false;
  const GraphPick pick = graph_pick(*a.graph, call.op, form, -1, false, a.reporter, a.serial);
  return pick.accelerate && run(a, form, pick, call, comm, info, request, rc);
}

}  // namespace cartplan::interpose
