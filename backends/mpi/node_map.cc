// Block placement of a communicator's processes on nodes, learned at creation (node_map.h).
#include "backends/mpi/node_map.h"

#include <climits>
#include <numeric>
#include <vector>

namespace cartplan::mpi {

// On any failure *mine stays "not block placement" (words[2] = 1): the reduction then agrees on
// R = 0 on every rank, and the caller still reaches it (no mismatched collectives).
int node_block_flags(MPI_Comm comm, NodeBlockFlags* mine) {
  *mine = NodeBlockFlags{};
  mine->words[2] = 1;
  int size = 0;
  int rc = PMPI_Comm_size(comm, &size);
  if (rc != MPI_SUCCESS) return rc;
  MPI_Comm node = MPI_COMM_NULL;
  rc = PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  if (rc != MPI_SUCCESS) return rc;
  int on_node = 1;
  MPI_Group node_group = MPI_GROUP_NULL, comm_group = MPI_GROUP_NULL;
  PMPI_Comm_size(node, &on_node);
  PMPI_Comm_group(node, &node_group);
  PMPI_Comm_group(comm, &comm_group);
  // The node's members as ranks of comm (a local call): consecutive iff member i is member 0 + i.
  std::vector<int> local(on_node), global(on_node, MPI_UNDEFINED);
  std::iota(local.begin(), local.end(), 0);
  rc = PMPI_Group_translate_ranks(node_group, on_node, local.data(), comm_group, global.data());
  PMPI_Group_free(&node_group);
  PMPI_Group_free(&comm_group);
  PMPI_Comm_free(&node);
  if (rc != MPI_SUCCESS) return rc;
  bool consecutive = true;
  for (int i = 0; i < on_node; ++i) consecutive = consecutive && global[i] == global[0] + i;
  const bool last = consecutive && global[0] + on_node == size;
  mine->words[0] = on_node;
  mine->words[1] = last ? INT_MIN : -on_node;
  mine->words[2] = consecutive ? 0 : 1;
  return MPI_SUCCESS;
}

int agreed_ranks_per_node(const int reduced[kNodeBlockWords], int size) {
  const int largest = reduced[0];
  if (reduced[2] != 0 || largest >= size || largest < 1) return 0;
  // Every node but the last has `largest` ranks (the smallest of them is -reduced[1]); the
  // nodes are disjoint runs of consecutive ranks, so they start at 0, R, 2R, ...
  if (reduced[1] != INT_MIN && -reduced[1] != largest) return 0;
  return largest;
}

int ranks_per_node(MPI_Comm comm, int* ranks_per_node) {
  *ranks_per_node = 0;
  int size = 0;
  NodeBlockFlags mine;
  // A rank that cannot learn its node still joins the reduction ("not block placement", so
  // every rank agrees on 0): only the reduction's own failure is an error.
  (void)node_block_flags(comm, &mine);
  int all[kNodeBlockWords] = {};
  const int rc = PMPI_Allreduce(mine.words, all, kNodeBlockWords, MPI_INT, MPI_MAX, comm);
  if (rc != MPI_SUCCESS) return rc;
  PMPI_Comm_size(comm, &size);
  *ranks_per_node = agreed_ranks_per_node(all, size);
  return MPI_SUCCESS;
}

}  // namespace cartplan::mpi
