// Running the drop-in's graph calls through cartplan's graph collectives.
#include "backends/interpose/graph_collectives.h"

#include <memory>

#include "backends/interpose/collectives.h"
#include "backends/interpose/guard.h"
#include "backends/interpose/requests.h"

namespace cartplan::interpose {
namespace {

using engine::graph::GraphAlgoChoice;
using ir::graph::GraphAlgorithm;

GraphAlgoChoice choice_of(GraphAlgorithm a) {
  return a == GraphAlgorithm::kPairing ? GraphAlgoChoice::kPairing
         : a == GraphAlgorithm::kCumulative ? GraphAlgoChoice::kCumulative
                                            : GraphAlgoChoice::kLinear;
}

// One call with the verdict's algorithm. A persistent init whose agreement fails (it fails on
// every rank alike: graph_collective.h) goes to Open MPI, which reports its own errors.
bool run(AcceleratedComm& a, Form form, GraphAlgorithm algorithm, mpi::GraphCall call, MPI_Comm comm, MPI_Info info,
         MPI_Request* request, int* rc) {
  Inside inside;
  mpi::GraphOptions options = a.graph->options;
  options.algo = choice_of(algorithm);
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
    if (!s.ok() && persistent) return false;
    if (s.ok()) {
      const int code = persistent ? make_persistent(std::move(x), request) : start_nonblocking(std::move(x), request);
      if (code != MPI_SUCCESS) s = mpi::mpi_error(code, "could not create the request");
    }
  }
  ++a.calls;
  *rc = raise_status(comm, s);
  return true;
}

std::int64_t type_bytes(MPI_Datatype type, int count) {
  int size = 0;
  return PMPI_Type_size(type, &size) == MPI_SUCCESS ? static_cast<std::int64_t>(size) * count : -1;
}

}  // namespace

bool graph_taken(AcceleratedComm& a, ir::graph::GraphOp op, Form form, std::int64_t bytes) {
  return graph_pick(*a.graph, op, form, bytes, a.reporter, a.serial).accelerate;
}

bool graph_uniform(AcceleratedComm& a, Form form, ir::graph::GraphOp op, const void* sendbuf, int sendcount,
                   MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                   MPI_Request* request, int* rc) {
  // cartplan's graph collectives need one block size on both sides (a combining schedule
  // forwards blocks); a rank whose sides differ leaves the call to Open MPI.
  const std::int64_t bytes = type_bytes(sendtype, sendcount);
  if (bytes < 0 || bytes != type_bytes(recvtype, recvcount)) return false;
  const GraphPick pick = graph_pick(*a.graph, op, form, bytes, a.reporter, a.serial);
  if (!pick.accelerate) return false;
  const mpi::GraphCall call{op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype};
  return run(a, form, pick.algorithm, call, comm, info, request, rc);
}

bool graph_varied(AcceleratedComm& a, Form form, const mpi::GraphCall& call, MPI_Comm comm, MPI_Info info,
                  MPI_Request* request, int* rc) {
  const GraphPick pick = graph_pick(*a.graph, call.op, form, -1, a.reporter, a.serial);
  return pick.accelerate && run(a, form, pick.algorithm, call, comm, info, request, rc);
}

}  // namespace cartplan::interpose
