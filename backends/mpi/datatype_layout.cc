// Layout ids of datatypes (datatype_layout.h): a datatype's construction read back with
// MPI_Type_get_envelope / MPI_Type_get_contents, recursively, interned as a number.
#include "backends/mpi/datatype_layout.h"

#include <cassert>
#include <map>
#include <mutex>
#include <vector>

#include "backends/mpi/comm_keyval.h"
#include "backends/mpi/type_copy.h"

namespace cartplan::mpi {

namespace {

// At most this many layouts are interned. A program that builds a new layout every step (an
// hindexed type of moving particles) would otherwise grow the table for the life of the process;
// past the bound, new layouts get no id and their calls build as they did before the cache.
constexpr std::size_t kMaxLayouts = std::size_t{1} << 14;

// Every layout this process has seen, by its canonical words; ids count from 1; 0: a new layout
// once the table is full.
std::uint64_t intern(const std::vector<std::int64_t>& words) {
  static std::mutex mutex;
  static std::map<std::vector<std::int64_t>, std::uint64_t> ids;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = ids.find(words); it != ids.end()) return it->second;
  if (ids.size() >= kMaxLayouts) return 0;
  return ids.emplace(words, ids.size() + 1).first->second;
}

// The attribute that carries a vouched layout id. MPI_TYPE_DUP_FN: a duplicate has the same
// layout and committed state, so the vouch is copied with it.
int layout_keyval() {
  static std::once_flag once;
  static int keyval = MPI_KEYVAL_INVALID;
  std::call_once(once, [] {
    MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &keyval, nullptr);
    free_type_keyval_at_finalize(&keyval);
  });
  return keyval;
}

// Releases a type handed out by MPI_Type_get_contents: derived ones are new handles.
void release(MPI_Datatype* t) {
  int i = 0, a = 0, d = 0, c = 0;
  if (MPI_Type_get_envelope(*t, &i, &a, &d, &c) == MPI_SUCCESS && c != MPI_COMBINER_NAMED) MPI_Type_free(t);
}

// The words of a derived type: combiner, the three lengths, the integers, the addresses, then
// the ids of the types it was built from (which get_contents hands out as new handles for
// derived ones; freed here).
MpiStatus derived_words(MPI_Datatype type, int combiner, int ni, int na, int nd, std::vector<std::int64_t>* words) {
  std::vector<int> ints(ni);
  std::vector<MPI_Aint> addrs(na);
  std::vector<MPI_Datatype> types(nd);
  CARTPLAN_MPI_CALL(MPI_Type_get_contents(type, ni, na, nd, ints.data(), addrs.data(), types.data()));
  *words = {combiner, ni, na, nd};
  words->insert(words->end(), ints.begin(), ints.end());
  words->insert(words->end(), addrs.begin(), addrs.end());
  MpiStatus s;
  for (MPI_Datatype& t : types) {
    std::uint64_t id = 0;
    if (s.ok()) s = layout_id(t, &id);
    words->push_back(static_cast<std::int64_t>(id));
    release(&t);
  }
  return s;
}

}  // namespace

MpiStatus layout_id(MPI_Datatype type, std::uint64_t* id) {
  int ni = 0, na = 0, nd = 0, combiner = 0;
  CARTPLAN_MPI_CALL(MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner));
  std::vector<std::int64_t> words;
  if (combiner == MPI_COMBINER_NAMED) {
    // A predefined handle never changes meaning within a process.
    words = {-1, static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(type))};
  } else if (combiner == MPI_COMBINER_DUP) {
    MPI_Datatype inner = MPI_DATATYPE_NULL;
    CARTPLAN_MPI_CALL(MPI_Type_get_contents(type, 0, 0, 1, nullptr, nullptr, &inner));
    MpiStatus s = layout_id(inner, id);
    release(&inner);
    return s;
  } else {
    // A copy's envelope is RESIZED over the caller's type: its id would not be the caller's.
    assert(!is_communication_copy(type) && "layout ids are taken from the caller's handles, never from cartplan's copies");
    MpiStatus s = derived_words(type, combiner, ni, na, nd, &words);
    if (!s.ok()) return s;
  }
  *id = intern(words);
  return {};
}

std::uint64_t vouched_layout(MPI_Datatype type) {
  void* value = nullptr;
  int found = 0;
  if (MPI_Type_get_attr(type, layout_keyval(), &value, &found) != MPI_SUCCESS || !found) return 0;
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(value));
}

MpiStatus vouch_layout(MPI_Datatype type, std::uint64_t id) {
  CARTPLAN_MPI_CALL(MPI_Type_set_attr(type, layout_keyval(), reinterpret_cast<void*>(static_cast<std::uintptr_t>(id))));
  return {};
}

}  // namespace cartplan::mpi
