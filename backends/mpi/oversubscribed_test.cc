// union_cores (oversubscribed.h): the CPUs of the union of the node's affinity masks, and the
// fallback where a mask is missing.
#include "backends/mpi/oversubscribed.h"

#include <doctest/doctest.h>

#include <vector>

namespace cartplan::mpi {
namespace {

// One process's words: CPUs `cpus`, read or not.
std::vector<std::uint64_t> process(std::vector<int> cpus, bool read = true) {
  std::vector<std::uint64_t> w(kProcessWords, 0);
  for (int c : cpus) w[c / 64] |= std::uint64_t{1} << (c % 64);
  w[kMaskWords] = read ? 1 : 0;
  return w;
}

std::vector<std::uint64_t> node(std::vector<std::vector<std::uint64_t>> processes) {
  std::vector<std::uint64_t> all;
  for (const auto& p : processes) all.insert(all.end(), p.begin(), p.end());
  return all;
}

TEST_CASE("16 processes bound to 4 of 64 cores have 4 cores") {
  std::vector<std::vector<std::uint64_t>> ps;
  for (int r = 0; r < 16; ++r) ps.push_back(process({8 + r % 4}));
  CHECK(union_cores(node(ps), 64) == 4);
}

TEST_CASE("overlapping and distant masks count each CPU once") {
  CHECK(union_cores(node({process({0, 1, 2}), process({2, 3}), process({1000})}), 64) == 5);
  CHECK(union_cores(node({process({63, 64}), process({64, 127})}), 8) == 3);
}

TEST_CASE("a process without a mask, an empty union or no process: the fallback") {
  CHECK(union_cores(node({process({0}), process({}, false)}), 64) == 64);
  CHECK(union_cores(node({process({})}), 7) == 7);
  CHECK(union_cores({}, 3) == 3);
}

}  // namespace
}  // namespace cartplan::mpi
