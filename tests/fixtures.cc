// Test helpers: neighbourhoods from literals and buffer references.
#include "tests/fixtures.h"

#include <cstdio>
#include <cstdlib>

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

}  // namespace cartplan::testing
