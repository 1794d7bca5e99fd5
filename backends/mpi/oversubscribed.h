// Whether a node runs more of a communicator's processes than it has cores for them: the
// cores are the union of the CPU affinity masks of the node's processes (a job bound to 4 of a
// node's 64 cores has 4), or the cores online where affinity cannot be read. The built-in cost
// model then prices a phase as a context switch (engine/cost_model.h, kOversubscribedPhaseUs);
// the drop-in scales its phase term by processes per core (backends/interpose/detect.cc).
//
//   int mine = 0;
//   int rc = node_oversubscribed(comm, &mine);  // collective over comm; mine: 0 or 1 for this rank's node
//   // agree on it (e.g. MPI_Allreduce with MPI_MAX) before planning with it
//   int on_node = 0, cores = 0;
//   rc = node_load(comm, &on_node, &cores);     // the numbers behind it
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace cartplan::mpi {

// *on_node: how many of `comm`'s processes share this rank's node (MPI_COMM_TYPE_SHARED);
// *cores: how many distinct CPUs their affinity masks allow together (at least 1). Collective
// over `comm` (once, at creation: a split and an allgather among the node's processes, through
// PMPI so that the drop-in can call it too); returns an MPI error code. Under SimGrid's SMPI
// (CARTPLAN_SMPI) both are 1 without asking: the simulated node's cores are not this machine's,
// and SMPI charges no context switches.
int node_load(MPI_Comm comm, int* on_node, int* cores);

// *oversubscribed: 1 if node_load finds more processes than cores on this rank's node, else 0.
int node_oversubscribed(MPI_Comm comm, int* oversubscribed);

// One process's part of node_load's exchange: its affinity mask (1024 CPUs, as cpu_set_t),
// then a word that is 1 if the mask could be read, else 0.
constexpr int kMaskWords = 16;
constexpr int kProcessWords = kMaskWords + 1;

// The number of CPUs in the union of the masks in `words` (kProcessWords per process), or
// `fallback` when some process could not read its mask or the union is empty.
int union_cores(const std::vector<std::uint64_t>& words, int fallback);

}  // namespace cartplan::mpi
