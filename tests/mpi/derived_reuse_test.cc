// The blocking cache with derived datatypes: Cart_alltoallw with the same derived datatypes
// builds its exchange once (builds counted by the private copies, MPI_Type_create_resized,
// the library makes of each, through the profiling interface; it never calls MPI_Type_dup)
// and no global collective runs per call; a datatype freed and created again with a
// different layout, even under the same handle value, never runs the stale exchange
// (rank-dependent data checked); the same layout under a new handle, and a program's
// MPI_Type_dup of a used datatype, run correctly. The layout ids and vouches themselves
// (datatype_layout.h) are checked under a reused handle value. The graph collectives' blocking
// cache is checked the same way (derived_reuse_graph.h).
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "backends/mpi/datatype_layout.h"
#include "tests/mpi/count_collectives.h"
#include "tests/mpi/count_type_builds.h"
#include "tests/mpi/derived_case.h"
#include "tests/mpi/derived_reuse_graph.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::DerivedCase;
using cartplan::mpitest::Harness;
using cartplan::mpitest::strided;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kQuarantine = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kQuarantine = true;
#else
constexpr bool kQuarantine = false;
#endif
#else
constexpr bool kQuarantine = false;
#endif

// One Cart_alltoallw with send datatype `stype` (every block) and a contiguous derived receive
// datatype; true when every received element is the one its source's `stride` selects. `dups`:
// the datatype copies the call made (the library copies each derived datatype it builds an
// exchange with).
bool exchange(Harness& h, DerivedCase& c, std::vector<int>& recv, MPI_Datatype stype, MPI_Datatype rtype, int stride, long* dups,
              const std::string& what) {
  recv.assign(recv.size(), -1);
  std::vector<MPI_Datatype> st(c.t, stype), rt(c.t, rtype);
  const long before = type_copies, dups_before = type_dups;
  const int rc = Cart_alltoallw(c.send.data(), c.counts.data(), c.sdispls.data(), st.data(), recv.data(), c.counts.data(),
                                c.rdispls.data(), rt.data(), c.cart);
  *dups = type_copies - before;
  h.check(type_dups == dups_before, what + ": Cart_alltoallw calls no MPI_Type_dup");
  h.check(rc == MPI_SUCCESS, what + ": Cart_alltoallw returns MPI_SUCCESS");
  const bool ok = c.holds(recv, stride);
  h.check(ok, what + ": every block holds its source's elements");
  return ok;
}

void run(Harness& h, const char* algo) {
  DerivedCase c = cartplan::mpitest::make_derived_case(h.rank, h.size, algo);
  std::vector<int> recv(cartplan::mpitest::kElems * c.t);  // the same buffer every call (the cache keys addresses)
  const std::string label = std::string(algo) + ": ";
  MPI_Datatype rtype = cartplan::mpitest::contiguous_block();
  MPI_Datatype a = strided(2);
  long dups = 0;
  exchange(h, c, recv, a, rtype, 2, &dups, label + "first call");
  h.check(dups == 2, label + "the first call builds with its 2 derived datatypes (" + std::to_string(dups) + " copied)");
  const long collectives = global_collectives;
  for (int it = 0; it < 5; ++it) {
    exchange(h, c, recv, a, rtype, 2, &dups, label + "repeated call");
    h.check(dups == 0, label + "a repeated call reuses the exchange (" + std::to_string(dups) + " datatypes copied)");
  }
  h.check(global_collectives == collectives, label + "no global collective per call");

  // The program's duplicate of a used datatype has its layout and committed state: reused.
  MPI_Datatype a2;
  MPI_Type_dup(a, &a2);
  exchange(h, c, recv, a2, rtype, 2, &dups, label + "program's duplicate");
  h.check(dups == 0, label + "a duplicate of a used datatype reuses the exchange");
  MPI_Type_free(&a2);

  // Freed, then created again with a different layout. (Under Open MPI the handle cannot come
  // back while the cached exchange holds a copy made from the old datatype, which retains it;
  // same_handle_case below checks that case on the key itself.)
  MPI_Type_free(&a);
  MPI_Datatype b = strided(3);
  exchange(h, c, recv, b, rtype, 3, &dups, label + "new layout");
  h.check(dups >= 1, label + "a new layout builds again");
  exchange(h, c, recv, b, rtype, 3, &dups, label + "new layout again");
  h.check(dups == 0, label + "the new layout's exchange is reused");

  // The same layout again under a fresh datatype: built once (not yet vouched for), then reused.
  MPI_Type_free(&b);
  MPI_Datatype b2 = strided(3);
  exchange(h, c, recv, b2, rtype, 3, &dups, label + "same layout, new datatype");
  exchange(h, c, recv, b2, rtype, 3, &dups, label + "same layout, new datatype again");
  h.check(dups == 0, label + "reused once the new datatype is vouched for");
  MPI_Type_free(&b2);
  MPI_Type_free(&rtype);
  MPI_Comm_free(&c.cart);
}

// A vouched datatype freed and a datatype of another layout created under the same handle
// value (the allocator is asked until it gives that value back): the new one carries no vouch
// and another layout id, so no key built from it can match the old one's.
void same_handle_case(Harness& h) {
  MPI_Datatype a = strided(2);
  std::uint64_t a_id = 0, b_id = 0;
  h.check(cartplan::mpi::layout_id(a, &a_id).ok() && cartplan::mpi::vouch_layout(a, a_id).ok(), "vouch a datatype");
  h.check(cartplan::mpi::vouched_layout(a) == a_id, "the vouch reads back");
  const MPI_Datatype old_handle = a;
  MPI_Type_free(&a);
  std::vector<MPI_Datatype> others;
  MPI_Datatype b = MPI_DATATYPE_NULL;
  for (int tries = 0; tries < 1000 && b == MPI_DATATYPE_NULL; ++tries) {
    MPI_Datatype t = strided(3);
    if (t == old_handle) b = t;
    else others.push_back(t);
  }
  for (MPI_Datatype& t : others) MPI_Type_free(&t);
  // AddressSanitizer keeps freed memory in quarantine: there the value does not come back.
  h.check(b != MPI_DATATYPE_NULL || kQuarantine, "the allocator gave the freed handle value to a new datatype");
  if (b == MPI_DATATYPE_NULL) {
    if (h.rank == 0) std::printf("derived_reuse_test: the freed handle value did not come back (ASan); case skipped\n");
    return;
  }
  h.check(cartplan::mpi::vouched_layout(b) == 0, "a new datatype under a freed handle carries no vouch");
  h.check(cartplan::mpi::layout_id(b, &b_id).ok() && b_id != a_id, "another layout has another id");
  MPI_Datatype c = strided(2);
  std::uint64_t c_id = 0;
  h.check(cartplan::mpi::layout_id(c, &c_id).ok() && c_id == a_id, "the old layout built again has the old id");
  MPI_Type_free(&b);
  MPI_Type_free(&c);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  same_handle_case(h);
  for (const char* algo : {"direct", "combining"}) run(h, algo);
  for (const char* algo : {"linear", "pairing", "cumulative"}) cartplan::mpitest::graph_case(h, algo);
  return h.finish("derived_reuse_test");
}
