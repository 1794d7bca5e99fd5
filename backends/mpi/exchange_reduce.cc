// The reduction-aware part of the MPI executor: which ops it covers (allreduce, reduce_scatter
// and the rooted ops bcast, gather, scatter, reduce) and the fast element-wise combines. Their
// checks and agreement are settle_extended's (exchange_settle.cc); their memory layout (scratch
// blocks, staged combines) and the order of local steps are engine::lower()'s; building and
// running the exchange are exchange.cc's.
#include <cstddef>
#include <cstdint>
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

}  // namespace cartplan::mpi
