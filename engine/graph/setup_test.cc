// Tests of the distributed pattern construction: seed 003's Fig. 1 example, halving,
// consistency between partners and between senders and receivers, cumulative stages.
#include "engine/graph/setup_run.h"

#include <doctest/doctest.h>

#include <map>

#include "engine/graph/generators.h"

namespace cartplan::engine::graph {
namespace {

// Ranks 0 and 1 both send to ranks 2..(1 + k); nothing else.
ir::graph::Topology two_friends(int k) {
  std::vector<std::vector<int>> out(2 + k);
  for (int n = 2; n < 2 + k; ++n) out[0].push_back(n), out[1].push_back(n);
  return from_out_lists(out);
}

}  // namespace

TEST_CASE("seed 003 Fig. 1: two friends split their k common neighbours in halves") {
  const int k = 8;
  Result<SetupRun> run = run_setup(two_friends(k), PairingOptions{});
  REQUIRE_MESSAGE(run.ok(), run.error());
  const RankPattern& p0 = run->patterns[0];
  const RankPattern& p1 = run->patterns[1];
  REQUIRE(p0.stages.size() == 1);
  REQUIRE(p1.stages.size() == 1);
  CHECK(p0.stages[0].partner == 1);
  CHECK(p0.stages[0].phase == 0);
  // The lower rank keeps the first half of the sorted common neighbours.
  REQUIRE(p0.sends.size() == 4);
  CHECK(p0.sends[0].target == 2);
  CHECK(p0.sends[0].phase == 1);
  CHECK(p0.sends[0].items == std::vector<Item>{{0, 1}, {1, 1}});
  REQUIRE(p1.sends.size() == 4);
  CHECK(p1.sends[0].target == 6);
  CHECK(p0.stages[0].handed_out.size() == 4);
  CHECK(p0.stages[0].handed_out[0].target == 6);
  CHECK(p1.stages[0].handed_in == p0.stages[0].handed_out);
  // Each common neighbour receives one message carrying both blocks.
  for (int n = 2; n < 2 + k; ++n) {
    REQUIRE(run->patterns[n].recvs.size() == 1);
    CHECK(run->patterns[n].recvs[0].source == (n < 6 ? 0 : 1));
    CHECK(run->patterns[n].recvs[0].items == std::vector<Item>{{0, 1}, {1, 1}});
  }
  CHECK(run->stats.rounds > 0);
  CHECK(run->stats.messages > 0);
}

TEST_CASE("below theta common neighbours nobody pairs: everything goes directly") {
  Result<SetupRun> run = run_setup(two_friends(3), PairingOptions{});
  REQUIRE(run.ok());
  CHECK(run->patterns[0].stages.empty());
  CHECK(run->patterns[0].sends.size() == 3);
  CHECK(run->patterns[0].sends[0].phase == 0);
  CHECK(run->stats.max_iterations == 0);
}

TEST_CASE("every send has a receive with the same phase and items, on random graphs") {
  for (bool cumulative : {false, true}) {
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      Result<ir::graph::Topology> t = erdos_renyi(40, 0.3, seed);
      REQUIRE(t.ok());
      PairingOptions o;
      o.cumulative = cumulative;
      Result<SetupRun> run = run_setup(*t, o);
      REQUIRE_MESSAGE(run.ok(), run.error());
      std::map<std::tuple<int, int, int>, std::vector<Item>> sent;
      std::size_t stages = 0;
      for (const RankPattern& p : run->patterns) {
        for (const PatternSend& s : p.sends) sent[{p.rank, s.target, s.phase}] = s.items;
        stages += p.stages.size();
      }
      std::size_t recvs = 0;
      for (const RankPattern& p : run->patterns) {
        for (const PatternRecv& r : p.recvs) {
          CHECK(sent.at({r.source, p.rank, r.phase}) == r.items);
          ++recvs;
        }
      }
      CHECK(recvs == sent.size());
      CHECK(stages > 0);
    }
  }
}

TEST_CASE("cumulative pairing combines a neighbour in several stages") {
  // Four ranks share 16 neighbours: two stages halve the senders per neighbour twice.
  std::vector<std::vector<int>> out(20);
  for (int a = 0; a < 4; ++a)
    for (int n = 4; n < 20; ++n) out[a].push_back(n);
  PairingOptions o;
  o.cumulative = true;
  Result<SetupRun> run = run_setup(from_out_lists(out), o);
  REQUIRE(run.ok());
  std::size_t max_items = 0;
  for (int n = 4; n < 20; ++n) {
    for (const PatternRecv& r : run->patterns[n].recvs) max_items = std::max(max_items, r.items.size());
    CHECK(run->patterns[n].recvs.size() <= 2);
  }
  CHECK(max_items == 4);
  CHECK(run->patterns[0].stages.size() >= 2);
}

}  // namespace cartplan::engine::graph
