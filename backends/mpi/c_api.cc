// The C API: thin wrappers that map cartplan's MPI core (NeighborhoodComm, Exchange, specs)
// to MPI error codes and Cart_error_message().
#include <memory>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "backends/mpi/exchange.h"
#include "backends/mpi/neighborhood_comm.h"
#include "backends/mpi/specs.h"
#include "engine/stencils.h"

using cartplan::mpi::Exchange;
using cartplan::mpi::ExchangeSpec;
using cartplan::mpi::MpiStatus;
using cartplan::mpi::NeighborhoodComm;
using cartplan::mpi::mpi_error;

struct Cart_Request_s {
  std::unique_ptr<Exchange> exchange;
  bool persistent = false;
};

namespace {

thread_local std::string last_error;

int finish(const MpiStatus& s) {
  last_error = s.message;
  return s.code;
}

int lookup(MPI_Comm comm, NeighborhoodComm** nc) { return finish(cartplan::mpi::require_neighborhood(comm, nc)); }

int to_mpi_rank(int rank) { return rank == cartplan::engine::kNoRank ? MPI_PROC_NULL : rank; }

std::vector<int> offset_of(const NeighborhoodComm& nc, const int relative[]) {
  return std::vector<int>(relative, relative + nc.nbh().ndims());
}

int blocking(MPI_Comm comm, const cartplan::mpi::SpecMaker& make) { return finish(cartplan::mpi::run_blocking(comm, make)); }

int make_request(MPI_Comm comm, MPI_Info info, bool persistent, const cartplan::mpi::SpecMaker& make, Cart_Request* request) {
  if (!request) return finish(mpi_error(MPI_ERR_REQUEST, "request is NULL"));
  *request = CART_REQUEST_NULL;
  std::unique_ptr<Exchange> x;
  MpiStatus s = cartplan::mpi::make_exchange(comm, info, make, &x);
  if (s.ok() && !persistent) s = x->start();
  if (!s.ok()) return finish(s);
  *request = new Cart_Request_s{std::move(x), persistent};
  return finish({});
}

}  // namespace

