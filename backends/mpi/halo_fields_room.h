// The halo API's fields forms for callers that know how many entries their arrays hold (the
// Fortran module's size(arrays) and size(types), through fortran_shim.cc): a count larger than
// either is MPI_ERR_COUNT naming the three numbers, nothing past them read, and it takes part in
// the agreements like any bad argument (init; blocking in checking mode). Not public (local
// symbols of the library, backends/dist/cartplan.map), defined in halo_api.cc.
//
//   const cartplan::mpi::FieldsRoom room{n_arrays, n_types};
//   int rc = cartplan::mpi::halo_exchange_fields_in(count, room, arrays, types, halo);
#pragma once

#include "backends/mpi/cartplan_mpi.h"

namespace cartplan::mpi {

// How many entries the caller's arrays and types hold; -1: unknown (the C API: `count` of each).
struct FieldsRoom {
  int arrays = -1;
  int types = -1;
};

// Cart_halo_exchange_fields and Cart_halo_exchange_fields_init with the room checked.
int halo_exchange_fields_in(int count, const FieldsRoom& room, void* const arrays[], const MPI_Datatype types[], Cart_Halo halo);
int halo_exchange_fields_init_in(int count, const FieldsRoom& room, void* const arrays[], const MPI_Datatype types[], Cart_Halo halo,
                                 MPI_Info info, Cart_Request* request);
// Cart_halo_iexchange_fields with the room checked.
int halo_iexchange_fields_in(int count, const FieldsRoom& room, void* const arrays[], const MPI_Datatype types[], Cart_Halo halo,
                             Cart_Request* request);

}  // namespace cartplan::mpi
