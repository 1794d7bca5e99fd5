// The C API: thin wrappers that map cartplan's MPI core (NeighborhoodComm, Exchange, specs)
// to MPI error codes and Cart_error_message().
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/mpi/api_guard.h"
#include "backends/mpi/cartplan_mpi.h"
#include "backends/mpi/exchange.h"
#include "backends/mpi/graph_adjacent.h"
#include "backends/mpi/graph_collective.h"
#include "backends/mpi/neighborhood_comm.h"
#include "backends/mpi/reduce_specs.h"
#include "backends/mpi/request.h"
#include "backends/mpi/specs.h"
#include "backends/mpi/triangle.h"
#include "engine/program_print.h"
#include "engine/stencils.h"
#include "ir/json.h"

using cartplan::mpi::Exchange;
using cartplan::mpi::ExchangeSpec;
using cartplan::mpi::GraphExchange;
using cartplan::mpi::graph_allgatherv_call;
using cartplan::mpi::graph_alltoallv_call;
using cartplan::mpi::graph_uniform_call;
using cartplan::mpi::MpiStatus;
using cartplan::mpi::NeighborhoodComm;
using cartplan::mpi::mpi_error;

namespace {

using cartplan::mpi::guarded;
using cartplan::mpi::report;

// A halo request (Cart_halo_exchange_init) runs a halo plan, not a collective's ir::Plan.
MpiStatus not_a_collective(const char* fn) {
  return mpi_error(MPI_ERR_REQUEST, std::string(fn) + ": the request is a halo exchange (its plan: Cart_halo_plan)");
}

// The communicator whose error handler a request's errors go to.
MPI_Comm request_comm(const Cart_Request* request) {
  return request && *request ? (*request)->error_comm() : MPI_COMM_SELF;
}

int to_mpi_rank(int rank) { return rank == cartplan::engine::kNoRank ? MPI_PROC_NULL : rank; }

std::vector<int> offset_of(const NeighborhoodComm& nc, const int relative[]) {
  return std::vector<int>(relative, relative + nc.nbh().ndims());
}

// Runs a query on the neighbourhood of `comm`.
template <class Query>
int query(MPI_Comm comm, Query&& q) {
  return guarded(comm, [&]() -> MpiStatus {
    NeighborhoodComm* nc = nullptr;
    MpiStatus s = cartplan::mpi::require_neighborhood(comm, &nc);
    return s.ok() ? q(*nc) : s;
  });
}

int blocking(MPI_Comm comm, const cartplan::mpi::SpecMaker& make) {
  return guarded(comm, [&] { return cartplan::mpi::run_blocking(comm, make); });
}

// A blocking call with one count and datatype per side (alltoall, allgather, allreduce,
// reduce_scatter), identified by its raw arguments so that a repeated call skips building its
// spec. `code` names the collective and the count type; the other words are the arguments.
template <class Count, class... Words>
cartplan::mpi::CallKey key_of(int code, Words... words) {
  return cartplan::mpi::uniform_call_key(static_cast<std::uintptr_t>(code) * 2 + (sizeof(Count) > sizeof(int) ? 1 : 0), words...);
}

// `make` (a CART_SPEC lambda, several references wide) is wrapped by reference: a std::function
// of it would allocate on every call, also on the repeats that never build the spec.
template <class Count, class Make, class... Words>
int blocking_keyed(MPI_Comm comm, int code, const Make& make, Words... words) {
  const cartplan::mpi::CallKey key = key_of<Count>(code, words...);
  const cartplan::mpi::SpecMaker spec = std::cref(make);
  return guarded(comm, [&] { return cartplan::mpi::run_blocking(comm, spec, &key); });
}

// `key` (non-blocking uniform calls): a repeat of a completed call restarts its exchange
// (make_exchange, Exchange::create_nonblocking).
int make_request(MPI_Comm comm, MPI_Info info, bool persistent, const cartplan::mpi::SpecMaker& make, Cart_Request* request,
                 const cartplan::mpi::CallKey* key = nullptr) {
  return guarded(comm, [&]() -> MpiStatus {
    // A NULL request is an argument error like any other: in init (collective) and in checking
    // mode it takes part in the agreement, so that no rank is left waiting for this one.
    MpiStatus bad = request ? MpiStatus{} : mpi_error(MPI_ERR_REQUEST, "request is NULL");
    if (request) *request = CART_REQUEST_NULL;
    std::unique_ptr<Exchange> x;
    MpiStatus s = cartplan::mpi::make_exchange(comm, info, persistent ? Exchange::Kind::kPersistent : Exchange::Kind::kNonblocking,
                                               make, &x, bad, key);
    if (s.ok() && !bad.ok()) s = bad;
    if (s.ok() && !persistent) s = x->start();
    if (!s.ok()) return s;
    *request = new Cart_Request_s{nullptr, std::move(x), persistent, nullptr, nullptr};
    return {};
  });
}

// A non-blocking call with one count and datatype per side (ialltoall, iallgather), keyed as
// blocking_keyed's calls (and `make` wrapped by reference as there).
template <class Count, class Make, class... Words>
int nonblocking_keyed(MPI_Comm comm, int code, const Make& make, Cart_Request* request, Words... words) {
  const cartplan::mpi::CallKey key = key_of<Count>(code, words...);
  return make_request(comm, MPI_INFO_NULL, false, std::cref(make), request, &key);
}

// Completion of one request as MPI_Wait/MPI_Test define it: a completed non-blocking request
// is freed and set to CART_REQUEST_NULL, a persistent one becomes inactive.
MpiStatus complete(Cart_Request* request, bool block, bool* done) {
  *done = true;
  if (!*request) return {};  // like MPI_Wait on MPI_REQUEST_NULL
  MpiStatus s;
  if (block) {
    s = (*request)->wait();
  } else {
    s = (*request)->test(done);
  }
  if (*done && !(*request)->persistent) {
    if ((*request)->exchange) Exchange::recycle(std::move((*request)->exchange));
    if ((*request)->graph) GraphExchange::recycle(std::move((*request)->graph));
    delete *request;
    *request = CART_REQUEST_NULL;
  }
  return s;
}

}  // namespace

