// The checks and agreement before an exchange is built: each rank checks the blocks it uses,
// and where a call is collective (persistent init, checking mode) one reduction agrees on
// errors, block sizes, options and a free lane; reductions and rooted ops also on the root
// (settle_extended).
#include "backends/mpi/exchange_settle.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <string>

#include "backends/mpi/another_rank.h"
#include "backends/mpi/exchange.h"
#include "backends/mpi/out_of_memory.h"
#include "backends/mpi/predefined.h"
#include "backends/mpi/test_failure.h"

namespace cartplan::mpi {
namespace {

std::string block_name(const char* side, int i) {
  return i < 0 ? std::string(side) + " block" : std::string(side) + " block " + std::to_string(i);
}

// Checks one block the caller described; returns its size in bytes through `bytes`. Only
// blocks that are really sent or received are checked: the others are not significant and may
// carry count -1 and MPI_DATATYPE_NULL. The name is only formatted for an error.
MpiStatus check_block(const BlockSpec& b, const char* side, int index, std::int64_t* bytes) {
  if (b.count < 0) return mpi_error(MPI_ERR_COUNT, block_name(side, index) + ": negative count " + std::to_string(b.count));
  if (b.count == 0) {
    *bytes = 0;
    return {};
  }
  if (b.type == MPI_DATATYPE_NULL)
    return mpi_error(MPI_ERR_TYPE, block_name(side, index) + ": MPI_DATATYPE_NULL with count " + std::to_string(b.count));
  MPI_Count size = 0;
  if (MPI_Type_size_x(b.type, &size) != MPI_SUCCESS || size == MPI_UNDEFINED)
    return mpi_error(MPI_ERR_TYPE, block_name(side, index) + ": invalid datatype");
  if (size > 0 && b.count > std::numeric_limits<std::int64_t>::max() / size)
    return mpi_error(MPI_ERR_COUNT, block_name(side, index) + ": count times datatype size overflows");
  *bytes = static_cast<std::int64_t>(size) * b.count;
  if (*bytes > 0 && b.addr == nullptr && !absolute_type(b.type))
    return mpi_error(MPI_ERR_BUFFER, block_name(side, index) + ": NULL buffer with " + std::to_string(*bytes) + " bytes to move");
  return {};
}

}  // namespace

bool absolute_type(MPI_Datatype type) {
  MPI_Count lb = 0, extent = 0;
  return MPI_Type_get_true_extent_x(type, &lb, &extent) == MPI_SUCCESS && lb != 0;
}

bool contiguous_type(MPI_Datatype type) {
#ifdef CARTPLAN_SMPI
  // SimGrid SMPI (3.32) reports wrong bounds for some derived types: a subarray's extent and true
  // extent are those of its old type, with lower bounds 0, wherever its cells are (a 1x1 subarray
  // of doubles at (9,0) of a 10x10 array says lb 0, extent 8, true lb 0, true extent 8; Open MPI:
  // extent 800, true lb 720), and a resized type's true extent is its new extent. A one-element
  // subarray then looked like 8 bytes at the block's address, and cartplan copied a staged block
  // there with memcpy (bench/results/smpi/hybrid_temp_message.md). Under SMPI only predefined
  // types count as contiguous; every derived type goes by datatype, which SMPI places right.
  if (!predefined_type(type)) return false;
#endif
  MPI_Count size = 0;
  MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
  MPI_Type_size_x(type, &size);
  MPI_Type_get_extent(type, &lb, &extent);
  MPI_Type_get_true_extent(type, &tlb, &textent);
  return tlb == 0 && static_cast<MPI_Count>(textent) == size && static_cast<MPI_Count>(extent) == size;
}

// The error every rank returns after an agreement found one: the largest error class any rank
// reported (so every rank returns the same class), with this rank's own message if it had one.
MpiStatus agreed_error(const MpiStatus& local, int agreed_class) {
  if (!local.ok()) return agreed_status(mpi_error(agreed_class, local.message));
  return agreed_status(mpi_error(agreed_class, another_rank_failed(agreed_class, "this collective")));
}

// One agreement: the MAX of every rank's words, and for persistent init the lanes held anywhere
// (see lanes.h: init picks one that nobody holds).
MpiStatus agree_on(NeighborhoodComm& nc, bool persistent, const std::vector<std::int64_t>& mine,
                   std::vector<std::int64_t>* all, std::vector<std::uint64_t>* all_held) {
  all->assign(mine.size(), 0);
  CARTPLAN_MPI_CALL(Exchange::agree_allreduce(mine.data(), all->data(), static_cast<int>(mine.size()), MPI_INT64_T, MPI_MAX, nc.internal()));
  if (persistent) {
    const std::vector<std::uint64_t> held = nc.shared()->lanes.held();  // a copy: the reduction reads it while others progress
    all_held->assign(held.size(), 0);
    CARTPLAN_MPI_CALL(Exchange::agree_allreduce(held.data(), all_held->data(), static_cast<int>(held.size()), MPI_UINT64_T, MPI_BOR,
                                    nc.internal()));
  }
  return {};
}

// Whether a call must agree across ranks every time: in checking mode, and for v/w alltoall
// forced to combining on a grid with a non-periodic dimension (see settle).
bool agrees_every_call(const NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options) {
  const bool one_size = spec.op == ir::Op::kAllgather || spec.uniform;
  const bool combining = options.given_plan ? options.given_plan->plan.algorithm() == ir::Algorithm::kCombining
                                            : options.algo == engine::AlgoChoice::kCombining;
  return options.check_collective || (!one_size && !nc.all_periodic() && combining);
}

namespace {

// Per size key (one for allgather and uniform calls, else one per block): the largest and
// smallest size seen on this rank (-1 / max when none), and 1 when some block of it is strided
// in memory here. Only collective calls look at strides (their agreement makes it the same on
// every rank; the optimizer prices it, see predict.h): other calls plan as if contiguous and
// skip the datatype queries.
struct BlockSizes {
  std::vector<std::int64_t> hi, lo, strided;
  bool look_at_types = false;

