// The keyval of an attribute that carries cartplan's state on a communicator (the Cartesian
// neighbourhood, the graph state), created once per process and freed at MPI_Finalize; and the
// same release for a datatype keyval.
//
//   int keyval() {
//     static int key = MPI_KEYVAL_INVALID;
//     static const bool made = (create_state_keyval(copy_attr, delete_attr, &key), true);
//     return key;
//   }
#pragma once

#include <mpi.h>

namespace cartplan::mpi {

// Creates *key with the two callbacks. MPI_Finalize deletes MPI_COMM_SELF's attributes first:
// an attribute there frees the keyval (and sets *key to MPI_KEYVAL_INVALID), which would
// otherwise be left behind (valgrind: definitely lost in MPI_Comm_create_keyval).
void create_state_keyval(MPI_Comm_copy_attr_function* copy, MPI_Comm_delete_attr_function* destroy, int* key);

// The same release at MPI_Finalize for a datatype keyval (datatype_layout.h's vouches).
void free_type_keyval_at_finalize(int* key);

}  // namespace cartplan::mpi
