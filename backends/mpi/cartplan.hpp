// cartplan's C++ API over the same core as the C API (cartplan_mpi.h). Errors are thrown as
// cartplan::mpi::MpiError (an MPI error class plus a message), except that an allocation of the
// API's own that fails throws std::bad_alloc, as the standard library does (inside collective
// steps running out of memory is MPI_ERR_NO_MEM, agreed like any error). Collective constructors check and agree on arguments across ranks, so a
// bad argument anywhere throws on every rank instead of hanging.
//
//   cartplan::mpi::CartComm cart(MPI_COMM_WORLD, {4, 4}, {1, 1}, {{1, 0}, {-1, 0}, {0, 1}, {0, -1}});
//   if (cart.member()) {
//     auto halo = cartplan::mpi::Collective::alltoallw(cart, grid, scounts, sdispls, stypes,
//                                                      grid, rcounts, rdispls, rtypes);
//     for (int it = 0; it < iterations; ++it) { halo.run(); compute(); }   // or start() ... wait()
//   }
#pragma once

#include <mpi.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace cartplan::ir::halo {
class HaloPlan;
}

namespace cartplan::mpi {

class Exchange;
class GraphExchange;

// The exception of this API: an MPI error class and the message Cart_error_message() gives.
class MpiError : public std::runtime_error {
 public:
  MpiError(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const { return code_; }  // an MPI error class, e.g. MPI_ERR_ARG

 private:
  int code_;
};
// The former name, kept so that existing programs catching cartplan::mpi::Error still compile.
using Error = MpiError;

namespace detail {
// A type a scalar count may have besides int and MPI_Count: any integer type of at most
// MPI_Count's width (std::size_t, long, unsigned, short, signed and unsigned char, ...) but bool
// and the character types char, wchar_t, char8_t, char16_t and char32_t (those, and unscoped
// enums, promote to int and take the int form). Type traits, not concepts: the header also
// serves C++17 programs (a CMake project without a standard set compiles as GCC's gnu++17).
template <class T>
inline constexpr bool kCountInteger = std::is_integral_v<T> && sizeof(T) <= sizeof(MPI_Count) && !std::is_same_v<T, bool> &&
                                      !std::is_same_v<T, char> && !std::is_same_v<T, wchar_t> &&
#if defined(__cpp_char8_t)
                                      !std::is_same_v<T, char8_t> &&
#endif
                                      !std::is_same_v<T, char16_t> && !std::is_same_v<T, char32_t>;
// Scalar counts that neither the int nor the MPI_Count overload takes as they are (all int, or all
// MPI_Count): the widening overloads, enabled by Widened, convert them (as_count) and call the
// MPI_Count one.
template <class... N>
inline constexpr bool kWidenedCounts = (kCountInteger<N> && ...) && !(std::is_same_v<N, int> && ...) &&
                                       !(std::is_same_v<N, MPI_Count> && ...);
template <class... N>
using Widened = std::enable_if_t<kWidenedCounts<N...>, int>;
// `n` as an MPI_Count, converted as C converts it: a value above INT64_MAX (an unsigned one)
// becomes negative and fails in the core as a negative MPI_Count does (MPI_ERR_COUNT), where the
// call agrees on errors (the persistent factories) on every rank, not on this rank alone.
//   MPI_Count c = detail::as_count(v.size());
template <class T, std::enable_if_t<kCountInteger<T>, int> = 0>
constexpr MPI_Count as_count(T n) {
  return static_cast<MPI_Count>(n);
}
}  // namespace detail

// Owns a Cartesian communicator that carries a cartplan neighbourhood (Cart_neighborhood_create).
class CartComm {
 public:
  // Collective over `comm`. Ranks beyond the grid get a CartComm with member() == false.
  CartComm(MPI_Comm comm, const std::vector<int>& dims, const std::vector<int>& periods,
           const std::vector<std::vector<int>>& offsets, MPI_Info info = MPI_INFO_NULL, bool reorder = false);
  ~CartComm();
  CartComm(CartComm&& other) noexcept;
  CartComm& operator=(CartComm&& other) noexcept;
  CartComm(const CartComm&) = delete;
  CartComm& operator=(const CartComm&) = delete;

