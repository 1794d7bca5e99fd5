// The pool of completed non-blocking graph exchanges of a communicator (GraphExchange::recycle
// and take_pooled, graph_exchange.h): at most kPoolCapacity, the oldest dropped first.
#include <new>
#include <utility>

#include "backends/mpi/graph_exchange.h"

namespace cartplan::mpi {
namespace {

// What GraphShared::pool holds (type-erased there: graph_comm.h cannot see GraphExchange).
struct GraphPool {
  std::vector<std::unique_ptr<GraphExchange>> entries;  // oldest first
};

}  // namespace

std::unique_ptr<GraphExchange> GraphExchange::take_pooled(GraphShared& shared, const std::vector<std::uintptr_t>& key) {
  PoolLock lock(shared.mu);
  auto* pool = static_cast<GraphPool*>(shared.pool.get());
  if (!pool) return nullptr;
  for (auto it = pool->entries.begin(); it != pool->entries.end(); ++it) {
    if ((*it)->pool_key_ != key) continue;
    std::unique_ptr<GraphExchange> x = std::move(*it);
    pool->entries.erase(it);
    return x;
  }
  return nullptr;
}

void GraphExchange::recycle(std::unique_ptr<GraphExchange> x) {
  // Only a complete, successful exchange is kept: it runs again exactly as built (a failed one
  // could hold a half-posted phase or a stale error).
  if (!x || x->pool_key_.empty() || x->pending_ || x->active_ || !x->error_.ok()) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;  // nothing will use it (its destructor frees nothing then)
  x->finish_fn_ = nullptr;  // its owner is gone; a later owner sets its own
  x->finish_ctx_ = nullptr;
  GraphShared& shared = *x->shared_;
  std::unique_ptr<GraphExchange> dropped;  // declared before the lock: destroyed after its release (a destructor locks)
  PoolLock lock(shared.mu);
  if (shared.user == MPI_COMM_NULL) {  // the communicator is being freed: nothing is kept
    dropped = std::move(x);
    return;
  }
  // Its lane is free for the next call; take_lane gives it the lane of the call that reuses it.
  if (shared.holder(x->lane_) == x.get()) shared.holder(x->lane_) = nullptr;
  // Out of memory for the pool itself: the exchange is dropped, not kept (callers must not
  // throw: a destructor, a completion that then deletes its request).
  try {
    if (!shared.pool) {
      auto pool = std::make_shared<GraphPool>();
      pool->entries.reserve(kPoolCapacity + 1);
      shared.pool = std::move(pool);
    }
  } catch (const std::bad_alloc&) {
    dropped = std::move(x);
    return;
  }
  auto& entries = static_cast<GraphPool*>(shared.pool.get())->entries;
  entries.push_back(std::move(x));  // within the reserved room: no allocation
  if (entries.size() > kPoolCapacity) {
    dropped = std::move(entries.front());
    entries.erase(entries.begin());
  }
}

}  // namespace cartplan::mpi
