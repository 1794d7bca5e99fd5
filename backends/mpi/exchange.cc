// The MPI executor: datatypes and persistent requests for one bound plan, run phase by phase.
#include "backends/mpi/exchange.h"

#include <algorithm>
#include <cassert>
#include <climits>
#include <cstring>
#include <limits>
#include <string>

namespace cartplan::mpi {
namespace {

constexpr std::int64_t kInsignificant = std::numeric_limits<std::int64_t>::min();

// Message combining moves many tiny blocks (one int per neighbour at m = 1): copies of 4 or 8
// bytes are inlined instead of calling memcpy for each.
inline void move_bytes(const void* from, void* to, std::size_t bytes) {
  switch (bytes) {
    case 4: std::memcpy(to, from, 4); break;
    case 8: std::memcpy(to, from, 8); break;
    case 16: std::memcpy(to, from, 16); break;
    default: std::memcpy(to, from, bytes);
  }
}

std::string block_name(const char* side, int i) { return std::string(side) + " block " + std::to_string(i); }

// Checks one block the caller described; returns its size in bytes through `bytes`. The
// block's name is only formatted for an error (this runs for every block of every call).
MpiStatus check_block(const BlockSpec& b, const char* side, int index, std::int64_t* bytes) {
  auto name = [&] { return index < 0 ? std::string(side) + " block" : block_name(side, index); };
  if (b.count < 0) return mpi_error(MPI_ERR_COUNT, name() + ": negative count " + std::to_string(b.count));
  if (b.count == 0) {
    *bytes = 0;
    return {};
  }
  if (b.type == MPI_DATATYPE_NULL) return mpi_error(MPI_ERR_TYPE, name() + ": MPI_DATATYPE_NULL with count " + std::to_string(b.count));
  MPI_Count size = 0;
  if (MPI_Type_size_x(b.type, &size) != MPI_SUCCESS) return mpi_error(MPI_ERR_TYPE, name() + ": invalid datatype");
  *bytes = static_cast<std::int64_t>(size) * b.count;
  if (*bytes > 0 && b.addr == nullptr)
    return mpi_error(MPI_ERR_BUFFER, name() + ": NULL buffer with " + std::to_string(*bytes) + " bytes to move");
  return {};
}

}  // namespace

MpiStatus Exchange::agree(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options, Agreement* out) {
  const engine::Neighborhood& nbh = nc.nbh();
  const int t = nbh.size();
  const bool gather = spec.op == ir::Op::kAllgather;
  const bool one_size = gather || spec.uniform;
  const int keys = one_size ? 1 : t;  // sizes that must be the same everywhere

  // Which blocks this rank really uses: outside a non-periodic mesh they are not significant.
  std::vector<char>& send_used = out->send_used;
  std::vector<char>& recv_used = out->recv_used;
  send_used.assign(spec.send.size(), 1);
  recv_used.assign(t, 1);
  MpiStatus local = spec.invalid;
  if (local.ok() && (static_cast<int>(spec.recv.size()) != t || static_cast<int>(spec.send.size()) != (gather ? 1 : t)))
    local = mpi_error(MPI_ERR_ARG, "wrong number of blocks");
  std::vector<std::int64_t> agree(1 + 2 * static_cast<std::size_t>(keys));
  for (int k = 0; k < keys; ++k) {
    agree[1 + 2 * k] = -1;
    agree[2 + 2 * k] = kInsignificant;
  }
  auto account = [&](int key, std::int64_t bytes) {
    agree[1 + 2 * key] = std::max(agree[1 + 2 * key], bytes);
    agree[2 + 2 * key] = std::max(agree[2 + 2 * key], -bytes);
  };
  if (local.ok()) {
    for (int i = 0; i < t && local.ok(); ++i) {
      recv_used[i] = nc.has_source(i);
      if (!gather) send_used[i] = nc.has_target(i);
      std::int64_t bytes = 0;
      if (recv_used[i]) {
        local = check_block(spec.recv[i], "recv", i, &bytes);
        if (local.ok()) account(one_size ? 0 : i, bytes);
      }
      if (local.ok() && !gather && send_used[i]) {
        local = check_block(spec.send[i], "send", i, &bytes);
        if (local.ok()) account(one_size ? 0 : i, bytes);
      }
    }
    if (local.ok() && gather) {
      std::int64_t bytes = 0;
      local = check_block(spec.send[0], "send", -1, &bytes);
      if (local.ok()) account(0, bytes);
    }
  }
  agree[0] = local.ok() ? 0 : 1;
  // Per-call Info options choose the plan, so they must agree too: a fingerprint, as max and -min.
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
  const std::int64_t fingerprint = static_cast<std::int64_t>(fp >> 2);
  agree.push_back(fingerprint);
  agree.push_back(-fingerprint);
  // One reduction agrees on errors and on block sizes: max and -min of every block's size.
  std::vector<std::int64_t> all(agree.size());
  CARTPLAN_MPI_CALL(MPI_Allreduce(agree.data(), all.data(), static_cast<int>(agree.size()), MPI_INT64_T, MPI_MAX, nc.internal()));
  if (all[0] != 0) return local.ok() ? mpi_error(MPI_ERR_ARG, "another rank passed invalid arguments to this collective") : local;
  if (all[all.size() - 2] != -all[all.size() - 1])
    return mpi_error(MPI_ERR_INFO_VALUE, "ranks passed different cartplan Info options to this collective");
  std::vector<std::int64_t>& block_bytes = out->block_bytes;
  block_bytes.assign(keys, 0);
  std::int64_t total = 0;
  for (int k = 0; k < keys; ++k) {
    const std::int64_t hi = all[1 + 2 * k], lo = -all[2 + 2 * k];
    if (hi >= 0 && lo != hi)
      return mpi_error(MPI_ERR_TRUNCATE, (gather ? std::string("the send block and the recv blocks")
                                          : spec.uniform ? std::string("the blocks")
                                                         : "block " + std::to_string(k)) +
                                             " must have the same size (type signature) on every rank and on both sides; sizes range from " +
                                             std::to_string(lo) + " to " + std::to_string(hi) + " bytes");
    block_bytes[k] = std::max<std::int64_t>(hi, 0);
    total += block_bytes[k];
  }

  for (std::int64_t b : block_bytes)
    if (b > INT_MAX) return mpi_error(MPI_ERR_COUNT, "a block of " + std::to_string(b) + " bytes is too large");
  // Plan for the mean block size: identical on all ranks because the sizes were agreed.
  return nc.plan_for(spec.op, options, keys ? total / keys : 0, &out->entry);
}

MpiStatus Exchange::build(NeighborhoodComm& nc, const ExchangeSpec& spec, const Agreement& agreed, std::int64_t tag_base,
                          std::unique_ptr<Exchange>* out) {
  const int t = nc.nbh().size();
  const std::vector<std::int64_t>& block_bytes = agreed.block_bytes;
  const std::vector<char>& send_used = agreed.send_used;
  const std::vector<char>& recv_used = agreed.recv_used;
  auto x = std::unique_ptr<Exchange>(new Exchange());
  x->comm_ = nc.internal();
  x->entry_ = agreed.entry;
  const ir::Plan& plan = x->entry_->plan;
  const engine::BoundPlan& bound = x->entry_->bound;
  auto bytes_of_block = [&](int i) { return block_bytes[block_bytes.size() == 1 ? 0 : i]; };

  // Where a piece of data lives on this rank: a user block, or a region of a staging buffer.
  struct Place {
    const void* addr = nullptr;
    int count = 0;
    MPI_Datatype type = MPI_BYTE;
    std::int64_t bytes = 0;
    bool contiguous = true;  // `bytes` bytes at addr: can be moved with memcpy
  };
  // A block is contiguous when its elements are adjacent and start at its address. Blocks
  // usually share a few datatypes, so the answer is remembered per type within this call.
  std::vector<std::pair<MPI_Datatype, bool>> contiguous_types;
  auto contiguous = [&contiguous_types](const BlockSpec& b) {
    if (b.count == 0) return true;
    for (const auto& [type, answer] : contiguous_types)
      if (type == b.type) return answer;
    MPI_Count size = 0;
    MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
    MPI_Type_size_x(b.type, &size);
    MPI_Type_get_extent(b.type, &lb, &extent);
    MPI_Type_get_true_extent(b.type, &tlb, &textent);
    const bool answer = tlb == 0 && static_cast<MPI_Count>(textent) == size && static_cast<MPI_Count>(extent) == size;
    if (contiguous_types.size() < 8) contiguous_types.emplace_back(b.type, answer);
    return answer;
  };
  auto user_place = [&](const BlockSpec& b, std::int64_t bytes) {
    return Place{b.addr, b.count, b.count ? b.type : MPI_BYTE, bytes, contiguous(b)};
  };
  std::vector<Place> send_place, recv_place;
  for (std::size_t i = 0; i < spec.send.size(); ++i)
    send_place.push_back(user_place(spec.send[i], send_used[i] ? bytes_of_block(static_cast<int>(i)) : 0));
  for (int i = 0; i < t; ++i) recv_place.push_back(user_place(spec.recv[i], recv_used[i] ? bytes_of_block(i) : 0));
  // Temp slots have no storage of their own: a slot is the region of the staging buffer of the
  // round that last received it (plans never read and write a slot in one phase).
  std::vector<Place> temp_place(plan.temp_slots().size());
  auto place_of = [&](const ir::BufRef& ref) -> Place& {
    return ref.kind == ir::BufKind::kSend ? send_place[ref.index]
           : ref.kind == ir::BufKind::kRecv ? recv_place[ref.index]
                                            : temp_place[ref.index];
  };
  auto staging = [&](std::int64_t bytes) {
    x->staging_.emplace_back(static_cast<std::size_t>(std::max<std::int64_t>(bytes, 1)));
    return x->staging_.back().data();  // stays put: moving the outer vector keeps inner buffers
  };
  x->staging_.reserve(2 * bound.rounds.size() + 1);


  // A struct datatype over places at absolute addresses (the zero-copy path for blocks that
  // are not contiguous, e.g. subarrays of a halo).
  auto struct_type = [&](const std::vector<Place>& places, MPI_Datatype* out) -> MpiStatus {
    std::vector<int> lens;
    std::vector<MPI_Aint> displs;
    std::vector<MPI_Datatype> types;
    for (const Place& pl : places) {
      if (pl.count == 0) continue;
      MPI_Aint addr = 0;
      CARTPLAN_MPI_CALL(MPI_Get_address(pl.addr, &addr));
      lens.push_back(pl.count);
      displs.push_back(addr);
      types.push_back(pl.type);
    }
    if (lens.empty()) {
      *out = MPI_DATATYPE_NULL;
      return {};
    }
    CARTPLAN_MPI_CALL(MPI_Type_create_struct(static_cast<int>(lens.size()), lens.data(), displs.data(), types.data(), out));
    CARTPLAN_MPI_CALL(MPI_Type_commit(out));
    x->owned_types_.push_back(*out);
    return {};
  };

  // A local move of one block: memcpy when both sides are contiguous, else MPI_Pack/Unpack.
  int pack_max = 0;
  auto add_local = [&](const Place& from, const Place& to, std::vector<LocalCopy>& list) -> MpiStatus {
    if (from.bytes == 0) return {};
    if (from.contiguous && to.contiguous) {
      list.push_back(LocalCopy{{from.addr, from.count, from.type}, {to.addr, to.count, to.type}, static_cast<std::size_t>(from.bytes)});
      return {};
    }
    int size = 0;
    CARTPLAN_MPI_CALL(MPI_Pack_size(from.count, from.type, x->comm_, &size));
    pack_max = std::max(pack_max, size);
    list.push_back(LocalCopy{{from.addr, from.count, from.type}, {to.addr, to.count, to.type}, 0});
    return {};
  };
  const int me = nc.rank();

  // Each side of each round becomes one message in one of three ways:
  //  - one contiguous entry: sent from / received into the user's memory directly;
  //  - several entries, all contiguous: packed into a staging buffer with memcpy (datatype
  //    engines are slow on many tiny segments, and this is what a hand-written halo does);
  //  - otherwise one struct datatype over all entries (temps received into staging).
  const std::size_t nphases = bound.phase_begin.size() - 1;
  x->pack_.resize(nphases);
  x->unpack_.resize(nphases);
  x->self_.resize(nphases);
  for (std::size_t p = 0; p < nphases; ++p) {
    x->phase_begin_.push_back(x->requests_.size());
    struct Post {
      bool recv;
      const void* buf;
      int count;
      MPI_Datatype type;
      int peer, tag;
    };
    std::vector<Post> posts;
    // A round whose peer is this rank (a shift that wraps around a small torus dimension) is
    // a local copy, not a message. Sender and receiver masks agree there (the shift only moves
    // along periodic dimensions), and no place is read and written in one phase, so the copies
    // can run when the phase starts.
    for (int k = bound.phase_begin[p]; k < bound.phase_begin[p + 1]; ++k) {
      const engine::BoundRound& br = bound.rounds[k];
      if (br.send_peer != me) continue;
      assert(br.recv_peer == me && br.recv_entries == br.send_entries);
      const ir::Round& round = plan.phases()[br.phase].rounds[br.round];
      std::vector<Place> from;
      for (int e : br.send_entries) from.push_back(place_of(round.send[e]));
      std::int64_t temp_bytes = 0;
      for (int e : br.recv_entries)
        if (round.recv[e].kind == ir::BufKind::kTemp) temp_bytes += bytes_of_block(plan.temp_slots()[round.recv[e].index].shape_of);
      unsigned char* temps = temp_bytes ? staging(temp_bytes) : nullptr;
      std::int64_t off = 0;
      for (std::size_t j = 0; j < br.recv_entries.size(); ++j) {
        const ir::BufRef& ref = round.recv[br.recv_entries[j]];
        if (ref.kind == ir::BufKind::kTemp) {
          const std::int64_t b = bytes_of_block(plan.temp_slots()[ref.index].shape_of);
          temp_place[ref.index] = Place{temps + off, static_cast<int>(b), MPI_BYTE, b, true};
          off += b;
        }
        const Place to = place_of(ref);
        if (from[j].contiguous && to.contiguous) {
          // Plain bytes: a move, so that runs of neighbouring blocks merge into one memcpy.
          if (from[j].bytes) x->pack_[p].push_back({from[j].addr, const_cast<void*>(to.addr), static_cast<std::size_t>(from[j].bytes)});
          continue;
        }
        MpiStatus st = add_local(from[j], to, x->self_[p]);
        if (!st.ok()) return st;
      }
    }
    // Sends read places as they were before this phase, so they are described first.
    for (int k = bound.phase_begin[p]; k < bound.phase_begin[p + 1]; ++k) {
      const engine::BoundRound& br = bound.rounds[k];
      if (br.send_peer == engine::kNoRank || br.send_peer == me) continue;
      const ir::Round& round = plan.phases()[br.phase].rounds[br.round];
      std::vector<Place> places;
      bool all_contiguous = true;
      std::int64_t total_bytes = 0;
      for (int e : br.send_entries) {
        places.push_back(place_of(round.send[e]));
        all_contiguous = all_contiguous && places.back().contiguous;
        total_bytes += places.back().bytes;
      }
      Post post{false, nullptr, 0, MPI_BYTE, br.send_peer, static_cast<int>(tag_base + br.tag)};
      if (places.size() == 1) {
        post.buf = places[0].addr;
        post.count = places[0].count;
        post.type = places[0].type;
      } else if (all_contiguous) {
        unsigned char* buf = staging(total_bytes);
        std::int64_t off = 0;
        for (const Place& pl : places) {
          if (pl.bytes) x->pack_[p].push_back({pl.addr, buf + off, static_cast<std::size_t>(pl.bytes)});
          off += pl.bytes;
        }
        post.buf = buf;
        post.count = static_cast<int>(total_bytes);
      } else {
        MpiStatus st = struct_type(places, &post.type);
        if (!st.ok()) return st;
        post.buf = MPI_BOTTOM;
        post.count = post.type == MPI_DATATYPE_NULL ? 0 : 1;
        if (post.type == MPI_DATATYPE_NULL) post.type = MPI_BYTE;
      }
      posts.push_back(post);
    }
    for (int k = bound.phase_begin[p]; k < bound.phase_begin[p + 1]; ++k) {
      const engine::BoundRound& br = bound.rounds[k];
      if (br.recv_peer == engine::kNoRank || br.recv_peer == me) continue;
      const ir::Round& round = plan.phases()[br.phase].rounds[br.round];
      std::vector<ir::BufRef> refs;
      bool all_contiguous = true, any_temp = false;
      std::int64_t total_bytes = 0, temp_bytes = 0;
      for (int e : br.recv_entries) {
        refs.push_back(round.recv[e]);
        const bool temp = round.recv[e].kind == ir::BufKind::kTemp;
        const std::int64_t b = temp ? bytes_of_block(plan.temp_slots()[round.recv[e].index].shape_of) : place_of(round.recv[e]).bytes;
        any_temp = any_temp || temp;
        all_contiguous = all_contiguous && (temp || place_of(round.recv[e]).contiguous);
        total_bytes += b;
        temp_bytes += temp ? b : 0;
      }
      Post post{true, nullptr, 0, MPI_BYTE, br.recv_peer, static_cast<int>(tag_base + br.tag)};
      if (refs.size() == 1 && !any_temp) {
        const Place& pl = place_of(refs[0]);
        post.buf = pl.addr;
        post.count = pl.count;
        post.type = pl.type;
      } else if (all_contiguous) {
        unsigned char* buf = staging(total_bytes);
        std::int64_t off = 0;
        for (const ir::BufRef& ref : refs) {
          if (ref.kind == ir::BufKind::kTemp) {
            const std::int64_t b = bytes_of_block(plan.temp_slots()[ref.index].shape_of);
            temp_place[ref.index] = Place{buf + off, static_cast<int>(b), MPI_BYTE, b, true};
            off += b;
          } else {
            const Place& pl = place_of(ref);
            if (pl.bytes) x->unpack_[p].push_back({buf + off, const_cast<void*>(pl.addr), static_cast<std::size_t>(pl.bytes)});
            off += pl.bytes;
          }
        }
        post.buf = buf;
        post.count = static_cast<int>(total_bytes);
      } else {
        unsigned char* temps = staging(temp_bytes);
        std::int64_t off = 0;
        std::vector<Place> places;
        for (const ir::BufRef& ref : refs) {
          if (ref.kind == ir::BufKind::kTemp) {
            const std::int64_t b = bytes_of_block(plan.temp_slots()[ref.index].shape_of);
            temp_place[ref.index] = Place{temps + off, static_cast<int>(b), MPI_BYTE, b, true};
            off += b;
          }
          places.push_back(place_of(ref));
        }
        MpiStatus st = struct_type(places, &post.type);
        if (!st.ok()) return st;
        post.buf = MPI_BOTTOM;
        post.count = post.type == MPI_DATATYPE_NULL ? 0 : 1;
        if (post.type == MPI_DATATYPE_NULL) post.type = MPI_BYTE;
      }
      posts.push_back(post);
    }
    // Receives first, so that a phase's messages find their receive posted when possible.
    std::stable_sort(posts.begin(), posts.end(), [](const Post& a, const Post& b) { return a.recv > b.recv; });
    for (const Post& post : posts) {
      MPI_Request req = MPI_REQUEST_NULL;
      if (post.recv)
        CARTPLAN_MPI_CALL(MPI_Recv_init(const_cast<void*>(post.buf), post.count, post.type, post.peer, post.tag, x->comm_, &req));
      else
        CARTPLAN_MPI_CALL(MPI_Send_init(post.buf, post.count, post.type, post.peer, post.tag, x->comm_, &req));
      x->requests_.push_back(req);
    }
  }
  x->phase_begin_.push_back(x->requests_.size());
  // Neighbouring blocks often sit next to each other on both sides (blocks of one round are
  // consecutive in the user's buffer): one memcpy per run instead of one per block.
  for (auto* lists : {&x->pack_, &x->unpack_})
    for (std::vector<Move>& moves : *lists) {
      std::vector<Move> merged;
      for (const Move& m : moves) {
        if (!merged.empty() && static_cast<const char*>(merged.back().from) + merged.back().bytes == m.from &&
            static_cast<char*>(merged.back().to) + merged.back().bytes == m.to)
          merged.back().bytes += m.bytes;
        else
          merged.push_back(m);
      }
      moves = std::move(merged);
    }

  for (int c : bound.copies) {
    MpiStatus st = add_local(place_of(plan.copies()[c].from), place_of(plan.copies()[c].to), x->copies_);
    if (!st.ok()) return st;
  }
  x->pack_buffer_.resize(static_cast<std::size_t>(pack_max));
  *out = std::move(x);
  return {};
}

// Tags are per round, so matching never depends on posting order (two shifts can reach the
// same rank on small tori). Each exchange gets its own range of tags, so two exchanges of one
// communicator in flight never match each other's messages: range 0 belongs to blocking calls
// (one at a time, complete on return), ranges 1.. to persistent and non-blocking requests in
// creation order, which agrees across ranks because collectives are called in the same order.
std::int64_t Exchange::tag_base(NeighborhoodComm& nc, const ir::Plan& plan, bool blocking) {
  int* tag_ub_ptr = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(nc.internal(), MPI_TAG_UB, &tag_ub_ptr, &flag);
  const std::int64_t tag_ub = flag && tag_ub_ptr ? *tag_ub_ptr : 32767;
  const std::int64_t rounds = std::max(1, plan.stats().rounds);
  const std::int64_t ranges = std::max<std::int64_t>(1, (tag_ub + 1) / rounds);
  if (blocking || ranges == 1) return 0;
  return (1 + static_cast<std::int64_t>(nc.next_exchange_id() % static_cast<std::uint64_t>(ranges - 1))) * rounds;
}

MpiStatus Exchange::create(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options,
                           std::unique_ptr<Exchange>* out) {
  Agreement agreed;
  MpiStatus s = agree(nc, spec, options, &agreed);
  if (!s.ok()) return s;
  return build(nc, spec, agreed, tag_base(nc, agreed.entry->plan, false), out);
}

namespace {

// The last blocking exchange of a communicator and the arguments it was built from.
struct BlockingCache {
  std::vector<std::uintptr_t> key;
  std::vector<std::int64_t> block_bytes;
  std::unique_ptr<Exchange> exchange;
};

// What a blocking call's exchange is bound to: addresses, counts and datatypes. Empty when a
// datatype is derived: a freed handle can come back for a different layout, so only calls with
// predefined datatypes (whose handles never change meaning) are reused.
std::vector<std::uintptr_t> reuse_key(const ExchangeSpec& spec) {
  std::vector<std::uintptr_t> key{static_cast<std::uintptr_t>(spec.op)};
  MPI_Datatype last_named = MPI_DATATYPE_NULL;
  for (const std::vector<BlockSpec>* side : {&spec.send, &spec.recv})
    for (const BlockSpec& b : *side) {
      if (b.count > 0 && b.type != last_named) {
        int ni = 0, na = 0, nd = 0, combiner = 0;
        if (b.type == MPI_DATATYPE_NULL || MPI_Type_get_envelope(b.type, &ni, &na, &nd, &combiner) != MPI_SUCCESS ||
            combiner != MPI_COMBINER_NAMED)
          return {};
        last_named = b.type;
      }
      key.push_back(reinterpret_cast<std::uintptr_t>(b.addr));
      key.push_back(static_cast<std::uintptr_t>(b.count));
      key.push_back(reinterpret_cast<std::uintptr_t>(b.type));
    }
  return key;
}

}  // namespace

MpiStatus Exchange::run_blocking(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options) {
  Agreement agreed;
  MpiStatus s = agree(nc, spec, options, &agreed);  // every call agrees: errors anywhere fail everywhere
  if (!s.ok()) return s;
  std::shared_ptr<void>& slot = nc.blocking_slot();
  if (!slot) slot = std::make_shared<BlockingCache>();
  auto& cache = *static_cast<BlockingCache*>(slot.get());
  std::vector<std::uintptr_t> key = spec.invalid.ok() ? reuse_key(spec) : std::vector<std::uintptr_t>{};
  // The same buffers and sizes as last time, and the same plan: run the exchange already built.
  if (key.empty() || !cache.exchange || cache.key != key || cache.block_bytes != agreed.block_bytes ||
      cache.exchange->entry_ != agreed.entry) {
    cache.exchange.reset();
    s = build(nc, spec, agreed, tag_base(nc, agreed.entry->plan, true), &cache.exchange);
    if (!s.ok()) return s;
    cache.key = std::move(key);
    cache.block_bytes = agreed.block_bytes;
  }
  s = cache.exchange->start();
  if (s.ok()) s = cache.exchange->wait();
  // Derived datatypes may be freed after the call: never keep an exchange bound to them.
  if (cache.key.empty()) cache.exchange.reset();
  return s;
}

void Exchange::move_bytes(const Move& m) { cartplan::mpi::move_bytes(m.from, m.to, m.bytes); }

Exchange::~Exchange() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (active_) wait();  // never free requests that are still in use
  for (MPI_Request& r : requests_)
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  for (MPI_Datatype& t : owned_types_) MPI_Type_free(&t);
}