  MPI_Comm get() const { return comm_; }
  bool member() const { return comm_ != MPI_COMM_NULL; }
  int neighbor_count() const;
  int relative_rank(const std::vector<int>& offset) const;  // MPI_PROC_NULL outside the mesh
  std::vector<int> sources() const;  // rank at -offset[i], MPI_PROC_NULL outside
  std::vector<int> targets() const;  // rank at +offset[i], MPI_PROC_NULL outside

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

// A persistent Cartesian collective (MPI-4 persistent semantics: buffers fixed here).
class Collective {
 public:
  static Collective alltoall(const CartComm& cart, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Info info = MPI_INFO_NULL);
  static Collective alltoallv(const CartComm& cart, const void* sendbuf, const int sendcounts[], const int sdispls[],
                              MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                              MPI_Datatype recvtype, MPI_Info info = MPI_INFO_NULL);
  static Collective alltoallw(const CartComm& cart, const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                              const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                              const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Info info = MPI_INFO_NULL);
  static Collective allgather(const CartComm& cart, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Info info = MPI_INFO_NULL);
  static Collective allgatherv(const CartComm& cart, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                               void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                               MPI_Info info = MPI_INFO_NULL);
  static Collective allgatherw(const CartComm& cart, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                               void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                               const MPI_Datatype recvtypes[], MPI_Info info = MPI_INFO_NULL);
  // Reductions and rooted ops (semantics, single-buffer rule and ops: cartplan_mpi.h).
  static Collective allreduce(const CartComm& cart, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                              MPI_Op op, MPI_Info info = MPI_INFO_NULL);
  static Collective reduce_scatter(const CartComm& cart, const void* sendbuf, void* recvbuf, int count,
                                   MPI_Datatype type, MPI_Op op, MPI_Info info = MPI_INFO_NULL);
  static Collective bcast(const CartComm& cart, void* buffer, int count, MPI_Datatype type, int root,
                          MPI_Info info = MPI_INFO_NULL);
  static Collective gather(const CartComm& cart, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                           void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Info info = MPI_INFO_NULL);
  static Collective scatter(const CartComm& cart, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Info info = MPI_INFO_NULL);
  static Collective reduce(const CartComm& cart, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                           MPI_Op op, int root, MPI_Info info = MPI_INFO_NULL);
  // Large-count forms (Cart_*_init_c): the factories above with MPI_Count counts and MPI_Aint
  // displacements (in elements of the datatype for alltoallv/allgatherv, in bytes for the w forms),
  // as MPI-4's *_c functions; a block may hold more than INT_MAX elements. Same errors, thrown as
  // MpiError. Overload resolution follows the count arguments' types: literals and int variables
  // keep the int form, MPI_Count ones pick this one. Scalar counts of any other integer type
  // (std::size_t, unsigned, short, and long or long long, whichever MPI_Count is not), or an int
  // beside an MPI_Count,
  // take the widening templates below: each count converted to MPI_Count, then this form. A value
  // above INT64_MAX (an unsigned one) becomes negative, as in C, and fails as a negative count
  // (MpiError(MPI_ERR_COUNT); on every rank where the form agrees on errors, as these do). The v and w forms
  // pick by their arrays' element type (const int[] or const MPI_Count[]; a std::size_t array does
  // not compile: copy it into MPI_Count), their scalar sendcount converted to it as C++ converts
  // (to int unchecked); they are ambiguous when every counts array is a null pointer literal
  // (pass a typed pointer).
  //   const MPI_Count n = MPI_Count{3} << 30;                             // 3 GiB per block
  //   auto a = cartplan::mpi::Collective::alltoall(cart, sb, n, MPI_BYTE, rb, n, MPI_BYTE);
  //   std::vector<MPI_Count> sc(t, n), rc(t, n);                          // t = cart.neighbor_count()
  //   std::vector<MPI_Aint> sd(t), rd(t);
  //   for (int i = 0; i < t; ++i) sd[i] = rd[i] = i * n;                   // in elements (bytes here)
  //   auto v = cartplan::mpi::Collective::alltoallv(cart, sb, sc.data(), sd.data(), MPI_BYTE,
  //                                                 rb, rc.data(), rd.data(), MPI_BYTE);
  //   auto s = cartplan::mpi::Collective::allreduce(cart, x, y, MPI_Count{1} << 31, MPI_INT, MPI_SUM);
  static Collective alltoall(const CartComm& cart, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                             void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Info info = MPI_INFO_NULL);
  static Collective alltoallv(const CartComm& cart, const void* sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                              const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Info info = MPI_INFO_NULL);
  static Collective alltoallw(const CartComm& cart, const void* sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void* recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                              MPI_Info info = MPI_INFO_NULL);
  static Collective allgather(const CartComm& cart, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Info info = MPI_INFO_NULL);
  static Collective allgatherv(const CartComm& cart, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                               MPI_Info info = MPI_INFO_NULL);
  static Collective allgatherw(const CartComm& cart, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                               const MPI_Datatype recvtypes[], MPI_Info info = MPI_INFO_NULL);
  static Collective allreduce(const CartComm& cart, const void* sendbuf, void* recvbuf, MPI_Count count,
                              MPI_Datatype type, MPI_Op op, MPI_Info info = MPI_INFO_NULL);
  static Collective reduce_scatter(const CartComm& cart, const void* sendbuf, void* recvbuf, MPI_Count count,
                                   MPI_Datatype type, MPI_Op op, MPI_Info info = MPI_INFO_NULL);
  static Collective bcast(const CartComm& cart, void* buffer, MPI_Count count, MPI_Datatype type, int root,
                          MPI_Info info = MPI_INFO_NULL);
  static Collective gather(const CartComm& cart, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                           void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                           MPI_Info info = MPI_INFO_NULL);
  static Collective scatter(const CartComm& cart, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                            void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                            MPI_Info info = MPI_INFO_NULL);
  static Collective reduce(const CartComm& cart, const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type,
                           MPI_Op op, int root, MPI_Info info = MPI_INFO_NULL);
  // Widening forms: the scalar-count factories for counts of other integer types or mixed int /
  // MPI_Count (see above), as the MPI_Count forms.
  //   std::vector<int> mine(n), all(n * t);                              // t = cart.neighbor_count()
  //   auto g = cartplan::mpi::Collective::allgather(cart, mine.data(), mine.size(), MPI_INT,
  //                                                 all.data(), mine.size(), MPI_INT);   // std::size_t
  template <class S, class R, detail::Widened<S, R> = 0>
  static Collective alltoall(const CartComm& cart, const void* sendbuf, S sendcount, MPI_Datatype sendtype, void* recvbuf,
                             R recvcount, MPI_Datatype recvtype, MPI_Info info = MPI_INFO_NULL) {
    return alltoall(cart, sendbuf, detail::as_count(sendcount), sendtype, recvbuf,
                    detail::as_count(recvcount), recvtype, info);
  }
  template <class S, class R, detail::Widened<S, R> = 0>
  static Collective allgather(const CartComm& cart, const void* sendbuf, S sendcount, MPI_Datatype sendtype, void* recvbuf,
                              R recvcount, MPI_Datatype recvtype, MPI_Info info = MPI_INFO_NULL) {
    return allgather(cart, sendbuf, detail::as_count(sendcount), sendtype, recvbuf,
                     detail::as_count(recvcount), recvtype, info);
  }
  template <class N, detail::Widened<N> = 0>
  static Collective allreduce(const CartComm& cart, const void* sendbuf, void* recvbuf, N count, MPI_Datatype type, MPI_Op op,
                              MPI_Info info = MPI_INFO_NULL) {
    return allreduce(cart, sendbuf, recvbuf, detail::as_count(count), type, op, info);
  }
  template <class N, detail::Widened<N> = 0>
  static Collective reduce_scatter(const CartComm& cart, const void* sendbuf, void* recvbuf, N count, MPI_Datatype type,
                                   MPI_Op op, MPI_Info info = MPI_INFO_NULL) {
    return reduce_scatter(cart, sendbuf, recvbuf, detail::as_count(count), type, op, info);
  }
  template <class N, detail::Widened<N> = 0>
  static Collective bcast(const CartComm& cart, void* buffer, N count, MPI_Datatype type, int root, MPI_Info info = MPI_INFO_NULL) {
    return bcast(cart, buffer, detail::as_count(count), type, root, info);
  }
  template <class S, class R, detail::Widened<S, R> = 0>
  static Collective gather(const CartComm& cart, const void* sendbuf, S sendcount, MPI_Datatype sendtype, void* recvbuf,
                           R recvcount, MPI_Datatype recvtype, int root, MPI_Info info = MPI_INFO_NULL) {
    return gather(cart, sendbuf, detail::as_count(sendcount), sendtype, recvbuf,
                  detail::as_count(recvcount), recvtype, root, info);
  }
  template <class S, class R, detail::Widened<S, R> = 0>
  static Collective scatter(const CartComm& cart, const void* sendbuf, S sendcount, MPI_Datatype sendtype, void* recvbuf,
                            R recvcount, MPI_Datatype recvtype, int root, MPI_Info info = MPI_INFO_NULL) {
    return scatter(cart, sendbuf, detail::as_count(sendcount), sendtype, recvbuf,
                   detail::as_count(recvcount), recvtype, root, info);
  }
  template <class N, detail::Widened<N> = 0>
  static Collective reduce(const CartComm& cart, const void* sendbuf, void* recvbuf, N count, MPI_Datatype type, MPI_Op op,
                           int root, MPI_Info info = MPI_INFO_NULL) {
    return reduce(cart, sendbuf, recvbuf, detail::as_count(count), type, op, root, info);
  }
  ~Collective();
  Collective(Collective&&) noexcept;
  Collective& operator=(Collective&&) noexcept;

