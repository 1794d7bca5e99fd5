// node_block_flags and agreed_ranks_per_node (backends/mpi/node_map.h): on this machine every
// rank of the job shares one node, so the agreed ranks per node is 0 (nothing leaves a node and
// the placement terms price nothing); the agreement's rule on reduced words of other placements.
#include <climits>
#include <string>

#include "backends/mpi/node_map.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpi::agreed_ranks_per_node;
using cartplan::mpitest::Harness;

void check_rule(Harness& h) {
  struct Case {
    int words[3];
    int size;
    int want;
    const char* what;
  };
  const Case cases[] = {
      {{4, -4, 0}, 10, 4, "nodes of 4 and a last node of 2"},
      {{4, -4, 0}, 8, 4, "two full nodes (the last one's word is INT_MIN, the MAX ignores it)"},
      {{16, INT_MIN, 0}, 16, 0, "one node holds every rank"},
      {{4, -2, 0}, 10, 0, "a node of 2 before the last one: not blocks"},
      {{6, -4, 0}, 10, 0, "the last node larger than the others"},
      {{4, -4, 1}, 8, 0, "a node whose ranks are not consecutive"},
      {{1, -1, 0}, 4, 1, "one rank per node"},
  };
  for (const Case& c : cases) {
    const int got = agreed_ranks_per_node(c.words, c.size);
    h.check(got == c.want, std::string(c.what) + ": " + std::to_string(got) + " (want " + std::to_string(c.want) + ")");
  }
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  cartplan::mpi::NodeBlockFlags mine;
  h.check(cartplan::mpi::node_block_flags(MPI_COMM_WORLD, &mine) == MPI_SUCCESS, "node_block_flags succeeds");
  h.check(mine.words[0] == h.size, "every rank of the job on this rank's node");
  h.check(mine.words[1] == INT_MIN, "this node holds the last rank");
  h.check(mine.words[2] == 0, "the node's ranks are consecutive");
  int all[cartplan::mpi::kNodeBlockWords] = {};
  MPI_Allreduce(mine.words, all, cartplan::mpi::kNodeBlockWords, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  h.check(agreed_ranks_per_node(all, h.size) == 0, "one node: 0 ranks per node (no placement counts)");
  check_rule(h);
  return h.finish("node_map_test");
}
