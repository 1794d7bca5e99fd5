// communication_copy (type_copy.h).
#include "backends/mpi/type_copy.h"

#include <mutex>

#include "backends/mpi/comm_keyval.h"

namespace cartplan::mpi {
namespace {

// The marker of a copy. MPI_TYPE_NULL_COPY_FN: nothing that duplicates a copy carries it.
int copy_keyval() {
  static std::once_flag once;
  static int keyval = MPI_KEYVAL_INVALID;
  std::call_once(once, [] {
    MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &keyval, nullptr);
    free_type_keyval_at_finalize(&keyval);
  });
  return keyval;
}

}  // namespace

MpiStatus communication_copy(MPI_Datatype type, MPI_Comm check, MPI_Datatype* out) {
  *out = MPI_DATATYPE_NULL;
  // The copy is committed here, so MPI would never see the caller's handle: send 0 elements of
  // it to MPI_PROC_NULL first, which moves nothing and lets MPI refuse a datatype the program
  // did not commit, as sending the caller's handle (or an MPI_Type_dup of it) would.
  char none = 0;
  const int sent = check == MPI_COMM_NULL ? MPI_SUCCESS : MPI_Send(&none, 0, type, MPI_PROC_NULL, 0, check);
  if (sent != MPI_SUCCESS) {
    int cls = MPI_ERR_TYPE;
    MPI_Error_class(sent, &cls);
    return mpi_error(cls, "a derived datatype of this call is not usable for communication (not committed?): MPI refused it");
  }
  MPI_Aint lb = 0, extent = 0;
  CARTPLAN_MPI_CALL(MPI_Type_get_extent(type, &lb, &extent));
  CARTPLAN_MPI_CALL(MPI_Type_create_resized(type, lb, extent, out));
  int rc = MPI_Type_commit(out);
  if (rc == MPI_SUCCESS) rc = MPI_Type_set_attr(*out, copy_keyval(), nullptr);
  if (rc == MPI_SUCCESS) return {};
  MPI_Type_free(out);
  return from_mpi(rc, "MPI_Type_commit");
}

bool is_communication_copy(MPI_Datatype type) {
  void* value = nullptr;
  int found = 0;
  return MPI_Type_get_attr(type, copy_keyval(), &value, &found) == MPI_SUCCESS && found;
}

}  // namespace cartplan::mpi
