// Settle: what every rank must know alike before an exchange is built (block sizes, which
// blocks this rank uses, the plan, the lane), found from the call's arguments and, where the
// call is collective (persistent init, checking mode), agreed with one MPI_Allreduce. Blocking
// and non-blocking calls in the default mode settle locally.
//
//   Settlement settled;
//   MpiStatus s = settle(nc, spec, nc.options(), ExchangeKind::kPersistent, &settled);
//   // settled.entry: the plan every rank runs; settled.lane: a lane free on every rank
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "backends/mpi/exchange_spec.h"
#include "backends/mpi/neighborhood_comm.h"
#include "backends/mpi/status.h"

namespace cartplan::mpi {

// What every rank uses to build the exchange: block sizes, which blocks this rank uses, the
// plan and the lane.
struct Settlement {
  std::vector<std::int64_t> block_bytes;  // per block (v/w alltoall) or one; -1 where unknown here
  std::vector<char> send_used, recv_used;
  std::shared_ptr<const BoundPlanEntry> entry;
  int lane = 0;
  std::vector<bool> contiguous;  // agreed per size key (collective calls; empty otherwise)
  bool measured = false;         // measuring mode timed candidates for `entry` (exchange_measure.h)
  // The call agreed (persistent init, checking mode) and the agreement passed: a failure after
  // it (planning out of memory) is this rank's alone, and the rank must still make the
  // agreements that follow (measuring's, Exchange::confirm) for every rank to learn it.
  bool past_agreement = false;
};

// Checks the call's blocks and settles them (exchange_settle.cc); reductions and rooted ops
// (extended_op) go to settle_extended. Errors: this rank's (default mode) or the agreed class
// on every rank (collective calls), or, with out->past_agreement, this rank's after the
// agreement (running out of memory planning: MPI_ERR_NO_MEM).
MpiStatus settle(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options, ExchangeKind kind,
                 Settlement* out);
// The checks and agreement of reductions and rooted ops: one block size, the root and the
// options (exchange_settle.cc). Fills out's block_bytes, entry and lane.
MpiStatus settle_extended(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options, ExchangeKind kind,
                          Settlement* out);

// The error after an agreement: the agreed (largest) class, this rank's message if it had one.
MpiStatus agreed_error(const MpiStatus& local, int agreed_class);
// Whether a call must agree across ranks every time: in checking mode, and for v/w alltoall
// forced to combining on a grid with a non-periodic dimension (exchange_settle.cc).
bool agrees_every_call(const NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options);
// One agreement among the communicator's ranks: `all` = the element-wise MAX of every rank's
// `mine`; with `persistent`, `all_held` = the OR of the persistent lanes every rank holds.
MpiStatus agree_on(NeighborhoodComm& nc, bool persistent, const std::vector<std::int64_t>& mine,
                   std::vector<std::int64_t>* all, std::vector<std::uint64_t>* all_held);

}  // namespace cartplan::mpi