  void start();
  void wait();
  bool test();  // true once complete
  void run() {
    start();
    wait();
  }
  bool combining() const;  // which algorithm the plan uses
  // The plan this collective runs, as canonical JSON (the text of Cart_request_plan).
  std::string plan() const;
  // The program it runs on this rank, as JSON (the text of Cart_request_program).
  std::string program() const;

 private:
  explicit Collective(std::unique_ptr<Exchange> x);
  std::unique_ptr<Exchange> x_;
};

class HaloContext;

// A persistent halo exchange of fixed arrays (Halo::exchange_init): start, wait, test, run; or
// a non-blocking one, started by Halo::iexchange: wait or test completes it, start and run throw
// MPI_ERR_REQUEST (it runs once).
class HaloRequest {
 public:
  ~HaloRequest();
  HaloRequest(HaloRequest&&) noexcept;
  HaloRequest& operator=(HaloRequest&&) noexcept;

  void start();
  void wait();
  bool test();  // true once complete
  void run() {
    start();
    wait();
  }
  // The plan this request runs, as canonical JSON (the text of Cart_halo_request_plan, schema
  // cartplan.halo_plan/1): the halo's, or in measuring mode the candidate measured fastest at
  // init. Local; throws MpiError(MPI_ERR_REQUEST) on a moved-from request.
  //   std::string json = r.plan();   // "algorithm": "direct", "combining", "dimwise", ...
  std::string plan() const;

