// CARTPLAN_HOT_TLS keeps a thread_local per thread (the model changes how it is reached, not
// what it is).
#include "backends/mpi/hot_tls.h"

#include <thread>

#include <doctest/doctest.h>

namespace {
thread_local int depth CARTPLAN_HOT_TLS = 0;
}  // namespace

TEST_CASE("a hot thread_local is one per thread") {
  depth = 3;
  int seen = -1;
  std::thread other([&seen] {
    seen = depth;
    depth = 7;
  });
  other.join();
  CHECK(seen == 0);
  CHECK(depth == 3);
}
