// The halo part of the C API (cartplan_mpi.h, "Halo exchanges"): Cart_Halo handles over
// cartplan::mpi::HaloContext (halo.h), with errors reported as every C entry point does (api_guard.h).
// Persistent halo exchanges are ordinary Cart_Requests (request.h).
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backends/mpi/api_guard.h"
#include "backends/mpi/cartplan_mpi.h"
#include "backends/mpi/halo.h"
#include "backends/mpi/halo_fields_room.h"
#include "backends/mpi/request.h"
#include "ir/halo/json.h"

using cartplan::mpi::HaloContext;
using cartplan::mpi::MpiStatus;
using cartplan::mpi::guarded;
using cartplan::mpi::mpi_error;

struct Cart_Halo_s {
  std::shared_ptr<HaloContext> halo;
};

namespace {

MPI_Comm halo_comm(Cart_Halo halo) { return halo && halo->halo ? halo->halo->error_comm() : MPI_COMM_SELF; }

// The arrays and, if given, their element types (NULL: the halo's type for every array). `room`:
// how many entries the caller's arrays hold, where it knows (the Fortran module's size(arrays)
// and size(types)); nothing past them is read.
MpiStatus arrays_of(int count, void* const arrays[], const MPI_Datatype types[], const cartplan::mpi::FieldsRoom& room,
                    std::vector<void*>* out, std::vector<MPI_Datatype>* out_types) {
  if (count < 1) return mpi_error(MPI_ERR_COUNT, "count = " + std::to_string(count) + " (expected at least one array)");
  if ((room.arrays >= 0 && count > room.arrays) || (room.types >= 0 && count > room.types))
    return mpi_error(MPI_ERR_COUNT, "count = " + std::to_string(count) + " is larger than size(arrays) = " + std::to_string(room.arrays) +
                                        " or size(types) = " + std::to_string(room.types) + " (count arrays and types are read)");
  if (!arrays) return mpi_error(MPI_ERR_BUFFER, "arrays is NULL");
  out->assign(arrays, arrays + count);
  if (types) out_types->assign(types, types + count);
  return {};
}

int blocking(Cart_Halo halo, int count, void* const arrays[], const MPI_Datatype types[], const cartplan::mpi::FieldsRoom& room = {}) {
  return guarded(halo_comm(halo), [&]() -> MpiStatus {
    if (!halo) return mpi_error(MPI_ERR_ARG, "halo is CART_HALO_NULL");
    std::vector<void*> list;
    std::vector<MPI_Datatype> type_list;
    // Bad arguments are the halo's to report: at once, or in checking mode after agreeing.
    const MpiStatus bad = arrays_of(count, arrays, types, room, &list, &type_list);
    return halo->halo->exchange(list, type_list, bad);
  });
}

// A persistent exchange (init, collective) or a non-blocking one (started, local) as a request.
int halo_request(bool persistent, Cart_Halo halo, int count, void* const arrays[], const MPI_Datatype types[], MPI_Info info,
                 Cart_Request* request, const cartplan::mpi::FieldsRoom& room = {}) {
  return guarded(halo_comm(halo), [&]() -> MpiStatus {
    // A bad halo handle cannot take part in the halo's agreement: it is refused at once (every
    // rank that passes one gets the error; as in MPI, the others' init is then erroneous).
    if (!halo) return mpi_error(MPI_ERR_ARG, "halo is CART_HALO_NULL");
    if (request) *request = CART_REQUEST_NULL;
    std::vector<void*> list;
    std::vector<MPI_Datatype> type_list;
    MpiStatus bad = request ? arrays_of(count, arrays, types, room, &list, &type_list) : mpi_error(MPI_ERR_REQUEST, "request is NULL");
    // Bad arguments take part in init's agreement (and checking mode's), so that every rank returns an error.
    std::unique_ptr<cartplan::mpi::Exchange> x;
    std::shared_ptr<const cartplan::ir::halo::HaloPlan> plan;
    MpiStatus s = persistent ? halo->halo->exchange_init(list, type_list, bad, &x, info, &plan)
                             : halo->halo->iexchange(list, type_list, bad, &x, &plan);
    if (!s.ok()) return s;
    // A non-blocking request is freed by the Cart_wait or Cart_test that completes it.
    *request = new Cart_Request_s{halo->halo, std::move(x), persistent, nullptr, std::move(plan)};
    return {};
  });
}

// A malloc'ed copy of `text` for a caller that frees it with Cart_free_plan_json.
MpiStatus give_json(const std::string& text, const char* fn, char** json) {
  *json = static_cast<char*>(std::malloc(text.size() + 1));
  if (!*json) return mpi_error(MPI_ERR_NO_MEM, std::string(fn) + ": out of memory");
  std::memcpy(*json, text.c_str(), text.size() + 1);
  return {};
}

}  // namespace