 private:
  friend class Halo;
  HaloRequest(std::shared_ptr<HaloContext> halo, std::unique_ptr<Exchange> x, std::shared_ptr<const ir::halo::HaloPlan> plan,
              bool persistent);
  std::shared_ptr<HaloContext> halo_;  // first: released after the exchange
  std::unique_ptr<Exchange> x_;
  std::shared_ptr<const ir::halo::HaloPlan> plan_;  // the plan x_ runs
  bool persistent_ = true;
};

// A halo exchange over arrays of one layout (Cart_halo_create: which ghost cells are filled,
// the Info keys and the errors are documented in cartplan_mpi.h). The constructor is
// collective and throws MpiError on every rank when any rank's description is bad or differs.
//
//   cartplan::mpi::Halo halo(cart, {64, 64}, {2, 2}, {2, 2}, MPI_DOUBLE);
//   halo.exchange(u.data());                          // blocking
//   cartplan::mpi::HaloRequest r = halo.exchange_init(u.data());
//   for (int it = 0; it < n; ++it) { r.start(); compute_interior(); r.wait(); }
//
// exchange_init takes the Info of Cart_halo_exchange[_fields]_init: cartplan_tune = measure makes
// this one request time the halo's close candidates at init (halo planned with algorithm auto;
// docs/halo.md, "Measuring mode"), model keeps the model's pick even where the halo was created
// measuring. The Info is read during the call only; the caller frees it.
//   MPI_Info info;
//   MPI_Info_create(&info);
//   MPI_Info_set(info, "cartplan_tune", "measure");
//   cartplan::mpi::HaloRequest m = halo.exchange_init(u.data(), info);
//   MPI_Info_free(&info);
//   std::string runs = m.plan();                      // may differ from halo.plan(): measured
class Halo {
 public:
  Halo(MPI_Comm cartcomm, const std::vector<int>& interior, const std::vector<int>& ghost_lo, const std::vector<int>& ghost_hi,
       MPI_Datatype elemtype, int order = MPI_ORDER_C, MPI_Info info = MPI_INFO_NULL);
  ~Halo();
  Halo(Halo&&) noexcept;
  Halo& operator=(Halo&&) noexcept;

