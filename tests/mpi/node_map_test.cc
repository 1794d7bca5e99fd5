// node_block_flags and agreed_ranks_per_node (backends/mpi/node_map.h): on this machine every
// rank of the job shares one node, so the agreed ranks per node is 0 (nothing leaves a node and
// the placement terms price nothing); the agreement's rule on reduced words of other placements;
// agreed_placement on the MAX of node_words over every node of synthetic placements (block,
// cyclic, and others), against a brute-force comparison of the partitions.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

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

// Node labels renumbered in order of first appearance, so that equal partitions compare equal.
std::vector<int> canonical(const std::vector<int>& node_of) {
  std::map<int, int> seen;
  std::vector<int> out;
  for (int n : node_of) out.push_back(seen.emplace(n, static_cast<int>(seen.size())).first->second);
  return out;
}

// What agreed_placement must say for `node_of` (rank -> node), by comparing partitions.
cartplan::engine::Placement brute_force(const std::vector<int>& node_of) {
  const int size = static_cast<int>(node_of.size());
  const std::vector<int> mine = canonical(node_of);
  for (int r = 1; r < size; ++r) {
    std::vector<int> block(size);
    for (int i = 0; i < size; ++i) block[i] = i / r;
    if (canonical(block) == mine) return cartplan::engine::Placement::block(r);
  }
  for (int n = 2; n < size; ++n) {
    std::vector<int> cyclic(size);
    for (int i = 0; i < size; ++i) cyclic[i] = i % n;
    if (canonical(cyclic) == mine) return cartplan::engine::Placement::cyclic(n);
  }
  return {};
}

// Every node's words, reduced by MAX as the ranks would, and the agreement on them.
cartplan::engine::Placement agreed(const std::vector<int>& node_of) {
  const int size = static_cast<int>(node_of.size());
  std::map<int, std::vector<int>> members;
  for (int r = 0; r < size; ++r) members[node_of[r]].push_back(r);
  int all[cartplan::mpi::kNodeWords];
  std::fill(all, all + cartplan::mpi::kNodeWords, INT_MIN);
  for (const auto& [node, ranks] : members) {
    const cartplan::mpi::NodeBlockFlags w = cartplan::mpi::node_words(ranks, size);
    for (int i = 0; i < cartplan::mpi::kNodeWords; ++i) all[i] = std::max(all[i], w.words[i]);
  }
  return cartplan::mpi::agreed_placement(all, size);
}

void check_placements(Harness& h) {
  int checked = 0, cyclic = 0, unknown = 0;
  std::uint32_t seed = 12345;
  for (int size = 2; size <= 24; ++size) {
    std::vector<std::vector<int>> cases;
    for (int r = 1; r <= size; ++r) {  // block, the last node partial where r does not divide size
      cases.emplace_back(size);
      for (int i = 0; i < size; ++i) cases.back()[i] = i / r;
    }
    for (int n = 2; n <= size; ++n) {  // cyclic, the first size mod n nodes one rank more
      cases.emplace_back(size);
      for (int i = 0; i < size; ++i) cases.back()[i] = i % n;
      std::vector<int> swapped = cases.back();  // two ranks of different nodes exchanged
      std::swap(swapped[0], swapped[size - 1]);
      cases.push_back(swapped);
      std::vector<int> shifted = cases.back();  // node labels cycle from 1: the same partition
      for (int i = 0; i < size; ++i) shifted[i] = (i + 1) % n;
      cases.push_back(shifted);
      for (int alone : {0, size - 1}) {  // one rank on a node of its own: the rest equally spaced, not classes
        std::vector<int> split(size);
        for (int i = 0; i < size; ++i) split[i] = i == alone ? n : i % n;
        cases.push_back(split);
      }
    }
    for (int k = 0; k < 8; ++k) {  // random partitions into 2..4 nodes
      cases.emplace_back(size);
      for (int i = 0; i < size; ++i) cases.back()[i] = static_cast<int>((seed = seed * 1664525u + 1013904223u) >> 16) % (2 + k % 3);
    }
    {  // cyclic over 3 nodes, then one more rank on node 0: not a whole class
      cases.emplace_back(size);
      for (int i = 0; i < size; ++i) cases.back()[i] = i < size - 1 ? i % 3 : 0;
    }
    for (const std::vector<int>& c : cases) {
      const cartplan::engine::Placement want = brute_force(c), got = agreed(c);
      ++checked;
      cyclic += want.is_cyclic();
      unknown += want == cartplan::engine::Placement{};
      if (!(want == got)) {
        std::string text;
        for (int n : c) text += std::to_string(n) + " ";
        h.check(false, "placement of " + text + ": " + got.describe() + " (want " + want.describe() + ")");
      }
    }
  }
  h.check(checked > 1000 && cyclic > 200 && unknown > 100,
          "synthetic placements: " + std::to_string(checked) + " checked, " + std::to_string(cyclic) + " cyclic, " +
              std::to_string(unknown) + " neither");
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
  int words[cartplan::mpi::kNodeWords] = {};
  MPI_Allreduce(mine.words, words, cartplan::mpi::kNodeWords, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  h.check(cartplan::mpi::agreed_placement(words, h.size) == cartplan::engine::Placement{}, "one node: placement unknown");
  check_rule(h);
  check_placements(h);
  return h.finish("node_map_test");
}
