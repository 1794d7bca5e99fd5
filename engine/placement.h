// Where processes live: which ranks of a Cartesian grid share a node, and how much of a round's
// traffic leaves a node. The model (cost_model.h) prices a rank's messages and bytes as if the
// rank had the network to itself; on a cluster the 16-64 ranks of a node share its link to the
// network. Two placements are modelled (Placement below):
//  - block: ranks in blocks of R consecutive ranks per node (how batch schedulers and mpirun fill
//    nodes by default; MPI_Cart_create without reordering keeps it), which for a row-major grid
//    makes a node a slab of the last dimensions;
//  - cyclic: rank r on node r mod N (`mpirun --map-by node`, Slurm --distribution=cyclic, and
//    SMPI's default without a hostfile on multi-core hosts); the first p mod N nodes hold one
//    rank more. A node is then a strided set of ranks, and most shifts leave it.
// The MPI backend learns the placement at creation (MPI_Comm_split_type, node_map.h); an unknown
// Placement (the default) means "every rank on one node", or a pattern that is neither.
//
//   Result<Grid> g = Grid::create({16, 16}, {true, true});
//   std::shared_ptr<const ShiftTraffic> t = shift_traffic(*g, Placement::block(16), {1, 0});
//   t->off_share;        // 1: every rank's +1 peer in dimension 0 is on another node
//   t->node_out[3];      // 16: node 3's ranks that send off-node in such a round
//   shift_traffic(*g, Placement::cyclic(4), {0, 1})->off_share;  // 1: r + 1 is on the next node
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/cost_model.h"
#include "engine/grid.h"
#include "ir/plan.h"

namespace cartplan::engine {

// Which node each rank of a communicator of `size` ranks lives on. A value: compare with ==.
struct Placement {
  // Block: R >= 1 consecutive ranks per node (the last node may hold fewer); 0 with
  // cyclic_nodes 0: unknown, or one node (no placement counts).
  int ranks_per_node = 0;
  // Cyclic: rank r on node r mod N, N >= 2 (0: not cyclic; then ranks_per_node is 0).
  int cyclic_nodes = 0;

  Placement() = default;
  // Block placement with `ranks_per_node` ranks per node (0: unknown), as a bare int said before.
  Placement(int ranks_per_node) : ranks_per_node(ranks_per_node) {}  // NOLINT: implicit on purpose
  static Placement block(int ranks_per_node) { return Placement(ranks_per_node); }
  static Placement cyclic(int nodes) {
    Placement p;
    p.cyclic_nodes = nodes;
    return p;
  }

  bool is_cyclic() const { return cyclic_nodes > 0; }
  // Whether placement is known and puts `size` ranks on more than one node.
  bool spans_nodes(int size) const;
  // The number of nodes holding `size` ranks (>= 1; placement known).
  int node_count(int size) const;
  // The node of `rank` (placement known).
  int node_of(int rank) const { return is_cyclic() ? rank % cyclic_nodes : rank / ranks_per_node; }
  // The most ranks one node holds among `size` (block: R; cyclic: ceil(size / N)).
  int largest_node(int size) const;
  // "16 ranks per node (block)", "cyclic over 4 nodes", "unknown".
  std::string describe() const;

  friend bool operator==(const Placement& a, const Placement& b) {
    return a.ranks_per_node == b.ranks_per_node && a.cyclic_nodes == b.cyclic_nodes;
  }
};

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

// The number of nodes of `grid` under `placement` (known; block's last node may be partial).
int node_count(const Grid& grid, const Placement& placement);

// The traffic of a round with `shift` on `grid` under `placement` (known). Exact: every rank is
// visited once (O(size * ndims)); results are cached per process.
std::shared_ptr<const ShiftTraffic> shift_traffic(const Grid& grid, const Placement& placement, const Offset& shift);

// Per phase and round of `plan`: its shift's traffic. Empty when `placement` is unknown, the
// grid is unknown or of another dimension, or one node holds every rank: no round leaves a node.
using RoundTraffic = std::vector<std::vector<std::shared_ptr<const ShiftTraffic>>>;
RoundTraffic round_traffic(const ir::Plan& plan, const std::optional<Grid>& grid, const Placement& placement);

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
