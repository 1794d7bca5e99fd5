// The reduction-aware part of the MPI executor: settle and build for allreduce, reduce_scatter
// and the rooted ops (bcast, gather, scatter, reduce), and the local steps they run after each
// phase. The phase loop, progress, lanes and error recovery are exchange.cc's.
//
// Memory. User blocks are used in place. Everything else lives in scratch blocks owned by the
// exchange, each laid out as `unit` (the call's count and datatype): temp slots, recv blocks
// that are not the user's (forwarded data of rooted ops, duplicates of single-buffer ops), and
// one staging block per reduce entry that combines. A reduce entry that bind() resolved to
// "store" (the location holds nothing yet) is received in place.
//
// Order. Rounds to other ranks are persistent requests, started together per phase. Rounds to
// this rank itself that store are copies at the phase start (no place is read and written in
// one phase). After the phase completes, the combines run in plan order (rounds, then entries:
// MPI_Reduce_local(staging or source, location)), then the phase's copies; after the last
// phase, the plan's copies. That is the order bind() and the simulator assume, so a
// commutative op gives the same result up to the association of its operands.
#include <algorithm>
#include <cassert>
#include <climits>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include "backends/mpi/exchange.h"

namespace cartplan::mpi {

bool extended_op(ir::Op op) { return ir::is_reduction(op) || ir::is_rooted(op); }

namespace {

// Element-wise inout = in (op) inout for the commonest predefined (op, type) pairs, without the
// argument checks of a call to MPI_Reduce_local: a combining plan at m = 1 makes a few of these
// per phase and they are a visible part of its time. Signed sums wrap like the unsigned type
// (no undefined behaviour); max and min keep the inout element unless the other is larger /
// smaller. Anything else goes through MPI_Reduce_local.
using FastCombine = void (*)(const void* in, void* inout, std::size_t n);

enum class Kind { kSum, kMax, kMin };

template <class T, Kind K>
void combine_n(const void* in, void* inout, std::size_t n) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (K == Kind::kSum) {
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        b[i] = static_cast<T>(static_cast<U>(a[i]) + static_cast<U>(b[i]));
      } else {
        b[i] = a[i] + b[i];
      }
    } else if constexpr (K == Kind::kMax) {
      if (a[i] > b[i]) b[i] = a[i];
    } else {
      if (a[i] < b[i]) b[i] = a[i];
    }
  }
}

template <class T>
FastCombine for_kind(Kind k) {
  return k == Kind::kSum ? combine_n<T, Kind::kSum> : k == Kind::kMax ? combine_n<T, Kind::kMax> : combine_n<T, Kind::kMin>;
}

FastCombine fast_combine(MPI_Op op, MPI_Datatype type) {
  Kind k;
  if (op == MPI_SUM) k = Kind::kSum;
  else if (op == MPI_MAX) k = Kind::kMax;
  else if (op == MPI_MIN) k = Kind::kMin;
  else return nullptr;
  if (type == MPI_DOUBLE) return for_kind<double>(k);
  if (type == MPI_FLOAT) return for_kind<float>(k);
  if (type == MPI_INT || type == MPI_INT32_T) return for_kind<std::int32_t>(k);
  if (type == MPI_INT64_T || (type == MPI_LONG && sizeof(long) == 8) || type == MPI_LONG_LONG) return for_kind<std::int64_t>(k);
  if (type == MPI_UNSIGNED || type == MPI_UINT32_T) return for_kind<std::uint32_t>(k);
  if (type == MPI_UINT64_T || (type == MPI_UNSIGNED_LONG && sizeof(unsigned long) == 8)) return for_kind<std::uint64_t>(k);
  return nullptr;
}

}  // namespace

struct Exchange::ExtSteps {
  struct Step {
    bool reduce = false;  // MPI_Reduce_local(copy.from, copy.to) with `op`; else a copy
    LocalCopy copy;
    MPI_Aint extent = 0;  // of the datatype, to split reductions of more than INT_MAX elements
    FastCombine fast = nullptr;  // set for predefined (op, type) pairs (see fast_combine)
  };
  MPI_Op op = MPI_OP_NULL;
  std::vector<std::vector<Step>> after_phase;
  std::vector<Step> final_steps;
  std::vector<std::vector<unsigned char>> memory;  // scratch blocks

