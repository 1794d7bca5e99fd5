// Fortran handle shims: the C API with Fortran MPI handles (MPI_Fint), called by the cartplan_f08 module (backends/fortran/cartplan_f08.f90).
//
// mpi_f08's type(MPI_Comm), type(MPI_Datatype) and type(MPI_Info) hold a Fortran handle, not
// the C one, so the module cannot bind to cartplan_mpi.h directly. Each cartplan_f_X converts
// the handles with MPI_*_f2c and calls Cart_X; arrays of datatypes (t entries, t from the
// communicator) are converted into a temporary, which is safe because the C API reads its array
// arguments only during the call. Every buffer and halo array goes through c_buffer
// (fortran_sentinels.h), so that mpi_f08's MPI_BOTTOM and MPI_IN_PLACE arrive as C's. Not declared
// in a public header: these are the module's ABI.
#include <algorithm>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "backends/mpi/fortran_sentinels.h"
#include "backends/mpi/halo_fields_room.h"

namespace {

using cartplan::mpi::c_buffer;

MPI_Comm comm_of(MPI_Fint f) { return MPI_Comm_f2c(f); }
MPI_Datatype type_of(MPI_Fint f) { return MPI_Type_f2c(f); }
MPI_Info info_of(MPI_Fint f) { return MPI_Info_f2c(f); }

// Converts the t datatypes of a -w call; returns an MPI error class (as Cart_neighbor_count does).
int types_of(MPI_Comm comm, const MPI_Fint* f, std::vector<MPI_Datatype>* out) {
  int t = 0;
  const int rc = Cart_neighbor_count(comm, &t);
  if (rc != MPI_SUCCESS) return rc;
  if (f == nullptr) return MPI_ERR_TYPE;
  out->resize(t > 0 ? t : 1, MPI_DATATYPE_NULL);
  for (int i = 0; i < t; ++i) (*out)[i] = MPI_Type_f2c(f[i]);
  return MPI_SUCCESS;
}

// Both datatype arrays of a -w call (send, then receive).
int send_recv_types_of(MPI_Comm comm, const MPI_Fint* st, const MPI_Fint* rt, std::vector<MPI_Datatype>* cst,
                       std::vector<MPI_Datatype>* crt) {
  const int e = types_of(comm, st, cst);
  return e == MPI_SUCCESS ? types_of(comm, rt, crt) : e;
}

// The element types of the halo API's _fields forms: `count` Fortran handles (none read for a
// count below 1, which the C API refuses).
std::vector<MPI_Datatype> field_types_of(int count, const MPI_Fint* f) {
  std::vector<MPI_Datatype> types(count > 0 ? static_cast<std::size_t>(count) : 1, MPI_DATATYPE_NULL);
  for (int i = 0; f && i < count; ++i) types[static_cast<std::size_t>(i)] = MPI_Type_f2c(f[i]);
  return types;
}

// The halo API's _fields arrays (n_arrays addresses) through c_buffer; at least one entry, so
// that data() is never NULL (the C API reads none past its checks of count against n_arrays).
std::vector<void*> field_arrays_of(int n_arrays, void* const* arrays) {
  std::vector<void*> out(n_arrays > 0 ? static_cast<std::size_t>(n_arrays) : 1, nullptr);
  for (int i = 0; arrays && i < n_arrays; ++i) out[static_cast<std::size_t>(i)] = c_buffer(arrays[i]);
  return out;
}

}  // namespace