  void exchange(void* array);  // Cart_halo_exchange
  // Cart_halo_exchange_fields: types empty, or one element type per array (the plan priced for
  // their element sizes added up, as there).
  void exchange(const std::vector<void*>& arrays, const std::vector<MPI_Datatype>& types = {});
  // Cart_halo_exchange_init (collective): `info` as there (cartplan_tune); MPI_INFO_NULL keeps the
  // halo's mode. Errors (a bad value, ranks that disagree on the mode) throw on every rank.
  HaloRequest exchange_init(void* array, MPI_Info info = MPI_INFO_NULL);
  // Cart_halo_exchange_fields_init: types empty, or one element type per array; the request's
  // plan() is the one priced for their element sizes added up.
  HaloRequest exchange_init(const std::vector<void*>& arrays, const std::vector<MPI_Datatype>& types = {},
                            MPI_Info info = MPI_INFO_NULL);
  // Cart_halo_iexchange[_fields]: the exchange started, local; the request's wait() or a test()
  // that returns true completes it, and it cannot be started again.
  //   cartplan::mpi::HaloRequest r = halo.iexchange(u.data());
  //   compute_interior();
  //   r.wait();
  HaloRequest iexchange(void* array);
  HaloRequest iexchange(const std::vector<void*>& arrays, const std::vector<MPI_Datatype>& types = {});
  std::string plan() const;  // the text of Cart_halo_plan

 private:
  std::shared_ptr<HaloContext> h_;
};

// A communicator for the graph collectives, made by Cart_graph_comm_create_adjacent and freed by
// the destructor (move-only). Collective over `comm`: each rank names its own sources and
// destinations (ranks of comm; duplicates and self edges allowed). With Open MPI (Info
// cartplan_graph_comm = auto, the default) it is an MPI distributed graph, so MPI_Neighbor_* work
// on get() too; under SMPI, or with cartplan_graph_comm = attribute, a duplicate of comm that
// carries the lists (cartplan_mpi.h, Cart_graph_comm_create_adjacent). The lists are checked
// across ranks (degrees, ranks in range, every edge listed at both ends), so a bad list on any
// rank throws MpiError on every rank (MPI_ERR_ARG, MPI_ERR_RANK, MPI_ERR_TOPOLOGY,
// MPI_ERR_INFO_VALUE).
// `info` is kept with the communicator: cartplan_algorithm, cartplan_theta, cartplan_grid_dims,
// cartplan_progress apply to every graph collective on it (docs/info-keys.md, docs/graphs-mpi.md).
// (The name is not GraphComm: that is the backend's internal state of a graph communicator.)
//
//   cartplan::mpi::DistGraphComm g(MPI_COMM_WORLD, {left, right}, {left, right});
//   g.allgather(mine, 4, MPI_DOUBLE, theirs, 4, MPI_DOUBLE);   // blocking: theirs has 2 x 4
//   g.alltoallv(out, scounts, sdispls, MPI_INT, in, rcounts, rdispls, MPI_INT);
//
// The blocking members are Cart_graph_neighbor_* (blocks in sources() / destinations() order,
// MPI's k-th edge rule for duplicates); each rank checks its own arguments and throws on its
// own (MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_BUFFER, MPI_ERR_ARG; MPI_ERR_TRUNCATE where the ends
// of an edge disagree on a block's size). A moved-from DistGraphComm throws MPI_ERR_COMM.
// The i-members are Cart_graph_ineighbor_*: local, they return the call's request started, which
// wait() or a test() that returns true completes; it runs once (start() and run() throw
// MPI_ERR_REQUEST). The buffers are in use until then. Once such a request is destroyed or
// assigned over after completing, the next i-call of the same op, buffers, counts and datatypes
// reuses its exchange (allgather and alltoall; the communicator keeps up to 8).
//   cartplan::mpi::GraphCollective r = g.ialltoall(out, 2, MPI_INT, in, 2, MPI_INT);
//   compute();
//   r.wait();
class GraphCollective;

class DistGraphComm {
 public:
  DistGraphComm(MPI_Comm comm, std::vector<int> sources, std::vector<int> destinations, MPI_Info info = MPI_INFO_NULL);
  // A view of a distributed-graph communicator the caller made and frees (MPI_Dist_graph_create
  // _adjacent, or Cart_graph_comm_create_adjacent through the C API): local, its lists read from
  // it; the destructor leaves it alone. Not a graph: MpiError(MPI_ERR_TOPOLOGY).
  //   MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, dst, MPI_UNWEIGHTED,
  //                                  MPI_INFO_NULL, 0, &mine);
  //   auto g = cartplan::mpi::DistGraphComm::view(mine);   // MPI_Comm_free(&mine) after g is gone
  static DistGraphComm view(MPI_Comm graphcomm);
  ~DistGraphComm();
  DistGraphComm(DistGraphComm&& other) noexcept;
  DistGraphComm& operator=(DistGraphComm&& other) noexcept;
  DistGraphComm(const DistGraphComm&) = delete;
  DistGraphComm& operator=(const DistGraphComm&) = delete;

