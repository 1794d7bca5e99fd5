// The MPI executor: datatypes and persistent requests for one bound plan, run phase by phase.
#include "backends/mpi/exchange.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <limits>
#include <string>

namespace cartplan::mpi {
namespace {

constexpr std::int64_t kInsignificant = std::numeric_limits<std::int64_t>::min();

std::string block_name(const char* side, int i) { return std::string(side) + " block " + std::to_string(i); }

// Checks one block the caller described; returns its size in bytes through `bytes`.
MpiStatus check_block(const BlockSpec& b, const std::string& name, std::int64_t* bytes) {
  if (b.count < 0) return mpi_error(MPI_ERR_COUNT, name + ": negative count " + std::to_string(b.count));
  if (b.count == 0) {
    *bytes = 0;
    return {};
  }
  if (b.type == MPI_DATATYPE_NULL) return mpi_error(MPI_ERR_TYPE, name + ": MPI_DATATYPE_NULL with count " + std::to_string(b.count));
  MPI_Count size = 0;
  if (MPI_Type_size_x(b.type, &size) != MPI_SUCCESS) return mpi_error(MPI_ERR_TYPE, name + ": invalid datatype");
  *bytes = static_cast<std::int64_t>(size) * b.count;
  if (*bytes > 0 && b.addr == nullptr)
    return mpi_error(MPI_ERR_BUFFER, name + ": NULL buffer with " + std::to_string(*bytes) + " bytes to move");
  return {};
}

}  // namespace

MpiStatus Exchange::create(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options,
                           std::unique_ptr<Exchange>* out) {
  const engine::Neighborhood& nbh = nc.nbh();
  const int t = nbh.size();
  const bool gather = spec.op == ir::Op::kAllgather;
  const int keys = gather ? 1 : t;  // blocks that must have one size everywhere

  // Which blocks this rank really uses: outside a non-periodic mesh they are not significant.
  std::vector<char> send_used(spec.send.size(), 1), recv_used(t, 1);
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
      ir::Offset back = nbh[i];
      for (int& x : back) x = -x;
      recv_used[i] = nc.grid().contains(nc.coords(), back);
      if (!gather) send_used[i] = nc.grid().contains(nc.coords(), nbh[i]);
      std::int64_t bytes = 0;
      if (recv_used[i]) {
        local = check_block(spec.recv[i], block_name("recv", i), &bytes);
        if (local.ok()) account(gather ? 0 : i, bytes);
      }
      if (local.ok() && !gather && send_used[i]) {
        local = check_block(spec.send[i], block_name("send", i), &bytes);
        if (local.ok()) account(i, bytes);
      }
    }
    if (local.ok() && gather) {
      std::int64_t bytes = 0;
      local = check_block(spec.send[0], "send block", &bytes);
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
  std::vector<std::int64_t> block_bytes(keys, 0);
  std::int64_t total = 0;
  for (int k = 0; k < keys; ++k) {
    const std::int64_t hi = all[1 + 2 * k], lo = -all[2 + 2 * k];
    if (hi >= 0 && lo != hi)
      return mpi_error(MPI_ERR_TRUNCATE, (gather ? std::string("the send block and the recv blocks") : "block " + std::to_string(k)) +
                                             " must have the same size (type signature) on every rank and on both sides; sizes range from " +
                                             std::to_string(lo) + " to " + std::to_string(hi) + " bytes");
    block_bytes[k] = std::max<std::int64_t>(hi, 0);
    total += block_bytes[k];
  }

  auto x = std::unique_ptr<Exchange>(new Exchange());
  x->comm_ = nc.internal();
  // Plan for the mean block size: identical on all ranks because the sizes were agreed.
  {
    MpiStatus s = nc.plan_for(spec.op, options, keys ? total / keys : 0, &x->entry_);
    if (!s.ok()) return s;
  }
  const ir::Plan& plan = x->entry_->plan;
  const engine::BoundPlan& bound = x->entry_->bound;
  auto bytes_of_block = [&](int i) { return block_bytes[gather ? 0 : i]; };

  // Temp slots: one buffer, 16-byte aligned slices.
  std::vector<std::size_t> temp_offset;
  std::size_t temp_size = 0;
  for (const ir::TempSlot& s : plan.temp_slots()) {
    temp_offset.push_back(temp_size);
    const std::int64_t b = bytes_of_block(s.shape_of);
    if (b > INT_MAX) return mpi_error(MPI_ERR_COUNT, "a block of " + std::to_string(b) + " bytes is too large for a temp slot");
    temp_size += (static_cast<std::size_t>(b) + 15) / 16 * 16;
  }
  x->temp_.resize(temp_size);

  auto describe = [&](const ir::BufRef& ref) -> BlockSpec {
    switch (ref.kind) {
      case ir::BufKind::kSend: return spec.send[ref.index];
      case ir::BufKind::kRecv: return spec.recv[ref.index];
      case ir::BufKind::kTemp:
        return BlockSpec{x->temp_.data() + temp_offset[ref.index], static_cast<int>(bytes_of_block(plan.temp_slots()[ref.index].shape_of)),
                         MPI_BYTE};
    }
    return {};
  };

  // Tags are per round, so matching never depends on posting order (two shifts can reach the
  // same rank on small tori). Each exchange gets its own range of tags, so two exchanges of
  // one communicator in flight never match each other's messages.
  int* tag_ub_ptr = nullptr;
  int flag = 0;
  CARTPLAN_MPI_CALL(MPI_Comm_get_attr(x->comm_, MPI_TAG_UB, &tag_ub_ptr, &flag));
  const std::int64_t tag_ub = flag && tag_ub_ptr ? *tag_ub_ptr : 32767;
  const std::int64_t rounds = std::max(1, plan.stats().rounds);
  const std::int64_t ranges = std::max<std::int64_t>(1, (tag_ub + 1) / rounds);
  const std::int64_t tag_base = static_cast<std::int64_t>(nc.next_exchange_id() % static_cast<std::uint64_t>(ranges)) * rounds;

  // One datatype per round and side: a struct of the kept entries at absolute addresses.
  auto build = [&](const std::vector<ir::BufRef>& refs, const std::vector<int>& kept, const void** buf, int* count,
                   MPI_Datatype* type) -> MpiStatus {
    if (kept.size() == 1) {
      const BlockSpec b = describe(refs[kept[0]]);
      *buf = b.addr;
      *count = b.count;
      *type = b.count ? b.type : MPI_BYTE;
      return {};
    }
    std::vector<int> lens;
    std::vector<MPI_Aint> displs;
    std::vector<MPI_Datatype> types;
    for (int e : kept) {
      const BlockSpec b = describe(refs[e]);
      if (b.count == 0) continue;
      MPI_Aint addr = 0;
      CARTPLAN_MPI_CALL(MPI_Get_address(b.addr, &addr));
      lens.push_back(b.count);
      displs.push_back(addr);
      types.push_back(b.type);
    }
    if (lens.empty()) {  // all entries empty: still one (empty) message, both sides agree
      *buf = nullptr;
      *count = 0;
      *type = MPI_BYTE;
      return {};
    }
    MPI_Datatype t_new = MPI_DATATYPE_NULL;
    CARTPLAN_MPI_CALL(MPI_Type_create_struct(static_cast<int>(lens.size()), lens.data(), displs.data(), types.data(), &t_new));
    CARTPLAN_MPI_CALL(MPI_Type_commit(&t_new));
    x->owned_types_.push_back(t_new);
    *buf = MPI_BOTTOM;
    *count = 1;
    *type = t_new;
    return {};
  };

  for (std::size_t p = 0; p + 1 < bound.phase_begin.size(); ++p) {
    x->phase_begin_.push_back(x->requests_.size());
    // Receives first, so that a phase's messages find their receive posted when possible.
    for (int side = 0; side < 2; ++side) {
      for (int k = bound.phase_begin[p]; k < bound.phase_begin[p + 1]; ++k) {
        const engine::BoundRound& br = bound.rounds[k];
        const ir::Round& round = plan.phases()[br.phase].rounds[br.round];
        const int tag = static_cast<int>(tag_base + br.tag);
        const void* buf = nullptr;
        int count = 0;
        MPI_Datatype type = MPI_BYTE;
        MPI_Request req = MPI_REQUEST_NULL;
        if (side == 0 && br.recv_peer != engine::kNoRank) {
          MpiStatus s = build(round.recv, br.recv_entries, &buf, &count, &type);
          if (!s.ok()) return s;
          CARTPLAN_MPI_CALL(MPI_Recv_init(const_cast<void*>(buf), count, type, br.recv_peer, tag, x->comm_, &req));
          x->requests_.push_back(req);
        } else if (side == 1 && br.send_peer != engine::kNoRank) {
          MpiStatus s = build(round.send, br.send_entries, &buf, &count, &type);
          if (!s.ok()) return s;
          CARTPLAN_MPI_CALL(MPI_Send_init(buf, count, type, br.send_peer, tag, x->comm_, &req));
          x->requests_.push_back(req);
        }
      }
    }
  }
  x->phase_begin_.push_back(x->requests_.size());

  int pack_max = 0;
  for (int c : bound.copies) {
    const ir::Copy& copy = plan.copies()[c];
    LocalCopy lc{describe(copy.from), describe(copy.to)};
    if (lc.from.count > 0) {
      int size = 0;
      CARTPLAN_MPI_CALL(MPI_Pack_size(lc.from.count, lc.from.type, x->comm_, &size));
      pack_max = std::max(pack_max, size);
    }
    x->copies_.push_back(lc);
  }
  x->pack_buffer_.resize(static_cast<std::size_t>(pack_max));
  *out = std::move(x);
  return {};
}

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
    if (n == 0) {
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
    ++phase_;
    phase_started_ = false;
  }
  finished_ = true;
  return run_copies();
}

MpiStatus Exchange::run_copies() {
  for (const LocalCopy& c : copies_) {
    if (c.from.count == 0) continue;
    int pos = 0;
    CARTPLAN_MPI_CALL(MPI_Pack(c.from.addr, c.from.count, c.from.type, pack_buffer_.data(),
                               static_cast<int>(pack_buffer_.size()), &pos, comm_));
    int in = 0;
    CARTPLAN_MPI_CALL(MPI_Unpack(pack_buffer_.data(), pos, &in, const_cast<void*>(c.to.addr), c.to.count, c.to.type, comm_));
  }
  return {};
}

}  // namespace cartplan::mpi
