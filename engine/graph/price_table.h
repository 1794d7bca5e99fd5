// The price table behind a graph communicator's agreed choice of algorithm: every rank prices
// its own schedule of each candidate (linear, pairing, cumulative, grid on the communicator's
// virtual grids grid_dims(p, 2), (p, 3), (p, 4) and the one with the most dimensions,
// grid_dims(p, kMaxGridD): the binary hypercube for p = 2^k) for both operations at block
// sizes 0, 1, 2, 4, ..., 2^24 bytes (price.h's schedule_us); one max-reduction of the table (done
// by the caller, over MPI) gives every rank the same max-over-ranks prices, from which any block
// size is priced by interpolation without talking again. Used by the MPI backend's graph auto
// (backends/mpi/graph_comm.h) and by the drop-in's verdicts (backends/interpose).
//
//   PriceTable t{};
//   add_prices(GraphOp::kAllgather, {GraphAlgorithm::kLinear}, my_linear_schedule, model, &t);
//   add_prices(GraphOp::kAllgather, {GraphAlgorithm::kGrid, 3}, my_3d_grid_schedule, model, &t);
//   ...                                                    // MPI_Allreduce(MAX) of t
//   CandidatePrices us = table_prices(t, GraphOp::kAllgather, 24);
//   TableCandidate c = pick_from_prices(us);              // graph auto's rule (kGraphGain)
#pragma once

#include <array>
#include <cstdint>

#include "engine/cost_model.h"
#include "engine/graph/grid.h"
#include "ir/graph/plan.h"

namespace cartplan::engine::graph {

// Sizes of the table: 0, then 2^0 .. 2^24 bytes.
inline constexpr int kPriceTableSizes = 26;
inline constexpr int kPriceCandidates = 7;
// [op][candidate][size]: microseconds (max over ranks once reduced).
using PriceTable = std::array<double, 2 * kPriceCandidates * kPriceTableSizes>;
// Linear, pairing, cumulative, grid 2-D, 3-D, 4-D, most-D (candidate_index order).
using CandidatePrices = std::array<double, kPriceCandidates>;

// A row of the table: an algorithm and, for grid, the d of its virtual grid grid_dims(p, d)
// (2, 3, 4, or kMaxGridD for the most-D row; 0 for the other algorithms). The 3-D (4-D) row is a
// candidate only where grid_dims(p, 3) (grid_dims(p, 4)) really has 3 (4) dimensions, the most-D
// row only where p's factorization has more than 4 factors; the 2-D row is the 1-D grid for a
// prime p. More dimensions: fewer messages per rank (at most the sum of extents - 1 each way),
// each alltoall block forwarded over more hops (more bytes): the 4-D and most-D grids pay at
// small blocks (bench/results/smpi/graph_hcube.md).
struct TableCandidate {
  ir::graph::GraphAlgorithm algorithm = ir::graph::GraphAlgorithm::kLinear;
  int grid_d = 0;
  friend bool operator==(const TableCandidate&, const TableCandidate&) = default;
};

std::int64_t price_table_bytes(int i);
// Grid with grid_d 3 or 4 is its row, above 4 the most-D row, else the 2-D row.
int candidate_index(const TableCandidate& c);
TableCandidate candidate_at(int index);

// Fills the row of (op, c) with this rank's price of `schedule` at every table size.
void add_prices(ir::graph::GraphOp op, const TableCandidate& c, const ir::graph::RankSchedule& schedule,
                const CostModel& model, PriceTable* table);

// The candidates' prices at `block_bytes`: linear interpolation between two table sizes
// (the model's terms are affine in the bytes between its thresholds), extrapolated beyond 2^24
// from the last two.
CandidatePrices table_prices(const PriceTable& table, ir::graph::GraphOp op, std::int64_t block_bytes);

// The cheapest combining candidate (pairing, cumulative, grid 2-D, 3-D, 4-D or most-D; on ties the earlier of
// them). A row nobody priced (0) is not a candidate: the caller's table holds only what it priced.
TableCandidate cheaper_combining(const CandidatePrices& us);

// `us` with every grid row's price dropped (0: not a candidate). Grid relays blocks through
// arbitrary ranks (ranks without edges too), so every relaying rank must know the sizes; only a
// persistent init agrees on them (backends/mpi/graph_collective.cc: one size over the ranks with
// edges, which the ranks without edges adopt, or a v form's size pass). Every other automatic
// choice prices without grid: ranks deciding from their own sizes would pick differently.
CandidatePrices without_grid(CandidatePrices us);

// `us` with the grid rows of the other d dropped (Info cartplan_grid_dims): only the 2-D grid for
// grid_d 2, only the 3-D grid for 3, only the 4-D grid for 4, only the most-D grid for 5 or more;
// 0 keeps them all. What auto picks from, for allgather and alltoall alike (the 4-D and most-D
// rows included for both).
CandidatePrices only_grid_d(CandidatePrices us, int grid_d);

// Graph auto's rule (choose.h): the cheaper combining candidate if it is at least kGraphGain
// cheaper than linear, else linear.
TableCandidate pick_from_prices(const CandidatePrices& us);

}  // namespace cartplan::engine::graph
