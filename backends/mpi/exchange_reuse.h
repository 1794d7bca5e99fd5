// Reuse of built exchanges: the keys a call's exchange is bound to, the pool of completed
// non-blocking exchanges of a communicator, and the cache of its last blocking exchange. A
// repeated call with the same buffers, counts and datatypes (predefined ones by handle, derived
// ones by layout) runs an exchange built before instead of building datatypes and staging
// again. The halo API's blocking exchanges key their element types the same way (datatype_key).
//
//   std::vector<std::uintptr_t> key = reuse_key(nc, spec);   // empty: not reusable
//   PoolLock lock(*nc.shared());
//   std::unique_ptr<Exchange> x = nc.shared()->pool->take(key, entry.get());   // null: build one
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "backends/mpi/exchange_spec.h"
#include "backends/mpi/neighborhood_comm.h"
#include "backends/mpi/plan_cache.h"

namespace cartplan::mpi {

class Exchange;

// The derived datatypes of a call keyed by layout (reuse_key with `derived`).
struct DerivedTypes {
  bool any = false;  // some block of the call has a derived datatype
  // Those without a vouch (datatype_layout.h) and their layout ids: a call with any of them
  // builds its exchange again, and vouches for them once it succeeded.
  std::vector<std::pair<MPI_Datatype, std::uint64_t>> unvouched;
};

// The words that key one datatype: its handle for a predefined one or MPI_DATATYPE_NULL (`kind`
// 0: a predefined handle never changes meaning), its layout id for a derived one (`kind` 1,
// with `derived` only; one attribute lookup once vouched for, else a walk of its construction,
// recorded in derived->unvouched). False: not keyable (a derived datatype without `derived`, or
// one whose layout cannot be read or gets no id).
//
//   DerivedTypes d; std::uintptr_t word, kind;
//   if (datatype_key(t, &d, &word, &kind)) ... key.push_back(word); key.push_back(kind);
//   // reuse only if d.unvouched.empty(); after a successful call that built: vouch_for(d);
bool datatype_key(MPI_Datatype type, DerivedTypes* derived, std::uintptr_t* word, std::uintptr_t* kind);
// Vouches (datatype_layout.h) for the datatypes in derived.unvouched. Called after a call with
// them succeeded without reuse, while the caller's handles are still the ones it passed.
void vouch_for(const DerivedTypes& derived);

// What a blocking or non-blocking call's exchange is bound to: the op, and addresses, counts
// and datatypes of the blocks this rank uses. A freed datatype handle can come back for a
// different layout, so a predefined datatype is keyed by its handle (it never changes
// meaning) and a derived one, with `derived` only, by its layout id (datatype_layout.h); with
// `derived` null a derived datatype makes the key empty (not reusable). MPI_DATATYPE_NULL is
// keyed by its handle like a predefined one; empty for a datatype whose layout cannot be read
// or gets no id (datatype_layout.h).
std::vector<std::uintptr_t> reuse_key(const NeighborhoodComm& nc, const ExchangeSpec& spec, DerivedTypes* derived = nullptr);
// `spec` with every derived datatype replaced by a private copy (type_copy.h: equal for
// communication, no attributes copied, so no program copy callback runs) appended to `owned`,
// which the caller frees (an exchange: in owned_types_), also on error. An exchange reused for
// datatypes of the same layout must not depend on the handles it was built with, which the
// program may have freed since; predefined datatypes are used as they are. `check`: the
// communicator communication_copy checks the datatypes on (errors return).
MpiStatus with_own_types(const ExchangeSpec& spec, MPI_Comm check, ExchangeSpec* out, std::vector<MPI_Datatype>* owned);
// The same for reductions and rooted ops (extended_op): also the root and the op, which must be
// predefined; empty for invalid arguments.
std::vector<std::uintptr_t> extended_reuse_key(const ExchangeSpec& spec);

// Completed non-blocking exchanges of one communicator, kept for reuse by a later call with the
// same arguments; at most kCapacity, the oldest dropped first. Every member is called with the
// communicator's PoolLock held.
class ExchangePool {
 public:
  static constexpr std::size_t kCapacity = 8;
  ExchangePool();
  ~ExchangePool();
  ExchangePool(const ExchangePool&) = delete;
  ExchangePool& operator=(const ExchangePool&) = delete;

  // The pooled exchange built for arguments with this reuse_key and for this plan, taken out
  // of the pool; null if there is none.
  std::unique_ptr<Exchange> take(const std::vector<std::uintptr_t>& key, const BoundPlanEntry* entry);
  // The pooled exchange of an earlier call with these raw arguments, taken out; null if none.
  std::unique_ptr<Exchange> take(const CallKey& call);
  // Keeps `x`. When the pool is full, returns the oldest exchange, which the caller destroys
  // after releasing the lock (its destructor takes the lock).
  std::unique_ptr<Exchange> put(std::unique_ptr<Exchange> x);

 private:
  std::vector<std::unique_ptr<Exchange>> entries_;
};

// The last blocking exchange of a communicator and the arguments it was built from.
struct BlockingCache {
  BlockingCache();
  ~BlockingCache();
  std::vector<std::uintptr_t> key;  // reuse_key of the call; empty: not to be reused
  // Set when the exchange was built from a call with this key and only predefined datatypes
  // (raw handles of derived ones say nothing about their layout).
  std::optional<CallKey> call;
  std::unique_ptr<Exchange> exchange;
  // Whether `c` names the same buffers, counts and datatypes as the call the cached exchange
  // was built and checked for (then nothing needs to be looked at again).
  // Compared word by word: std::array's operator== is a call to memcmp, which costs more than
  // the comparison itself.
  bool repeats(const CallKey* c) const {
    if (!c || !exchange || !call) return false;
    for (std::size_t i = 0; i < c->words.size(); ++i)
      if (call->words[i] != c->words[i]) return false;
    return true;
  }
  void forget();
};

}  // namespace cartplan::mpi