  MPI_Comm get() const { return comm_; }
  int indegree() const { return static_cast<int>(sources_.size()); }        // blocks received
  int outdegree() const { return static_cast<int>(destinations_.size()); }  // blocks sent (alltoall)
  const std::vector<int>& sources() const { return sources_; }
  const std::vector<int>& destinations() const { return destinations_; }

  //   g.allgather(&x, 1, MPI_DOUBLE, from_sources.data(), 1, MPI_DOUBLE);   // indegree() values
  void allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype) const;
  //   g.alltoall(to_dests.data(), 2, MPI_INT, from_sources.data(), 2, MPI_INT);   // block k to destinations()[k]
  void alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype) const;
  //   g.allgatherv(mine, n, MPI_INT, all, rcounts, rdispls, MPI_INT);   // rcounts[j]: what source j sends
  void allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                  const int displs[], MPI_Datatype recvtype) const;
  //   g.alltoallv(out, scounts, sdispls, MPI_INT, in, rcounts, rdispls, MPI_INT);   // one count per edge
  void alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int rdispls[], MPI_Datatype recvtype) const;
  //   g.alltoallw(a, scounts, sdispls_bytes, stypes, halo, rcounts, rdispls_bytes, rtypes);   // a type per edge
  void alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                 void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[]) const;
  // Non-blocking: the arguments of the blocking members; the request is started.
  GraphCollective iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype) const;
  GraphCollective ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype) const;
  GraphCollective iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                              const int displs[], MPI_Datatype recvtype) const;
  GraphCollective ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype) const;
  GraphCollective ialltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                             void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[]) const;
  // Large-count forms (Cart_graph_neighbor_*_c, Cart_graph_ineighbor_*_c): the members above with
  // MPI_Count counts and MPI_Aint displacements, as MPI-4's MPI_Neighbor_*_c; same errors, thrown as
  // MpiError (a count whose product with the type's size overflows 64 bits: MPI_ERR_COUNT naming
  // it). Chosen by the counts' types as Collective's large-count factories are: int literals and
  // variables keep the int form, MPI_Count ones pick this one; scalar counts of another integer
  // type (size_t, int64_t, unsigned, ...) or mixed int / MPI_Count take the widening templates
  // below (converted to MPI_Count as C converts: an unsigned value above INT64_MAX becomes negative
  // and fails as a negative count does). The v and w forms pick by their arrays' type.
  //   const MPI_Count n = MPI_Count{3} << 30;
  //   g.alltoall(out, n, MPI_BYTE, in, n, MPI_BYTE);                          // 3 GiB per edge
  //   std::vector<MPI_Count> rc(g.indegree(), n);
  //   std::vector<MPI_Aint> rd = ...;                                         // elements, as rc
  //   cartplan::mpi::GraphCollective r = g.iallgatherv(mine, n, MPI_BYTE, all, rc.data(), rd.data(), MPI_BYTE);
  //   r.wait();
  void allgather(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                 MPI_Datatype recvtype) const;
  void alltoall(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                MPI_Datatype recvtype) const;
  void allgatherv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype) const;
  void alltoallv(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype,
                 void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype) const;
  void alltoallw(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                 const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                 const MPI_Datatype recvtypes[]) const;
  GraphCollective iallgather(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                             MPI_Count recvcount, MPI_Datatype recvtype) const;
  GraphCollective ialltoall(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                            MPI_Count recvcount, MPI_Datatype recvtype) const;
  GraphCollective iallgatherv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype) const;
  GraphCollective ialltoallv(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                             MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                             MPI_Datatype recvtype) const;
  GraphCollective ialltoallw(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[]) const;
  // Widening forms of the scalar-count members (see above); the non-blocking ones are defined
  // after GraphCollective.
  //   g.allgather(mine.data(), mine.size(), MPI_INT, all.data(), mine.size(), MPI_INT);   // std::size_t
  template <class S, class R, detail::Widened<S, R> = 0>
  void allgather(const void* sendbuf, S sendcount, MPI_Datatype sendtype, void* recvbuf, R recvcount, MPI_Datatype recvtype) const {
    allgather(sendbuf, detail::as_count(sendcount), sendtype, recvbuf, detail::as_count(recvcount),
              recvtype);
  }
  template <class S, class R, detail::Widened<S, R> = 0>
  void alltoall(const void* sendbuf, S sendcount, MPI_Datatype sendtype, void* recvbuf, R recvcount, MPI_Datatype recvtype) const {
    alltoall(sendbuf, detail::as_count(sendcount), sendtype, recvbuf, detail::as_count(recvcount),
             recvtype);
  }
  template <class S, class R, detail::Widened<S, R> = 0>
  GraphCollective iallgather(const void* sendbuf, S sendcount, MPI_Datatype sendtype, void* recvbuf, R recvcount,
                             MPI_Datatype recvtype) const;
  template <class S, class R, detail::Widened<S, R> = 0>
  GraphCollective ialltoall(const void* sendbuf, S sendcount, MPI_Datatype sendtype, void* recvbuf, R recvcount,
                            MPI_Datatype recvtype) const;

 private:
  DistGraphComm() = default;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::vector<int> sources_;
  std::vector<int> destinations_;
  bool owned_ = true;  // false for view(): the caller frees the communicator
};

