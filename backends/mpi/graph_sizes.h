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
//   std::vector<std::int64_t> temps;
//   MpiStatus s = learn_temp_sizes(shared, lane, schedule, send_bytes, recv_bytes, &temps);
#pragma once

#include <cstdint>
#include <vector>

#include "backends/mpi/graph_comm.h"
#include "backends/mpi/status.h"
#include "ir/graph/plan.h"

namespace cartplan::mpi {

// The first "round" of size messages in a lane's tags; schedules have fewer phases (at most
// 2 x 32 + 2 with seed 003's iteration cap).
inline constexpr int kSizeRound = 100;

// Every rank of the graph runs it at the same point (it talks to the schedule's peers). A recv
// block whose size differs from its sender's is MPI_ERR_TRUNCATE naming the block; the pass
// still completes on every rank, so nobody waits.
MpiStatus learn_temp_sizes(GraphShared& shared, int lane, const ir::graph::RankSchedule& schedule,
                           const std::vector<std::int64_t>& send_bytes, const std::vector<std::int64_t>& recv_bytes,
                           std::vector<std::int64_t>* temp_bytes);

}  // namespace cartplan::mpi
