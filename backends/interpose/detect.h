// Detection: whether a distributed-graph communicator is a Cartesian stencil, decided
// collectively right after MPI_Dist_graph_create[_adjacent] returned.
//
// Protocol (every rank, in this order; collective cost in brackets):
//  1. Local: read this rank's lists with MPI_Dist_graph_neighbors on the new communicator (so
//     reorder=1 and MPI_Dist_graph_create are covered: the ranks of the new communicator count),
//     find the cost model as the native API does (cost_model_locate.h), count the processes
//     that share this node [1: MPI_Comm_split_type], and list candidate grids, each with a map from graph rank to grid rank: the Info hints
//     cartplan_dims / cartplan_periods (row-major), the most recent MPI_Cart_create over the same
//     processes (its rank map), and MPI_Dims_create(p, d) for d = 1..4, all periodic, then all
//     non-periodic (row-major). For each candidate, the canonical offsets of this rank's edges.
//  2. One MPI_Allreduce (MAX, a few int64 per candidate) [1]: do all ranks have the same
//     candidates, can every rank place its neighbours on them, the largest degree, the most
//     oversubscribed node (its processes per core scale the model's phase term, policy.h), and
//     a hash of each rank's offset multiset (on a torus every rank has the same one); and the
//     vetoes: a rank whose lists could not be read, hold MPI_PROC_NULL, or whose cost model
//     does not load passes the communicator through on every rank.
//  3. For the first surviving candidate: an MPI_Allreduce with a commutative user op that
//     merges offset multisets (max multiplicity) gives the common neighbourhood N, boundary
//     ranks of meshes included [1]; each rank checks that its lists are exactly the existing
//     images of N (engine::match_edges) and an MPI_Allreduce (MIN) agrees, also on the options
//     (model and Info keys; they decide which calls are accelerated) [1]. On failure the
//     next candidate is tried the same way (2 more each).
//  4. The caller creates cartplan's internal communicator [1: MPI_Comm_dup, or MPI_Comm_split
//     when graph ranks are not row-major grid ranks].
// So an accelerated torus or mesh with a hint or an earlier MPI_Cart_create costs 5 collectives
// at creation, and nothing afterwards. Every decision is taken from agreed values, so all ranks
// accelerate or none does.
//
//   Detection det = detect(graph_comm, info);
//   if (det.accelerated) ... det.grid, det.coords, det.nbh, det.order; else det.why
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "backends/mpi/neighborhood_comm.h"
#include "engine/cost_model.h"
#include "engine/edge_match.h"
#include "engine/grid.h"

namespace cartplan::interpose {

struct Detection {
  bool accelerated = false;
  std::string why;          // when not accelerated: the reason (same on every rank)
  std::string grid_source;  // "Info hints", "MPI_Cart_create", "MPI_Dims_create"
  std::vector<int> dims, periods;
  std::vector<int> coords;
  int grid_rank = 0;
  bool row_major = true;  // graph rank == grid rank on every rank
  std::vector<ir::Offset> nbh;
  engine::EdgeOrder order;
  int indegree = 0, outdegree = 0;
  mpi::Options options;
  double per_core = 1.0;  // processes of the job per core on the fullest node (agreed), at least 1
  // Set once step 2 agreed that every rank read its lists and loaded its cost model, that
  // the graph has edges, that no rank turned the graph collectives off
  // (CARTPLAN_INTERPOSE_GRAPHS=0) and that every rank located the same cost model (the same on
  // every rank): a graph that is then not a stencil may still take the graph collectives
  // (graph_verdicts.h), priced with `model` (the located model, its phase term scaled for
  // oversubscription as for the stencil's verdicts). Otherwise `graph_refusal` says why (empty
  // when the graph collectives were turned off everywhere).
  bool graph_candidate = false;
  std::string graph_refusal;
  engine::CostModel model;
};

// Collective over `comm` (a distributed-graph communicator). Never fails the program: anything
// unexpected is "not accelerated" with the reason.
Detection detect(MPI_Comm comm, MPI_Info info);

}  // namespace cartplan::interpose