// A persistent graph collective (Cart_graph_neighbor_*_init, MPI-4 persistent semantics: the
// buffers, counts and types are fixed here; change the buffers' contents between runs). The
// factories are collective over the communicator: one agreement on the arguments and one on the
// outcome, so a bad argument on any rank throws MpiError on every rank. `info` overrides the
// communicator's keys for this request (cartplan_algorithm = auto | linear | pairing |
// cumulative | grid, cartplan_theta, cartplan_grid_dims, cartplan_progress) and must be the same
// on every rank; it is read during the call only. Destroy a request only when it is not active
// (after wait, as for Cart_request_free). A moved-from request throws MPI_ERR_REQUEST.
//
//   MPI_Info info;
//   MPI_Info_create(&info);
//   MPI_Info_set(info, "cartplan_algorithm", "pairing");
//   auto r = cartplan::mpi::GraphCollective::alltoall(g, out, 4, MPI_DOUBLE, in, 4, MPI_DOUBLE, info);
//   MPI_Info_free(&info);
//   for (int it = 0; it < n; ++it) { fill(out); r.start(); compute(); r.wait(); use(in); }   // or r.run()
//   if (r.algorithm() == cartplan::mpi::GraphCollective::Algorithm::kGrid) std::printf("%d-D grid\n", r.grid_dims());
class GraphCollective {
 public:
  // What Cart_graph_request_algorithm reports, with the CART_GRAPH_* values.
  enum class Algorithm { kLinear = 0, kPairing = 1, kCumulative = 2, kGrid = 3 };
  // "linear", "pairing", "cumulative" or "grid" (the cartplan_algorithm value that forces it).
  static const char* name(Algorithm a);