extern "C" {

const char* Cart_error_message(void) { return cartplan::mpi::last_error_message().c_str(); }

int Cart_neighborhood_create(MPI_Comm comm, int d, const int dims[], const int periods[], int t, const int targetrelative[],
                             const int* /*weights: cartplan does not remap, so they are ignored*/, MPI_Info info,
                             int reorder, MPI_Comm* cartcomm) {
  return guarded(comm, [&] { return cartplan::mpi::create_neighborhood(comm, d, dims, periods, t, targetrelative, info, reorder, cartcomm); });
}

int Cart_relative_rank(MPI_Comm cartcomm, const int relative[], int* rank) {
  return query(cartcomm, [&](const NeighborhoodComm& nc) -> MpiStatus {
    if (!relative || !rank) return mpi_error(MPI_ERR_ARG, "relative or rank is NULL");
    *rank = to_mpi_rank(nc.grid().relative_rank(nc.coords(), offset_of(nc, relative)));
    return {};
  });
}

int Cart_relative_shift(MPI_Comm cartcomm, const int relative[], int* inrank, int* outrank) {
  return query(cartcomm, [&](const NeighborhoodComm& nc) -> MpiStatus {
    if (!relative || !inrank || !outrank) return mpi_error(MPI_ERR_ARG, "relative, inrank or outrank is NULL");
    const cartplan::engine::Grid::Shift s = nc.grid().relative_shift(nc.coords(), offset_of(nc, relative));
    *inrank = to_mpi_rank(s.source);
    *outrank = to_mpi_rank(s.dest);
    return {};
  });
}

int Cart_relative_coord(MPI_Comm cartcomm, int rank, int relative[]) {
  return query(cartcomm, [&](const NeighborhoodComm& nc) -> MpiStatus {
    if (!relative) return mpi_error(MPI_ERR_ARG, "relative is NULL");
    if (rank < 0 || rank >= nc.grid().size()) return mpi_error(MPI_ERR_RANK, "rank " + std::to_string(rank) + " is not in the grid");
    const cartplan::engine::Coords other = nc.grid().coords(rank);
    for (int k = 0; k < nc.grid().ndims(); ++k) {
      int diff = other[k] - nc.coords()[k];
      const int n = nc.grid().dims()[k];
      if (nc.grid().periods()[k]) {  // the representative in (-n/2, n/2]
        diff = ((diff % n) + n) % n;
        if (diff > n / 2) diff -= n;
      }
      relative[k] = diff;
    }
    return {};
  });
}

int Cart_allranks_relative(MPI_Comm cartcomm, int n, const int relative[], int ranks[]) {
  return query(cartcomm, [&](const NeighborhoodComm& nc) -> MpiStatus {
    if (n < 0 || (n > 0 && (!relative || !ranks))) return mpi_error(MPI_ERR_ARG, "n is negative or an array is NULL");
    const int d = nc.nbh().ndims();
    for (int i = 0; i < n; ++i)
      ranks[i] = to_mpi_rank(nc.grid().relative_rank(nc.coords(), offset_of(nc, relative + static_cast<std::size_t>(i) * d)));
    return {};
  });
}

int Cart_neighbor_degrees(MPI_Comm cartcomm, int* t, int* indegree, int* outdegree) {
  return query(cartcomm, [&](const NeighborhoodComm& nc) -> MpiStatus {
    if (!t || !indegree || !outdegree) return mpi_error(MPI_ERR_ARG, "an output argument is NULL");
    *t = nc.nbh().size();
    *indegree = *outdegree = 0;
    for (int i = 0; i < nc.nbh().size(); ++i) {
      *indegree += nc.has_source(i);
      *outdegree += nc.has_target(i);
    }
    return {};
  });
}

int Cart_neighbor_count(MPI_Comm cartcomm, int* t) {
  int in = 0, out = 0;
  return Cart_neighbor_degrees(cartcomm, t, &in, &out);
}

int Cart_neighbor_get(MPI_Comm cartcomm, int maxin, int sources[], int* sourceweights, int maxout, int targets[],
                      int* targetweights) {
  return query(cartcomm, [&](const NeighborhoodComm& nc) -> MpiStatus {
    const int t = nc.nbh().size();
    if (maxin < t || maxout < t || !sources || !targets)
      return mpi_error(MPI_ERR_ARG, "maxin and maxout must be at least t = " + std::to_string(t) + ", arrays non-NULL");
    const bool sw = sourceweights && sourceweights != MPI_UNWEIGHTED;
    const bool tw = targetweights && targetweights != MPI_UNWEIGHTED;
    for (int i = 0; i < t; ++i) {
      const cartplan::engine::Grid::Shift s = nc.grid().relative_shift(nc.coords(), nc.nbh()[i]);
      sources[i] = to_mpi_rank(s.source);
      targets[i] = to_mpi_rank(s.dest);
      if (sw) sourceweights[i] = 1;
      if (tw) targetweights[i] = 1;
    }
    return {};
  });
}

int Cart_graph_get(MPI_Comm cartcomm, int maxin, int sources[], int maxout, int targets[]) {
  return query(cartcomm, [&](const NeighborhoodComm& nc) -> MpiStatus {
    int in = 0, out = 0;
    for (const cartplan::ir::Offset& o : nc.nbh().offsets()) {
      const cartplan::engine::Grid::Shift s = nc.grid().relative_shift(nc.coords(), o);
      if (s.source != cartplan::engine::kNoRank) {
        if (in >= maxin || !sources) return mpi_error(MPI_ERR_ARG, "maxin is smaller than the in-degree");
        sources[in++] = s.source;
      }
      if (s.dest != cartplan::engine::kNoRank) {
        if (out >= maxout || !targets) return mpi_error(MPI_ERR_ARG, "maxout is smaller than the out-degree");
        targets[out++] = s.dest;
      }
    }
    return {};
  });
}

int Cart_neighbors_count(int d, int metric, int shadow, int depth, int* t) {
  return guarded(MPI_COMM_SELF, [&]() -> MpiStatus {
    if (!t) return mpi_error(MPI_ERR_ARG, "t is NULL");
    if (metric != CART_CHEBYSHEV && metric != CART_MANHATTAN)
      return mpi_error(MPI_ERR_ARG, "metric must be CART_CHEBYSHEV or CART_MANHATTAN");
    auto n = metric == CART_CHEBYSHEV ? cartplan::engine::stencils::chebyshev(d, depth, shadow)
                                      : cartplan::engine::stencils::manhattan(d, depth, shadow);
    if (!n) return mpi_error(MPI_ERR_ARG, n.error());
    *t = n->size();
    return {};
  });
}

int Cart_neighbors(int d, int metric, int shadow, int depth, int maxt, int relative[]) {
  return guarded(MPI_COMM_SELF, [&]() -> MpiStatus {
    if (metric != CART_CHEBYSHEV && metric != CART_MANHATTAN)
      return mpi_error(MPI_ERR_ARG, "metric must be CART_CHEBYSHEV or CART_MANHATTAN");
    auto n = metric == CART_CHEBYSHEV ? cartplan::engine::stencils::chebyshev(d, depth, shadow)
                                      : cartplan::engine::stencils::manhattan(d, depth, shadow);
    if (!n) return mpi_error(MPI_ERR_ARG, n.error());
    if (maxt < n->size() || (maxt > 0 && !relative))
      return mpi_error(MPI_ERR_TRUNCATE, "the neighbourhood has " + std::to_string(n->size()) + " offsets, maxt is " + std::to_string(maxt));
    for (int i = 0; i < n->size(); ++i)
      for (int k = 0; k < d; ++k) relative[static_cast<std::size_t>(i) * d + k] = (*n)[i][k];
    return {};
  });
}

// The collectives, in three forms each (blocking, Cart_i*, *_init), and twice: with int counts
// (SUFFIX empty) and with MPI_Count counts and MPI_Aint displacements (SUFFIX _c, as MPI-4's
// large-count functions). One definition, instantiated for both.
#define CART_SPEC(fn, ...) [&](const NeighborhoodComm& nc) { return cartplan::mpi::fn(nc, __VA_ARGS__); }

#define CART_COLLECTIVES(SUFFIX, COUNT, DISPL)                                                                               \
  int Cart_alltoall##SUFFIX(const void* sb, COUNT sc, MPI_Datatype st, void* rb, COUNT rc, MPI_Datatype rt, MPI_Comm comm) { \
    return blocking_keyed<COUNT>(comm, 0, CART_SPEC(alltoall_spec<COUNT>, sb, sc, st, rb, rc, rt), sb, sc, st, rb, rc, rt);    \
  }                                                                                                                          \
  int Cart_alltoallv##SUFFIX(const void* sb, const COUNT sc[], const DISPL sd[], MPI_Datatype st, void* rb, const COUNT rc[], \
                             const DISPL rd[], MPI_Datatype rt, MPI_Comm comm) {                                            \
    return blocking(comm, CART_SPEC(alltoallv_spec<COUNT CARTPLAN_COMMA DISPL>, sb, sc, sd, st, rb, rc, rd, rt));            \
  }                                                                                                                          \
  int Cart_alltoallw##SUFFIX(const void* sb, const COUNT sc[], const MPI_Aint sd[], const MPI_Datatype st[], void* rb,       \
                             const COUNT rc[], const MPI_Aint rd[], const MPI_Datatype rt[], MPI_Comm comm) {               \
    return blocking(comm, CART_SPEC(alltoallw_spec<COUNT>, sb, sc, sd, st, rb, rc, rd, rt));                                 \
  }                                                                                                                          \
  int Cart_allgather##SUFFIX(const void* sb, COUNT sc, MPI_Datatype st, void* rb, COUNT rc, MPI_Datatype rt, MPI_Comm comm) { \
    return blocking_keyed<COUNT>(comm, 1, CART_SPEC(allgather_spec<COUNT>, sb, sc, st, rb, rc, rt), sb, sc, st, rb, rc, rt);   \
  }                                                                                                                          \
  int Cart_allgatherv##SUFFIX(const void* sb, COUNT sc, MPI_Datatype st, void* rb, const COUNT rc[], const DISPL rd[],      \
                              MPI_Datatype rt, MPI_Comm comm) {                                                             \
    return blocking(comm, CART_SPEC(allgatherv_spec<COUNT CARTPLAN_COMMA DISPL>, sb, sc, st, rb, rc, rd, rt));               \
  }                                                                                                                          \
  int Cart_allgatherw##SUFFIX(const void* sb, COUNT sc, MPI_Datatype st, void* rb, const COUNT rc[], const MPI_Aint rd[],   \
                              const MPI_Datatype rt[], MPI_Comm comm) {                                                     \
    return blocking(comm, CART_SPEC(allgatherw_spec<COUNT>, sb, sc, st, rb, rc, rd, rt));                                    \
  }                                                                                                                          \
  int Cart_ialltoall##SUFFIX(const void* sb, COUNT sc, MPI_Datatype st, void* rb, COUNT rc, MPI_Datatype rt, MPI_Comm comm,  \
                             Cart_Request* r) {                                                                              \
    return nonblocking_keyed<COUNT>(comm, 0, CART_SPEC(alltoall_spec<COUNT>, sb, sc, st, rb, rc, rt), r, sb, sc, st, rb, rc, rt); \
  }                                                                                                                          \
  int Cart_ialltoallv##SUFFIX(const void* sb, const COUNT sc[], const DISPL sd[], MPI_Datatype st, void* rb,                 \
                              const COUNT rc[], const DISPL rd[], MPI_Datatype rt, MPI_Comm comm, Cart_Request* r) {        \
    return make_request(comm, MPI_INFO_NULL, false,                                                                          \
                        CART_SPEC(alltoallv_spec<COUNT CARTPLAN_COMMA DISPL>, sb, sc, sd, st, rb, rc, rd, rt), r);           \
  }                                                                                                                          \
  int Cart_ialltoallw##SUFFIX(const void* sb, const COUNT sc[], const MPI_Aint sd[], const MPI_Datatype st[], void* rb,      \
                              const COUNT rc[], const MPI_Aint rd[], const MPI_Datatype rt[], MPI_Comm comm,                \
                              Cart_Request* r) {                                                                             \
    return make_request(comm, MPI_INFO_NULL, false, CART_SPEC(alltoallw_spec<COUNT>, sb, sc, sd, st, rb, rc, rd, rt), r);    \
  }                                                                                                                          \
  int Cart_iallgather##SUFFIX(const void* sb, COUNT sc, MPI_Datatype st, void* rb, COUNT rc, MPI_Datatype rt, MPI_Comm comm, \
                              Cart_Request* r) {                                                                             \
    return nonblocking_keyed<COUNT>(comm, 1, CART_SPEC(allgather_spec<COUNT>, sb, sc, st, rb, rc, rt), r, sb, sc, st, rb, rc, rt); \
  }                                                                                                                          \
  int Cart_iallgatherv##SUFFIX(const void* sb, COUNT sc, MPI_Datatype st, void* rb, const COUNT rc[], const DISPL rd[],     \
                               MPI_Datatype rt, MPI_Comm comm, Cart_Request* r) {                                            \
    return make_request(comm, MPI_INFO_NULL, false,                                                                          \
                        CART_SPEC(allgatherv_spec<COUNT CARTPLAN_COMMA DISPL>, sb, sc, st, rb, rc, rd, rt), r);              \
  }                                                                                                                          \
  int Cart_iallgatherw##SUFFIX(const void* sb, COUNT sc, MPI_Datatype st, void* rb, const COUNT rc[], const MPI_Aint rd[],  \
                               const MPI_Datatype rt[], MPI_Comm comm, Cart_Request* r) {                                    \
    return make_request(comm, MPI_INFO_NULL, false, CART_SPEC(allgatherw_spec<COUNT>, sb, sc, st, rb, rc, rd, rt), r);       \
  }                                                                                                                          \
  int Cart_alltoall_init##SUFFIX(const void* sb, COUNT sc, MPI_Datatype st, void* rb, COUNT rc, MPI_Datatype rt,             \
                                 MPI_Comm comm, MPI_Info info, Cart_Request* r) {                                            \
    return make_request(comm, info, true, CART_SPEC(alltoall_spec<COUNT>, sb, sc, st, rb, rc, rt), r);                       \
  }                                                                                                                          \
  int Cart_alltoallv_init##SUFFIX(const void* sb, const COUNT sc[], const DISPL sd[], MPI_Datatype st, void* rb,             \
                                  const COUNT rc[], const DISPL rd[], MPI_Datatype rt, MPI_Comm comm, MPI_Info info,         \
                                  Cart_Request* r) {                                                                         \
    return make_request(comm, info, true, CART_SPEC(alltoallv_spec<COUNT CARTPLAN_COMMA DISPL>, sb, sc, sd, st, rb, rc, rd, rt), \
                        r);                                                                                                  \
  }                                                                                                                          \
  int Cart_alltoallw_init##SUFFIX(const void* sb, const COUNT sc[], const MPI_Aint sd[], const MPI_Datatype st[], void* rb,  \
                                  const COUNT rc[], const MPI_Aint rd[], const MPI_Datatype rt[], MPI_Comm comm,             \
                                  MPI_Info info, Cart_Request* r) {                                                          \
    return make_request(comm, info, true, CART_SPEC(alltoallw_spec<COUNT>, sb, sc, sd, st, rb, rc, rd, rt), r);              \
  }                                                                                                                          \
  int Cart_allgather_init##SUFFIX(const void* sb, COUNT sc, MPI_Datatype st, void* rb, COUNT rc, MPI_Datatype rt,            \
                                  MPI_Comm comm, MPI_Info info, Cart_Request* r) {                                           \
    return make_request(comm, info, true, CART_SPEC(allgather_spec<COUNT>, sb, sc, st, rb, rc, rt), r);                      \
  }                                                                                                                          \
  int Cart_allgatherv_init##SUFFIX(const void* sb, COUNT sc, MPI_Datatype st, void* rb, const COUNT rc[], const DISPL rd[], \
                                   MPI_Datatype rt, MPI_Comm comm, MPI_Info info, Cart_Request* r) {                         \
    return make_request(comm, info, true, CART_SPEC(allgatherv_spec<COUNT CARTPLAN_COMMA DISPL>, sb, sc, st, rb, rc, rd, rt), \
                        r);                                                                                                  \
  }                                                                                                                          \
  int Cart_allgatherw_init##SUFFIX(const void* sb, COUNT sc, MPI_Datatype st, void* rb, const COUNT rc[],                    \
                                   const MPI_Aint rd[], const MPI_Datatype rt[], MPI_Comm comm, MPI_Info info,              \
                                   Cart_Request* r) {                                                                        \
    return make_request(comm, info, true, CART_SPEC(allgatherw_spec<COUNT>, sb, sc, st, rb, rc, rd, rt), r);                 \
  }

