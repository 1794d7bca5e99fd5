// Exchange: one bound plan realized with MPI derived datatypes and persistent point-to-point
// requests (seed 000, Listing 5). Created once (collectively), started many times.
//
// Every round becomes one MPI_Send_init/MPI_Recv_init pair whose datatype is a struct of the
// round's entries at absolute addresses (used with MPI_BOTTOM); phases are started with
// MPI_Startall and completed before the next phase starts. Temp slots are owned by the
// exchange and hold blocks as bytes (MPI_BYTE), which assumes a homogeneous system.
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
  // Runs phases until one is incomplete (or, if `block`, to the end); sets finished_ at the end.
  MpiStatus advance(bool block);
  MpiStatus run_copies();

  std::shared_ptr<const BoundPlanEntry> entry_;
  std::vector<MPI_Request> requests_;    // per phase: receives, then sends
  std::vector<std::size_t> phase_begin_;  // into requests_, with a final end
  std::vector<MPI_Datatype> owned_types_;
  std::vector<unsigned char> temp_;
  struct LocalCopy {
    BlockSpec from, to;
  };
  std::vector<LocalCopy> copies_;
  std::vector<unsigned char> pack_buffer_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::size_t phase_ = 0;
  bool phase_started_ = false;
  bool active_ = false;    // started and not yet completed by wait/test (MPI's notion)
  bool finished_ = false;  // all phases and copies done
};

}  // namespace cartplan::mpi
