// Test helpers: neighbourhoods from literals and buffer references.
#include "tests/fixtures.h"

#include <cstdio>
#include <cstdlib>
#include <set>

namespace cartplan::testing {

engine::Neighborhood nbh(int ndims, std::vector<ir::Offset> offsets) {
  auto n = engine::Neighborhood::create(ndims, std::move(offsets));
  if (!n) {
    std::fprintf(stderr, "test fixture: invalid neighbourhood: %s\n", n.error().c_str());
    std::abort();
  }
  return *n;
}

engine::Neighborhood moore9() {
  std::vector<ir::Offset> o;
  for (int a = -1; a <= 1; ++a)
    for (int b = -1; b <= 1; ++b) o.push_back({a, b});
  return nbh(2, o);
}

ir::BufRef send(int block) { return {ir::BufKind::kSend, block}; }
ir::BufRef recv(int block) { return {ir::BufKind::kRecv, block}; }
ir::BufRef temp(int slot) { return {ir::BufKind::kTemp, slot}; }

bool has_error(const std::vector<std::string>& errors, const std::string& text) {
  for (const std::string& e : errors)
    if (e.find(text) != std::string::npos) return true;
  return false;
}

int tree_edges(const engine::Neighborhood& n, const std::vector<int>& order) {
  std::set<std::vector<int>> prefixes;
  for (const ir::Offset& o : n.offsets()) {
    std::vector<int> prefix;
    for (int k : order) {
      prefix.push_back(o[k]);
      if (o[k] != 0) prefixes.insert(prefix);
    }
  }
  return static_cast<int>(prefixes.size());
}

}  // namespace cartplan::testing
