// Hand-built halo plans for tests.
#include "ir/halo/test_plans.h"

namespace cartplan::ir::halo::test_plans {
namespace {

Part part(Cell from, Cell to, std::vector<int> extent, Buffer from_buf = Buffer::kArray, Buffer to_buf = Buffer::kArray, int slot = 0) {
  return Part{Place{from_buf, from_buf == Buffer::kTemp ? slot : 0, std::move(from)}, Place{to_buf, to_buf == Buffer::kTemp ? slot : 0, std::move(to)},
              std::move(extent)};
}

HaloPlan finish(HaloPlanParts p) {
  p.stats = derived_stats(p);
  return HaloPlan(std::move(p));
}

ArrayShape moore2_array() { return ArrayShape{2, {3, 4}, {1, 2}, {2, 1}, 8, Order::kC}; }

std::vector<Offset> moore2() {
  std::vector<Offset> n;
  for (int a = -1; a <= 1; ++a)
    for (int b = -1; b <= 1; ++b)
      if (a || b) n.push_back({a, b});
  return n;
}

}  // namespace

HaloPlan line_direct() {
  HaloPlanParts p;
  p.algorithm = HaloAlgorithm::kDirect;
  p.array = ArrayShape{1, {4}, {1}, {2}, 4, Order::kC};
  p.neighborhood = {{-1}, {1}};
  p.dim_order = {0};
  // The receiver at self + 1 fills its low ghost [-1,0) from our [3,4); self - 1 its high ghost.
  p.phases = {Phase{Phase::kAllDims, {Message{{1}, 0, {part({3}, {-1}, {1})}}, Message{{-1}, 1, {part({0}, {4}, {2})}}}}};
  return finish(std::move(p));
}

HaloPlan moore2_dimwise() {
  HaloPlanParts p;
  p.algorithm = HaloAlgorithm::kDimwise;
  p.array = moore2_array();
  p.neighborhood = moore2();
  p.dim_order = {0, 1};
  Phase d0{0, {Message{{-1, 0}, 0, {part({0, 0}, {3, 0}, {2, 4})}}, Message{{1, 0}, 1, {part({2, 0}, {-1, 0}, {1, 4})}}}};
  // Phase 1: rows of the low ghost, the interior and the high ghost, one part each.
  Message up{{0, -1}, 2, {part({-1, 0}, {-1, 4}, {1, 1}), part({0, 0}, {0, 4}, {3, 1}), part({3, 0}, {3, 4}, {2, 1})}};
  Message down{{0, 1}, 3, {part({-1, 2}, {-1, -2}, {1, 2}), part({0, 2}, {0, -2}, {3, 2}), part({3, 2}, {3, -2}, {2, 2})}};
  p.phases = {d0, Phase{1, {up, down}}};
  return finish(std::move(p));
}

HaloPlan moore2_with_temp() {
  HaloPlanParts p = moore2_dimwise().parts();
  p.algorithm = HaloAlgorithm::kSplit;
  p.temps = {Temp{{2, 1}}};
  // Phase 0 also sends the two rows' first column to the temp of the process below ...
  p.phases[0].messages[0].parts.push_back(part({0, 0}, {0, 0}, {2, 1}, Buffer::kArray, Buffer::kTemp));
  // ... which forwards them from the temp instead of from its ghost rows.
  p.phases[1].messages[0].parts[2] = part({0, 0}, {3, 4}, {2, 1}, Buffer::kTemp, Buffer::kArray);
  return finish(std::move(p));
}

}  // namespace cartplan::ir::halo::test_plans