#define CARTPLAN_COMMA ,
CART_COLLECTIVES(, int, int)
CART_COLLECTIVES(_c, MPI_Count, MPI_Aint)
#undef CARTPLAN_COMMA
#undef CART_COLLECTIVES

int Cart_type_create_triangle(int order, int ld, int kind, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return guarded(MPI_COMM_SELF, [&] { return cartplan::mpi::create_triangle(order, ld, kind, oldtype, newtype); });
}

// The reductions and rooted collectives (reduce_specs.h), in the same three forms and twice.
#define CART_REDUCTIONS(SUFFIX, COUNT)                                                                                     \
  int Cart_allreduce##SUFFIX(const void* sb, void* rb, COUNT n, MPI_Datatype ty, MPI_Op op, MPI_Comm comm) {               \
    return blocking_keyed<COUNT>(comm, 2, CART_SPEC(allreduce_spec<COUNT>, sb, rb, n, ty, op), sb, rb, n, ty, op, 0);     \
  }                                                                                                                        \
  int Cart_reduce_scatter##SUFFIX(const void* sb, void* rb, COUNT n, MPI_Datatype ty, MPI_Op op, MPI_Comm comm) {          \
    return blocking_keyed<COUNT>(comm, 3, CART_SPEC(reduce_scatter_spec<COUNT>, sb, rb, n, ty, op), sb, rb, n, ty, op, 0); \
  }                                                                                                                        \
  int Cart_bcast##SUFFIX(void* b, COUNT n, MPI_Datatype ty, int root, MPI_Comm comm) {                                     \
    return blocking(comm, CART_SPEC(bcast_spec<COUNT>, b, n, ty, root));                                                   \
  }                                                                                                                        \
  int Cart_gather##SUFFIX(const void* sb, COUNT sc, MPI_Datatype st, void* rb, COUNT rc, MPI_Datatype rt, int root,        \
                          MPI_Comm comm) {                                                                                 \
    return blocking(comm, CART_SPEC(gather_spec<COUNT>, sb, sc, st, rb, rc, rt, root));                                    \
  }                                                                                                                        \
  int Cart_scatter##SUFFIX(const void* sb, COUNT sc, MPI_Datatype st, void* rb, COUNT rc, MPI_Datatype rt, int root,       \
                           MPI_Comm comm) {                                                                                \
    return blocking(comm, CART_SPEC(scatter_spec<COUNT>, sb, sc, st, rb, rc, rt, root));                                   \
  }                                                                                                                        \
  int Cart_reduce##SUFFIX(const void* sb, void* rb, COUNT n, MPI_Datatype ty, MPI_Op op, int root, MPI_Comm comm) {        \
    return blocking(comm, CART_SPEC(reduce_spec<COUNT>, sb, rb, n, ty, op, root));                                         \
  }                                                                                                                        \
  int Cart_iallreduce##SUFFIX(const void* sb, void* rb, COUNT n, MPI_Datatype ty, MPI_Op op, MPI_Comm comm,                \
                              Cart_Request* r) {                                                                           \
    return make_request(comm, MPI_INFO_NULL, false, CART_SPEC(allreduce_spec<COUNT>, sb, rb, n, ty, op), r);               \
  }                                                                                                                        \
  int Cart_ireduce_scatter##SUFFIX(const void* sb, void* rb, COUNT n, MPI_Datatype ty, MPI_Op op, MPI_Comm comm,           \
                                   Cart_Request* r) {                                                                      \
    return make_request(comm, MPI_INFO_NULL, false, CART_SPEC(reduce_scatter_spec<COUNT>, sb, rb, n, ty, op), r);          \
  }                                                                                                                        \
  int Cart_ibcast##SUFFIX(void* b, COUNT n, MPI_Datatype ty, int root, MPI_Comm comm, Cart_Request* r) {                   \
    return make_request(comm, MPI_INFO_NULL, false, CART_SPEC(bcast_spec<COUNT>, b, n, ty, root), r);                      \
  }                                                                                                                        \
  int Cart_igather##SUFFIX(const void* sb, COUNT sc, MPI_Datatype st, void* rb, COUNT rc, MPI_Datatype rt, int root,       \
                           MPI_Comm comm, Cart_Request* r) {                                                               \
    return make_request(comm, MPI_INFO_NULL, false, CART_SPEC(gather_spec<COUNT>, sb, sc, st, rb, rc, rt, root), r);       \
  }                                                                                                                        \
  int Cart_iscatter##SUFFIX(const void* sb, COUNT sc, MPI_Datatype st, void* rb, COUNT rc, MPI_Datatype rt, int root,      \
                            MPI_Comm comm, Cart_Request* r) {                                                              \
    return make_request(comm, MPI_INFO_NULL, false, CART_SPEC(scatter_spec<COUNT>, sb, sc, st, rb, rc, rt, root), r);      \
  }                                                                                                                        \
  int Cart_ireduce##SUFFIX(const void* sb, void* rb, COUNT n, MPI_Datatype ty, MPI_Op op, int root, MPI_Comm comm,         \
                           Cart_Request* r) {                                                                              \
    return make_request(comm, MPI_INFO_NULL, false, CART_SPEC(reduce_spec<COUNT>, sb, rb, n, ty, op, root), r);            \
  }                                                                                                                        \
  int Cart_allreduce_init##SUFFIX(const void* sb, void* rb, COUNT n, MPI_Datatype ty, MPI_Op op, MPI_Comm comm,            \
                                  MPI_Info info, Cart_Request* r) {                                                        \
    return make_request(comm, info, true, CART_SPEC(allreduce_spec<COUNT>, sb, rb, n, ty, op), r);                         \
  }                                                                                                                        \
  int Cart_reduce_scatter_init##SUFFIX(const void* sb, void* rb, COUNT n, MPI_Datatype ty, MPI_Op op, MPI_Comm comm,       \
                                       MPI_Info info, Cart_Request* r) {                                                   \
    return make_request(comm, info, true, CART_SPEC(reduce_scatter_spec<COUNT>, sb, rb, n, ty, op), r);                    \
  }                                                                                                                        \
  int Cart_bcast_init##SUFFIX(void* b, COUNT n, MPI_Datatype ty, int root, MPI_Comm comm, MPI_Info info,                   \
                              Cart_Request* r) {                                                                           \
    return make_request(comm, info, true, CART_SPEC(bcast_spec<COUNT>, b, n, ty, root), r);                                \
  }                                                                                                                        \
  int Cart_gather_init##SUFFIX(const void* sb, COUNT sc, MPI_Datatype st, void* rb, COUNT rc, MPI_Datatype rt, int root,   \
                               MPI_Comm comm, MPI_Info info, Cart_Request* r) {                                            \
    return make_request(comm, info, true, CART_SPEC(gather_spec<COUNT>, sb, sc, st, rb, rc, rt, root), r);                 \
  }                                                                                                                        \
  int Cart_scatter_init##SUFFIX(const void* sb, COUNT sc, MPI_Datatype st, void* rb, COUNT rc, MPI_Datatype rt, int root,  \
                                MPI_Comm comm, MPI_Info info, Cart_Request* r) {                                           \
    return make_request(comm, info, true, CART_SPEC(scatter_spec<COUNT>, sb, sc, st, rb, rc, rt, root), r);                \
  }                                                                                                                        \
  int Cart_reduce_init##SUFFIX(const void* sb, void* rb, COUNT n, MPI_Datatype ty, MPI_Op op, int root, MPI_Comm comm,     \
                               MPI_Info info, Cart_Request* r) {                                                           \
    return make_request(comm, info, true, CART_SPEC(reduce_spec<COUNT>, sb, rb, n, ty, op, root), r);                      \
  }

