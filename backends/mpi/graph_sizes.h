// The size pass of the v forms (allgatherv, alltoallv) on a graph: before a schedule that
// forwards blocks runs, every rank must know how large the blocks it keeps in temp slots are,
// but only their origins know. The pass runs the schedule once with sizes instead of data:
// phase by phase every message carries one 64-bit size per part, along exactly the schedule's
// edges (neighbours and pairing partners, no global collective), so each temp slot learns its
// block's size and each recv block's size is checked against what its sender has.
//
// Tags: lanes.tag(lane, kSizeRound + phase), above every phase's data tag, so a peer that is
// already sending the lane's data never matches a size message.
//
// A SizePass is a state machine that a blocking call or init runs to the end, and that a
// non-blocking request advances as part of its own progress (graph_exchange.h), so that
// Cart_graph_ineighbor_*v returns without waiting for its peers.
//
//   SizePass pass(shared, lane, schedule, send_bytes, recv_bytes);
//   MpiStatus s = pass.run();            // or: while (!pass.advance(false, false)) {...}
//   std::vector<std::int64_t> temps = pass.temp_bytes();
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "backends/mpi/graph_comm.h"
#include "backends/mpi/status.h"
#include "ir/graph/plan.h"

namespace cartplan::mpi {

// The first "round" of size messages in a lane's tags; schedules have fewer phases (at most
// 2 x 32 + 2 with seed 003's iteration cap).
inline constexpr int kSizeRound = 100;

// How many size passes this process has started (a test and benchmark hook: the steady state
// of blocking and non-blocking v calls starts none).
std::uint64_t size_passes_started();

class SizePass {
 public:
  // The schedule and the sizes are copied: the pass may outlive the call that made it.
  SizePass(GraphShared& shared, int lane, const ir::graph::RankSchedule& schedule, std::vector<std::int64_t> send_bytes,
           std::vector<std::int64_t> recv_bytes);
  ~SizePass();
  SizePass(const SizePass&) = delete;
  SizePass& operator=(const SizePass&) = delete;

  // Runs the pass to the end (every rank of the graph runs it at the same point), for a pass no
  // pending request owns (a blocking call, a persistent init): its waits advance every pending
  // cartplan request meanwhile (progressing_wait.h). In a blocking v call whose pattern exists
  // the pass is the call's first wait for its peers, and a peer may reach the call only once
  // this rank has advanced another of its requests.
  MpiStatus run();
  // Advances it: posts the next phase's messages and, unless `post_only`, completes what it
  // can (with `block`, the whole pass, blocking in MPI). A pending request that owns the pass
  // (GraphExchange::learn_sizes) blocks only when it is the process's only pending request, and
  // a progressing wait there would step that request again from inside its own step. True when done.
  bool advance(bool block, bool post_only);
  void set_lane(int lane) { lane_ = lane; }
  // Once done: each temp slot's size, and the first error (MPI_ERR_TRUNCATE for a recv block
  // whose sender's size differs, naming it; the pass still completes on every rank, so nobody
  // waits; or an MPI error, after which the pass stops).
  const std::vector<std::int64_t>& temp_bytes() const { return temps_; }
  const MpiStatus& error() const { return error_; }

 private:
  MpiStatus post(std::size_t phase);
  void take(std::size_t phase);
  GraphShared& shared_;
  int lane_;
  ir::graph::RankSchedule schedule_;
  std::vector<std::int64_t> send_, recv_, temps_;
  std::size_t phase_ = 0;
  bool posted_ = false;
  bool progressing_ = false;  // run(): blocking waits advance the other pending requests
  std::vector<std::vector<std::int64_t>> out_, in_;
  std::vector<MPI_Request> requests_;
  MpiStatus error_;
};

}  // namespace cartplan::mpi
