// Where processes live: which ranks of a Cartesian grid share a node, and how much of a round's
// traffic leaves a node. The model (cost_model.h) prices a rank's messages and bytes as if the
// rank had the network to itself; on a cluster the 16-64 ranks of a node share its link to the
// network. Block placement is modelled: ranks in blocks of `ranks_per_node` consecutive ranks
// per node (how batch schedulers and mpirun fill nodes; MPI_Cart_create without reordering keeps
// it), which for a row-major grid makes a node a slab of the last dimensions. The MPI backend
// learns ranks_per_node at creation (MPI_Comm_split_type); 0 means "every rank on one node".
//
//   Result<Grid> g = Grid::create({16, 16}, {true, true});
//   std::shared_ptr<const ShiftTraffic> t = shift_traffic(*g, 16, {1, 0});
//   t->off_share;        // 1: every rank's +1 peer in dimension 0 is on another node
//   t->node_out[3];      // 16: node 3's ranks that send off-node in such a round
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "engine/cost_model.h"
#include "engine/grid.h"
#include "ir/plan.h"

namespace cartplan::engine {

// The traffic of one round that every process sends to its peer at +shift (and receives from
// its peer at -shift), counted in processes.
struct ShiftTraffic {
  // The share of all processes whose peer at +shift exists and is on another node.
  double off_share = 0;
  // Per node: how many of its processes send to a peer on another node (peer at +shift) and
  // how many receive from one (peer at -shift). A round of b bytes per message pushes
  // b * node_out[k] bytes out of node k and b * node_in[k] into it.
  std::vector<double> node_out, node_in;
};

// The number of nodes of `grid` under block placement (the last one may be partial).
int node_count(const Grid& grid, int ranks_per_node);

// The traffic of a round with `shift` on `grid` with `ranks_per_node` >= 1 consecutive ranks per
// node. Exact: every rank is visited once (O(size * ndims)); results are cached per process.
std::shared_ptr<const ShiftTraffic> shift_traffic(const Grid& grid, int ranks_per_node, const Offset& shift);

// Per phase and round of `plan`: its shift's traffic. Empty when `ranks_per_node` is 0, the
// grid is unknown or of another dimension, or one node holds every rank: no round leaves a node.
using RoundTraffic = std::vector<std::vector<std::shared_ptr<const ShiftTraffic>>>;
RoundTraffic round_traffic(const ir::Plan& plan, const std::optional<Grid>& grid, int ranks_per_node);

// Adds a program's placement counts to Features (cost_model.h), send by send and phase by
// phase: each send of the representative process counts off-node with its shift's off_share,
// and per phase the busiest node's link carries the sum over its sends of bytes x that node's
// off-node processes (the larger direction). Every process sends alike in a round. Each phase
// with sends also gets its sides (Features::sides): a send's own counts `one` (those of one
// message: messages 1, its wire bytes and step) with the share of processes that send it within
// their node (its weight minus off_share) and to another node (off_share, with the off-node
// counts and the phase's node-link bytes).
//
//   PlacementCounter c;
//   for (each phase) { for (each send) c.add(*traffic, bytes, weight, one, f); c.end_phase(f); }
class PlacementCounter {
 public:
  void add(const ShiftTraffic& t, double bytes, double weight, const Features& one, Features& f);
  void end_phase(Features& f);

 private:
  std::vector<double> out_, in_;
  PhaseSides sides_;
  bool sends_ = false;
};

// to += w x one, term by term (kCostTerms' counts).
void add_scaled(Features& to, const Features& one, double w);

}  // namespace cartplan::engine