CART_REDUCTIONS(, int)
CART_REDUCTIONS(_c, MPI_Count)
#undef CART_REDUCTIONS

// Graph collectives on any distributed-graph communicator (graph_collective.h).
namespace {

int graph_request(MPI_Comm comm, const cartplan::mpi::GraphCall& call, MPI_Info info, bool persistent, Cart_Request* request) {
  return guarded(comm, [&]() -> MpiStatus {
    // A NULL request takes part in init's agreement like any argument error.
    MpiStatus bad = request ? MpiStatus{} : mpi_error(MPI_ERR_REQUEST, "request is NULL");
    if (request) *request = CART_REQUEST_NULL;
    std::unique_ptr<GraphExchange> x;
    MpiStatus s = cartplan::mpi::graph_request(comm, call, info,
                                               persistent ? GraphExchange::Kind::kPersistent : GraphExchange::Kind::kNonblocking,
                                               &x, bad);
    if (s.ok() && !bad.ok()) s = bad;
    if (!s.ok()) return s;
    auto* r = new Cart_Request_s{};
    r->persistent = persistent;
    r->graph = std::move(x);
    *request = r;
    return {};
  });
}

}  // namespace

int Cart_graph_comm_create_adjacent(MPI_Comm comm, int indegree, const int sources[], int outdegree, const int destinations[],
                                    MPI_Info info, MPI_Comm* graphcomm) {
  return guarded(comm, [&] { return cartplan::mpi::create_adjacent(comm, indegree, sources, outdegree, destinations, info, graphcomm); });
}