extern "C" {

const char* Cart_error_message(void) { return last_error.c_str(); }

int Cart_neighborhood_create(MPI_Comm comm, int d, const int dims[], const int periods[], int t, const int targetrelative[],
                             const int /*weights: cartplan does not remap, so they are ignored*/[], MPI_Info info,
                             int reorder, MPI_Comm* cartcomm) {
  return finish(cartplan::mpi::create_neighborhood(comm, d, dims, periods, t, targetrelative, info, reorder, cartcomm));
}

int Cart_relative_rank(MPI_Comm cartcomm, const int relative[], int* rank) {
  NeighborhoodComm* nc = nullptr;
  if (int rc = lookup(cartcomm, &nc)) return rc;
  if (!relative || !rank) return finish(mpi_error(MPI_ERR_ARG, "relative or rank is NULL"));
  *rank = to_mpi_rank(nc->grid().relative_rank(nc->coords(), offset_of(*nc, relative)));
  return finish({});
}

int Cart_relative_shift(MPI_Comm cartcomm, const int relative[], int* inrank, int* outrank) {
  NeighborhoodComm* nc = nullptr;
  if (int rc = lookup(cartcomm, &nc)) return rc;
  if (!relative || !inrank || !outrank) return finish(mpi_error(MPI_ERR_ARG, "relative, inrank or outrank is NULL"));
  const cartplan::engine::Grid::Shift s = nc->grid().relative_shift(nc->coords(), offset_of(*nc, relative));
  *inrank = to_mpi_rank(s.source);
  *outrank = to_mpi_rank(s.dest);
  return finish({});
}

int Cart_relative_coord(MPI_Comm cartcomm, int rank, int relative[]) {
  NeighborhoodComm* nc = nullptr;
  if (int rc = lookup(cartcomm, &nc)) return rc;
  if (!relative) return finish(mpi_error(MPI_ERR_ARG, "relative is NULL"));
  if (rank < 0 || rank >= nc->grid().size())
    return finish(mpi_error(MPI_ERR_RANK, "rank " + std::to_string(rank) + " is not in the grid"));
  const cartplan::engine::Coords other = nc->grid().coords(rank);
  for (int k = 0; k < nc->grid().ndims(); ++k) {
    int diff = other[k] - nc->coords()[k];
    const int n = nc->grid().dims()[k];
    if (nc->grid().periods()[k]) {  // the representative in (-n/2, n/2]
      diff = ((diff % n) + n) % n;
      if (diff > n / 2) diff -= n;
    }
    relative[k] = diff;
  }
  return finish({});
}

int Cart_allranks_relative(MPI_Comm cartcomm, int n, const int relative[], int ranks[]) {
  NeighborhoodComm* nc = nullptr;
  if (int rc = lookup(cartcomm, &nc)) return rc;
  if (n < 0 || (n > 0 && (!relative || !ranks))) return finish(mpi_error(MPI_ERR_ARG, "n is negative or an array is NULL"));
  const int d = nc->nbh().ndims();
  for (int i = 0; i < n; ++i) ranks[i] = to_mpi_rank(nc->grid().relative_rank(nc->coords(), offset_of(*nc, relative + static_cast<std::size_t>(i) * d)));
  return finish({});
}

int Cart_neighbor_degrees(MPI_Comm cartcomm, int* t, int* indegree, int* outdegree) {
  NeighborhoodComm* nc = nullptr;
  if (int rc = lookup(cartcomm, &nc)) return rc;
  if (!t || !indegree || !outdegree) return finish(mpi_error(MPI_ERR_ARG, "an output argument is NULL"));
  *t = nc->nbh().size();
  *indegree = *outdegree = 0;
  for (const cartplan::ir::Offset& o : nc->nbh().offsets()) {
    const cartplan::engine::Grid::Shift s = nc->grid().relative_shift(nc->coords(), o);
    *indegree += s.source != cartplan::engine::kNoRank;
    *outdegree += s.dest != cartplan::engine::kNoRank;
  }
  return finish({});
}

int Cart_neighbor_count(MPI_Comm cartcomm, int* t) {
  int in = 0, out = 0;
  return Cart_neighbor_degrees(cartcomm, t, &in, &out);
}

int Cart_neighbor_get(MPI_Comm cartcomm, int maxin, int sources[], int sourceweights[], int maxout, int targets[],
                      int targetweights[]) {
  NeighborhoodComm* nc = nullptr;
  if (int rc = lookup(cartcomm, &nc)) return rc;
  const int t = nc->nbh().size();
  if (maxin < t || maxout < t || !sources || !targets)
    return finish(mpi_error(MPI_ERR_ARG, "maxin and maxout must be at least t = " + std::to_string(t) + ", arrays non-NULL"));
  const bool sw = sourceweights && sourceweights != MPI_UNWEIGHTED;
  const bool tw = targetweights && targetweights != MPI_UNWEIGHTED;
  for (int i = 0; i < t; ++i) {
    const cartplan::engine::Grid::Shift s = nc->grid().relative_shift(nc->coords(), nc->nbh()[i]);
    sources[i] = to_mpi_rank(s.source);
    targets[i] = to_mpi_rank(s.dest);
    if (sw) sourceweights[i] = 1;
    if (tw) targetweights[i] = 1;
  }
  return finish({});
}

int Cart_graph_get(MPI_Comm cartcomm, int maxin, int sources[], int maxout, int targets[]) {
  NeighborhoodComm* nc = nullptr;
  if (int rc = lookup(cartcomm, &nc)) return rc;
  int in = 0, out = 0;
  for (const cartplan::ir::Offset& o : nc->nbh().offsets()) {
    const cartplan::engine::Grid::Shift s = nc->grid().relative_shift(nc->coords(), o);
    if (s.source != cartplan::engine::kNoRank) {
      if (in >= maxin || !sources) return finish(mpi_error(MPI_ERR_ARG, "maxin is smaller than the in-degree"));
      sources[in++] = s.source;
    }
    if (s.dest != cartplan::engine::kNoRank) {
      if (out >= maxout || !targets) return finish(mpi_error(MPI_ERR_ARG, "maxout is smaller than the out-degree"));
      targets[out++] = s.dest;
    }
  }
  return finish({});
}

int Cart_neighbors_count(int d, int metric, int shadow, int depth, int* t) {
  if (!t) return finish(mpi_error(MPI_ERR_ARG, "t is NULL"));
  int rc = Cart_neighbors(d, metric, shadow, depth, 0, nullptr);
  if (rc != MPI_SUCCESS && rc != MPI_ERR_TRUNCATE) return rc;
  auto n = metric == CART_CHEBYSHEV ? cartplan::engine::stencils::chebyshev(d, depth, shadow)
                                    : cartplan::engine::stencils::manhattan(d, depth, shadow);
  *t = n->size();
  return finish({});
}

int Cart_neighbors(int d, int metric, int shadow, int depth, int maxt, int relative[]) {
  if (metric != CART_CHEBYSHEV && metric != CART_MANHATTAN)
    return finish(mpi_error(MPI_ERR_ARG, "metric must be CART_CHEBYSHEV or CART_MANHATTAN"));
  auto n = metric == CART_CHEBYSHEV ? cartplan::engine::stencils::chebyshev(d, depth, shadow)
                                    : cartplan::engine::stencils::manhattan(d, depth, shadow);
  if (!n) return finish(mpi_error(MPI_ERR_ARG, n.error()));
  if (maxt < n->size() || (maxt > 0 && !relative))
    return finish(mpi_error(MPI_ERR_TRUNCATE, "the neighbourhood has " + std::to_string(n->size()) + " offsets, maxt is " + std::to_string(maxt)));
  for (int i = 0; i < n->size(); ++i)
    for (int k = 0; k < d; ++k) relative[static_cast<std::size_t>(i) * d + k] = (*n)[i][k];
  return finish({});
}

// The collectives: each builds its spec lazily (the neighbourhood gives t) and shares the rest.
#define CART_SPEC(fn, ...) [&](const NeighborhoodComm& nc) { return cartplan::mpi::fn(nc, __VA_ARGS__); }

int Cart_alltoall(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm) {
  return blocking(comm, CART_SPEC(alltoall_spec, sb, sc, st, rb, rc, rt));
}
int Cart_alltoallv(const void* sb, const int sc[], const int sd[], MPI_Datatype st, void* rb, const int rc[], const int rd[],
                   MPI_Datatype rt, MPI_Comm comm) {
  return blocking(comm, CART_SPEC(alltoallv_spec, sb, sc, sd, st, rb, rc, rd, rt));
}
int Cart_alltoallw(const void* sb, const int sc[], const MPI_Aint sd[], const MPI_Datatype st[], void* rb, const int rc[],
                   const MPI_Aint rd[], const MPI_Datatype rt[], MPI_Comm comm) {
  return blocking(comm, CART_SPEC(alltoallw_spec, sb, sc, sd, st, rb, rc, rd, rt));
}
int Cart_allgather(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm) {
  return blocking(comm, CART_SPEC(allgather_spec, sb, sc, st, rb, rc, rt));
}
int Cart_allgatherv(const void* sb, int sc, MPI_Datatype st, void* rb, const int rc[], const int rd[], MPI_Datatype rt,
                    MPI_Comm comm) {
  return blocking(comm, CART_SPEC(allgatherv_spec, sb, sc, st, rb, rc, rd, rt));
}
int Cart_allgatherw(const void* sb, int sc, MPI_Datatype st, void* rb, const int rc[], const MPI_Aint rd[],
                    const MPI_Datatype rt[], MPI_Comm comm) {
  return blocking(comm, CART_SPEC(allgatherw_spec, sb, sc, st, rb, rc, rd, rt));
}

int Cart_ialltoall(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm, Cart_Request* r) {
  return make_request(comm, MPI_INFO_NULL, false, CART_SPEC(alltoall_spec, sb, sc, st, rb, rc, rt), r);
}
int Cart_ialltoallv(const void* sb, const int sc[], const int sd[], MPI_Datatype st, void* rb, const int rc[], const int rd[],
                    MPI_Datatype rt, MPI_Comm comm, Cart_Request* r) {
  return make_request(comm, MPI_INFO_NULL, false, CART_SPEC(alltoallv_spec, sb, sc, sd, st, rb, rc, rd, rt), r);
}
int Cart_ialltoallw(const void* sb, const int sc[], const MPI_Aint sd[], const MPI_Datatype st[], void* rb, const int rc[],
                    const MPI_Aint rd[], const MPI_Datatype rt[], MPI_Comm comm, Cart_Request* r) {
  return make_request(comm, MPI_INFO_NULL, false, CART_SPEC(alltoallw_spec, sb, sc, sd, st, rb, rc, rd, rt), r);
}
int Cart_iallgather(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm, Cart_Request* r) {
  return make_request(comm, MPI_INFO_NULL, false, CART_SPEC(allgather_spec, sb, sc, st, rb, rc, rt), r);
}
int Cart_iallgatherv(const void* sb, int sc, MPI_Datatype st, void* rb, const int rc[], const int rd[], MPI_Datatype rt,
                     MPI_Comm comm, Cart_Request* r) {
  return make_request(comm, MPI_INFO_NULL, false, CART_SPEC(allgatherv_spec, sb, sc, st, rb, rc, rd, rt), r);
}
int Cart_iallgatherw(const void* sb, int sc, MPI_Datatype st, void* rb, const int rc[], const MPI_Aint rd[],
                     const MPI_Datatype rt[], MPI_Comm comm, Cart_Request* r) {
  return make_request(comm, MPI_INFO_NULL, false, CART_SPEC(allgatherw_spec, sb, sc, st, rb, rc, rd, rt), r);
}

int Cart_alltoall_init(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm, MPI_Info info,
                       Cart_Request* r) {
  return make_request(comm, info, true, CART_SPEC(alltoall_spec, sb, sc, st, rb, rc, rt), r);
}
int Cart_alltoallv_init(const void* sb, const int sc[], const int sd[], MPI_Datatype st, void* rb, const int rc[],
                        const int rd[], MPI_Datatype rt, MPI_Comm comm, MPI_Info info, Cart_Request* r) {
  return make_request(comm, info, true, CART_SPEC(alltoallv_spec, sb, sc, sd, st, rb, rc, rd, rt), r);
}
int Cart_alltoallw_init(const void* sb, const int sc[], const MPI_Aint sd[], const MPI_Datatype st[], void* rb,
                        const int rc[], const MPI_Aint rd[], const MPI_Datatype rt[], MPI_Comm comm, MPI_Info info,
                        Cart_Request* r) {
  return make_request(comm, info, true, CART_SPEC(alltoallw_spec, sb, sc, sd, st, rb, rc, rd, rt), r);
}
int Cart_allgather_init(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm,
                        MPI_Info info, Cart_Request* r) {
  return make_request(comm, info, true, CART_SPEC(allgather_spec, sb, sc, st, rb, rc, rt), r);
}
int Cart_allgatherv_init(const void* sb, int sc, MPI_Datatype st, void* rb, const int rc[], const int rd[], MPI_Datatype rt,
                         MPI_Comm comm, MPI_Info info, Cart_Request* r) {
  return make_request(comm, info, true, CART_SPEC(allgatherv_spec, sb, sc, st, rb, rc, rd, rt), r);
}
int Cart_allgatherw_init(const void* sb, int sc, MPI_Datatype st, void* rb, const int rc[], const MPI_Aint rd[],
                         const MPI_Datatype rt[], MPI_Comm comm, MPI_Info info, Cart_Request* r) {
  return make_request(comm, info, true, CART_SPEC(allgatherw_spec, sb, sc, st, rb, rc, rd, rt), r);
}

int Cart_start(Cart_Request* request) {
  if (!request || !*request) return finish(mpi_error(MPI_ERR_REQUEST, "Cart_start on a NULL request"));
  if (!(*request)->persistent) return finish(mpi_error(MPI_ERR_REQUEST, "Cart_start on a non-persistent request"));
  return finish((*request)->exchange->start());
}

int Cart_wait(Cart_Request* request) {
  if (!request) return finish(mpi_error(MPI_ERR_REQUEST, "request is NULL"));
  if (!*request) return finish({});  // like MPI_Wait on MPI_REQUEST_NULL
  MpiStatus s = (*request)->exchange->wait();
  if (!(*request)->persistent) {
    delete *request;
    *request = CART_REQUEST_NULL;
  }
  return finish(s);
}

int Cart_test(Cart_Request* request, int* flag) {
  if (!request || !flag) return finish(mpi_error(MPI_ERR_ARG, "request or flag is NULL"));
  if (!*request) {
    *flag = 1;
    return finish({});
  }
  bool done = false;
  MpiStatus s = (*request)->exchange->test(&done);
  *flag = done ? 1 : 0;
  if ((done || !s.ok()) && !(*request)->persistent) {
    delete *request;
    *request = CART_REQUEST_NULL;
  }
  return finish(s);
}

int Cart_request_free(Cart_Request* request) {
  if (!request) return finish(mpi_error(MPI_ERR_REQUEST, "request is NULL"));
  if (!*request) return finish({});
  if ((*request)->exchange->active())
    return finish(mpi_error(MPI_ERR_REQUEST, "Cart_request_free on an active request (complete it with Cart_wait first)"));
  delete *request;
  *request = CART_REQUEST_NULL;
  return finish({});
}

int Cart_request_algorithm(Cart_Request request, int* combining) {
  if (!request || !combining) return finish(mpi_error(MPI_ERR_ARG, "request or combining is NULL"));
  *combining = request->exchange->plan().algorithm() == cartplan::ir::Algorithm::kCombining;
  return finish({});
}

}  // extern "C"
