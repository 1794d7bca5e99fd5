// Reuse of built exchanges: the keys calls are bound to, the non-blocking pool and the blocking
// cache (exchange_reuse.h). Exchange::recycle and Exchange::create_* use them.
#include "backends/mpi/exchange_reuse.h"

#include <map>

#include "backends/mpi/datatype_layout.h"
#include "backends/mpi/exchange.h"
#include "backends/mpi/predefined.h"
#include "backends/mpi/type_copy.h"

namespace cartplan::mpi {

namespace {

bool predefined_op(MPI_Op op) {
  for (MPI_Op p : {MPI_OP_NULL, MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR, MPI_BOR, MPI_LXOR,
                   MPI_BXOR, MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP})
    if (op == p) return true;
  return false;
}

// The last datatype keyed and its words: most calls use one datatype for many blocks.
struct TypeMemo {
  bool set = false;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  std::uintptr_t word = 0, kind = 0;
};

// Appends a block's count and datatype words to `key`; false when its datatype cannot be keyed.
inline bool add_count_and_type(const BlockSpec& b, TypeMemo* memo, DerivedTypes* derived, std::vector<std::uintptr_t>* key) {
  if (!memo->set || b.type != memo->type) {
    if (!datatype_key(b.type, derived, &memo->word, &memo->kind)) return false;
    memo->set = true;
    memo->type = b.type;
  }
  key->push_back(static_cast<std::uintptr_t>(b.count));
  key->push_back(memo->word);
  key->push_back(memo->kind);
  return true;
}

// Appends a used block (address, count, datatype words) to `key`; false when its datatype
// cannot be keyed. Also at count 0: an exchange may still name the datatype in its messages.
inline bool add_block(const BlockSpec& b, TypeMemo* memo, DerivedTypes* derived, std::vector<std::uintptr_t>* key) {
  key->push_back(reinterpret_cast<std::uintptr_t>(b.addr));
  return add_count_and_type(b, memo, derived, key);
}

}  // namespace

bool datatype_key(MPI_Datatype type, DerivedTypes* derived, std::uintptr_t* word, std::uintptr_t* kind) {
  *word = reinterpret_cast<std::uintptr_t>(type);
  *kind = 0;
  if (type == MPI_DATATYPE_NULL || predefined_type(type)) return true;  // as cheap as before for predefined ones
  if (!derived) return false;
  std::uint64_t id = vouched_layout(type);  // one attribute lookup when vouched
  if (id == 0) {
    if (!layout_id(type, &id).ok() || id == 0) return false;
    derived->unvouched.emplace_back(type, id);
  }
  derived->any = true;
  *word = static_cast<std::uintptr_t>(id);
  *kind = 1;
  return true;
}

void vouch_for(const DerivedTypes& derived) {
  for (const auto& [type, id] : derived.unvouched) (void)vouch_layout(type, id);  // a failed vouch only costs a rebuild
}

std::vector<std::uintptr_t> reuse_key(const NeighborhoodComm& nc, const ExchangeSpec& spec, DerivedTypes* derived) {
  std::vector<std::uintptr_t> key{static_cast<std::uintptr_t>(spec.op) + (spec.uniform ? 8 : 0)};
  key.reserve(4 + 4 * (spec.send.size() + spec.recv.size()));
  TypeMemo memo;
  // A uniform call states its block size even on a rank none of whose blocks travel, and that
  // size shapes the exchange: such a rank may forward blocks of a combining plan
  // (exchange_settle.cc). So the stated count and datatype are keyed too (not the address).
  if (spec.uniform && !spec.send.empty() && !add_count_and_type(spec.send[0], &memo, derived, &key)) return {};
  const bool gather = spec.op == ir::Op::kAllgather;
  auto add = [&](const BlockSpec& b, bool used) {
    if (!used) {
      key.push_back(0);
      return true;
    }
    return add_block(b, &memo, derived, &key);
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
  TypeMemo memo;
  auto add = [&](const BlockSpec& b) { return add_block(b, &memo, nullptr, &key); };
  if (!add(spec.unit)) return {};
  for (const BlockSpec& b : spec.send)
    if (!add(b)) return {};
  for (std::size_t j = 0; j < spec.recv.size(); ++j) {
    if (!add(spec.recv[j])) return {};
    key.push_back(spec.recv_user[j]);
  }
  return key;
}

MpiStatus with_own_types(const ExchangeSpec& spec, MPI_Comm check, ExchangeSpec* out, std::vector<MPI_Datatype>* owned) {
  *out = spec;
  std::map<MPI_Datatype, MPI_Datatype> dups;  // a datatype used by several blocks is copied once
  for (std::vector<BlockSpec>* side : {&out->send, &out->recv})
    for (BlockSpec& b : *side) {
      if (b.type == MPI_DATATYPE_NULL || predefined_type(b.type)) continue;
      auto [it, added] = dups.emplace(b.type, MPI_DATATYPE_NULL);
      if (added) {
        const MpiStatus s = communication_copy(b.type, check, &it->second);
        if (!s.ok()) return s;
        owned->push_back(it->second);
      }
      b.type = it->second;
    }
  return {};
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
