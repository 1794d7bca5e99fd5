// The keyval of cartplan's communicator state, released at MPI_Finalize.
#include "backends/mpi/comm_keyval.h"

namespace cartplan::mpi {
namespace {

int free_keyval_at_finalize(MPI_Comm, int, void*, void* key) { return MPI_Comm_free_keyval(static_cast<int*>(key)); }
int free_type_keyval(MPI_Comm, int, void*, void* key) { return MPI_Type_free_keyval(static_cast<int*>(key)); }

// Runs `release` on `key` when MPI_Finalize deletes MPI_COMM_SELF's attributes.
void at_finalize(MPI_Comm_delete_attr_function* release, int* key) {
  int self_key = MPI_KEYVAL_INVALID;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, release, &self_key, key);
  MPI_Comm_set_attr(MPI_COMM_SELF, self_key, nullptr);
  MPI_Comm_free_keyval(&self_key);  // released with the attribute, at MPI_Finalize
}

}  // namespace

void create_state_keyval(MPI_Comm_copy_attr_function* copy, MPI_Comm_delete_attr_function* destroy, int* key) {
  MPI_Comm_create_keyval(copy, destroy, key, nullptr);
  at_finalize(free_keyval_at_finalize, key);
}

void free_type_keyval_at_finalize(int* key) { at_finalize(free_type_keyval, key); }

}  // namespace cartplan::mpi
