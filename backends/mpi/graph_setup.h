// Seed 003's distributed pattern construction over MPI: this rank's RankBuilder
// (engine/graph/setup_rank.h) with its messages sent and received as point-to-point messages
// among neighbours, friends and partners only. Collective over `comm` in the sense that every
// rank of the graph must run it at the same point (it is called where a graph communicator's
// state or a persistent request is created, never per call); no global collective.
//
//   SetupChannel channel(setup_comm, tag_ub);
//   RankPattern p;
//   SetupCounts c;
//   MpiStatus s = channel.construct(rank, edges, PairingOptions{.theta = 2}, &p, &c);
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <vector>

#include "backends/mpi/status.h"
#include "engine/graph/pattern.h"
#include "engine/graph/setup_message.h"
#include "ir/graph/topology.h"

namespace cartplan::mpi {

// What this rank exchanged.
struct SetupCounts {
  std::int64_t sent = 0, received = 0;  // messages
  std::int64_t sent_bytes = 0;
};

// The set-up messages of one graph communicator: its private communicator, carrying nothing
// else (messages are received with MPI_ANY_SOURCE and MPI_ANY_TAG), and the constructions run
// on it one after another (pairing, then cumulative, per theta). Every rank runs them in the
// same order, so the k-th construction has the same sequence number everywhere; it travels in
// the tag, because a rank that finished construction k may already send messages of k+1 to a
// rank still in k: those are kept here until their construction runs.
class SetupChannel {
 public:
  SetupChannel(MPI_Comm comm, std::int64_t tag_ub);
  MPI_Comm comm() const { return comm_; }
  MpiStatus construct(int rank, const ir::graph::RankEdges& edges, const engine::graph::PairingOptions& options,
                      engine::graph::RankPattern* out, SetupCounts* counts);

 private:
  MpiStatus receive(int rank, bool block, std::vector<engine::graph::SetupMessage>* inbox);
  MPI_Comm comm_;
  int slots_ = 1;  // sequence numbers in the tag space (they wrap around)
  int seq_ = 0;    // of the running construction, modulo slots_
  std::map<int, std::vector<engine::graph::SetupMessage>> early_;  // by sequence number
};

}  // namespace cartplan::mpi