  static MpiStatus run(Exchange& x, const std::vector<Step>& steps, MPI_Op op) {
    for (const Step& s : steps) {
      if (!s.reduce) {
        if (s.copy.memcpy_bytes) {
          std::memcpy(const_cast<void*>(s.copy.to.addr), s.copy.from.addr, s.copy.memcpy_bytes);
        } else {
          MpiStatus st = x.run_local({s.copy});
          if (!st.ok()) return st;
        }
        continue;
      }
      if (s.fast) {
        s.fast(s.copy.from.addr, const_cast<void*>(s.copy.to.addr), static_cast<std::size_t>(s.copy.from.count));
        continue;
      }
      const char* in = static_cast<const char*>(s.copy.from.addr);
      char* inout = static_cast<char*>(const_cast<void*>(s.copy.to.addr));
      for (MPI_Count left = s.copy.from.count; left > 0;) {
        const int n = static_cast<int>(std::min<MPI_Count>(left, INT_MAX));
        const int rc = MPI_Reduce_local(in, inout, n, s.copy.from.type, op);
        if (rc != MPI_SUCCESS) return from_mpi(rc, "MPI_Reduce_local");
        in += static_cast<MPI_Aint>(n) * s.extent;
        inout += static_cast<MPI_Aint>(n) * s.extent;
        left -= n;
      }
    }
    return {};
  }
};

MpiStatus Exchange::run_after_phase(std::size_t phase) { return ExtSteps::run(*this, ext_->after_phase[phase], ext_->op); }
MpiStatus Exchange::run_final_steps() { return ExtSteps::run(*this, ext_->final_steps, ext_->op); }

namespace {

std::int64_t options_fingerprint(const Options& options) {
  std::uint64_t fp = static_cast<std::uint64_t>(options.algo) * 0x9E3779B97F4A7C15ull;
  auto mix = [&fp](std::uint64_t v) { fp = (fp ^ v) * 0x100000001B3ull; };
  mix(options.dim_order ? 1 : 0);
  if (options.dim_order)
    for (int k : *options.dim_order) mix(static_cast<std::uint64_t>(k) + 7);
  std::uint64_t bits = 0;
  std::memcpy(&bits, &options.model.alpha_us, sizeof bits);
  mix(bits);
  std::memcpy(&bits, &options.model.beta_us_per_byte, sizeof bits);
  mix(bits);
  mix(options.given_plan ? options.given_plan->fingerprint : 0);
  return static_cast<std::int64_t>(fp >> 2);
}

bool named_type(MPI_Datatype type) {
  int ni = 0, na = 0, nd = 0, combiner = 0;
  return type != MPI_DATATYPE_NULL && MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) == MPI_SUCCESS &&
         combiner == MPI_COMBINER_NAMED;
}

bool predefined_op(MPI_Op op) {
  for (MPI_Op p : {MPI_OP_NULL, MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR, MPI_BOR, MPI_LXOR,
                   MPI_BXOR, MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP})
    if (op == p) return true;
  return false;
}

}  // namespace

std::vector<std::uintptr_t> extended_reuse_key(const ExchangeSpec& spec) {
  // A user op or a derived datatype can be freed and its handle reused for something else:
  // only calls with predefined ones are reused (as for the other collectives).
  if (!spec.invalid.ok() || !predefined_op(spec.reduce_op)) return {};
  std::vector<std::uintptr_t> key{100 + static_cast<std::uintptr_t>(spec.op), static_cast<std::uintptr_t>(spec.root + 1),
                                  reinterpret_cast<std::uintptr_t>(spec.reduce_op)};
  MPI_Datatype last_named = MPI_DATATYPE_NULL;
  auto add = [&](const BlockSpec& b) {
    if (b.count > 0 && b.type != last_named) {
      if (!named_type(b.type)) return false;
      last_named = b.type;
    }
    key.push_back(reinterpret_cast<std::uintptr_t>(b.addr));
    key.push_back(static_cast<std::uintptr_t>(b.count));
    key.push_back(reinterpret_cast<std::uintptr_t>(b.type));
    return true;
  };
  if (!add(spec.unit)) return {};
  for (const BlockSpec& b : spec.send)
    if (!add(b)) return {};
  for (std::size_t j = 0; j < spec.recv.size(); ++j) {
    if (!add(spec.recv[j])) return {};
    key.push_back(spec.recv_user[j]);
  }
  return key;
}

