// Creating exchanges: settle (exchange_settle.h), measure (exchange_measure.h) and build in
// order, and reuse through the non-blocking pool and the blocking cache (exchange_reuse.h).
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

#include "backends/mpi/exchange.h"
#include "backends/mpi/exchange_reuse.h"
#include "backends/mpi/test_failure.h"

namespace cartplan::mpi {

MpiStatus Exchange::create(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options, Kind kind,
                           std::unique_ptr<Exchange>* out, const Accept& accept) {
  // A non-blocking call's lane is its sequence number modulo the lane count (see lanes.h),
  // counted even for calls that fail, so that the sequence stays the same on every rank.
  const int nonblocking_lane = kind == Kind::kNonblocking ? nc.shared()->lanes.next_nonblocking() : 0;
  return create_on_lane(nc, spec, options, kind, nonblocking_lane, out, accept);
}

MpiStatus Exchange::create_on_lane(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options, Kind kind,
                                   int nonblocking_lane, std::unique_ptr<Exchange>* out, const Accept& accept) {
  Settlement agreed;
  MpiStatus s = settle(nc, spec, options, kind, &agreed);
  // A failure after settle's agreement is this rank's alone: it still makes the agreements the
  // others make next (measuring's, confirm), where every rank learns it.
  if (!s.ok() && !agreed.past_agreement) return s;
  if (kind == Kind::kPersistent && options.tune_measure && options.algo == engine::AlgoChoice::kAuto && !options.given_plan &&
      !extended_op(spec.op)) {
    s = measure_candidates(nc, spec, options, s, &agreed);
    if (!s.ok()) return s;
  }
  const bool agreeing = kind == Kind::kPersistent || agrees_every_call(nc, spec, options);
  // Every input of `accept` was agreed (or is the same everywhere): every rank that planned
  // declines alike, and where the call agrees still confirms, with a rank that failed after
  // the agreement (it cannot know the verdict).
  if (s.ok() && accept && !accept(agreed.entry->plan, agreed.block_bytes)) return agreeing ? confirm(nc, s) : MpiStatus{};
  if (kind == Kind::kNonblocking) agreed.lane = nonblocking_lane;
  // A non-blocking call with the same buffers, counts and datatypes (predefined ones by handle,
  // derived ones by layout once vouched for) as one completed before takes that call's exchange
  // from the pool (see recycle) and moves it to its lane.
  std::vector<std::uintptr_t> key;
  DerivedTypes derived;
  if (kind == Kind::kNonblocking && !extended_op(spec.op) && !agrees_every_call(nc, spec, options))
    key = reuse_key(nc, spec, &derived);
  if (!key.empty() && derived.unvouched.empty()) {
    PoolLock lock(*nc.shared());
    if (nc.shared()->pool)
      if (std::unique_ptr<Exchange> pooled = nc.shared()->pool->take(key, agreed.entry.get())) *out = std::move(pooled);
  }
  if (!*out) {
    // A non-blocking exchange posts later phases after the call returned, and a persistent one
    // posts every start after its init returned; by then the program may have freed its
    // datatypes (MPI allows it): both always run on private copies of them. A blocking
    // exchange is built by build_blocking, which owns copies when it keeps the exchange.
    if (s.ok()) s = build_owning(nc, spec, options, agreed, agreed.lane, kind != Kind::kBlocking, out);
    if (agreeing) s = confirm(nc, s);
    if (!s.ok()) {
      out->reset();
      return s;
    }
    // The call's new derived datatypes passed every check of a build (the handles are still
    // the caller's: the call has not returned). Errors found later, in its messages, are the
    // messages' (sizes, peers); they do not make a datatype of the same layout unusable.
    vouch_for(derived);
  }
  Exchange& x = **out;
  x.kind_ = kind;
  x.layout_keyed_ = derived.any;
  x.sizes_agreed_ = kind == Kind::kPersistent || agrees_every_call(nc, spec, options);
  x.pool_key_ = std::move(key);
  x.hook_phases_ = options.progress_anywhere;
  if (kind == Kind::kPersistent) x.shared_->lanes.hold(x.lane_);
  if (kind == Kind::kNonblocking) attach_lane(x, agreed.lane);
  return {};
}

MpiStatus Exchange::create_nonblocking(NeighborhoodComm& nc, const CallKey& call, const std::function<ExchangeSpec()>& make,
                                       std::unique_ptr<Exchange>* out) {
  const int lane = nc.shared()->lanes.next_nonblocking();
  if (!nc.options().check_collective) {
    PoolLock lock(*nc.shared());
    if (nc.shared()->pool)
      if (std::unique_ptr<Exchange> pooled = nc.shared()->pool->take(call)) *out = std::move(pooled);
  }
  if (*out) {
    attach_lane(**out, lane);
    return {};
  }
  MpiStatus s = create_on_lane(nc, make(), nc.options(), Kind::kNonblocking, lane, out, {});
  // Only exchanges bound to predefined datatypes (a pool key, not by layout) may be found by
  // their raw arguments: a derived datatype's handle says nothing about its layout.
  if (s.ok() && !(*out)->pool_key_.empty() && !(*out)->layout_keyed_) (*out)->call_ = call;
  return s;
}

// The lane's previous holder on this rank must be complete before the lane carries new
// messages. It completes: every rank has started it, and waits anywhere progress every
// pending exchange.
void Exchange::attach_lane(Exchange& x, int lane) {
  Exchange* holder = nullptr;
  {
    PoolLock lock(*x.shared_);
    holder = x.shared_->holder(lane);
  }
  if (holder && holder != &x && holder->pending_) drive(holder);
  if (x.lane_ != lane) {
    x.lane_ = lane;
    for (Post& post : x.posts_) post.tag = x.shared_->lanes.tag(lane, post.plan_tag);
  }
  PoolLock lock(*x.shared_);
  x.shared_->holder(lane) = &x;
}

void Exchange::clear_lane(NeighborhoodComm& nc, int lane) {
  Exchange* holder = nullptr;
  {
    PoolLock lock(*nc.shared());
    holder = nc.shared()->holder(lane);
  }
  if (holder && holder->pending_) drive(holder);
}

std::unique_ptr<Exchange> Exchange::take_pooled(NeighborhoodComm& nc, const std::vector<std::uintptr_t>& key, int lane) {
  std::unique_ptr<Exchange> x;
  {
    PoolLock lock(*nc.shared());
    // Exchanges of from_schedule have no plan entry: entry null finds only those.
    if (nc.shared()->pool) x = nc.shared()->pool->take(key, nullptr);
  }
  if (x) attach_lane(*x, lane);
  return x;
}

// After an agreement, building datatypes and staging can still fail on one rank (out of
// memory, an MPI error). Where the call agreed (init, checking mode), every rank learns it, so
// that no rank starts an exchange whose peers will never send.
MpiStatus Exchange::confirm(NeighborhoodComm& nc, const MpiStatus& built) {
  const int mine = built.ok() ? 0 : built.code;
  int worst = 0;
  CARTPLAN_MPI_CALL(Exchange::agree_allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, nc.internal()));
  if (worst == 0) return {};
  return agreed_status(built.ok() ? mpi_error(worst, "another rank could not build its part of this collective (error class " +
                                                         std::to_string(worst) + " there)")
                                  : mpi_error(worst, built.message));
}

