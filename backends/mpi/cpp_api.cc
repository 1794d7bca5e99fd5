// The C++ API: RAII and exceptions over cartplan's MPI core.
#include <utility>

#include "backends/mpi/cartplan.hpp"
#include "backends/mpi/cpp_throw.h"
#include "backends/mpi/exchange.h"
#include "backends/mpi/neighborhood_comm.h"
#include "backends/mpi/reduce_specs.h"
#include "backends/mpi/specs.h"
#include "engine/program_print.h"
#include "ir/json.h"

namespace cartplan::mpi {
namespace {

NeighborhoodComm& state(MPI_Comm comm) {
  NeighborhoodComm* nc = nullptr;
  throw_on_error(require_neighborhood(comm, &nc));
  return *nc;
}

std::unique_ptr<Exchange> make(const CartComm& cart, MPI_Info info, const SpecMaker& spec) {
  std::unique_ptr<Exchange> x;
  throw_on_error(make_exchange(cart.get(), info, Exchange::Kind::kPersistent, spec, &x));
  return x;
}

int mpi_rank(int rank) { return rank == engine::kNoRank ? MPI_PROC_NULL : rank; }

}  // namespace

CartComm::CartComm(MPI_Comm comm, const std::vector<int>& dims, const std::vector<int>& periods,
                   const std::vector<std::vector<int>>& offsets, MPI_Info info, bool reorder) {
  const int d = static_cast<int>(dims.size());
  std::vector<int> flat;
  // Shape errors still go through the collective's agreement, so every rank throws.
  MpiStatus shape;
  for (std::size_t i = 0; i < offsets.size() && shape.ok(); ++i) {
    if (static_cast<int>(offsets[i].size()) != d)
      shape = mpi_error(MPI_ERR_ARG, "offset " + std::to_string(i) + " has " + std::to_string(offsets[i].size()) +
                                         " coordinates, expected " + std::to_string(d));
    flat.insert(flat.end(), offsets[i].begin(), offsets[i].end());
  }
  std::vector<int> per = periods;
  if (shape.ok() && per.size() != dims.size()) shape = mpi_error(MPI_ERR_ARG, "periods and dims differ in length");
  per.resize(dims.size());
  flat.resize(offsets.size() * dims.size());
  throw_on_error(create_neighborhood(comm, d, dims.data(), per.data(), static_cast<int>(offsets.size()), flat.data(), info,
                            reorder ? 1 : 0, &comm_, shape));
}

CartComm::~CartComm() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

CartComm::CartComm(CartComm&& other) noexcept : comm_(std::exchange(other.comm_, MPI_COMM_NULL)) {}

CartComm& CartComm::operator=(CartComm&& other) noexcept {
  if (this != &other) {
    CartComm dying(std::move(*this));
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
  }
  return *this;
}

int CartComm::neighbor_count() const { return state(comm_).nbh().size(); }

int CartComm::relative_rank(const std::vector<int>& offset) const {
  const NeighborhoodComm& nc = state(comm_);
  if (static_cast<int>(offset.size()) != nc.nbh().ndims()) throw MpiError(MPI_ERR_ARG, "offset of the wrong dimension");
  return mpi_rank(nc.grid().relative_rank(nc.coords(), offset));
}

std::vector<int> CartComm::sources() const {
  const NeighborhoodComm& nc = state(comm_);
  std::vector<int> r;
  for (const ir::Offset& o : nc.nbh().offsets()) r.push_back(mpi_rank(nc.grid().relative_shift(nc.coords(), o).source));
  return r;
}

std::vector<int> CartComm::targets() const {
  const NeighborhoodComm& nc = state(comm_);
  std::vector<int> r;
  for (const ir::Offset& o : nc.nbh().offsets()) r.push_back(mpi_rank(nc.grid().relative_shift(nc.coords(), o).dest));
  return r;
}

Collective::Collective(std::unique_ptr<Exchange> x) : x_(std::move(x)) {}
Collective::~Collective() = default;
Collective::Collective(Collective&&) noexcept = default;
Collective& Collective::operator=(Collective&&) noexcept = default;

#define CART_SPEC(fn, ...) [&](const NeighborhoodComm& nc) { return fn(nc, __VA_ARGS__); }

// The factories with int counts and with MPI_Count counts and MPI_Aint displacements (the
// large-count overloads, as Cart_*_init_c): one definition, instantiated for both, as in c_api.cc.
#define CPP_COLLECTIVES(COUNT, DISPL)                                                                                      \
  Collective Collective::alltoall(const CartComm& c, const void* sb, COUNT sc, MPI_Datatype st, void* rb, COUNT rc,       \
                                  MPI_Datatype rt, MPI_Info info) {                                                        \
    return Collective(make(c, info, CART_SPEC(alltoall_spec<COUNT>, sb, sc, st, rb, rc, rt)));                             \
  }                                                                                                                        \
  Collective Collective::alltoallv(const CartComm& c, const void* sb, const COUNT sc[], const DISPL sd[], MPI_Datatype st, \
                                   void* rb, const COUNT rc[], const DISPL rd[], MPI_Datatype rt, MPI_Info info) {         \
    return Collective(make(c, info, CART_SPEC(alltoallv_spec<COUNT CARTPLAN_COMMA DISPL>, sb, sc, sd, st, rb, rc, rd, rt))); \
  }                                                                                                                        \
  Collective Collective::alltoallw(const CartComm& c, const void* sb, const COUNT sc[], const MPI_Aint sd[],              \
                                   const MPI_Datatype st[], void* rb, const COUNT rc[], const MPI_Aint rd[],               \
                                   const MPI_Datatype rt[], MPI_Info info) {                                               \
    return Collective(make(c, info, CART_SPEC(alltoallw_spec<COUNT>, sb, sc, sd, st, rb, rc, rd, rt)));                    \
  }                                                                                                                        \
  Collective Collective::allgather(const CartComm& c, const void* sb, COUNT sc, MPI_Datatype st, void* rb, COUNT rc,      \
                                   MPI_Datatype rt, MPI_Info info) {                                                       \
    return Collective(make(c, info, CART_SPEC(allgather_spec<COUNT>, sb, sc, st, rb, rc, rt)));                            \
  }                                                                                                                        \
  Collective Collective::allgatherv(const CartComm& c, const void* sb, COUNT sc, MPI_Datatype st, void* rb,               \
                                    const COUNT rc[], const DISPL rd[], MPI_Datatype rt, MPI_Info info) {                  \
    return Collective(make(c, info, CART_SPEC(allgatherv_spec<COUNT CARTPLAN_COMMA DISPL>, sb, sc, st, rb, rc, rd, rt)));  \
  }                                                                                                                        \
  Collective Collective::allgatherw(const CartComm& c, const void* sb, COUNT sc, MPI_Datatype st, void* rb,               \
                                    const COUNT rc[], const MPI_Aint rd[], const MPI_Datatype rt[], MPI_Info info) {       \
    return Collective(make(c, info, CART_SPEC(allgatherw_spec<COUNT>, sb, sc, st, rb, rc, rd, rt)));                       \
  }                                                                                                                        \
  Collective Collective::allreduce(const CartComm& c, const void* sb, void* rb, COUNT n, MPI_Datatype ty, MPI_Op op,      \
                                   MPI_Info info) {                                                                        \
    return Collective(make(c, info, CART_SPEC(allreduce_spec<COUNT>, sb, rb, n, ty, op)));                                 \
  }                                                                                                                        \
  Collective Collective::reduce_scatter(const CartComm& c, const void* sb, void* rb, COUNT n, MPI_Datatype ty, MPI_Op op, \
                                        MPI_Info info) {                                                                   \
    return Collective(make(c, info, CART_SPEC(reduce_scatter_spec<COUNT>, sb, rb, n, ty, op)));                            \
  }                                                                                                                        \
  Collective Collective::bcast(const CartComm& c, void* b, COUNT n, MPI_Datatype ty, int root, MPI_Info info) {           \
    return Collective(make(c, info, CART_SPEC(bcast_spec<COUNT>, b, n, ty, root)));                                        \
  }                                                                                                                        \
  Collective Collective::gather(const CartComm& c, const void* sb, COUNT sc, MPI_Datatype st, void* rb, COUNT rc,         \
                                MPI_Datatype rt, int root, MPI_Info info) {                                                \
    return Collective(make(c, info, CART_SPEC(gather_spec<COUNT>, sb, sc, st, rb, rc, rt, root)));                         \
  }                                                                                                                        \
  Collective Collective::scatter(const CartComm& c, const void* sb, COUNT sc, MPI_Datatype st, void* rb, COUNT rc,        \
                                 MPI_Datatype rt, int root, MPI_Info info) {                                               \
    return Collective(make(c, info, CART_SPEC(scatter_spec<COUNT>, sb, sc, st, rb, rc, rt, root)));                        \
  }                                                                                                                        \
  Collective Collective::reduce(const CartComm& c, const void* sb, void* rb, COUNT n, MPI_Datatype ty, MPI_Op op,         \
                                int root, MPI_Info info) {                                                                 \
    return Collective(make(c, info, CART_SPEC(reduce_spec<COUNT>, sb, rb, n, ty, op, root)));                              \
  }

#define CARTPLAN_COMMA ,
CPP_COLLECTIVES(int, int)
CPP_COLLECTIVES(MPI_Count, MPI_Aint)
#undef CARTPLAN_COMMA
#undef CPP_COLLECTIVES
#undef CART_SPEC

void Collective::start() { throw_on_error(x_->start()); }
void Collective::wait() { throw_on_error(x_->wait()); }
bool Collective::test() {
  bool done = false;
  throw_on_error(x_->test(&done));
  return done;
}
bool Collective::combining() const { return x_->plan().algorithm() == ir::Algorithm::kCombining; }
std::string Collective::plan() const { return ir::to_json_string(x_->plan()); }
std::string Collective::program() const { return engine::to_json(x_->program()).dump(); }

}  // namespace cartplan::mpi
