// The C++ graph API (cartplan.hpp: DistGraphComm, GraphCollective): RAII and exceptions over the graph collectives.
#include <utility>
#include <vector>

#include "backends/mpi/cartplan.hpp"
#include "backends/mpi/cpp_throw.h"
#include "backends/mpi/graph_adjacent.h"
#include "backends/mpi/graph_collective.h"
#include "backends/mpi/graph_comm.h"
#include "backends/mpi/graph_exchange.h"
#include "ir/graph/plan.h"
#include "ir/graph/topology.h"

namespace cartplan::mpi {
namespace {

using ir::graph::GraphOp;

std::unique_ptr<GraphExchange> init(const DistGraphComm& g, const GraphCall& call, MPI_Info info) {
  std::unique_ptr<GraphExchange> x;
  throw_on_error(graph_request(g.get(), call, info, GraphExchange::Kind::kPersistent, &x));
  return x;
}

// A non-blocking call's exchange, started (Cart_graph_ineighbor_*).
std::unique_ptr<GraphExchange> started(MPI_Comm comm, const GraphCall& call) {
  std::unique_ptr<GraphExchange> x;
  throw_on_error(graph_request(comm, call, MPI_INFO_NULL, GraphExchange::Kind::kNonblocking, &x));
  return x;
}

}  // namespace

DistGraphComm::DistGraphComm(MPI_Comm comm, std::vector<int> sources, std::vector<int> destinations, MPI_Info info)
    : sources_(std::move(sources)), destinations_(std::move(destinations)) {
  throw_on_error(create_adjacent(comm, indegree(), sources_.data(), outdegree(), destinations_.data(), info, &comm_));
}

DistGraphComm DistGraphComm::view(MPI_Comm graphcomm) {
  if (graphcomm == MPI_COMM_NULL) throw MpiError(MPI_ERR_COMM, "DistGraphComm::view: the communicator is MPI_COMM_NULL");
  ir::graph::RankEdges edges;
  throw_on_error(graph_edges(graphcomm, &edges));
  DistGraphComm g;
  g.owned_ = false;
  g.comm_ = graphcomm;
  g.sources_ = std::move(edges.in);
  g.destinations_ = std::move(edges.out);
  return g;
}

DistGraphComm::~DistGraphComm() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owned_ && !finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

DistGraphComm::DistGraphComm(DistGraphComm&& other) noexcept
    : comm_(std::exchange(other.comm_, MPI_COMM_NULL)),
      sources_(std::exchange(other.sources_, {})),
      destinations_(std::exchange(other.destinations_, {})),
      owned_(other.owned_) {}

DistGraphComm& DistGraphComm::operator=(DistGraphComm&& other) noexcept {
  if (this != &other) {
    DistGraphComm dying(std::move(*this));
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    sources_ = std::exchange(other.sources_, {});
    destinations_ = std::exchange(other.destinations_, {});
    owned_ = other.owned_;
  }
  return *this;
}

GraphCollective::GraphCollective(std::unique_ptr<GraphExchange> x, bool persistent) : x_(std::move(x)), persistent_(persistent) {}
// A completed non-blocking call's exchange goes back to its communicator's pool (a later call
// with the same arguments takes it); others are destroyed, an active one after completing.
GraphCollective::~GraphCollective() {
  if (x_ && !persistent_) GraphExchange::recycle(std::move(x_));
}
GraphCollective::GraphCollective(GraphCollective&&) noexcept = default;
// Not defaulted: the old request's exchange goes back to the pool as in the destructor, so that
// `r = g.ialltoall(...); r.wait();` in a loop reuses (the next call finds the one this call built).
GraphCollective& GraphCollective::operator=(GraphCollective&& other) noexcept {
  if (this == &other) return *this;
  if (x_ && !persistent_) GraphExchange::recycle(std::move(x_));
  x_ = std::move(other.x_);
  persistent_ = other.persistent_;
  return *this;
}

// Each op in its three forms: the blocking member (Cart_graph_neighbor_*), the non-blocking one
// (Cart_graph_ineighbor_*) and the persistent factory (Cart_graph_neighbor_*_init). CALL (in
// parentheses) builds the GraphCall from the parameters (the rest), whose int or MPI_Count /
// MPI_Aint arrays it reads as they are (CountArray, DisplArray).
#define CPP_GRAPH_FORMS(NAME, CALL, ...)                                                                      \
  void DistGraphComm::NAME(__VA_ARGS__) const { throw_on_error(graph_blocking(comm_, CALL)); }                \
  GraphCollective DistGraphComm::i##NAME(__VA_ARGS__) const { return GraphCollective(started(comm_, CALL), false); } \
  GraphCollective GraphCollective::NAME(const DistGraphComm& g, __VA_ARGS__, MPI_Info info) {                 \
    return GraphCollective(init(g, CALL, info), true);                                                        \
  }

// The five ops with int counts, and with MPI_Count counts and MPI_Aint displacements (the
// large-count overloads, as Cart_graph_*_c): one definition, instantiated for both.
#define CPP_GRAPH_COLLECTIVES(COUNT, DISPL)                                                                   \
  CPP_GRAPH_FORMS(allgather, (graph_uniform_call(GraphOp::kAllgather, sb, sc, st, rb, rc, rt)), const void* sb, \
                  COUNT sc, MPI_Datatype st, void* rb, COUNT rc, MPI_Datatype rt)                             \
  CPP_GRAPH_FORMS(alltoall, (graph_uniform_call(GraphOp::kAlltoall, sb, sc, st, rb, rc, rt)), const void* sb,   \
                  COUNT sc, MPI_Datatype st, void* rb, COUNT rc, MPI_Datatype rt)                             \
  CPP_GRAPH_FORMS(allgatherv, (graph_allgatherv_call(sb, sc, st, rb, rc, rd, rt)), const void* sb, COUNT sc,    \
                  MPI_Datatype st, void* rb, const COUNT rc[], const DISPL rd[], MPI_Datatype rt)             \
  CPP_GRAPH_FORMS(alltoallv, (graph_alltoallv_call(sb, sc, sd, st, rb, rc, rd, rt)), const void* sb,            \
                  const COUNT sc[], const DISPL sd[], MPI_Datatype st, void* rb, const COUNT rc[], const DISPL rd[], \
                  MPI_Datatype rt)                                                                            \
  CPP_GRAPH_FORMS(alltoallw, (graph_alltoallw_call(sb, sc, sd, st, rb, rc, rd, rt)), const void* sb,            \
                  const COUNT sc[], const MPI_Aint sd[], const MPI_Datatype st[], void* rb, const COUNT rc[],   \
                  const MPI_Aint rd[], const MPI_Datatype rt[])

CPP_GRAPH_COLLECTIVES(int, int)
CPP_GRAPH_COLLECTIVES(MPI_Count, MPI_Aint)
#undef CPP_GRAPH_COLLECTIVES
#undef CPP_GRAPH_FORMS

GraphExchange& GraphCollective::exchange() const {
  if (!x_) throw MpiError(MPI_ERR_REQUEST, "the graph collective was moved from");
  return *x_;
}

void GraphCollective::start() {
  GraphExchange& x = exchange();
  // A non-blocking call's lane is the call's (lanes.h): a later call may hold it now.
  if (!persistent_) throw MpiError(MPI_ERR_REQUEST, "a non-blocking graph call's request runs once: it cannot be started");
  throw_on_error(x.start());
}
void GraphCollective::wait() { throw_on_error(exchange().wait()); }
bool GraphCollective::test() {
  bool done = false;
  throw_on_error(exchange().test(&done));
  return done;
}

// The public enumerators are ir::graph::GraphAlgorithm's, in its order (the CART_GRAPH_* values).
using IrAlgorithm = ir::graph::GraphAlgorithm;
static_assert(static_cast<int>(IrAlgorithm::kLinear) == static_cast<int>(GraphCollective::Algorithm::kLinear) &&
              static_cast<int>(IrAlgorithm::kPairing) == static_cast<int>(GraphCollective::Algorithm::kPairing) &&
              static_cast<int>(IrAlgorithm::kCumulative) == static_cast<int>(GraphCollective::Algorithm::kCumulative) &&
              static_cast<int>(IrAlgorithm::kGrid) == static_cast<int>(GraphCollective::Algorithm::kGrid));

GraphCollective::Algorithm GraphCollective::algorithm() const { return static_cast<Algorithm>(exchange().algorithm()); }
const char* GraphCollective::name(Algorithm a) { return ir::graph::to_string(static_cast<IrAlgorithm>(a)); }
int GraphCollective::grid_dims() const { return exchange().grid_ndims(); }

}  // namespace cartplan::mpi