// The graph collectives in three forms each (blocking, non-blocking, persistent), once with
// MPI's int counts and displacements and once in the large-count form (SUFFIX _c: MPI_Count
// counts, MPI_Aint displacements); both build the same GraphCall (graph_collective.h).
#define CART_GRAPH_FORMS(NAME, SUFFIX, PARAMS, CALL)                                                             \
  int Cart_graph_neighbor_##NAME##SUFFIX(PARAMS, MPI_Comm comm) {                                                \
    return guarded(comm, [&] { return cartplan::mpi::graph_blocking(comm, CALL); });                             \
  }                                                                                                              \
  int Cart_graph_ineighbor_##NAME##SUFFIX(PARAMS, MPI_Comm comm, Cart_Request* r) {                              \
    return graph_request(comm, CALL, MPI_INFO_NULL, false, r);                                                   \
  }                                                                                                              \
  int Cart_graph_neighbor_##NAME##_init##SUFFIX(PARAMS, MPI_Comm comm, MPI_Info info, Cart_Request* r) {         \
    return graph_request(comm, CALL, info, true, r);                                                             \
  }
#define CART_COMMA ,
#define CART_GRAPH_COLLECTIVES(SUFFIX, COUNT, DISPL)                                                                        \
  CART_GRAPH_FORMS(allgather, SUFFIX,                                                                                       \
                   const void* sb CART_COMMA COUNT sc CART_COMMA MPI_Datatype st CART_COMMA void* rb CART_COMMA COUNT rc    \
                       CART_COMMA MPI_Datatype rt,                                                                          \
                   graph_uniform_call(cartplan::ir::graph::GraphOp::kAllgather, sb, sc, st, rb, rc, rt))                    \
  CART_GRAPH_FORMS(alltoall, SUFFIX,                                                                                        \
                   const void* sb CART_COMMA COUNT sc CART_COMMA MPI_Datatype st CART_COMMA void* rb CART_COMMA COUNT rc    \
                       CART_COMMA MPI_Datatype rt,                                                                          \
                   graph_uniform_call(cartplan::ir::graph::GraphOp::kAlltoall, sb, sc, st, rb, rc, rt))                     \
  CART_GRAPH_FORMS(allgatherv, SUFFIX,                                                                                      \
                   const void* sb CART_COMMA COUNT sc CART_COMMA MPI_Datatype st CART_COMMA void* rb CART_COMMA const COUNT \
                       rc[] CART_COMMA const DISPL rd[] CART_COMMA MPI_Datatype rt,                                          \
                   graph_allgatherv_call(sb, sc, st, rb, rc, rd, rt))                                                        \
  CART_GRAPH_FORMS(alltoallv, SUFFIX,                                                                                       \
                   const void* sb CART_COMMA const COUNT sc[] CART_COMMA const DISPL sd[] CART_COMMA MPI_Datatype st         \
                       CART_COMMA void* rb CART_COMMA const COUNT rc[] CART_COMMA const DISPL rd[] CART_COMMA MPI_Datatype rt, \
                   graph_alltoallv_call(sb, sc, sd, st, rb, rc, rd, rt))                                                     \
  CART_GRAPH_FORMS(alltoallw, SUFFIX,                                                                                       \
                   const void* sb CART_COMMA const COUNT sc[] CART_COMMA const MPI_Aint sd[] CART_COMMA const MPI_Datatype  \
                       st[] CART_COMMA void* rb CART_COMMA const COUNT rc[] CART_COMMA const MPI_Aint rd[] CART_COMMA       \
                           const MPI_Datatype rt[],                                                                         \
                   cartplan::mpi::graph_alltoallw_call(sb, sc, sd, st, rb, rc, rd, rt))

