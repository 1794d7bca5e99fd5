// EdgeMatch: reading the edge lists of an MPI distributed graph as a Cartesian neighbourhood,
// and the two block orders (send and receive) that make a cartplan plan deliver exactly what
// MPI's neighbourhood collectives deliver on that graph.
//
// MPI numbers blocks by list position: block k goes to destinations[k], block j comes from
// sources[j], and when several edges join the same two processes the k-th edge to a process
// matches the k-th edge from it, in list order. cartplan numbers blocks by neighbourhood index:
// block i goes to +N[i] and recv block i comes from -N[i] carrying that process's block i. The
// plan runs in cartplan's numbering over the canonical neighbourhood N (the multiset of
// relative offsets, sorted, duplicates adjacent); each rank maps its own list positions into
// it with EdgeOrder. Offsets are canonical: on a periodic dimension of size n the coordinate is
// reduced to (-n/2, n/2], so two edges reach the same process iff their offsets are equal, and
// the k-th copy of an offset in N is the k-th edge between the two processes on both sides.
//
//   OffsetCounts mine = count_offsets(dest_offsets);            // per rank, then merged:
//   OffsetCounts all = merge_counts(mine, theirs);              // max multiplicity (commutative)
//   std::vector<Offset> nbh = expand(all);
//   Result<EdgeOrder> order = match_edges(grid, me, nbh, dest_offsets, source_offsets);
//   // plan send block order->send[k] = user send block k; recv block order->recv[j] -> user block j
#pragma once

#include <utility>
#include <vector>

#include "engine/grid.h"
#include "ir/result.h"

namespace cartplan::engine {

// to - from on the grid: exact on non-periodic dimensions, reduced to (-n/2, n/2] on periodic
// ones. `from` and `to` are coordinates inside the grid.
Offset canonical_offset(const Grid& grid, const Coords& from, const Coords& to);

// A multiset of offsets: sorted by offset, each with its multiplicity (> 0).
using OffsetCounts = std::vector<std::pair<Offset, int>>;

OffsetCounts count_offsets(std::vector<Offset> offsets);
// Union with the larger multiplicity of each offset. Commutative and associative, so it can be
// an MPI reduction: boundary ranks of a mesh see subsets of N, the union is N.
OffsetCounts merge_counts(const OffsetCounts& a, const OffsetCounts& b);
// The neighbourhood: every offset repeated by its multiplicity, in sorted order.
std::vector<Offset> expand(const OffsetCounts& counts);

struct EdgeOrder {
  std::vector<int> send;  // user destination position k -> neighbourhood index
  std::vector<int> recv;  // user source position j -> neighbourhood index
};

// Checks that this rank's lists are the images of `nbh` (as a multiset: every offset whose
// target, resp. source, exists in the grid, with its multiplicity, in any order) and returns the
// block orders. `dest_offsets[k]` = canonical_offset(me, destination k); `source_offsets[j]` =
// canonical_offset(source j, me). An error names the first offset that does not fit.
Result<EdgeOrder> match_edges(const Grid& grid, const Coords& me, const std::vector<Offset>& nbh,
                              const std::vector<Offset>& dest_offsets, const std::vector<Offset>& source_offsets);

}  // namespace cartplan::engine
