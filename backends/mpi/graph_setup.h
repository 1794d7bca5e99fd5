// Seed 003's distributed pattern construction over MPI: this rank's RankBuilder
// (engine/graph/setup_rank.h) with its messages sent and received as point-to-point messages
// among neighbours, friends and partners only; and the grid's (engine/graph/grid_setup.h), among
// the ranks of this rank's grid lines. Collective over `comm` in the sense that every
// rank of the graph must run it at the same point (once per pattern and communicator, at the
// first call or persistent init that needs it); no global collective.
//
//   SetupChannel channel(private_comm, tag_ub);
//   RankPattern p;
//   SetupCounts c;
//   MpiStatus s = channel.construct(rank, edges, PairingOptions{.theta = 2}, &p, &c);
//   GridPattern g;
//   s = channel.construct_grid(rank, grid_dims(size, 2), edges, &g, &c);  // every rank of the communicator
//   int verdict = 0, my_class = s.ok() ? 0 : s.code;  // no agreement follows: spread the outcome
//   bool room = true;
//   try { channel.reserve_sweep(grid_dims(size, 2)); }
//   catch (const std::bad_alloc&) { room = false; my_class = std::max(my_class, MPI_ERR_NO_MEM); }
//   s = channel.agree_grid(rank, grid_dims(size, 2), my_class, room, &verdict, &c);
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <map>
#include <vector>

#include "backends/mpi/status.h"
#include "engine/graph/grid.h"
#include "engine/graph/grid_verdict.h"
#include "engine/graph/pattern.h"
#include "engine/graph/setup_message.h"
#include "ir/graph/topology.h"

namespace cartplan::mpi {

// What this rank exchanged.
struct SetupCounts {
  std::int64_t sent = 0, received = 0;  // messages
  std::int64_t sent_bytes = 0;
};

// The MPI tag every set-up message travels on: the communicator's MPI_TAG_UB. The graph
// collectives' own messages share the private communicator (GraphComm) and use tags of their
// lanes only, which GraphShared lays out with Lanes(tag_ub - 1): every lane tag (round * lanes
// + lane, round < max_rounds = (tag_ub - 1) / lanes), and the one above them, is <= tag_ub - 1.
// Set-up receives name this tag (MPI_ANY_SOURCE, never MPI_ANY_TAG) and every receive or probe
// of the collectives names a lane tag and a peer, so neither side can match the other's
// messages, whatever is in flight in whatever order.
int setup_tag(std::int64_t tag_ub);

// The set-up messages of one graph communicator, on its private communicator and setup_tag
// (received with MPI_ANY_SOURCE on that tag), and the constructions run on it one after another
// (pairing, cumulative per theta, grid). Every rank runs them in the same order, so the k-th
// construction has the same sequence number everywhere; it travels in the message's set-up tag
// (its first word), because a rank that finished construction k may already send messages of
// k+1 to a rank still in k: those are kept here until their construction runs.
class SetupChannel {
 public:
  SetupChannel(MPI_Comm comm, std::int64_t tag_ub);
  MPI_Comm comm() const { return comm_; }
  MpiStatus construct(int rank, const ir::graph::RankEdges& edges, const engine::graph::PairingOptions& options,
                      engine::graph::RankPattern* out, SetupCounts* counts);
  // The grid's construction (grid_setup.h) on the virtual grid `dims` (their product is the
  // communicator's size): collective over the whole communicator, every rank takes part, also
  // one without edges. Round k: one MPI_Isend to each line peer in dimension k (empty ones
  // too), then exactly dims[k] - 1 messages of round k from them, tag = (construction, round).
  MpiStatus construct_grid(int rank, const std::vector<int>& dims, const ir::graph::RankEdges& edges,
                           engine::graph::GridPattern* out, SetupCounts* counts);
  // The grid construction's verdict sweep (engine/graph/grid_verdict.h) on the same `dims`,
  // after construct_grid, for callers that have no agreement after the construction: `code` is
  // this rank's error class from it (0: it has the pattern); *verdict gets the largest class of
  // any rank, the same on every rank. Collective over the whole communicator like
  // construct_grid (its own sequence number; round k: one one-word message to each line peer of
  // dimension k, then dims[k] - 1 words from them); a rank whose construction failed runs it
  // too. `room`: reserve_sweep(dims) succeeded beforehand; then the words go by MPI_Isend,
  // otherwise (this rank ran out of memory: its `code` says so) one line peer after the other
  // by MPI_Sendrecv, in increasing coordinate, which needs no request. Either way nothing
  // allocates from the first word sent to the verdict (the words arrive in fixed frames), so
  // only MPI itself can fail, and that is all it returns.
  MpiStatus agree_grid(int rank, const std::vector<int>& dims, int code, bool room, int* verdict, SetupCounts* counts);
  // The room agree_grid's sends need on `dims` (a request per line peer); may throw std::bad_alloc.
  void reserve_sweep(const std::vector<int>& dims);

  // A message as it arrived: sender, set-up tag, integers (decoded by the construction it belongs to).
  struct Raw {
    int from = 0, tag = 0;
    std::vector<int> words;
  };

 private:
  MpiStatus receive(bool block, std::vector<Raw>* inbox);
  MpiStatus take_round(int round, std::size_t want, std::vector<Raw>* held, std::vector<Raw>* mine);
  MpiStatus post_markers(int rank, const std::vector<int>& dims, int round, std::size_t first, int code, std::vector<MPI_Request>* requests);
  // The grid's markers in flight (post_markers): one frame per round, sent to each line peer of
  // the round; fixed, so that sending them allocates nothing.
  static constexpr int kMaxGridRounds = 32;
  std::array<std::array<int, 3>, kMaxGridRounds> markers_{};
  // The verdict sweep's words in flight (agree_grid): one frame per round; the room for its
  // sends (reserve_sweep); and the sweep's steps.
  std::array<std::array<int, 3>, kMaxGridRounds> verdicts_{};
  std::vector<MPI_Request> verdict_requests_;
  MpiStatus sweep_round(engine::graph::GridVerdict* v, bool room, std::vector<Raw>* held, SetupCounts* counts);
  MpiStatus sweep_word(const int* frame, const MPI_Status& status, int round, int* word) const;
  std::vector<Raw> take_early();
  MPI_Comm comm_;
  int frame_tag_;  // setup_tag
  int slots_ = 1;  // sequence numbers in a set-up tag (they wrap around)
  int seq_ = 0;    // of the running construction, modulo slots_
  std::map<int, std::vector<Raw>> early_;  // by sequence number
};

}  // namespace cartplan::mpi
