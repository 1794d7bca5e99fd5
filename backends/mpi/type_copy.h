// A private handle for a caller's derived datatype, for requests that outlive the call (MPI lets
// the program free its datatypes right after a non-blocking call or persistent init) and for
// exchanges reused after the program freed the handles they were built with.
//
//   MPI_Datatype mine = MPI_DATATYPE_NULL;
//   MpiStatus s = communication_copy(caller_type, internal_comm, &mine);   // ... MPI_Isend(buf, n, mine, ...)
//   MPI_Type_free(&mine);                                    // when the exchange is gone
#pragma once

#include <mpi.h>

#include "backends/mpi/status.h"

namespace cartplan::mpi {

// A new committed datatype equivalent to `type` for communication from a given address with
// the same count: MPI_Type_create_resized(type, lb, extent) with type's own lower bound and
// extent, whose type map is type's, with the same lower bound, extent, true extent and size, so
// n of it at one address are n of `type` there. It is not an MPI_Type_dup: its envelope is
// MPI_COMBINER_RESIZED (contents: type, lb, extent) and its bounds are explicit, so it is for
// sending and receiving only, never a key for reuse (datatype_layout.h looks through
// MPI_COMBINER_DUP only: callers take layout ids from the caller's handles). Unlike
// MPI_Type_dup it copies no attributes: the program's copy callbacks (MPI_Type_create_keyval)
// never run on cartplan's behalf. (Open MPI makes a resized type as a clone of the old one's
// description; MPI_Type_contiguous(1, type) would add a loop level that its datatype engine
// walks on every message: bench/results/cpp-2core/type_copy_contiguous_ab_np1.md.) For
// derived datatypes only (a predefined handle never goes away: callers use it as it is); the
// caller frees *out.
// `check`: a communicator whose errors return (MPI_ERRORS_RETURN), on which 0 elements of
// `type` are sent to MPI_PROC_NULL first, so that a datatype MPI would refuse to send (one the
// program did not commit, under Open MPI with MPI's parameter checking on: with
// mpi_param_check=0 Open MPI accepts it) is an error here (its class, MPI_ERR_TYPE) instead
// of being committed into a usable copy. MPI_COMM_NULL: no check (a type only built upon, as a
// halo's element type, need not be committed).
MpiStatus communication_copy(MPI_Datatype type, MPI_Comm check, MPI_Datatype* out);

// Whether `type` was made by communication_copy (it carries cartplan's own marker attribute,
// copied by nothing): for assertions that a copy never stands for the caller's type.
bool is_communication_copy(MPI_Datatype type);

}  // namespace cartplan::mpi
