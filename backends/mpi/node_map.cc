// Block or cyclic placement of a communicator's processes on nodes, learned at creation (node_map.h).
#include "backends/mpi/node_map.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace cartplan::mpi {

NodeBlockFlags node_words(const std::vector<int>& members, int size) {
  NodeBlockFlags mine;
  const int n = static_cast<int>(members.size());
  bool consecutive = true;
  for (int i = 0; i < n; ++i) consecutive = consecutive && members[i] == members[0] + i;
  const bool last = consecutive && members[0] + n == size;
  mine.words[0] = n;
  mine.words[1] = last ? INT_MIN : -n;
  mine.words[2] = consecutive ? 0 : 1;
  // Cyclic: the stride, and whether the node is equally spaced and a whole class mod the stride.
  int* w = mine.words + kNodeBlockWords;
  const int stride = n >= 2 ? members[1] - members[0] : 0;
  bool even = true;
  for (int i = 1; i < n; ++i) even = even && members[i] - members[i - 1] == stride;
  w[0] = stride;
  w[1] = n >= 2 ? -stride : INT_MIN;
  w[2] = even ? 0 : 1;
  w[3] = std::max(members[0] + 1, size - members[n - 1]);
  return mine;
}

// On any failure *mine stays "neither" (words[2] = 1 and the cyclic flag 1): the reduction then
// agrees on unknown on every rank, and the caller still reaches it (no mismatched collectives).
int node_block_flags(MPI_Comm comm, NodeBlockFlags* mine) {
  *mine = NodeBlockFlags{};
  mine->words[2] = 1;
  mine->words[kNodeBlockWords + 2] = 1;
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
  // The node's members as ranks of comm (a local call).
  std::vector<int> local(on_node), global(on_node, MPI_UNDEFINED);
  std::iota(local.begin(), local.end(), 0);
  rc = PMPI_Group_translate_ranks(node_group, on_node, local.data(), comm_group, global.data());
  PMPI_Group_free(&node_group);
  PMPI_Group_free(&comm_group);
  PMPI_Comm_free(&node);
  if (rc != MPI_SUCCESS) return rc;
  if (on_node < 1 || std::find(global.begin(), global.end(), MPI_UNDEFINED) != global.end()) return MPI_SUCCESS;
  std::sort(global.begin(), global.end());  // split_type orders by rank in comm (key 0); be sure
  *mine = node_words(global, size);
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

engine::Placement agreed_placement(const int reduced[kNodeWords], int size) {
  if (const int r = agreed_ranks_per_node(reduced, size); r > 0) return engine::Placement::block(r);
  // Every node with two ranks or more is equally spaced with the same stride N (the MAX of the
  // strides is minus the MAX of their negatives), and every node, of one rank or more, starts
  // below N and ends within N of the end: it is the whole class g_0 mod N. Disjoint whole
  // classes that cover every rank are all N classes: rank r on node r mod N.
  const int* w = reduced + kNodeBlockWords;
  const int n = w[0];
  if (w[2] != 0 || n < 2 || n >= size || -w[1] != n || w[3] > n) return {};
  return engine::Placement::cyclic(n);
}

int node_placement(MPI_Comm comm, engine::Placement* placement) {
  *placement = {};
  int size = 0;
  NodeBlockFlags mine;
  // A rank that cannot learn its node still joins the reduction ("neither", so every rank
  // agrees on unknown): only the reduction's own failure is an error.
  (void)node_block_flags(comm, &mine);
  int all[kNodeWords] = {};
  const int rc = PMPI_Allreduce(mine.words, all, kNodeWords, MPI_INT, MPI_MAX, comm);
  if (rc != MPI_SUCCESS) return rc;
  PMPI_Comm_size(comm, &size);
  *placement = agreed_placement(all, size);
  return MPI_SUCCESS;
}

}  // namespace cartplan::mpi
