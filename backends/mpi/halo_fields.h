// The fields of a halo exchange as its ranks must agree on them (persistent init always, the
// blocking forms in checking mode, docs/halo.md): how many, each one's element size, and the
// sizes added up (what one cell takes in a message: the size the plan is priced for).
//
//   FieldSizes f;
//   const MpiStatus local = field_sizes(arrays, types, halo_elem_bytes, &f);
//   MpiStatus s = agree_on_fields(nc, local, f, "the blocking halo exchange");  // one MPI_Allreduce
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/mpi/neighborhood_comm.h"
#include "backends/mpi/status.h"

namespace cartplan::mpi {

struct FieldSizes {
  std::vector<std::int64_t> bytes;  // per field: its element type's size
  std::int64_t sum = 0;
};

// NULL, MPI_BOTTOM or MPI_IN_PLACE arrays (MPI_ERR_BUFFER, naming the first) and an empty list
// (MPI_ERR_ARG). Local.
MpiStatus check_arrays(const std::vector<void*>& arrays);

// This rank's checks of its arrays (check_arrays) and element types (MPI_ERR_TYPE for one that
// is MPI_DATATYPE_NULL or holds no data), and their sizes; `types` empty: `own` (the halo's
// element size) for every array. Local.
MpiStatus field_sizes(const std::vector<void*>& arrays, const std::vector<MPI_Datatype>& types, std::int64_t own,
                      FieldSizes* out);

// The words a rank adds to a MAX reduction: its error class (0 if none), the field count and
// its negation, the sum and its negation, the sizes of the first kExactSizes fields and their
// negations (exact; 0 past the count), and a fingerprint (FNV-1a, 63 bits) of the sizes after
// them in order and its negation (0 where there are none). A fixed number of words, so that
// every rank's reduction has the same count; only fields past the eighth could collide.
constexpr std::size_t kExactSizes = 8;
constexpr std::size_t kFieldWords = 5 + 2 * kExactSizes + 2;
std::array<std::int64_t, kFieldWords> field_words(const MpiStatus& local, const FieldSizes& f);

// After the reduction (`all`: the MAX of every rank's field_words): the agreed error where a
// rank failed (agreed_error: the largest class), MPI_ERR_TRUNCATE naming what differs (count,
// sum, the first field of another size, or "past field 7") where the fields do, else ok. The same class on every rank. `call` names the call.
MpiStatus fields_agreed(const MpiStatus& local, const std::int64_t* all, const FieldSizes& f, const std::string& call);

// Checking mode of a blocking exchange: one MPI_Allreduce on the halo's private communicator
// (field_words, then fields_agreed). No message is sent before it; every rank returns alike.
MpiStatus agree_on_fields(NeighborhoodComm& nc, const MpiStatus& local, const FieldSizes& f, const std::string& call);

}  // namespace cartplan::mpi