void Exchange::recycle(std::unique_ptr<Exchange> x) {
  // Only complete, successful exchanges of a communicator that still exists are kept: a few
  // per communicator, the oldest dropped first.
  if (!x || x->pool_key_.empty() || x->pending_ || x->active_ || !x->error_.ok() || x->shared_->user == MPI_COMM_NULL) return;
  x->finish_fn_ = nullptr;  // its owner is gone; the next owner sets its own
  CommShared& shared = *x->shared_;
  std::unique_ptr<Exchange> dropped;  // declared first: destroyed after the lock is released
  PoolLock lock(shared);
  if (shared.holder(x->lane_) == x.get()) shared.holder(x->lane_) = nullptr;
  if (!shared.pool) shared.pool = std::make_shared<ExchangePool>();  // once per communicator
  dropped = shared.pool->put(std::move(x));
}

MpiStatus Exchange::build_owning(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options, const Settlement& agreed,
                                 int lane, bool own, std::unique_ptr<Exchange>* out) {
  ExchangeSpec copy;
  std::vector<MPI_Datatype> owned;
  MpiStatus s = own ? with_own_types(spec, nc.internal(), &copy, &owned) : MpiStatus{};
  // Running out of memory is this rank's MPI_ERR_NO_MEM, for confirm to agree on: an exception
  // would pass the agreement and leave the other ranks waiting in it.
  try {
    if (s.ok() && agreed.measured) inject_out_of_memory("measure-rebuild");
    if (s.ok()) s = build(nc, own ? copy : spec, options, agreed, lane, out);
  } catch (const std::bad_alloc&) {
    out->reset();
    s = mpi_error(MPI_ERR_NO_MEM, "out of memory building the exchange (its staging, temps or pack buffer)");
  } catch (const std::length_error&) {
    out->reset();
    s = mpi_error(MPI_ERR_NO_MEM, "the exchange's staging, temps or pack buffer would be larger than memory can hold");
  }
  if (*out) {
    (*out)->owned_types_.insert((*out)->owned_types_.end(), owned.begin(), owned.end());
  } else {
    for (MPI_Datatype& t : owned) MPI_Type_free(&t);
  }
  return s;
}

