// The layout of a derived datatype as a small number, so that the blocking cache can key calls
// on what a datatype describes instead of its handle: a handle can be freed and come back for
// another layout, a layout cannot change.
//
//   std::uint64_t id = 0;
//   MpiStatus s = layout_id(type, &id);   // equal ids: the same layout, however built
//   if (!vouched_layout(type)) ... rebuild; after a successful call: vouch_layout(type, id);
#pragma once

#include <mpi.h>

#include <cstdint>

#include "backends/mpi/status.h"

namespace cartplan::mpi {

// A number for the layout of `type`, the same for every datatype of this process built by the
// same constructors with the same arguments from types of equal layout (MPI_Type_dup is
// transparent), and different for any other. Read recursively with MPI_Type_get_envelope and
// MPI_Type_get_contents; not cached, so it costs a walk of the type's construction. 0: a new
// layout after the process has interned its bound of layouts (datatype_layout.cc); not keyable.
MpiStatus layout_id(MPI_Datatype type, std::uint64_t* id);

// The layout id of `type` if this very datatype object was vouched for, else 0. A vouch is an
// attribute on the datatype (a cheap lookup): it dies with the datatype when it is freed, so a
// handle value reused for a new datatype carries none; MPI_Type_dup copies it to the duplicate,
// which has the same layout and the same committed state.
std::uint64_t vouched_layout(MPI_Datatype type);

// Records on `type` (derived, never predefined) that its layout is `id`. Called only after a
// call with `type` succeeded without reuse: MPI's own checks (committed, valid) have passed for
// this object, and a datatype is never uncommitted, so a later call may trust the vouch.
MpiStatus vouch_layout(MPI_Datatype type, std::uint64_t id);

}  // namespace cartplan::mpi
