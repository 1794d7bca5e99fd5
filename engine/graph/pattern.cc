// Phase numbering of combining patterns and item lists.
#include "engine/graph/pattern.h"

#include <algorithm>
#include <cassert>
#include <iterator>

namespace cartplan::engine::graph {

int exchange_phase(const PairingOptions& o, int t) { return o.cumulative ? t : 2 * t; }

int combined_phase([[maybe_unused]] const PairingOptions& o, int t) {  // o: read by the assertion only
  assert(!o.cumulative);
  return 2 * t + 1;
}

int final_phase(const PairingOptions& o, int iterations) { return o.cumulative ? iterations : 2 * iterations; }

std::vector<Item> merge_items(const std::vector<Item>& a, const std::vector<Item>& b) {
  std::vector<Item> out;
  out.reserve(a.size() + b.size());
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

}  // namespace cartplan::engine::graph
