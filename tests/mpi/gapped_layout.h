// Displacements of blocks laid out with a gap of one element after each (so that a write past a
// block shows), in reverse block order when asked (so that displacements are not the blocks'
// order): the v and w collectives' tests (cpp_graph_test, cpp_large_count_test).
//
//   std::vector<int> displs;
//   const int n = cartplan::mpitest::lay_out({2, 1, 3}, &displs, true);   // displs {6, 4, 0}, n 10
#pragma once

#include <vector>

namespace cartplan::mpitest {

// Returns the elements the buffer needs (one more after the last gap).
inline int lay_out(const std::vector<int>& counts, std::vector<int>* displs, bool reverse) {
  const int n = static_cast<int>(counts.size());
  displs->assign(n, 0);
  int at = 0;
  for (int i = 0; i < n; ++i) {
    const int k = reverse ? n - 1 - i : i;
    (*displs)[k] = at;
    at += counts[k] + 1;
  }
  return at + 1;
}

}  // namespace cartplan::mpitest