// Settles a blocking call and, unless it reuses the cached exchange for the plan agreed,
// builds a new one into the cache. With derived datatypes the exchange owns private copies of them
// (build_owning): it is reused for any datatypes of the same layouts, whatever their handles,
// and the program may free the ones it was built with.
MpiStatus Exchange::build_blocking(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options, bool reuse,
                                   bool derived, BlockingCache& cache) {
  Settlement agreed;
  MpiStatus s = settle(nc, spec, options, Kind::kBlocking, &agreed);
  if (!s.ok() && !agreed.past_agreement) return s;  // else this rank's alone: confirm below
  if (s.ok() && (!reuse || cache.exchange->entry_ != agreed.entry)) {
    cache.exchange.reset();
    s = build_owning(nc, spec, options, agreed, Lanes::blocking_lane(), derived, &cache.exchange);
  }
  // Every rank that agreed confirms, whether it built now or reuses its exchange (ranks
  // can differ there): the collectives must match.
  if (agrees_every_call(nc, spec, options)) s = confirm(nc, s);
  if (!s.ok()) {
    cache.exchange.reset();
    return s;
  }
  cache.exchange->kind_ = Kind::kBlocking;
  return {};
}

namespace {

// run_once's code, out of line (its status stays out of rerun_blocking's frame).
__attribute__((noinline)) int run_once_code(Exchange& x) { return x.run_once().code; }

}  // namespace

// The fast path of a repeated uniform call: the same few words as the call the cached exchange
// was built (and checked) for, whose datatypes were predefined; nothing else is looked at.
// (The cache keeps no such words in checking mode: run_blocking.) As run_once, without
// copying the outcome's status where only its code is asked.
int Exchange::rerun_blocking(NeighborhoodComm& nc, const CallKey& call) {
  BlockingCache* cache = nc.blocking_cache().get();
  if (!cache || !cache->repeats(&call)) return kNotARepeat;
  Exchange& x = *cache->exchange;
  const int code = x.run_alone() ? x.error_.code : run_once_code(x);
  if (code != MPI_SUCCESS) cache->forget();  // a failed exchange is not reused
  return code;
}

MpiStatus Exchange::run_blocking(NeighborhoodComm& nc, const std::function<ExchangeSpec()>& make, const CallKey* call) {
  MpiStatus s;
  BlockingCache* repeated = nc.blocking_cache().get();
  if (call && repeated && repeated->repeats(call)) {  // rerun_blocking, with the outcome's message
    s = repeated->exchange->run_once();
    if (!s.ok()) repeated->forget();  // a failed exchange is not reused
    return s;
  }
  std::shared_ptr<BlockingCache>& slot = nc.blocking_cache();
  if (!slot) slot = std::make_shared<BlockingCache>();  // once per communicator
  BlockingCache& cache = *slot;
  const Options& options = nc.options();
  DerivedTypes derived;
  const ExchangeSpec spec = make();
  std::vector<std::uintptr_t> key = extended_op(spec.op) ? extended_reuse_key(spec)
                                    : spec.invalid.ok() && spec.recv.size() == static_cast<std::size_t>(nc.nbh().size())
                                        ? reuse_key(nc, spec, &derived)
                                        : std::vector<std::uintptr_t>{};
  // The same buffers, counts and datatypes (predefined, or derived of the same layouts and
  // vouched for) as a call that was checked and built before: run it again. In checking mode
  // every call still agrees first (that is the mode's point).
  const bool reuse = !key.empty() && derived.unvouched.empty() && cache.exchange && cache.key == key;
  if (!reuse || agrees_every_call(nc, spec, options)) {
    s = build_blocking(nc, spec, options, reuse, derived.any, cache);
    if (!s.ok()) return s;
  }
  cache.key = std::move(key);
  cache.call.reset();
  // Checking mode agrees on every call: no repeat may skip that (rerun_blocking).
  if (call && !cache.key.empty() && !derived.any && !options.check_collective) cache.call = *call;
  s = cache.exchange->run_once();
  // This call's derived datatypes passed MPI's checks (committed, valid) in an exchange built
  // for them: a later call may reuse the exchange for them.
  if (s.ok()) vouch_for(derived);
  // A failed exchange is not reused.
  if (cache.key.empty() || !s.ok()) cache.forget();
  return s;
}

}  // namespace cartplan::mpi