extern "C" {

int Cart_halo_create(MPI_Comm cartcomm, int d, const int interior[], const int ghost_lo[], const int ghost_hi[],
                     MPI_Datatype elemtype, int order, MPI_Info info, Cart_Halo* halo) {
  return guarded(cartcomm, [&]() -> MpiStatus {
    if (halo) *halo = CART_HALO_NULL;
    std::shared_ptr<HaloContext> h;
    MpiStatus s = HaloContext::create(cartcomm, {d, interior, ghost_lo, ghost_hi, elemtype, order, info}, halo ? &h : nullptr);
    if (!s.ok()) return s;
    *halo = new Cart_Halo_s{std::move(h)};
    return {};
  });
}

int Cart_halo_exchange(void* array, Cart_Halo halo) { return blocking(halo, 1, &array, nullptr); }

int Cart_halo_exchange_fields(int count, void* const arrays[], const MPI_Datatype types[], Cart_Halo halo) {
  return blocking(halo, count, arrays, types);
}

int Cart_halo_iexchange(void* array, Cart_Halo halo, Cart_Request* request) {
  return halo_request(false, halo, 1, &array, nullptr, MPI_INFO_NULL, request);
}

int Cart_halo_iexchange_fields(int count, void* const arrays[], const MPI_Datatype types[], Cart_Halo halo, Cart_Request* request) {
  return halo_request(false, halo, count, arrays, types, MPI_INFO_NULL, request);
}

int Cart_halo_exchange_init(void* array, Cart_Halo halo, MPI_Info info, Cart_Request* request) {
  return halo_request(true, halo, 1, &array, nullptr, info, request);
}

int Cart_halo_exchange_fields_init(int count, void* const arrays[], const MPI_Datatype types[], Cart_Halo halo,
                                   MPI_Info info, Cart_Request* request) {
  return halo_request(true, halo, count, arrays, types, info, request);
}

int Cart_halo_free(Cart_Halo* halo) {
  return guarded(halo ? halo_comm(*halo) : MPI_COMM_SELF, [&]() -> MpiStatus {
    if (!halo) return mpi_error(MPI_ERR_ARG, "halo is NULL");
    delete *halo;  // requests made from it keep what they need (request.h)
    *halo = CART_HALO_NULL;
    return {};
  });
}

int Cart_halo_plan(Cart_Halo halo, char** json) {
  return guarded(halo_comm(halo), [&]() -> MpiStatus {
    if (!halo) return mpi_error(MPI_ERR_ARG, "Cart_halo_plan: halo is CART_HALO_NULL");
    if (!json) return mpi_error(MPI_ERR_ARG, "Cart_halo_plan: json is NULL");
    return give_json(cartplan::ir::halo::to_json_string(halo->halo->plan()), "Cart_halo_plan", json);
  });
}

int Cart_halo_request_plan(Cart_Request request, char** json) {
  return guarded(request ? request->error_comm() : MPI_COMM_SELF, [&]() -> MpiStatus {
    if (!request) return mpi_error(MPI_ERR_REQUEST, "Cart_halo_request_plan: request is CART_REQUEST_NULL");
    if (!request->halo_plan) return mpi_error(MPI_ERR_REQUEST, "Cart_halo_request_plan: not a halo exchange request");
    if (!json) return mpi_error(MPI_ERR_ARG, "Cart_halo_request_plan: json is NULL");
    return give_json(cartplan::ir::halo::to_json_string(*request->halo_plan), "Cart_halo_request_plan", json);
  });
}

}  // extern "C"

int cartplan::mpi::halo_exchange_fields_in(int count, const FieldsRoom& room, void* const arrays[], const MPI_Datatype types[],
                                           Cart_Halo halo) {
  return blocking(halo, count, arrays, types, room);
}

int cartplan::mpi::halo_exchange_fields_init_in(int count, const FieldsRoom& room, void* const arrays[], const MPI_Datatype types[],
                                                Cart_Halo halo, MPI_Info info, Cart_Request* request) {
  return halo_request(true, halo, count, arrays, types, info, request, room);
}

int cartplan::mpi::halo_iexchange_fields_in(int count, const FieldsRoom& room, void* const arrays[], const MPI_Datatype types[],
                                            Cart_Halo halo, Cart_Request* request) {
  return halo_request(false, halo, count, arrays, types, MPI_INFO_NULL, request, room);
}