CART_GRAPH_COLLECTIVES(, int, int)
CART_GRAPH_COLLECTIVES(_c, MPI_Count, MPI_Aint)
#undef CART_GRAPH_COLLECTIVES
#undef CART_COMMA
#undef CART_GRAPH_FORMS

int Cart_graph_request_algorithm(Cart_Request request, int* algorithm) {
  return guarded(request ? request->error_comm() : MPI_COMM_SELF, [&]() -> MpiStatus {
    if (!request || !algorithm) return mpi_error(MPI_ERR_ARG, "Cart_graph_request_algorithm: request or algorithm is NULL");
    if (!request->graph) return mpi_error(MPI_ERR_REQUEST, "Cart_graph_request_algorithm: not a graph request");
    switch (request->graph->algorithm()) {
      case cartplan::ir::graph::GraphAlgorithm::kLinear: *algorithm = CART_GRAPH_LINEAR; break;
      case cartplan::ir::graph::GraphAlgorithm::kPairing: *algorithm = CART_GRAPH_PAIRING; break;
      case cartplan::ir::graph::GraphAlgorithm::kCumulative: *algorithm = CART_GRAPH_CUMULATIVE; break;
      case cartplan::ir::graph::GraphAlgorithm::kGrid: *algorithm = CART_GRAPH_GRID; break;
    }
    return {};
  });
}

