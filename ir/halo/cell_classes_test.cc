// Tests of the cell classes: cuts closed under the parts' translations, class lookup.
#include "ir/halo/cell_classes.h"

#include <doctest/doctest.h>

#include "ir/halo/test_plans.h"

namespace cartplan::ir::halo {

TEST_CASE("every part's boxes are unions of classes that map one to one") {
  for (const HaloPlan& plan : {test_plans::line_direct(), test_plans::moore2_dimwise(), test_plans::moore2_with_temp()}) {
    Result<CellClasses> c = CellClasses::create(plan.parts());
    REQUIRE(c);
    for (const Phase& ph : plan.phases()) {
      for (const Message& m : ph.messages) {
        for (const Part& p : m.parts) {
          const int a = CellClasses::frame_of(p.from.buffer, p.from.slot), b = CellClasses::frame_of(p.to.buffer, p.to.slot);
          std::int64_t cells = 0;
          c->for_each(a, p.from_box(), [&](std::int64_t cls, const Cell& x) {
            const Box from = c->class_box(a, cls);
            CHECK(contains(p.from_box(), from));
            std::vector<int> y = x;
            for (std::size_t k = 0; k < y.size(); ++k) y[k] += p.to.lo[k] - p.from.lo[k];
            const Box to = c->class_box(b, c->index_of(b, y));
            CHECK(to.extent == from.extent);  // one class onto one class
            cells += from.cells();
          });
          CHECK(cells == p.from_box().cells());
          CHECK(c->count_in(a, p.from_box()) == c->count_in(b, p.to_box()));
        }
      }
    }
  }
}

TEST_CASE("the classes do not grow with the array") {
  HaloPlanParts small = test_plans::moore2_dimwise().parts();
  Result<CellClasses> c = CellClasses::create(small);
  REQUIRE(c);
  CHECK(c->count(0) <= 64);
  CHECK(c->class_box(0, c->index_of(0, {1, 1})).contains({1, 1}));
}

TEST_CASE("a hostile chain of translations hits the limit instead of the memory") {
  HaloPlanParts p = test_plans::line_direct().parts();
  p.array.interior = {1 << 20};
  p.array.ghost_hi = {1};
  // Array [0, 2^20) to the temp shifted by one cell, and back: every integer becomes a cut.
  p.temps = {Temp{{(1 << 20) + 1}}};
  p.phases[0].messages[0].parts = {Part{Place{Buffer::kArray, 0, {0}}, Place{Buffer::kTemp, 0, {1}}, {1 << 20}},
                                   Part{Place{Buffer::kTemp, 0, {0}}, Place{Buffer::kArray, 0, {1}}, {1 << 20}}};
  Result<CellClasses> c = CellClasses::create(p);
  REQUIRE_FALSE(c);
  CHECK(c.error().find("verify gives up") != std::string::npos);
}

}  // namespace cartplan::ir::halo
