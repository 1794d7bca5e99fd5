// Reuse of built exchanges: the keys calls are bound to, the non-blocking pool and the blocking
// cache (exchange_reuse.h). Exchange::recycle and Exchange::create_* use them.
#include "backends/mpi/exchange_reuse.h"

#include "backends/mpi/exchange.h"
#include "backends/mpi/predefined.h"

namespace cartplan::mpi {

namespace {

bool predefined_op(MPI_Op op) {
  for (MPI_Op p : {MPI_OP_NULL, MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR, MPI_BOR, MPI_LXOR,
                   MPI_BXOR, MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP})
    if (op == p) return true;
  return false;
}

// Appends a used block (address, count, datatype) to `key`; false when its datatype is not
// predefined. `last_named`: the last datatype found predefined (most blocks share one).
inline bool add_block(const BlockSpec& b, MPI_Datatype* last_named, std::vector<std::uintptr_t>* key) {
  if (b.count > 0 && b.type != *last_named) {
    if (!predefined_type(b.type)) return false;
    *last_named = b.type;
  }
  key->push_back(reinterpret_cast<std::uintptr_t>(b.addr));
  key->push_back(static_cast<std::uintptr_t>(b.count));
  key->push_back(reinterpret_cast<std::uintptr_t>(b.type));
  return true;
}

}  // namespace

std::vector<std::uintptr_t> reuse_key(const NeighborhoodComm& nc, const ExchangeSpec& spec) {
  std::vector<std::uintptr_t> key{static_cast<std::uintptr_t>(spec.op) + (spec.uniform ? 8 : 0)};
  key.reserve(1 + 3 * (spec.send.size() + spec.recv.size()));
  MPI_Datatype last_named = MPI_DATATYPE_NULL;
  const bool gather = spec.op == ir::Op::kAllgather;
  auto add = [&](const BlockSpec& b, bool used) {
    if (!used) {
      key.push_back(0);
      return true;
    }
    return add_block(b, &last_named, &key);
  };
  for (std::size_t i = 0; i < spec.send.size(); ++i)
    if (!add(spec.send[i], gather || nc.has_target(static_cast<int>(i)))) return {};
  for (std::size_t i = 0; i < spec.recv.size(); ++i)
    if (!add(spec.recv[i], nc.has_source(static_cast<int>(i)))) return {};
  return key;
}

std::vector<std::uintptr_t> extended_reuse_key(const ExchangeSpec& spec) {
  // A user op or a derived datatype can be freed and its handle reused for something else:
  // only calls with predefined ones are reused (as for the other collectives).
  if (!spec.invalid.ok() || !predefined_op(spec.reduce_op)) return {};
  std::vector<std::uintptr_t> key{100 + static_cast<std::uintptr_t>(spec.op), static_cast<std::uintptr_t>(spec.root + 1),
                                  reinterpret_cast<std::uintptr_t>(spec.reduce_op)};
  MPI_Datatype last_named = MPI_DATATYPE_NULL;
  auto add = [&](const BlockSpec& b) { return add_block(b, &last_named, &key); };
  if (!add(spec.unit)) return {};
  for (const BlockSpec& b : spec.send)
    if (!add(b)) return {};
  for (std::size_t j = 0; j < spec.recv.size(); ++j) {
    if (!add(spec.recv[j])) return {};
    key.push_back(spec.recv_user[j]);
  }
  return key;
}

ExchangePool::ExchangePool() = default;
ExchangePool::~ExchangePool() = default;

std::unique_ptr<Exchange> ExchangePool::take(const std::vector<std::uintptr_t>& key, const BoundPlanEntry* entry) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if ((*it)->pool_key_ == key && (*it)->entry_.get() == entry) {
      std::unique_ptr<Exchange> x = std::move(*it);
      entries_.erase(it);
      return x;
    }
  return nullptr;
}

std::unique_ptr<Exchange> ExchangePool::take(const CallKey& call) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if ((*it)->call_ && (*it)->call_->words == call.words) {
      std::unique_ptr<Exchange> x = std::move(*it);
      entries_.erase(it);
      return x;
    }
  return nullptr;
}

std::unique_ptr<Exchange> ExchangePool::put(std::unique_ptr<Exchange> x) {
  std::unique_ptr<Exchange> dropped;
  if (entries_.size() >= kCapacity) {
    dropped = std::move(entries_.front());
    entries_.erase(entries_.begin());
  }
  entries_.push_back(std::move(x));
  return dropped;
}

BlockingCache::BlockingCache() = default;
BlockingCache::~BlockingCache() = default;

void BlockingCache::forget() {
  exchange.reset();
  call.reset();
  key.clear();
}

}  // namespace cartplan::mpi
