// Tests of the grid construction's verdict sweep: every rank ends with the largest error class
// any rank started with, whichever ranks knew of a failure (as the construction's forward-only
// markers leave it), with sum(dims[k] - 1) one-word messages per rank; its peers and checks.
#include "engine/graph/grid_verdict.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "engine/graph/grid.h"

namespace cartplan::engine::graph {
namespace {

int product(const std::vector<int>& dims) { return std::accumulate(dims.begin(), dims.end(), 1, std::multiplies<int>()); }

// The ranks that know of a failure of rank `failed` after round `after` of the construction
// (after = -1: before round 0): its markers travel forward only, along the lines of dimensions
// after + 1 .. d - 1, so exactly the ranks sharing its coordinates 0 .. after learn it.
std::vector<int> informed_by_markers(const std::vector<int>& dims, int failed, int after, int code) {
  const std::vector<int> f = grid_coords(failed, dims);
  std::vector<int> codes(static_cast<std::size_t>(product(dims)), 0);
  for (int r = 0; r < product(dims); ++r) {
    const std::vector<int> c = grid_coords(r, dims);
    codes[static_cast<std::size_t>(r)] = std::equal(c.begin(), c.begin() + (after + 1), f.begin()) ? code : 0;
  }
  return codes;
}

}  // namespace

TEST_CASE("grid verdict: the 2x2 grid, rank 0 failing between rounds 0 and 1") {
  const std::vector<int> dims{2, 2};
  const std::vector<int> before = informed_by_markers(dims, 0, 0, 34);
  CHECK(before == std::vector<int>{34, 34, 0, 0});  // the markers tell rank 1 only
  std::int64_t messages = 0;
  CHECK(run_grid_verdicts(dims, before, &messages) == std::vector<int>{34, 34, 34, 34});
  CHECK(messages == 4 * 2);  // one word to each line peer per round: 1 + 1 per rank
  const std::vector<int> last = informed_by_markers(dims, 3, 0, 34);
  CHECK(last == std::vector<int>{0, 0, 34, 34});
  CHECK(run_grid_verdicts(dims, last) == std::vector<int>{34, 34, 34, 34});
}

TEST_CASE("grid verdict: any single failure at any point reaches every rank") {
  for (const std::vector<int>& dims : {std::vector<int>{2, 2}, {3, 2}, {4, 3, 2}, {2, 2, 2, 2}, {7}, {5, 5}, {3, 3, 3}}) {
    const int p = product(dims), d = static_cast<int>(dims.size());
    for (int failed = 0; failed < p; ++failed)
      for (int after = -1; after < d; ++after) {
        const std::vector<int> got = run_grid_verdicts(dims, informed_by_markers(dims, failed, after, 17));
        const std::string what = "p = " + std::to_string(p) + ", rank " + std::to_string(failed) + " after round " + std::to_string(after);
        CHECK_MESSAGE(std::all_of(got.begin(), got.end(), [](int v) { return v == 17; }), what);
      }
    std::int64_t messages = 0;
    const std::vector<int> none = run_grid_verdicts(dims, std::vector<int>(static_cast<std::size_t>(p), 0), &messages);
    CHECK(std::all_of(none.begin(), none.end(), [](int v) { return v == 0; }));
    std::int64_t per_rank = 0;
    for (int e : dims) per_rank += e - 1;
    CHECK(messages == p * per_rank);
  }
}

TEST_CASE("grid verdict: classes that differ by rank agree on the largest") {
  std::mt19937 rng(7);
  for (const std::vector<int>& dims : {std::vector<int>{4, 3}, {2, 3, 2}, {11}, {2, 2, 2, 2, 2}}) {
    const int p = product(dims);
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<int> codes(static_cast<std::size_t>(p), 0);
      for (int& c : codes) c = rng() % 4 == 0 ? static_cast<int>(rng() % 60) : 0;
      const int largest = *std::max_element(codes.begin(), codes.end());
      const std::vector<int> got = run_grid_verdicts(dims, codes);
      CHECK(got == std::vector<int>(static_cast<std::size_t>(p), largest));
    }
  }
}

TEST_CASE("grid verdict: peers are the line of the round's dimension; other words are refused") {
  const std::vector<int> dims{4, 3};  // rank 7 = (2, 1)
  GridVerdict v(7, dims, 0);
  REQUIRE(v.peers() == 3);
  CHECK(std::vector<int>{v.peer(0), v.peer(1), v.peer(2)} == std::vector<int>{1, 4, 10});  // (0,1) (1,1) (3,1)
  CHECK_FALSE(v.take(7, 5));   // itself
  CHECK_FALSE(v.take(8, 5));   // (2, 2): a line peer of round 1, not of round 0
  CHECK_FALSE(v.take(13, 5));  // beyond the grid
  CHECK_FALSE(v.take(4, -1));  // not a class
  CHECK(v.verdict() == 0);
  CHECK(v.take(4, 5));
  CHECK(v.word() == 0);  // this round's word stays what the round began with
  v.next();
  CHECK(v.word() == 5);
  REQUIRE(v.peers() == 2);
  CHECK(std::vector<int>{v.peer(0), v.peer(1)} == std::vector<int>{6, 8});  // (2,0) (2,2)
  CHECK_FALSE(v.take(4, 9));   // a round-0 peer
  CHECK_FALSE(v.take(10, 9));  // (3, 1): neither is a round-1 peer
  CHECK_FALSE(v.take(8, -2));  // a round-1 peer, but not a class
  CHECK(v.verdict() == 5);     // none of them counted
  CHECK(v.take(8, 9));
  v.next();
  CHECK(v.done());
  CHECK(v.peers() == 0);
  CHECK(v.verdict() == 9);
  const std::vector<int> none;
  GridVerdict alone(0, none, 3);  // p = 1: no dimension, its own class
  CHECK(alone.done());
  CHECK(alone.verdict() == 3);
}

}  // namespace cartplan::engine::graph