extern "C" {

int cartplan_f_neighborhood_create(MPI_Fint comm, int d, const int* dims, const int* periods, int t, const int* relative,
                                   MPI_Fint info, int reorder, MPI_Fint* cartcomm) {
  MPI_Comm cart = MPI_COMM_NULL;
  const int rc = Cart_neighborhood_create(comm_of(comm), d, dims, periods, t, relative, MPI_UNWEIGHTED, info_of(info), reorder, &cart);
  *cartcomm = MPI_Comm_c2f(cart);
  return rc;
}

int cartplan_f_relative_rank(MPI_Fint comm, const int* relative, int* rank) {
  return Cart_relative_rank(comm_of(comm), relative, rank);
}
int cartplan_f_relative_shift(MPI_Fint comm, const int* relative, int* inrank, int* outrank) {
  return Cart_relative_shift(comm_of(comm), relative, inrank, outrank);
}
int cartplan_f_relative_coord(MPI_Fint comm, int rank, int* relative) { return Cart_relative_coord(comm_of(comm), rank, relative); }
int cartplan_f_allranks_relative(MPI_Fint comm, int n, const int* relative, int* ranks) {
  return Cart_allranks_relative(comm_of(comm), n, relative, ranks);
}
int cartplan_f_neighbor_count(MPI_Fint comm, int* t) { return Cart_neighbor_count(comm_of(comm), t); }
int cartplan_f_neighbor_degrees(MPI_Fint comm, int* t, int* indegree, int* outdegree) {
  return Cart_neighbor_degrees(comm_of(comm), t, indegree, outdegree);
}
int cartplan_f_neighbor_get(MPI_Fint comm, int maxin, int* sources, int maxout, int* targets) {
  return Cart_neighbor_get(comm_of(comm), maxin, sources, nullptr, maxout, targets, nullptr);
}
int cartplan_f_graph_get(MPI_Fint comm, int maxin, int* sources, int maxout, int* targets) {
  return Cart_graph_get(comm_of(comm), maxin, sources, maxout, targets);
}

// Blocking collectives.
int cartplan_f_alltoall(const void* sb, int sc, MPI_Fint st, void* rb, int rc, MPI_Fint rt, MPI_Fint comm) {
  return Cart_alltoall(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, type_of(rt), comm_of(comm));
}
int cartplan_f_alltoallv(const void* sb, const int* sc, const int* sd, MPI_Fint st, void* rb, const int* rc, const int* rd,
                         MPI_Fint rt, MPI_Fint comm) {
  return Cart_alltoallv(c_buffer(sb), sc, sd, type_of(st), c_buffer(rb), rc, rd, type_of(rt), comm_of(comm));
}
int cartplan_f_alltoallw(const void* sb, const int* sc, const MPI_Aint* sd, const MPI_Fint* st, void* rb, const int* rc,
                         const MPI_Aint* rd, const MPI_Fint* rt, MPI_Fint comm) {
  std::vector<MPI_Datatype> cst, crt;
  if (const int e = send_recv_types_of(comm_of(comm), st, rt, &cst, &crt); e != MPI_SUCCESS) return e;
  return Cart_alltoallw(c_buffer(sb), sc, sd, cst.data(), c_buffer(rb), rc, rd, crt.data(), comm_of(comm));
}
int cartplan_f_allgather(const void* sb, int sc, MPI_Fint st, void* rb, int rc, MPI_Fint rt, MPI_Fint comm) {
  return Cart_allgather(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, type_of(rt), comm_of(comm));
}
int cartplan_f_allgatherv(const void* sb, int sc, MPI_Fint st, void* rb, const int* rc, const int* rd, MPI_Fint rt, MPI_Fint comm) {
  return Cart_allgatherv(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, rd, type_of(rt), comm_of(comm));
}
int cartplan_f_allgatherw(const void* sb, int sc, MPI_Fint st, void* rb, const int* rc, const MPI_Aint* rd, const MPI_Fint* rt,
                          MPI_Fint comm) {
  std::vector<MPI_Datatype> crt;
  const int e = types_of(comm_of(comm), rt, &crt);
  if (e != MPI_SUCCESS) return e;
  return Cart_allgatherw(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, rd, crt.data(), comm_of(comm));
}

// Non-blocking collectives.
int cartplan_f_ialltoall(const void* sb, int sc, MPI_Fint st, void* rb, int rc, MPI_Fint rt, MPI_Fint comm, Cart_Request* r) {
  return Cart_ialltoall(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, type_of(rt), comm_of(comm), r);
}
int cartplan_f_ialltoallv(const void* sb, const int* sc, const int* sd, MPI_Fint st, void* rb, const int* rc, const int* rd,
                          MPI_Fint rt, MPI_Fint comm, Cart_Request* r) {
  return Cart_ialltoallv(c_buffer(sb), sc, sd, type_of(st), c_buffer(rb), rc, rd, type_of(rt), comm_of(comm), r);
}
int cartplan_f_ialltoallw(const void* sb, const int* sc, const MPI_Aint* sd, const MPI_Fint* st, void* rb, const int* rc,
                          const MPI_Aint* rd, const MPI_Fint* rt, MPI_Fint comm, Cart_Request* r) {
  std::vector<MPI_Datatype> cst, crt;
  if (const int e = send_recv_types_of(comm_of(comm), st, rt, &cst, &crt); e != MPI_SUCCESS) return e;
  return Cart_ialltoallw(c_buffer(sb), sc, sd, cst.data(), c_buffer(rb), rc, rd, crt.data(), comm_of(comm), r);
}
int cartplan_f_iallgather(const void* sb, int sc, MPI_Fint st, void* rb, int rc, MPI_Fint rt, MPI_Fint comm, Cart_Request* r) {
  return Cart_iallgather(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, type_of(rt), comm_of(comm), r);
}
int cartplan_f_iallgatherv(const void* sb, int sc, MPI_Fint st, void* rb, const int* rc, const int* rd, MPI_Fint rt, MPI_Fint comm,
                           Cart_Request* r) {
  return Cart_iallgatherv(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, rd, type_of(rt), comm_of(comm), r);
}
int cartplan_f_iallgatherw(const void* sb, int sc, MPI_Fint st, void* rb, const int* rc, const MPI_Aint* rd, const MPI_Fint* rt,
                           MPI_Fint comm, Cart_Request* r) {
  std::vector<MPI_Datatype> crt;
  const int e = types_of(comm_of(comm), rt, &crt);
  if (e != MPI_SUCCESS) return e;
  return Cart_iallgatherw(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, rd, crt.data(), comm_of(comm), r);
}

// Persistent collectives.
int cartplan_f_alltoall_init(const void* sb, int sc, MPI_Fint st, void* rb, int rc, MPI_Fint rt, MPI_Fint comm, MPI_Fint info,
                             Cart_Request* r) {
  return Cart_alltoall_init(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, type_of(rt), comm_of(comm), info_of(info), r);
}
int cartplan_f_alltoallv_init(const void* sb, const int* sc, const int* sd, MPI_Fint st, void* rb, const int* rc, const int* rd,
                              MPI_Fint rt, MPI_Fint comm, MPI_Fint info, Cart_Request* r) {
  return Cart_alltoallv_init(c_buffer(sb), sc, sd, type_of(st), c_buffer(rb), rc, rd, type_of(rt), comm_of(comm), info_of(info),
                             r);
}
int cartplan_f_alltoallw_init(const void* sb, const int* sc, const MPI_Aint* sd, const MPI_Fint* st, void* rb, const int* rc,
                              const MPI_Aint* rd, const MPI_Fint* rt, MPI_Fint comm, MPI_Fint info, Cart_Request* r) {
  std::vector<MPI_Datatype> cst, crt;
  if (const int e = send_recv_types_of(comm_of(comm), st, rt, &cst, &crt); e != MPI_SUCCESS) return e;
  return Cart_alltoallw_init(c_buffer(sb), sc, sd, cst.data(), c_buffer(rb), rc, rd, crt.data(), comm_of(comm), info_of(info), r);
}
int cartplan_f_allgather_init(const void* sb, int sc, MPI_Fint st, void* rb, int rc, MPI_Fint rt, MPI_Fint comm, MPI_Fint info,
                              Cart_Request* r) {
  return Cart_allgather_init(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, type_of(rt), comm_of(comm), info_of(info), r);
}
int cartplan_f_allgatherv_init(const void* sb, int sc, MPI_Fint st, void* rb, const int* rc, const int* rd, MPI_Fint rt,
                               MPI_Fint comm, MPI_Fint info, Cart_Request* r) {
  return Cart_allgatherv_init(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, rd, type_of(rt), comm_of(comm), info_of(info), r);
}
int cartplan_f_allgatherw_init(const void* sb, int sc, MPI_Fint st, void* rb, const int* rc, const MPI_Aint* rd, const MPI_Fint* rt,
                               MPI_Fint comm, MPI_Fint info, Cart_Request* r) {
  std::vector<MPI_Datatype> crt;
  const int e = types_of(comm_of(comm), rt, &crt);
  if (e != MPI_SUCCESS) return e;
  return Cart_allgatherw_init(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, rd, crt.data(), comm_of(comm), info_of(info), r);
}

// Large-count forms (Cart_..._c): MPI_Count counts, MPI_Aint displacements.
// Blocking collectives.
int cartplan_f_alltoall_c(const void* sb, MPI_Count sc, MPI_Fint st, void* rb, MPI_Count rc, MPI_Fint rt, MPI_Fint comm) {
  return Cart_alltoall_c(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, type_of(rt), comm_of(comm));
}
int cartplan_f_alltoallv_c(const void* sb, const MPI_Count* sc, const MPI_Aint* sd, MPI_Fint st, void* rb, const MPI_Count* rc,
                           const MPI_Aint* rd, MPI_Fint rt, MPI_Fint comm) {
  return Cart_alltoallv_c(c_buffer(sb), sc, sd, type_of(st), c_buffer(rb), rc, rd, type_of(rt), comm_of(comm));
}
int cartplan_f_alltoallw_c(const void* sb, const MPI_Count* sc, const MPI_Aint* sd, const MPI_Fint* st, void* rb,
                           const MPI_Count* rc, const MPI_Aint* rd, const MPI_Fint* rt, MPI_Fint comm) {
  std::vector<MPI_Datatype> cst, crt;
  if (const int e = send_recv_types_of(comm_of(comm), st, rt, &cst, &crt); e != MPI_SUCCESS) return e;
  return Cart_alltoallw_c(c_buffer(sb), sc, sd, cst.data(), c_buffer(rb), rc, rd, crt.data(), comm_of(comm));
}
int cartplan_f_allgather_c(const void* sb, MPI_Count sc, MPI_Fint st, void* rb, MPI_Count rc, MPI_Fint rt, MPI_Fint comm) {
  return Cart_allgather_c(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, type_of(rt), comm_of(comm));
}
int cartplan_f_allgatherv_c(const void* sb, MPI_Count sc, MPI_Fint st, void* rb, const MPI_Count* rc, const MPI_Aint* rd,
                            MPI_Fint rt, MPI_Fint comm) {
  return Cart_allgatherv_c(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, rd, type_of(rt), comm_of(comm));
}
int cartplan_f_allgatherw_c(const void* sb, MPI_Count sc, MPI_Fint st, void* rb, const MPI_Count* rc, const MPI_Aint* rd,
                            const MPI_Fint* rt, MPI_Fint comm) {
  std::vector<MPI_Datatype> crt;
  const int e = types_of(comm_of(comm), rt, &crt);
  if (e != MPI_SUCCESS) return e;
  return Cart_allgatherw_c(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, rd, crt.data(), comm_of(comm));
}

// Non-blocking collectives.
int cartplan_f_ialltoall_c(const void* sb, MPI_Count sc, MPI_Fint st, void* rb, MPI_Count rc, MPI_Fint rt, MPI_Fint comm,
                           Cart_Request* r) {
  return Cart_ialltoall_c(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, type_of(rt), comm_of(comm), r);
}
int cartplan_f_ialltoallv_c(const void* sb, const MPI_Count* sc, const MPI_Aint* sd, MPI_Fint st, void* rb, const MPI_Count* rc,
                            const MPI_Aint* rd, MPI_Fint rt, MPI_Fint comm, Cart_Request* r) {
  return Cart_ialltoallv_c(c_buffer(sb), sc, sd, type_of(st), c_buffer(rb), rc, rd, type_of(rt), comm_of(comm), r);
}
int cartplan_f_ialltoallw_c(const void* sb, const MPI_Count* sc, const MPI_Aint* sd, const MPI_Fint* st, void* rb,
                            const MPI_Count* rc, const MPI_Aint* rd, const MPI_Fint* rt, MPI_Fint comm, Cart_Request* r) {
  std::vector<MPI_Datatype> cst, crt;
  if (const int e = send_recv_types_of(comm_of(comm), st, rt, &cst, &crt); e != MPI_SUCCESS) return e;
  return Cart_ialltoallw_c(c_buffer(sb), sc, sd, cst.data(), c_buffer(rb), rc, rd, crt.data(), comm_of(comm), r);
}
int cartplan_f_iallgather_c(const void* sb, MPI_Count sc, MPI_Fint st, void* rb, MPI_Count rc, MPI_Fint rt, MPI_Fint comm,
                            Cart_Request* r) {
  return Cart_iallgather_c(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, type_of(rt), comm_of(comm), r);
}
int cartplan_f_iallgatherv_c(const void* sb, MPI_Count sc, MPI_Fint st, void* rb, const MPI_Count* rc, const MPI_Aint* rd,
                             MPI_Fint rt, MPI_Fint comm, Cart_Request* r) {
  return Cart_iallgatherv_c(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, rd, type_of(rt), comm_of(comm), r);
}
int cartplan_f_iallgatherw_c(const void* sb, MPI_Count sc, MPI_Fint st, void* rb, const MPI_Count* rc, const MPI_Aint* rd,
                             const MPI_Fint* rt, MPI_Fint comm, Cart_Request* r) {
  std::vector<MPI_Datatype> crt;
  const int e = types_of(comm_of(comm), rt, &crt);
  if (e != MPI_SUCCESS) return e;
  return Cart_iallgatherw_c(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, rd, crt.data(), comm_of(comm), r);
}

// Persistent collectives.
int cartplan_f_alltoall_init_c(const void* sb, MPI_Count sc, MPI_Fint st, void* rb, MPI_Count rc, MPI_Fint rt, MPI_Fint comm,
                               MPI_Fint info, Cart_Request* r) {
  return Cart_alltoall_init_c(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, type_of(rt), comm_of(comm), info_of(info), r);
}
int cartplan_f_alltoallv_init_c(const void* sb, const MPI_Count* sc, const MPI_Aint* sd, MPI_Fint st, void* rb,
                                const MPI_Count* rc, const MPI_Aint* rd, MPI_Fint rt, MPI_Fint comm, MPI_Fint info,
                                Cart_Request* r) {
  return Cart_alltoallv_init_c(c_buffer(sb), sc, sd, type_of(st), c_buffer(rb), rc, rd, type_of(rt), comm_of(comm),
                               info_of(info), r);
}
int cartplan_f_alltoallw_init_c(const void* sb, const MPI_Count* sc, const MPI_Aint* sd, const MPI_Fint* st, void* rb,
                                const MPI_Count* rc, const MPI_Aint* rd, const MPI_Fint* rt, MPI_Fint comm, MPI_Fint info,
                                Cart_Request* r) {
  std::vector<MPI_Datatype> cst, crt;
  if (const int e = send_recv_types_of(comm_of(comm), st, rt, &cst, &crt); e != MPI_SUCCESS) return e;
  return Cart_alltoallw_init_c(c_buffer(sb), sc, sd, cst.data(), c_buffer(rb), rc, rd, crt.data(), comm_of(comm), info_of(info),
                               r);
}
int cartplan_f_allgather_init_c(const void* sb, MPI_Count sc, MPI_Fint st, void* rb, MPI_Count rc, MPI_Fint rt, MPI_Fint comm,
                                MPI_Fint info, Cart_Request* r) {
  return Cart_allgather_init_c(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, type_of(rt), comm_of(comm), info_of(info), r);
}
int cartplan_f_allgatherv_init_c(const void* sb, MPI_Count sc, MPI_Fint st, void* rb, const MPI_Count* rc, const MPI_Aint* rd,
                                 MPI_Fint rt, MPI_Fint comm, MPI_Fint info, Cart_Request* r) {
  return Cart_allgatherv_init_c(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, rd, type_of(rt), comm_of(comm), info_of(info),
                                r);
}
int cartplan_f_allgatherw_init_c(const void* sb, MPI_Count sc, MPI_Fint st, void* rb, const MPI_Count* rc, const MPI_Aint* rd,
                                 const MPI_Fint* rt, MPI_Fint comm, MPI_Fint info, Cart_Request* r) {
  std::vector<MPI_Datatype> crt;
  const int e = types_of(comm_of(comm), rt, &crt);
  if (e != MPI_SUCCESS) return e;
  return Cart_allgatherw_init_c(c_buffer(sb), sc, type_of(st), c_buffer(rb), rc, rd, crt.data(), comm_of(comm), info_of(info), r);
}

// Datatype helper.
int cartplan_f_type_create_triangle(int order, int ld, int kind, MPI_Fint oldtype, MPI_Fint* newtype) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  const int rc = Cart_type_create_triangle(order, ld, kind, type_of(oldtype), &t);
  *newtype = MPI_Type_c2f(t);
  return rc;
}