MpiStatus Exchange::settle_extended(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options, Kind kind,
                                    std::vector<std::int64_t>* block_bytes, std::shared_ptr<const BoundPlanEntry>* entry,
                                    int* lane) {
  const bool collective = kind == Kind::kPersistent || options.check_collective;
  MpiStatus local = spec.invalid;
  const std::int64_t hi = std::max(spec.send_bytes, spec.recv_bytes);
  const std::int64_t lo = spec.send_bytes < 0 ? spec.recv_bytes : spec.recv_bytes < 0 ? spec.send_bytes
                                                                                       : std::min(spec.send_bytes, spec.recv_bytes);
  auto mismatch = [&](std::int64_t a, std::int64_t b) {
    return mpi_error(MPI_ERR_TRUNCATE, std::string("the blocks of ") + ir::to_string(spec.op) +
                                           " must have the same size (type signature) on every rank and on both sides; "
                                           "sizes range from " + std::to_string(a) + " to " + std::to_string(b) + " bytes");
  };
  if (local.ok() && hi != lo) local = mismatch(lo, hi);

  std::int64_t size = hi;
  if (collective) {
    // One reduction agrees on errors, the block size, the root and the Info options.
    const std::int64_t fp = options_fingerprint(options);
    std::vector<std::int64_t> agree{local.ok() ? 0 : 1,
                                    local.ok() ? hi : -1,
                                    local.ok() && hi >= 0 ? -lo : std::numeric_limits<std::int64_t>::min(),
                                    local.ok() ? spec.root : std::numeric_limits<std::int64_t>::min(),
                                    local.ok() ? -std::int64_t{spec.root} : std::numeric_limits<std::int64_t>::min(),
                                    fp,
                                    -fp};
    std::vector<std::int64_t> all(agree.size());
    CARTPLAN_MPI_CALL(MPI_Allreduce(agree.data(), all.data(), static_cast<int>(agree.size()), MPI_INT64_T, MPI_MAX, nc.internal()));
    std::vector<std::uint64_t> all_held;
    if (kind == Kind::kPersistent) {
      const std::vector<std::uint64_t>& held = nc.shared()->lanes.held();
      all_held.resize(held.size());
      CARTPLAN_MPI_CALL(MPI_Allreduce(held.data(), all_held.data(), static_cast<int>(held.size()), MPI_UINT64_T, MPI_BOR,
                                      nc.internal()));
    }
    if (all[0] != 0) return local.ok() ? mpi_error(MPI_ERR_ARG, "another rank passed invalid arguments to this collective") : local;
    if (all[5] != -all[6]) return mpi_error(MPI_ERR_INFO_VALUE, "ranks passed different cartplan Info options to this collective");
    if (all[3] != -all[4])
      return mpi_error(MPI_ERR_ROOT, "ranks passed different roots to this collective (from " + std::to_string(-all[4]) +
                                         " to " + std::to_string(all[3]) + ")");
    if (all[1] != -all[2]) return mismatch(-all[2], all[1]);
    size = all[1];
    if (kind == Kind::kPersistent) {
      *lane = nc.shared()->lanes.first_free(all_held);
      if (*lane < 0)
        return mpi_error(MPI_ERR_NO_MEM, "more than " + std::to_string(nc.shared()->lanes.persistent_lanes()) +
                                             " persistent requests are alive on this communicator; free some first");
    }
  } else if (!local.ok()) {
    return local;  // default mode: each rank reports its own arguments
  }
  if (kind == Kind::kBlocking) *lane = Lanes::blocking_lane();
  assert(size >= 0 && "every extended op has a significant block size on every rank");
  block_bytes->assign(1, size);
  return nc.plan_for(spec.op, options, size, entry, spec.root);
}