  BlockSizes(int keys, bool collective)
      : hi(keys, -1), lo(keys, std::numeric_limits<std::int64_t>::max()), strided(keys, 0), look_at_types(collective) {}
  void account(int key, std::int64_t bytes, const BlockSpec& b) {
    hi[key] = std::max(hi[key], bytes);
    lo[key] = std::min(lo[key], bytes);
    if (look_at_types && bytes > 0 && !strided[key] && !contiguous_type(b.type)) strided[key] = 1;
  }
};

MpiStatus size_mismatch(const ExchangeSpec& spec, int k, std::int64_t a, std::int64_t b) {
  const bool gather = spec.op == ir::Op::kAllgather;
  return mpi_error(MPI_ERR_TRUNCATE, (gather ? std::string("the send block and the recv blocks")
                                      : spec.uniform ? std::string("the blocks")
                                                     : "block " + std::to_string(k)) +
                                         " must have the same size (type signature) on every rank and on both sides; sizes range from " +
                                         std::to_string(a) + " to " + std::to_string(b) + " bytes");
}

// This rank's checks of the blocks it uses (outside a non-periodic mesh some are not
// significant), with their sizes; no communication.
MpiStatus check_local_blocks(const NeighborhoodComm& nc, const ExchangeSpec& spec, std::vector<char>& send_used,
                             std::vector<char>& recv_used, BlockSizes& sizes) {
  const int t = nc.nbh().size();
  const bool gather = spec.op == ir::Op::kAllgather;
  const bool one_size = gather || spec.uniform;
  MpiStatus local = spec.invalid;
  if (local.ok() && (static_cast<int>(spec.recv.size()) != t || static_cast<int>(spec.send.size()) != (gather ? 1 : t)))
    local = mpi_error(MPI_ERR_ARG, "wrong number of blocks");
  for (int i = 0; i < t && local.ok(); ++i) {
    recv_used[i] = nc.has_source(i);
    if (!gather) send_used[i] = nc.has_target(i);
    std::int64_t bytes = 0;
    if (recv_used[i]) {
      local = check_block(spec.recv[i], "recv", i, &bytes);
      if (local.ok()) sizes.account(one_size ? 0 : i, bytes, spec.recv[i]);
    }
    if (local.ok() && !gather && send_used[i]) {
      local = check_block(spec.send[i], "send", i, &bytes);
      if (local.ok()) sizes.account(one_size ? 0 : i, bytes, spec.send[i]);
    }
  }
  if (local.ok() && gather) {
    std::int64_t bytes = 0;
    local = check_block(spec.send[0], "send", -1, &bytes);
    if (local.ok()) sizes.account(0, bytes, spec.send[0]);
  }
  // Uniform calls state the block size even where no block travels (one count, one type): a
  // rank without neighbours may still forward blocks of a combining plan. The address is not
  // significant there (a program with no neighbours may pass NULL).
  if (local.ok() && spec.uniform && sizes.hi[0] < 0) {
    BlockSpec stated = spec.send[0];
    stated.addr = &stated;
    std::int64_t bytes = 0;
    if (check_block(stated, "send", 0, &bytes).ok()) sizes.account(0, bytes, spec.send[0]);
  }
  for (std::size_t k = 0; k < sizes.hi.size() && local.ok(); ++k)
    if (sizes.hi[k] >= 0 && sizes.lo[k] != sizes.hi[k]) local = size_mismatch(spec, static_cast<int>(k), sizes.lo[k], sizes.hi[k]);
  return local;
}

// One reduction agrees on errors, block sizes (max and -min of every block's size), strides
// and the Info options, so a bad argument on one rank is an error on every rank. Afterwards
// `sizes` holds everyone's sizes and `contiguous` per key whether no rank has it strided (a
// block strided on any rank is priced as strided on every rank: the plan stays the same
// everywhere).
MpiStatus agree_on_sizes(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options, bool persistent,
                         const MpiStatus& local, BlockSizes& sizes, std::vector<bool>* contiguous,
                         std::vector<std::uint64_t>* all_held) {
  const std::size_t keys = sizes.hi.size();
  std::vector<std::int64_t> agree(1 + 2 * keys);
  agree[0] = local.ok() ? 0 : local.code;
  for (std::size_t k = 0; k < keys; ++k) {
    agree[1 + 2 * k] = local.ok() ? sizes.hi[k] : -1;
    agree[2 + 2 * k] = local.ok() && sizes.hi[k] >= 0 ? -sizes.lo[k] : std::numeric_limits<std::int64_t>::min();
  }
  agree.insert(agree.end(), sizes.strided.begin(), sizes.strided.end());
  const std::int64_t fingerprint = options_fingerprint(options);
  agree.push_back(fingerprint);
  agree.push_back(-fingerprint);
  std::vector<std::int64_t> all;
  MpiStatus agreed = agree_on(nc, persistent, agree, &all, all_held);
  if (!agreed.ok()) return agreed;
  if (all[0] != 0) return agreed_error(local, static_cast<int>(all[0]));
  if (all[all.size() - 2] != -all[all.size() - 1])
    return agreed_status(mpi_error(MPI_ERR_INFO_VALUE, "ranks passed different cartplan Info options to this collective"));
  for (std::size_t k = 0; k < keys; ++k) {
    sizes.hi[k] = all[1 + 2 * k];
    if (sizes.hi[k] < 0) continue;  // no rank uses this block (its -min entry is the sentinel)
    sizes.lo[k] = -all[2 + 2 * k];
    if (sizes.lo[k] != sizes.hi[k]) return agreed_status(size_mismatch(spec, static_cast<int>(k), sizes.lo[k], sizes.hi[k]));
  }
  contiguous->assign(keys, true);
  for (std::size_t k = 0; k < keys; ++k) (*contiguous)[k] = all[1 + 2 * keys + k] == 0;
  return {};
}

// Planning after the agreement: running out of memory is this rank's MPI_ERR_NO_MEM (the caller
// agrees on it next), not an exception that leaves the other ranks in that agreement. The test
// failure is read at persistent init only (a set-up step, never per call).
template <class Plan>
MpiStatus planning(ExchangeKind kind, Plan&& plan) {
  return out_of_memory_as_error("planning the exchange", [&] {
    if (kind == ExchangeKind::kPersistent) inject_out_of_memory("plan-after-agreement");
    return plan();
  });
}

}  // namespace

MpiStatus settle(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options, ExchangeKind kind, Settlement* out) {
  using Kind = ExchangeKind;
  if (extended_op(spec.op)) return settle_extended(nc, spec, options, kind, out);
  const int t = nc.nbh().size();
  const bool one_size = spec.op == ir::Op::kAllgather || spec.uniform;
  const int keys = one_size ? 1 : t;  // sizes that must be the same everywhere
  const bool collective = kind == Kind::kPersistent || agrees_every_call(nc, spec, options);

  out->send_used.assign(spec.send.size(), 1);
  out->recv_used.assign(t, 1);
  BlockSizes sizes(keys, collective);
  const MpiStatus local = check_local_blocks(nc, spec, out->send_used, out->recv_used, sizes);
  std::vector<std::uint64_t> all_held;
  // Contiguity is known alike on every rank only after an agreement: without one the optimizer
  // assumes contiguous blocks, as every rank can.
  std::vector<bool> contiguous;
  if (collective) {
    MpiStatus agreed = agree_on_sizes(nc, spec, options, kind == Kind::kPersistent, local, sizes, &contiguous, &all_held);
    if (!agreed.ok()) return agreed;
  } else if (!local.ok()) {
    return local;  // default mode: each rank reports its own arguments
  }

  out->block_bytes = sizes.hi;
  // Without agreement, a rank knows the size of a v/w block only if it sends or receives it.
  // On a grid with a non-periodic dimension some rank may have to forward a block it does not
  // own, or would choose the plan from other sizes than its neighbours: there the default mode
  // runs the direct plan, which needs neither. An explicit combining request agrees instead
  // (a collective on every call: use the persistent form to pay it once).
  Options chosen = options;
  if (!collective && !one_size && !nc.all_periodic()) chosen.algo = engine::AlgoChoice::kDirect;
  // The optimizer sees every block's own size (faces and corners), not their mean.
  out->contiguous = contiguous;
  out->past_agreement = collective;
  MpiStatus planned = planning(kind, [&] { return nc.plan_for(spec.op, chosen, out->block_bytes, &out->entry, -1, contiguous); });
  if (!planned.ok()) return planned;
  if (kind == Kind::kPersistent) {
    out->lane = nc.shared()->lanes.first_free(all_held);
    if (out->lane < 0)
      return mpi_error(MPI_ERR_NO_MEM, "more than " + std::to_string(nc.shared()->lanes.persistent_lanes()) +
                                           " persistent requests are alive on this communicator; free some first");
  } else if (kind == Kind::kBlocking) {
    out->lane = Lanes::blocking_lane();
  }
  return {};
}

// Reductions and rooted ops: one block size for the whole call, the root and the options.
MpiStatus settle_extended(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options, ExchangeKind kind,
                          Settlement* out) {
  using Kind = ExchangeKind;
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
    std::vector<std::int64_t> agree{local.ok() ? 0 : local.code,
                                    local.ok() ? hi : -1,
                                    local.ok() && hi >= 0 ? -lo : std::numeric_limits<std::int64_t>::min(),
                                    local.ok() ? spec.root : std::numeric_limits<std::int64_t>::min(),
                                    local.ok() ? -std::int64_t{spec.root} : std::numeric_limits<std::int64_t>::min(),
                                    fp,
                                    -fp};
    std::vector<std::int64_t> all;
    std::vector<std::uint64_t> all_held;
    MpiStatus agreed = agree_on(nc, kind == Kind::kPersistent, agree, &all, &all_held);
    if (!agreed.ok()) return agreed;
    if (all[0] != 0) return agreed_error(local, static_cast<int>(all[0]));
    if (all[5] != -all[6]) return mpi_error(MPI_ERR_INFO_VALUE, "ranks passed different cartplan Info options to this collective");
    if (all[3] != -all[4])
      return mpi_error(MPI_ERR_ROOT, "ranks passed different roots to this collective (from " + std::to_string(-all[4]) +
                                         " to " + std::to_string(all[3]) + ")");
    if (all[1] != -all[2]) return mismatch(-all[2], all[1]);
    size = all[1];
    if (kind == Kind::kPersistent) {
      out->lane = nc.shared()->lanes.first_free(all_held);
      if (out->lane < 0)
        return mpi_error(MPI_ERR_NO_MEM, "more than " + std::to_string(nc.shared()->lanes.persistent_lanes()) +
                                             " persistent requests are alive on this communicator; free some first");
    }
  } else if (!local.ok()) {
    return local;  // default mode: each rank reports its own arguments
  }
  if (kind == Kind::kBlocking) out->lane = Lanes::blocking_lane();
  assert(size >= 0 && "every extended op has a significant block size on every rank");
  out->block_bytes.assign(1, size);
  out->past_agreement = collective;
  return planning(kind, [&] { return nc.plan_for(spec.op, options, size, &out->entry, spec.root); });
}

}  // namespace cartplan::mpi