MpiStatus Exchange::start() {
  if (active_) return mpi_error(MPI_ERR_REQUEST, "the request is already active (start it again only after wait or test completes it)");
  active_ = true;
  finished_ = false;
  phase_ = 0;
  phase_started_ = false;
  // Progress as far as possible now (often all of it on small grids); the request stays
  // active until wait or test reports completion, as MPI persistent requests do.
  MpiStatus s = advance(false);
  if (!s.ok()) active_ = false;
  return s;
}

MpiStatus Exchange::test(bool* done) {
  *done = true;
  if (!active_) return {};
  MpiStatus s = finished_ ? MpiStatus{} : advance(false);
  *done = finished_ || !s.ok();
  if (*done) active_ = false;
  return s;
}

MpiStatus Exchange::wait() {
  if (!active_) return {};
  MpiStatus s = finished_ ? MpiStatus{} : advance(true);
  active_ = false;
  return s;
}

MpiStatus Exchange::advance(bool block) {
  const std::size_t phases = phase_begin_.size() - 1;
  while (phase_ < phases) {
    const std::size_t first = phase_begin_[phase_], n = phase_begin_[phase_ + 1] - first;
    if (!phase_started_) {
      for (const Move& m : pack_[phase_]) move_bytes(m);
      // Rounds to this rank itself are copies; no other round of the phase touches their places.
      MpiStatus s = run_local(self_[phase_]);
      if (!s.ok()) return s;
    }
    if (n == 0) {  // no messages in this phase (no packs or unpacks either)
      ++phase_;
      continue;
    }
    if (!phase_started_) {
      CARTPLAN_MPI_CALL(MPI_Startall(static_cast<int>(n), requests_.data() + first));
      phase_started_ = true;
    }
    // A phase's receives may be read by the next phase's sends: finish it before moving on.
    int complete = 1;
    if (block) {
      CARTPLAN_MPI_CALL(MPI_Waitall(static_cast<int>(n), requests_.data() + first, MPI_STATUSES_IGNORE));
    } else {
      CARTPLAN_MPI_CALL(MPI_Testall(static_cast<int>(n), requests_.data() + first, &complete, MPI_STATUSES_IGNORE));
    }
    if (!complete) return {};
    for (const Move& m : unpack_[phase_]) move_bytes(m);
    ++phase_;
    phase_started_ = false;
  }
  finished_ = true;
  return run_local(copies_);
}

MpiStatus Exchange::run_local(const std::vector<LocalCopy>& copies) {
  for (const LocalCopy& c : copies) {
    if (c.memcpy_bytes) {
      cartplan::mpi::move_bytes(c.from.addr, const_cast<void*>(c.to.addr), c.memcpy_bytes);
      continue;
    }
    int pos = 0;
    CARTPLAN_MPI_CALL(MPI_Pack(c.from.addr, c.from.count, c.from.type, pack_buffer_.data(),
                               static_cast<int>(pack_buffer_.size()), &pos, comm_));
    int in = 0;
    CARTPLAN_MPI_CALL(MPI_Unpack(pack_buffer_.data(), pos, &in, const_cast<void*>(c.to.addr), c.to.count, c.to.type, comm_));
  }
  return {};
}

}  // namespace cartplan::mpi
