// The reduction-aware part of the MPI executor: argument checks and agreement for allreduce,
// reduce_scatter and the rooted ops (bcast, gather, scatter, reduce), and the fast element-wise
// combines. Their memory layout (scratch blocks, staged combines) and the order of local steps
// are engine::lower()'s; building and running the exchange are exchange.cc's.
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

}  // namespace

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
  return nc.plan_for(spec.op, options, size, &out->entry, spec.root);
}

}  // namespace cartplan::mpi
