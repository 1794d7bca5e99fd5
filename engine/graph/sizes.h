// BlockSizes: the bytes of every block of a graph collective -- allgather one size per origin
// rank (MPI_Neighbor_allgather: all equal; allgatherv: each rank's own), alltoall one per edge
// (MPI_Neighbor_alltoall: all equal; alltoallv: per-edge counts, which both ends of an edge
// must agree on, as MPI requires). Looked up by block identity.
//
//   BlockSizes s = BlockSizes::uniform(GraphOp::kAlltoall, topology, 8);
//   BlockSizes v = BlockSizes::varied(GraphOp::kAllgather, topology, 64, /*seed=*/1);  // 0..64
//   std::int64_t b = s.bytes(BlockId{3, 5, 0});
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "ir/graph/topology.h"

namespace cartplan::engine::graph {

class BlockSizes {
 public:
  static BlockSizes uniform(ir::graph::GraphOp op, const ir::graph::Topology& t, std::int64_t bytes);
  // Every block `bytes`, without the graph: what one rank prices its own schedule with.
  static BlockSizes constant(ir::graph::GraphOp op, std::int64_t bytes);
  // Every block a pseudo-random size in [0, max_bytes] from `seed` (the v forms).
  static BlockSizes varied(ir::graph::GraphOp op, const ir::graph::Topology& t, std::int64_t max_bytes, std::uint64_t seed);

  ir::graph::GraphOp op() const { return op_; }
  std::int64_t bytes(const ir::graph::BlockId& b) const;
  // Mean over the caller's send blocks (for reports).
  double mean_bytes() const;

 private:
  static std::uint64_t key(const ir::graph::BlockId& b);
  ir::graph::GraphOp op_ = ir::graph::GraphOp::kAllgather;
  std::int64_t constant_ = -1;                            // >= 0: every block (constant())
  std::vector<std::int64_t> of_rank_;                     // allgather
  std::unordered_map<std::uint64_t, std::int64_t> of_edge_;  // alltoall: (origin, target, nth)
};

}  // namespace cartplan::engine::graph
