// What a call asks an exchange to move: the caller's blocks (ExchangeSpec), the few words that
// identify a repeated call (CallKey), and the kind of call (ExchangeKind). Built by specs.h and
// reduce_specs.h from the API's arguments; read by settle, measure and build.
//
//   ExchangeSpec spec;
//   spec.op = ir::Op::kAlltoall;
//   spec.send = {{sendbuf, 1, MPI_INT}, ...};   // one per neighbour
//   spec.recv = {{recvbuf, 1, MPI_INT}, ...};
//   spec.uniform = true;                        // one count and datatype for every block
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <vector>

#include "backends/mpi/status.h"
#include "ir/plan.h"

namespace cartplan::mpi {

// Blocking: one call at a time on the blocking lane. Non-blocking: a lane per call in sequence.
// Persistent: collective init (MPI-4), a lane held until the request is freed (lanes.h).
enum class ExchangeKind { kBlocking, kNonblocking, kPersistent };

// One block of a user buffer: `count` elements of `type` at absolute address `addr`.
struct BlockSpec {
  const void* addr = nullptr;
  MPI_Count count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
};

struct ExchangeSpec {
  ir::Op op = ir::Op::kAlltoall;
  std::vector<BlockSpec> send;  // alltoall: one per neighbour; allgather: exactly one
  std::vector<BlockSpec> recv;  // one per neighbour
  // All blocks have one count and datatype by the collective's signature (Cart_alltoall): one
  // size for every block, known on every rank. Follows from which function was called.
  bool uniform = false;
  // Set when the caller's arguments could not even be turned into blocks (NULL arrays, negative
  // counts, MPI_IN_PLACE...). In checking mode the error still takes part in the agreement so
  // that every rank returns an error.
  MpiStatus invalid;

  // Reductions and rooted ops only (extended_op(op); built by reduce_specs.h, settled by
  // settle_extended). Every block has the call's one size; recv has one block for allreduce,
  // reduce_scatter and reduce, t for bcast, gather and scatter.
  MPI_Op reduce_op = MPI_OP_NULL;  // allreduce, reduce_scatter, reduce
  int root = -1;                   // rooted ops: the root's rank in the Cartesian communicator
  BlockSpec unit;                  // count and datatype of one block in cartplan's scratch memory
  std::vector<char> recv_user;     // per recv block: the user's memory (else scratch, if written)
  // This rank's block size in bytes from its significant send / recv arguments (-1: none).
  std::int64_t send_bytes = -1, recv_bytes = -1;
};

// The arguments of a call with one count and datatype per side (Cart_alltoall, Cart_iallgather,
// the drop-in's MPI_Neighbor_alltoall, ...) in a few words: the same words mean the same
// buffers, counts and datatypes, so a repeated call can run (blocking) or restart
// (non-blocking, from the pool) the exchange built before without looking at any block.
struct CallKey {
  std::array<std::uintptr_t, 7> words{};
};

// The CallKey of a call: `code` names the collective (and, where both exist, its count type),
// `args` are its six raw arguments in order (pointers, counts, datatype and op handles).
//
//   CallKey k = uniform_call_key(1, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
template <class... Args>
CallKey uniform_call_key(std::uintptr_t code, Args... args) {
  static_assert(sizeof...(Args) == 6, "a CallKey holds a code and six arguments");
  CallKey key;
  key.words = {code, (std::uintptr_t)(args)...};  // pointers and handles by value, counts as words
  return key;
}

}  // namespace cartplan::mpi