int Cart_graph_request_grid_dims(Cart_Request request, int* ndims) {
  return guarded(request ? request->error_comm() : MPI_COMM_SELF, [&]() -> MpiStatus {
    if (!request || !ndims) return mpi_error(MPI_ERR_ARG, "Cart_graph_request_grid_dims: request or ndims is NULL");
    if (!request->graph) return mpi_error(MPI_ERR_REQUEST, "Cart_graph_request_grid_dims: not a graph request");
    *ndims = request->graph->grid_ndims();
    return {};
  });
}

int Cart_start(Cart_Request* request) {

  return guarded(request_comm(request), [&]() -> MpiStatus {
    if (!request || !*request) return mpi_error(MPI_ERR_REQUEST, "Cart_start on a NULL request");
    if (!(*request)->persistent) return mpi_error(MPI_ERR_REQUEST, "Cart_start on a non-persistent request");
    return (*request)->start();
  });
}

int Cart_startall(int count, Cart_Request requests[]) {
  return guarded(count > 0 && requests ? request_comm(&requests[0]) : MPI_COMM_SELF, [&]() -> MpiStatus {
    if (count < 0 || (count > 0 && !requests)) return mpi_error(MPI_ERR_ARG, "count is negative or requests is NULL");
    // Every request is checked before any is started, as MPI_Startall does.
    for (int i = 0; i < count; ++i) {
      if (!requests[i] || !requests[i]->persistent)
        return mpi_error(MPI_ERR_REQUEST, "Cart_startall: request " + std::to_string(i) + " is NULL or not persistent");
      if (requests[i]->active()) return mpi_error(MPI_ERR_REQUEST, "Cart_startall: request " + std::to_string(i) + " is already active");
    }
    for (int i = 0; i < count; ++i) {
      MpiStatus s = requests[i]->start();
      if (!s.ok()) return s;
    }
    return {};
  });
}

