// Tests for the stencil generators: exact offset lists, order, seed 000 Table 1 counts, refusals.
#include "engine/stencils.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <functional>

namespace cartplan::engine::stencils {
namespace {

bool contains(const Neighborhood& n, const Offset& o) {
  return std::find(n.offsets().begin(), n.offsets().end(), o) != n.offsets().end();
}

std::string error_of(const Result<Neighborhood>& n) {
  REQUIRE_FALSE(n.ok());
  return n.error();
}

// Reference: every point of the cube [-lim, lim]^d in lexicographic order, kept if keep() says so.
std::vector<Offset> brute(int d, int lim, const std::function<bool(const Offset&)>& keep) {
  std::vector<Offset> out;
  Offset cur(d, -lim);
  while (true) {
    if (keep(cur)) out.push_back(cur);
    int k = d - 1;
    while (k >= 0 && cur[k] == lim) cur[k--] = -lim;
    if (k < 0) return out;
    ++cur[k];
  }
}

int cheb(const Offset& o) {
  int m = 0;
  for (int v : o) m = std::max(m, std::abs(v));
  return m;
}

int l1(const Offset& o) {
  int s = 0;
  for (int v : o) s += std::abs(v);
  return s;
}

TEST_CASE("small stencils, exact lists") {
  auto vn = vonneumann(2, 1);
  REQUIRE(vn.ok());
  CHECK(vn->offsets() == std::vector<Offset>{{-1, 0}, {0, -1}, {0, 0}, {0, 1}, {1, 0}});

  auto m = moore(1, 2);
  REQUIRE(m.ok());
  CHECK(m->offsets() == std::vector<Offset>{{-2}, {-1}, {0}, {1}, {2}});

  auto c = chebyshev(2, 1, 1);
  REQUIRE(c.ok());
  CHECK(c->offsets() == std::vector<Offset>{{-1, -1}, {-1, 0}, {-1, 1}, {0, -1},
                                            {0, 1},   {1, -1}, {1, 0},  {1, 1}});

  auto mh = manhattan(2, 1, 1);
  REQUIRE(mh.ok());
  CHECK(mh->offsets() == std::vector<Offset>{{-1, 0}, {0, -1}, {0, 1}, {1, 0}});

  auto b = box(2, 2, 0);
  REQUIRE(b.ok());
  CHECK(b->offsets() == std::vector<Offset>{{0, 0}, {0, 1}, {1, 0}, {1, 1}});

  auto zero = moore(3, 0);
  REQUIRE(zero.ok());
  CHECK(zero->offsets() == std::vector<Offset>{{0, 0, 0}});
  auto zero2 = manhattan(2, 0, 0);
  REQUIRE(zero2.ok());
  CHECK(zero2->offsets() == std::vector<Offset>{{0, 0}});
}

TEST_CASE("counts from the issue") {
  auto vn = vonneumann(2, 2);
  REQUIRE(vn.ok());
  CHECK(vn->size() == 13);
  CHECK(vn->nonzero_count() == 12);

  auto m = moore(3, 1);
  REQUIRE(m.ok());
  CHECK(m->size() == 27);
  CHECK(m->nonzero_count() == 26);

  auto b = box(2, 4, -1);
  REQUIRE(b.ok());
  CHECK(b->size() == 16);
  CHECK(contains(*b, {2, 2}));
  CHECK(contains(*b, {-1, -1}));
  CHECK_FALSE(contains(*b, {-2, 0}));
  CHECK_FALSE(contains(*b, {3, 0}));
  CHECK(b->offsets().front() == Offset{-1, -1});
  CHECK(b->offsets().back() == Offset{2, 2});

  auto c = chebyshev(2, 1, 1);
  REQUIRE(c.ok());
  CHECK(c->size() == 8);
  CHECK(c->nonzero_count() == 8);
  CHECK_FALSE(contains(*c, {0, 0}));

  auto mh = manhattan(2, 1, 1);
  REQUIRE(mh.ok());
  CHECK(mh->size() == 4);
  CHECK_FALSE(contains(*mh, {0, 0}));

  auto big = vonneumann(16, 2);  // sum_k 2^k C(16,k) C(2,k) = 1 + 64 + 480
  REQUIRE(big.ok());
  CHECK(big->size() == 545);
}

TEST_CASE("seed 000 Table 1: box(d, n, -1) has t = n^d - 1 and sum C_k = d(n-1)") {
  for (int d = 2; d <= 5; ++d)
    for (int n = 3; n <= 5; ++n) {
      CAPTURE(d);
      CAPTURE(n);
      auto b = box(d, n, -1);
      REQUIRE(b.ok());
      int nd = 1;
      for (int i = 0; i < d; ++i) nd *= n;
      CHECK(b->size() == nd);
      CHECK(b->nonzero_count() == nd - 1);
      int c = 0;
      for (int k = 0; k < d; ++k) {
        CHECK(b->distinct_nonzero(k) == n - 1);
        c += b->distinct_nonzero(k);
      }
      CHECK(c == d * (n - 1));
    }
  // Spot values printed in Table 1: d=2,n=3 gives t=8, C=4; d=3,n=5 gives t=124, C=12.
  CHECK(box(2, 3, -1)->nonzero_count() == 8);
  CHECK(box(3, 5, -1)->nonzero_count() == 124);
}

TEST_CASE("generators equal a brute-force filter of the cube, in lexicographic order") {
  for (int d = 1; d <= 3; ++d)
    for (int depth = 0; depth <= 3; ++depth) {
      CAPTURE(d);
      CAPTURE(depth);
      auto m = moore(d, depth);
      REQUIRE(m.ok());
      CHECK(m->offsets() == brute(d, depth, [&](const Offset&) { return true; }));
      auto v = vonneumann(d, depth);
      REQUIRE(v.ok());
      CHECK(v->offsets() == brute(d, depth, [&](const Offset& o) { return l1(o) <= depth; }));
      for (int shadow = 0; shadow <= depth; ++shadow) {
        CAPTURE(shadow);
        auto c = chebyshev(d, depth, shadow);
        REQUIRE(c.ok());
        CHECK(c->offsets() == brute(d, depth, [&](const Offset& o) {
          return cheb(o) >= shadow && cheb(o) <= depth;
        }));
        auto h = manhattan(d, depth, shadow);
        REQUIRE(h.ok());
        CHECK(h->offsets() == brute(d, depth, [&](const Offset& o) {
          return l1(o) >= shadow && l1(o) <= depth;
        }));
        CHECK(std::is_sorted(h->offsets().begin(), h->offsets().end()));
      }
    }
}

TEST_CASE("large but allowed stencils and coordinates at the limit") {
  auto m = moore(1, (Neighborhood::kMaxOffsets - 1) / 2);  // exactly 2^20 - 1 offsets
  REQUIRE(m.ok());
  CHECK(m->size() == Neighborhood::kMaxOffsets - 1);

  auto b = box(2, 1024, 0);  // exactly 2^20 offsets
  REQUIRE(b.ok());
  CHECK(b->size() == Neighborhood::kMaxOffsets);

  const int lim = Neighborhood::kMaxCoordinate;
  auto shell = manhattan(1, lim, lim);  // two offsets, found without scanning 2^29 values
  REQUIRE(shell.ok());
  CHECK(shell->offsets() == std::vector<Offset>{{-lim}, {lim}});
  auto cshell = chebyshev(1, lim, lim - 1);
  REQUIRE(cshell.ok());
  CHECK(cshell->offsets() == std::vector<Offset>{{-lim}, {-lim + 1}, {lim - 1}, {lim}});

  auto far = box(1, 1, lim);
  REQUIRE(far.ok());
  CHECK(far->offsets() == std::vector<Offset>{{lim}});
  auto farneg = box(2, 2, -lim);
  REQUIRE(farneg.ok());
  CHECK(farneg->size() == 4);
}

TEST_CASE("refusals name the stencil and the problem") {
  CHECK(error_of(moore(12, 3)) ==
        "moore:d=12,r=3 would have 13841287201 offsets, more than the limit 1048576");
  CHECK(error_of(moore(1, Neighborhood::kMaxOffsets / 2)) ==
        "moore:d=1,r=524288 would have 1048577 offsets, more than the limit 1048576");
  CHECK(error_of(moore(16, INT_MAX)) ==
        "moore:d=16,r=2147483647 would have at least 18446744073709551615 offsets, more than the "
        "limit 1048576");
  CHECK(error_of(vonneumann(3, 1000)) ==
        "vonneumann:d=3,r=1000 would have 1335336001 offsets, more than the limit 1048576");
  CHECK(error_of(manhattan(16, INT_MAX, INT_MAX)).find("more than the limit 1048576") !=
        std::string::npos);
  CHECK(error_of(chebyshev(3, INT_MAX, INT_MAX)).find("more than the limit 1048576") !=
        std::string::npos);
  CHECK(error_of(box(2, 1025, 0)) ==
        "box:d=2,n=1025,f=0 would have 1050625 offsets, more than the limit 1048576");
  CHECK(error_of(box(16, INT_MAX, INT_MIN)).find("more than the limit 1048576") !=
        std::string::npos);

  CHECK(error_of(moore(0, 1)) == "moore:d=0,r=1: d must be between 1 and 16");
  CHECK(error_of(vonneumann(17, 1)) == "vonneumann:d=17,r=1: d must be between 1 and 16");
  CHECK(error_of(box(-1, 3, 0)) == "box:d=-1,n=3,f=0: d must be between 1 and 16");
  CHECK(error_of(moore(2, -1)) == "moore:d=2,r=-1: r must be non-negative");
  CHECK(error_of(vonneumann(2, INT_MIN)) ==
        "vonneumann:d=2,r=-2147483648: r must be non-negative");
  CHECK(error_of(chebyshev(2, -1, 0)) == "chebyshev:d=2,depth=-1,shadow=0: depth must be non-negative");
  CHECK(error_of(manhattan(2, 2, -1)) == "manhattan:d=2,depth=2,shadow=-1: shadow must be non-negative");
  CHECK(error_of(chebyshev(2, 1, 2)) == "chebyshev:d=2,depth=1,shadow=2: shadow must not exceed depth");
  CHECK(error_of(manhattan(3, 0, 1)) == "manhattan:d=3,depth=0,shadow=1: shadow must not exceed depth");
  CHECK(error_of(box(2, 0, 0)) == "box:d=2,n=0,f=0: n must be at least 1");
  CHECK(error_of(box(2, INT_MIN, 0)) == "box:d=2,n=-2147483648,f=0: n must be at least 1");

  const int lim = Neighborhood::kMaxCoordinate;
  CHECK(error_of(box(1, 2, lim)) ==
        "box:d=1,n=2,f=268435456 has coordinates up to 268435457, more than the limit 268435456");
  CHECK(error_of(box(1, 1, INT_MIN)) ==
        "box:d=1,n=1,f=-2147483648 has coordinates up to 2147483648, more than the limit "
        "268435456");
  CHECK(error_of(box(1, 2, INT_MAX)).find("has coordinates up to 2147483648") != std::string::npos);
  CHECK(error_of(chebyshev(1, lim + 1, lim + 1)) ==
        "chebyshev:d=1,depth=268435457,shadow=268435457 has coordinates up to 268435457, more "
        "than the limit 268435456");
  CHECK(error_of(manhattan(1, INT_MAX, INT_MAX)).find("has coordinates up to 2147483647") !=
        std::string::npos);
}

}  // namespace
}  // namespace cartplan::engine::stencils