// The halo API. `order`: 0 for the Fortran module's MPI_ORDER_C, 1 for MPI_ORDER_FORTRAN, -1 for
// anything else (the module maps mpi_f08's constants, whose values are the Fortran binding's).
int cartplan_f_halo_create(MPI_Fint comm, int d, const int* interior, const int* ghost_lo, const int* ghost_hi, MPI_Fint elemtype,
                           int order, MPI_Fint info, Cart_Halo* halo) {
  const int c_order = order == 0 ? MPI_ORDER_C : order == 1 ? MPI_ORDER_FORTRAN : -1;
  return Cart_halo_create(comm_of(comm), d, interior, ghost_lo, ghost_hi, type_of(elemtype), c_order, info_of(info), halo);
}
// Cart_halo_exchange and Cart_halo_iexchange take no MPI handle; their shims only translate the array.
int cartplan_f_halo_exchange(void* array, Cart_Halo halo) { return Cart_halo_exchange(c_buffer(array), halo); }
int cartplan_f_halo_iexchange(void* array, Cart_Halo halo, Cart_Request* r) {
  return Cart_halo_iexchange(c_buffer(array), halo, r);
}
int cartplan_f_halo_exchange_init(void* array, Cart_Halo halo, MPI_Fint info, Cart_Request* r) {
  return Cart_halo_exchange_init(c_buffer(array), halo, info_of(info), r);
}
// `arrays`: n_arrays addresses (the module's type(c_ptr) array); `types`: n_types Fortran
// handles. A count larger than either is MPI_ERR_COUNT naming them (halo_fields_room.h).
int cartplan_f_halo_exchange_fields2(int count, int n_arrays, int n_types, void* const* arrays, const MPI_Fint* types, Cart_Halo halo) {
  const std::vector<MPI_Datatype> t = field_types_of(std::min(count, n_types), types);
  const std::vector<void*> a = field_arrays_of(n_arrays, arrays);
  return cartplan::mpi::halo_exchange_fields_in(count, {n_arrays, n_types}, a.data(), t.data(), halo);
}
int cartplan_f_halo_iexchange_fields(int count, int n_arrays, int n_types, void* const* arrays, const MPI_Fint* types, Cart_Halo halo,
                                     Cart_Request* r) {
  const std::vector<MPI_Datatype> t = field_types_of(std::min(count, n_types), types);
  const std::vector<void*> a = field_arrays_of(n_arrays, arrays);
  return cartplan::mpi::halo_iexchange_fields_in(count, {n_arrays, n_types}, a.data(), t.data(), halo, r);
}
int cartplan_f_halo_exchange_fields_init2(int count, int n_arrays, int n_types, void* const* arrays, const MPI_Fint* types, Cart_Halo halo,
                                          MPI_Fint info, Cart_Request* r) {
  const std::vector<MPI_Datatype> t = field_types_of(std::min(count, n_types), types);
  const std::vector<void*> a = field_arrays_of(n_arrays, arrays);
  return cartplan::mpi::halo_exchange_fields_init_in(count, {n_arrays, n_types}, a.data(), t.data(), halo, info_of(info), r);
}

}  // extern "C"