int Cart_wait(Cart_Request* request) {
  return guarded(request_comm(request), [&]() -> MpiStatus {
    if (!request) return mpi_error(MPI_ERR_REQUEST, "request is NULL");
    bool done = true;
    return complete(request, true, &done);
  });
}

int Cart_waitall(int count, Cart_Request requests[]) {
  return guarded(count > 0 && requests ? request_comm(&requests[0]) : MPI_COMM_SELF, [&]() -> MpiStatus {
    if (count < 0 || (count > 0 && !requests)) return mpi_error(MPI_ERR_ARG, "count is negative or requests is NULL");
    // Waiting on one request progresses every pending one, so the order does not matter; all
    // are completed even if one fails, and the first error is returned.
    MpiStatus first;
    for (int i = 0; i < count; ++i) {
      bool done = true;
      MpiStatus s = complete(&requests[i], true, &done);
      if (!s.ok() && first.ok())
        first = mpi_error(s.code, "Cart_waitall: request " + std::to_string(i) + ": " + s.message);
    }
    return first;
  });
}

int Cart_test(Cart_Request* request, int* flag) {
  return guarded(request_comm(request), [&]() -> MpiStatus {
    if (!request || !flag) return mpi_error(MPI_ERR_ARG, "request or flag is NULL");
    bool done = true;
    MpiStatus s = complete(request, false, &done);
    *flag = done ? 1 : 0;
    return s;
  });
}

int Cart_testall(int count, Cart_Request requests[], int* flag) {
  return guarded(count > 0 && requests ? request_comm(&requests[0]) : MPI_COMM_SELF, [&]() -> MpiStatus {
    if (count < 0 || (count > 0 && !requests) || !flag) return mpi_error(MPI_ERR_ARG, "count is negative, or requests or flag is NULL");
    // As MPI_Testall: the requests are completed only if all of them are complete.
    Exchange::progress_all();
    *flag = 1;
    for (int i = 0; i < count; ++i)
      if (requests[i] && requests[i]->pending()) *flag = 0;
    if (!*flag) return {};
    MpiStatus first;
    for (int i = 0; i < count; ++i) {
      bool done = true;
      MpiStatus s = complete(&requests[i], false, &done);
      if (!s.ok() && first.ok()) first = mpi_error(s.code, "Cart_testall: request " + std::to_string(i) + ": " + s.message);
    }
    return first;
  });
}

int Cart_request_free(Cart_Request* request) {
  return guarded(request_comm(request), [&]() -> MpiStatus {
    if (!request) return mpi_error(MPI_ERR_REQUEST, "request is NULL");
    if (!*request) return {};
    if ((*request)->active())
      return mpi_error(MPI_ERR_REQUEST, "Cart_request_free on an active request (complete it with Cart_wait first)");
    delete *request;
    *request = CART_REQUEST_NULL;
    return {};
  });
}

int Cart_request_algorithm(Cart_Request request, int* combining) {
  return guarded(request ? request->error_comm() : MPI_COMM_SELF, [&]() -> MpiStatus {
    if (!request || !combining) return mpi_error(MPI_ERR_ARG, "request or combining is NULL");
    if (request->graph) return mpi_error(MPI_ERR_REQUEST, "Cart_request_algorithm: a graph request (use Cart_graph_request_algorithm)");
    if (!request->exchange->has_plan()) return not_a_collective("Cart_request_algorithm");
    *combining = request->exchange->plan().algorithm() == cartplan::ir::Algorithm::kCombining;
    return {};
  });
}

namespace {

// A malloc'ed copy of `text` for a caller that frees it with Cart_free_plan_json.
MpiStatus give_text(const std::string& text, const char* fn, char** out) {
  char* copy = static_cast<char*>(std::malloc(text.size() + 1));
  if (!copy) return mpi_error(MPI_ERR_NO_MEM, std::string(fn) + ": out of memory");
  std::memcpy(copy, text.c_str(), text.size() + 1);
  *out = copy;
  return {};
}

// Cart_request_plan and Cart_request_program (`fn`): the request of a Cartesian collective, and
// `text` of its exchange, the `what` ("plan", "program") a graph request has none of, as JSON
// in *json.
int request_json(Cart_Request request, const char* fn, const char* what, char** json, std::string (*text)(const Exchange&)) {
  return guarded(request ? request->error_comm() : MPI_COMM_SELF, [&]() -> MpiStatus {
    if (!request) return mpi_error(MPI_ERR_REQUEST, std::string(fn) + ": request is CART_REQUEST_NULL");
    if (request->graph) return mpi_error(MPI_ERR_REQUEST, std::string(fn) + ": a graph request has no Cartesian " + what);
    if (!json) return mpi_error(MPI_ERR_ARG, std::string(fn) + ": json is NULL");
    if (!request->exchange->has_plan()) return not_a_collective(fn);
    *json = nullptr;
    return give_text(text(*request->exchange), fn, json);
  });
}

}  // namespace

int Cart_request_plan(Cart_Request request, char** json) {
  return request_json(request, "Cart_request_plan", "plan", json,
                      [](const Exchange& x) -> std::string { return cartplan::ir::to_json_string(x.plan()); });
}

int Cart_request_program(Cart_Request request, char** json) {
  return request_json(request, "Cart_request_program", "program", json,
                      [](const Exchange& x) -> std::string { return cartplan::engine::to_json(x.program()).dump(); });
}

void Cart_free_plan_json(char* json) { std::free(json); }

}  // extern "C"
