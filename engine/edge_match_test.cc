// edge_match tests: canonical offsets, multiset merging, and a brute-force check over every rank
// that the block orders reproduce MPI's distributed-graph matching (k-th edge to a process
// matches the k-th edge from it) on random grids, neighbourhoods and per-rank list orders.
#include "engine/edge_match.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>

namespace cartplan::engine {
namespace {

TEST_CASE("canonical offsets wrap to (-n/2, n/2] on periodic dimensions only") {
  const Grid g = *Grid::create({4, 5, 2, 1}, {true, false, true, true});
  CHECK(canonical_offset(g, {0, 0, 0, 0}, {3, 4, 1, 0}) == Offset{-1, 4, 1, 0});
  CHECK(canonical_offset(g, {3, 4, 1, 0}, {0, 0, 0, 0}) == Offset{1, -4, 1, 0});
  CHECK(canonical_offset(g, {0, 2, 0, 0}, {2, 2, 0, 0}) == Offset{2, 0, 0, 0});
}

TEST_CASE("merge_counts keeps the larger multiplicity and is commutative") {
  const OffsetCounts a = count_offsets({{1}, {-1}, {1}, {0}});
  const OffsetCounts b = count_offsets({{2}, {1}, {-1}, {-1}});
  const OffsetCounts m = merge_counts(a, b);
  CHECK(m == merge_counts(b, a));
  CHECK(expand(m) == std::vector<Offset>{{-1}, {-1}, {0}, {1}, {1}, {2}});
}

TEST_CASE("a list with a foreign or missing offset is rejected with the offset named") {
  const Grid g = *Grid::create({4}, {false});
  const std::vector<Offset> nbh = {{-1}, {1}};
  CHECK(match_edges(g, {1}, nbh, {{1}, {-1}}, {{-1}, {1}}).ok());
  const Result<EdgeOrder> extra = match_edges(g, {1}, nbh, {{1}, {2}}, {{-1}, {1}});
  REQUIRE(!extra.ok());
  CHECK(extra.error().find("(2)") != std::string::npos);
  const Result<EdgeOrder> missing = match_edges(g, {1}, nbh, {{1}}, {{-1}, {1}});
  REQUIRE(!missing.ok());
  CHECK(missing.error().find("lacks offset (-1)") != std::string::npos);
  // At the mesh edge the missing neighbour must not be listed.
  CHECK(match_edges(g, {0}, nbh, {{1}}, {{-1}}).ok());
  CHECK(!match_edges(g, {0}, nbh, {{1}, {-1}}, {{-1}}).ok());
}

// Every rank lists the existing images of the same offsets, each rank in its own random order
// (sources independently of destinations). MPI semantics: the e-th occurrence of q among x's
// sources receives q's block at the position of the e-th occurrence of x among q's
// destinations. cartplan: x's recv block i comes from x - N[i] and holds its block i.
TEST_CASE("block orders reproduce MPI's matching on random graphs, all ranks") {
  std::mt19937 rng(20240611);
  for (int trial = 0; trial < 400; ++trial) {
    const int d = 1 + static_cast<int>(rng() % 4);
    std::vector<int> dims(d);
    std::vector<bool> periods(d);
    for (int k = 0; k < d; ++k) {
      dims[k] = 1 + static_cast<int>(rng() % 4);
      periods[k] = rng() % 2;
    }
    const Grid g = *Grid::create(dims, periods);
    const int t = 1 + static_cast<int>(rng() % 8);
    std::vector<Offset> offsets;
    for (int i = 0; i < t; ++i) {
      if (i > 0 && rng() % 5 == 0) {
        offsets.push_back(offsets[rng() % offsets.size()]);  // duplicate
        continue;
      }
      Offset o(d);
      for (int k = 0; k < d; ++k) o[k] = static_cast<int>(rng() % 5) - 2;
      offsets.push_back(o);
    }
    const int p = g.size();
    // The program's lists, in rank numbers, each rank with its own order.
    std::vector<std::vector<int>> dests(p), sources(p);
    for (int x = 0; x < p; ++x) {
      for (const Offset& o : offsets) {
        const Grid::Shift s = g.relative_shift(g.coords(x), o);
        if (s.dest != kNoRank) dests[x].push_back(s.dest);
        if (s.source != kNoRank) sources[x].push_back(s.source);
      }
      std::shuffle(dests[x].begin(), dests[x].end(), rng);
      std::shuffle(sources[x].begin(), sources[x].end(), rng);
    }
    // N from the union of every rank's canonical destination offsets.
    OffsetCounts all;
    std::vector<std::vector<Offset>> dest_off(p), src_off(p);
    for (int x = 0; x < p; ++x) {
      for (int q : dests[x]) dest_off[x].push_back(canonical_offset(g, g.coords(x), g.coords(q)));
      for (int q : sources[x]) src_off[x].push_back(canonical_offset(g, g.coords(q), g.coords(x)));
      all = merge_counts(all, count_offsets(dest_off[x]));
    }
    const std::vector<Offset> nbh = expand(all);
    std::vector<EdgeOrder> order(p);
    for (int x = 0; x < p; ++x) {
      Result<EdgeOrder> r = match_edges(g, g.coords(x), nbh, dest_off[x], src_off[x]);
      REQUIRE_MESSAGE(r.ok(), r.error());
      order[x] = *r;
    }
    for (int x = 0; x < p; ++x) {
      std::map<int, int> seen;  // source process -> occurrences so far
      for (std::size_t j = 0; j < sources[x].size(); ++j) {
        const int q = sources[x][j];
        const int e = seen[q]++;
        int k = -1;
        for (std::size_t kk = 0, c = 0; kk < dests[q].size(); ++kk)
          if (dests[q][kk] == x && c++ == static_cast<std::size_t>(e)) k = static_cast<int>(kk);
        REQUIRE(k >= 0);
        // cartplan's delivery of recv block i.
        const int i = order[x].recv[j];
        const int from = g.relative_shift(g.coords(x), nbh[i]).source;
        CHECK(from == q);
        const auto& qs = order[q].send;
        const int kk = static_cast<int>(std::find(qs.begin(), qs.end(), i) - qs.begin());
        CHECK(kk == k);
      }
    }
  }
}

}  // namespace
}  // namespace cartplan::engine
