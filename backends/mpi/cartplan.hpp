// cartplan's C++ API over the same core as the C API (cartplan_mpi.h). Errors are thrown as
// cartplan::mpi::MpiError (an MPI error class plus a message); nothing else in this API reports
// errors another way. Collective constructors check and agree on arguments across ranks, so a
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
#include <vector>

namespace cartplan::ir::halo {
class HaloPlan;
}

namespace cartplan::mpi {

class Exchange;

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

// A persistent halo exchange of fixed arrays (Halo::exchange_init): start, wait, test, run.
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
  HaloRequest(std::shared_ptr<HaloContext> halo, std::unique_ptr<Exchange> x, std::shared_ptr<const ir::halo::HaloPlan> plan);
  std::shared_ptr<HaloContext> halo_;  // first: released after the exchange
  std::unique_ptr<Exchange> x_;
  std::shared_ptr<const ir::halo::HaloPlan> plan_;  // the plan x_ runs
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
  std::string plan() const;  // the text of Cart_halo_plan

 private:
  std::shared_ptr<HaloContext> h_;
};

}  // namespace cartplan::mpi
