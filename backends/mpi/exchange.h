// Exchange: one bound plan realized with MPI derived datatypes and persistent point-to-point
// requests (seed 000, Listing 5). Created once (collectively), started many times.
//
// Every round becomes one MPI_Send_init/MPI_Recv_init pair; phases are started with
// MPI_Startall and completed before the next phase starts. A round side with one contiguous
// block uses the user's memory directly; several contiguous blocks are packed into a staging
// buffer with memcpy; anything else is one struct datatype over the blocks at absolute
// addresses (MPI_BOTTOM). Temp slots live in the staging buffers of the rounds that receive
// them. Packed and staged data travel as MPI_BYTE, which assumes a homogeneous system.
//
//   ExchangeSpec spec = ...;                          // address, count, type per block
//   std::unique_ptr<Exchange> x;
//   MpiStatus s = Exchange::create(*nc, spec, nc->options(), &x);
//   for (...) { x->start(); x->wait(); }
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "backends/mpi/neighborhood_comm.h"
#include "backends/mpi/status.h"
#include "ir/plan.h"

namespace cartplan::mpi {

// One block of a user buffer: `count` elements of `type` at absolute address `addr`.
struct BlockSpec {
  const void* addr = nullptr;
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
};

struct ExchangeSpec {
  ir::Op op = ir::Op::kAlltoall;
  std::vector<BlockSpec> send;  // alltoall: one per neighbour; allgather: exactly one
  std::vector<BlockSpec> recv;  // one per neighbour
  // All blocks have one count and datatype by the collective's signature (Cart_alltoall): one
  // size to agree on instead of one per block. Must be the same on every rank (it is: it
  // follows from which function was called).
  bool uniform = false;
  // Set when the caller's arguments could not even be turned into blocks (NULL arrays, negative
  // counts...). create() still takes part in the agreement so that every rank returns an error.
  MpiStatus invalid;
};

class Exchange {
 public:
  // Collective over the neighbourhood communicator (one MPI_Allreduce): checks every block on
  // every rank, agrees on errors and block sizes (block i must have the same size everywhere),
  // picks the plan for the agreed block size, and builds datatypes and persistent requests.
  static MpiStatus create(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options,
                          std::unique_ptr<Exchange>* out);
  // A blocking call: agrees like create() every time, then reuses the exchange of the previous
  // blocking call on this communicator when buffers, counts, predefined datatypes and the plan
  // are unchanged (so repeated calls skip datatype and request construction).
  static MpiStatus run_blocking(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options);
  ~Exchange();
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  MpiStatus start();             // MPI_ERR_REQUEST if already active
  MpiStatus test(bool* done);    // progresses phase by phase without blocking
  MpiStatus wait();              // completes the exchange (no-op when inactive)
  bool active() const { return active_; }
  const ir::Plan& plan() const { return entry_->plan; }

 private:
  Exchange() = default;
  // What every rank agreed on: block sizes, which blocks this rank uses, and the plan.
  struct Agreement {
    std::vector<std::int64_t> block_bytes;  // per block (alltoall) or one (allgather)
    std::vector<char> send_used, recv_used;
    std::shared_ptr<const BoundPlanEntry> entry;
  };
  static MpiStatus agree(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options, Agreement* out);
  static MpiStatus build(NeighborhoodComm& nc, const ExchangeSpec& spec, const Agreement& agreed, std::int64_t tag_base,
                         std::unique_ptr<Exchange>* out);
  static std::int64_t tag_base(NeighborhoodComm& nc, const ir::Plan& plan, bool blocking);
  // Runs phases until one is incomplete (or, if `block`, to the end); sets finished_ at the end.
  MpiStatus advance(bool block);
  struct LocalCopy;
  MpiStatus run_local(const std::vector<LocalCopy>& copies);

  std::shared_ptr<const BoundPlanEntry> entry_;
  std::vector<MPI_Request> requests_;    // per phase: receives, then sends
  std::vector<std::size_t> phase_begin_;  // into requests_, with a final end
  std::vector<MPI_Datatype> owned_types_;
  std::vector<std::vector<unsigned char>> staging_;  // packed messages and temp slots
  struct Move {
    const void* from;
    void* to;
    std::size_t bytes;
  };
  static void move_bytes(const Move& m);
  std::vector<std::vector<Move>> pack_, unpack_;  // per phase: before start, after completion
  struct LocalCopy {
    BlockSpec from, to;
    std::size_t memcpy_bytes;  // > 0: both contiguous, a plain memcpy suffices; 0: MPI_Pack/Unpack
  };
  std::vector<LocalCopy> copies_;               // the plan's copies, after the last phase
  std::vector<std::vector<LocalCopy>> self_;    // per phase: rounds whose peer is this rank
  std::vector<unsigned char> pack_buffer_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::size_t phase_ = 0;
  bool phase_started_ = false;
  bool active_ = false;    // started and not yet completed by wait/test (MPI's notion)
  bool finished_ = false;  // all phases and copies done
};

}  // namespace cartplan::mpi