  static GraphCollective allgather(const DistGraphComm& g, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Info info = MPI_INFO_NULL);
  static GraphCollective alltoall(const DistGraphComm& g, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Info info = MPI_INFO_NULL);
  static GraphCollective allgatherv(const DistGraphComm& g, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                    MPI_Info info = MPI_INFO_NULL);
  static GraphCollective alltoallv(const DistGraphComm& g, const void* sendbuf, const int sendcounts[], const int sdispls[],
                                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                   MPI_Datatype recvtype, MPI_Info info = MPI_INFO_NULL);
  static GraphCollective alltoallw(const DistGraphComm& g, const void* sendbuf, const int sendcounts[],
                                   const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void* recvbuf,
                                   const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                   MPI_Info info = MPI_INFO_NULL);
  // Large-count forms (Cart_graph_neighbor_*_init_c): MPI_Count counts, MPI_Aint displacements;
  // overloads chosen as DistGraphComm's large-count members are.
  //   auto r = cartplan::mpi::GraphCollective::allgather(g, mine, MPI_Count{3} << 30, MPI_BYTE,
  //                                                      theirs, MPI_Count{3} << 30, MPI_BYTE);
  static GraphCollective allgather(const DistGraphComm& g, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                   void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Info info = MPI_INFO_NULL);
  static GraphCollective alltoall(const DistGraphComm& g, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Info info = MPI_INFO_NULL);
  static GraphCollective allgatherv(const DistGraphComm& g, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                    void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                                    MPI_Datatype recvtype, MPI_Info info = MPI_INFO_NULL);
  static GraphCollective alltoallv(const DistGraphComm& g, const void* sendbuf, const MPI_Count sendcounts[],
                                   const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                   const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype,
                                   MPI_Info info = MPI_INFO_NULL);
  static GraphCollective alltoallw(const DistGraphComm& g, const void* sendbuf, const MPI_Count sendcounts[],
                                   const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void* recvbuf,
                                   const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                   MPI_Info info = MPI_INFO_NULL);
  // Widening forms (scalar counts of other integer types or mixed, as DistGraphComm's).
  //   auto r = cartplan::mpi::GraphCollective::alltoall(g, out.data(), n, MPI_INT, in.data(), n, MPI_INT);   // std::size_t n
  template <class S, class R, detail::Widened<S, R> = 0>
  static GraphCollective allgather(const DistGraphComm& g, const void* sendbuf, S sendcount, MPI_Datatype sendtype,
                                   void* recvbuf, R recvcount, MPI_Datatype recvtype, MPI_Info info = MPI_INFO_NULL) {
    return allgather(g, sendbuf, detail::as_count(sendcount), sendtype, recvbuf,
                     detail::as_count(recvcount), recvtype, info);
  }
  template <class S, class R, detail::Widened<S, R> = 0>
  static GraphCollective alltoall(const DistGraphComm& g, const void* sendbuf, S sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, R recvcount, MPI_Datatype recvtype, MPI_Info info = MPI_INFO_NULL) {
    return alltoall(g, sendbuf, detail::as_count(sendcount), sendtype, recvbuf,
                    detail::as_count(recvcount), recvtype, info);
  }
  ~GraphCollective();
  GraphCollective(GraphCollective&&) noexcept;
  GraphCollective& operator=(GraphCollective&&) noexcept;

  void start();  // MPI_ERR_REQUEST if already active, or for a non-blocking call's request
  void wait();   // completes a started run (no-op when inactive)
  bool test();   // true once complete
  void run() {
    start();
    wait();
  }
  // The algorithm this request runs (local): the forced one, or auto's pick.
  //   std::printf("%s\n", GraphCollective::name(r.algorithm()));   // e.g. "pairing"
  Algorithm algorithm() const;
  // The dimensions of the virtual grid a kGrid request routes through (Cart_graph_request_grid_dims):
  // 1 to 30; 0 for the other algorithms and for a grid on one rank.
  int grid_dims() const;

 private:
  friend class DistGraphComm;  // makes the non-blocking calls' requests
  GraphCollective(std::unique_ptr<GraphExchange> x, bool persistent);
  GraphExchange& exchange() const;  // throws MPI_ERR_REQUEST when moved from
  std::unique_ptr<GraphExchange> x_;
  bool persistent_ = true;  // false: a non-blocking call's, started once
};

template <class S, class R, detail::Widened<S, R>>
GraphCollective DistGraphComm::iallgather(const void* sendbuf, S sendcount, MPI_Datatype sendtype, void* recvbuf, R recvcount,
                                          MPI_Datatype recvtype) const {
  return iallgather(sendbuf, detail::as_count(sendcount), sendtype, recvbuf,
                    detail::as_count(recvcount), recvtype);
}
template <class S, class R, detail::Widened<S, R>>
GraphCollective DistGraphComm::ialltoall(const void* sendbuf, S sendcount, MPI_Datatype sendtype, void* recvbuf, R recvcount,
                                         MPI_Datatype recvtype) const {
  return ialltoall(sendbuf, detail::as_count(sendcount), sendtype, recvbuf,
                   detail::as_count(recvcount), recvtype);
}

}  // namespace cartplan::mpi