MpiStatus Exchange::build_extended(NeighborhoodComm& nc, const ExchangeSpec& spec, std::int64_t block_bytes,
                                   const std::shared_ptr<const BoundPlanEntry>& entry, int lane,
                                   std::unique_ptr<Exchange>* out) {
  (void)block_bytes;  // every place knows its own size; mismatches across ranks are found on arrival
  std::unique_ptr<Exchange> x = make_blank();
  x->comm_ = nc.internal();
  x->entry_ = entry;
  x->shared_ = nc.shared();
  x->lane_ = lane;
  auto ext = std::make_shared<ExtSteps>();
  ext->op = spec.reduce_op;
  const ir::Plan& plan = entry->plan;
  const engine::BoundPlan& bound = entry->bound;
  const Lanes& lanes = x->shared_->lanes;
  const int me = nc.rank();
  [[maybe_unused]] const bool reduction = ir::is_reduction(spec.op);  // for an assertion

  for (const engine::BoundRound& br : bound.rounds)
    if (br.tag < 0 || br.tag >= lanes.max_rounds())
      return mpi_error(MPI_ERR_TAG, "round tag " + std::to_string(br.tag) + " does not fit in this communicator's tag space (" +
                                        std::to_string(lanes.max_rounds()) + " rounds at most)");

  struct Place {
    void* addr = nullptr;
    MPI_Count count = 0;
    MPI_Datatype type = MPI_BYTE;
    std::int64_t bytes = 0;
    bool contiguous = true;  // `bytes` bytes at addr
  };
  auto contiguous = [](MPI_Datatype type) {
    MPI_Count size = 0;
    MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
    MPI_Type_size_x(type, &size);
    MPI_Type_get_extent(type, &lb, &extent);
    MPI_Type_get_true_extent(type, &tlb, &textent);
    return tlb == 0 && static_cast<MPI_Count>(textent) == size && static_cast<MPI_Count>(extent) == size;
  };
  auto user = [&](const BlockSpec& b) {
    if (b.count <= 0 || b.type == MPI_DATATYPE_NULL) return Place{const_cast<void*>(b.addr), 0, MPI_BYTE, 0, true};
    MPI_Count size = 0;
    MPI_Type_size_x(b.type, &size);
    return Place{const_cast<void*>(b.addr), b.count, b.type, static_cast<std::int64_t>(size * b.count), contiguous(b.type)};
  };
  // Scratch blocks have the layout of `unit`: count elements of its datatype, from the true
  // lower bound to the true upper bound of the last element.
  const Place unit = user(spec.unit);
  MPI_Aint unit_extent = 0, unit_true_lb = 0, unit_span = 0;
  if (unit.count > 0) {
    MPI_Aint lb = 0, textent = 0;
    CARTPLAN_MPI_CALL(MPI_Type_get_extent(unit.type, &lb, &unit_extent));
    CARTPLAN_MPI_CALL(MPI_Type_get_true_extent(unit.type, &unit_true_lb, &textent));
    unit_span = static_cast<MPI_Aint>(unit.count - 1) * unit_extent + textent;
  }
  auto scratch = [&]() {
    if (unit.count == 0) return unit;
    ext->memory.emplace_back(static_cast<std::size_t>(std::max<MPI_Aint>(unit_span, 1)));
    Place p = unit;
    p.addr = ext->memory.back().data() - unit_true_lb;
    return p;
  };

  std::vector<Place> send_place;
  for (const BlockSpec& b : spec.send) send_place.push_back(user(b));
  std::vector<std::optional<Place>> recv_place(spec.recv.size()), temp_place(plan.temp_slots().size());
  for (std::size_t j = 0; j < spec.recv.size(); ++j)
    if (spec.recv_user[j]) recv_place[j] = user(spec.recv[j]);
  auto place_of = [&](const ir::BufRef& ref) -> Place {
    if (ref.kind == ir::BufKind::kSend) return send_place.at(static_cast<std::size_t>(ref.index));
    std::optional<Place>& p = ref.kind == ir::BufKind::kRecv ? recv_place.at(static_cast<std::size_t>(ref.index))
                                                              : temp_place.at(static_cast<std::size_t>(ref.index));
    if (!p) p = scratch();
    return *p;
  };

  int pack_max = 0;
  auto step = [&](const Place& from, const Place& to, bool reduce, std::vector<ExtSteps::Step>& list) -> MpiStatus {
    if (from.count == 0 || from.bytes == 0) return {};
    ExtSteps::Step s;
    s.reduce = reduce;
    s.copy = LocalCopy{{from.addr, from.count, from.type}, {to.addr, to.count, to.type}, 0};
    if (reduce) {
      assert(reduction && from.count == to.count && from.type == to.type && "reductions combine blocks of one layout");
      MPI_Aint lb = 0;
      CARTPLAN_MPI_CALL(MPI_Type_get_extent(from.type, &lb, &s.extent));
      s.fast = fast_combine(ext->op, from.type);
    } else if (from.contiguous && to.contiguous) {
      s.copy.memcpy_bytes = static_cast<std::size_t>(from.bytes);
    } else if (from.count <= INT_MAX && from.bytes < INT_MAX / 2) {
      int size = 0;
      CARTPLAN_MPI_CALL(MPI_Pack_size(static_cast<int>(from.count), from.type, x->comm_, &size));
      pack_max = std::max(pack_max, size);
    }
    list.push_back(s);
    return {};
  };
  // One message over `places`: a single block as it is, several as one struct datatype at
  // absolute addresses (MPI_BOTTOM).
  struct Message {
    bool recv = false;
    const void* buf = nullptr;
    int count = 0;
    MPI_Datatype type = MPI_BYTE;
    int peer = 0, tag = 0, phase = 0, round = 0;
  };
  auto describe = [&](const std::vector<Place>& places, Message* post) -> MpiStatus {
    std::vector<const Place*> full;
    for (const Place& p : places)
      if (p.count > 0) full.push_back(&p);
    if (full.empty()) return {};
    if (full.size() == 1) {
      post->buf = full[0]->addr;
      if (full[0]->count <= INT_MAX) {
        post->count = static_cast<int>(full[0]->count);
        post->type = full[0]->type;
        return {};
      }
      MpiStatus s = large_count_type(full[0]->count, full[0]->type, &post->type);
      if (!s.ok()) return s;
      x->owned_types_.push_back(post->type);
      post->count = 1;
      return {};
    }
    std::vector<int> lens;
    std::vector<MPI_Aint> displs;
    std::vector<MPI_Datatype> types;
    for (const Place* p : full) {
      MPI_Aint addr = 0;
      CARTPLAN_MPI_CALL(MPI_Get_address(p->addr, &addr));
      displs.push_back(addr);
      if (p->count <= INT_MAX) {
        lens.push_back(static_cast<int>(p->count));
        types.push_back(p->type);
      } else {
        MPI_Datatype big = MPI_DATATYPE_NULL;
        MpiStatus s = large_count_type(p->count, p->type, &big);
        if (!s.ok()) return s;
        x->owned_types_.push_back(big);
        lens.push_back(1);
        types.push_back(big);
      }
    }
    CARTPLAN_MPI_CALL(MPI_Type_create_struct(static_cast<int>(lens.size()), lens.data(), displs.data(), types.data(), &post->type));
    CARTPLAN_MPI_CALL(MPI_Type_commit(&post->type));
    x->owned_types_.push_back(post->type);
    post->buf = MPI_BOTTOM;
    post->count = 1;
    return {};
  };

  const std::size_t nphases = bound.phase_begin.size() - 1;
  x->pack_.resize(nphases);
  x->unpack_.resize(nphases);
  x->self_.resize(nphases);
  ext->after_phase.resize(nphases);
  std::size_t widest = 0;
  for (std::size_t p = 0; p < nphases; ++p) {
    x->phase_begin_.push_back(x->requests_.size());
    std::vector<Message> posts;
    std::vector<ExtSteps::Step>& after = ext->after_phase[p];
    for (int k = bound.phase_begin[p]; k < bound.phase_begin[p + 1]; ++k) {
      const engine::BoundRound& br = bound.rounds[k];
      const ir::Round& round = plan.phases()[br.phase].rounds[br.round];
      if (br.send_peer == me) {
        // A round to this rank itself (a shift that wraps around a small torus): stores are
        // copies at the phase start, combines run after the phase in plan order.
        assert(br.recv_peer == me && br.recv_entries == br.send_entries);
        for (std::size_t j = 0; j < br.recv_entries.size(); ++j) {
          const int e = br.recv_entries[j];
          const Place from = place_of(round.send[e]), to = place_of(round.recv[e]);
          if (br.recv_combine[j]) {
            MpiStatus s = step(from, to, true, after);
            if (!s.ok()) return s;
          } else if (from.count > 0) {
            if (from.contiguous && to.contiguous) {
              x->pack_[p].push_back({from.addr, to.addr, static_cast<std::size_t>(from.bytes)});
            } else {
              std::vector<ExtSteps::Step> one;
              MpiStatus s = step(from, to, false, one);
              if (!s.ok()) return s;
              x->self_[p].push_back(one.at(0).copy);
            }
          }
        }
        continue;
      }
      if (br.send_peer != engine::kNoRank) {
        std::vector<Place> places;
        for (int e : br.send_entries) places.push_back(place_of(round.send[e]));
        Message post{false, nullptr, 0, MPI_BYTE, br.send_peer, lanes.tag(lane, br.tag), br.phase, br.round};
        MpiStatus s = describe(places, &post);
        if (!s.ok()) return s;
        posts.push_back(post);
      }
      if (br.recv_peer != engine::kNoRank) {
        std::vector<Place> places;
        for (std::size_t j = 0; j < br.recv_entries.size(); ++j) {
          const Place to = place_of(round.recv[br.recv_entries[j]]);
          if (br.recv_combine[j]) {
            const Place staged = scratch();
            MpiStatus s = step(staged, to, true, after);
            if (!s.ok()) return s;
            places.push_back(staged);
          } else {
            places.push_back(to);
          }
        }
        Message post{true, nullptr, 0, MPI_BYTE, br.recv_peer, lanes.tag(lane, br.tag), br.phase, br.round};
        MpiStatus s = describe(places, &post);
        if (!s.ok()) return s;
        posts.push_back(post);
      }
    }
    for (const auto& [c, combine] : bound.phase_copies[p]) {
      const ir::Copy& copy = plan.phases()[p].copies[static_cast<std::size_t>(c)];
      MpiStatus s = step(place_of(copy.from), place_of(copy.to), combine, after);
      if (!s.ok()) return s;
    }
    // Receives first, so that a phase's messages find their receive posted when possible.
    std::stable_sort(posts.begin(), posts.end(), [](const Message& a, const Message& b) { return a.recv > b.recv; });
    for (const Message& m : posts) {
      MpiStatus s = x->add_request(m.recv, m.buf, m.count, m.type, m.peer, m.tag, m.phase, m.round);
      if (!s.ok()) return s;
    }
    widest = std::max(widest, posts.size());
  }
  x->phase_begin_.push_back(x->requests_.size());
  x->statuses_.resize(widest);
  x->indices_.resize(widest);
  for (std::size_t q = 0; q < bound.copies.size(); ++q) {
    const ir::Copy& copy = plan.copies()[static_cast<std::size_t>(bound.copies[q])];
    MpiStatus s = step(place_of(copy.from), place_of(copy.to), bound.copy_combine[q], ext->final_steps);
    if (!s.ok()) return s;
  }
  x->pack_buffer_.resize(static_cast<std::size_t>(pack_max));
  x->ext_ = std::move(ext);
  *out = std::move(x);
  return {};
}

}  // namespace cartplan::mpi
