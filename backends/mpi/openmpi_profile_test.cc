// The Open MPI profile: trailer and home thresholds from a cost model's prices.
#include "backends/mpi/openmpi_profile.h"

#include <doctest/doctest.h>

namespace cartplan::openmpi {
namespace {

TEST_CASE("trailer_min_bytes: the first size above the eager limit where the pipeline is priced cheaper") {
  engine::CostModel m;
  CHECK(trailer_min_bytes(m) == -1);  // the built-in model prices both paths alike: Open MPI decides
  m.eager_limit_bytes = 4064;
  m.rendezvous_us = 2;
  m.pipeline_us = 0.5;
  m.single_copy_us_per_byte = 0.0001;
  m.pipeline_us_per_byte = 0;
  CHECK(trailer_min_bytes(m) == 4065);  // cheaper from the first rendezvous message on
  CHECK(home_max_message_bytes(m) == -1);  // and then no message above the limit is one run
  // A dearer pipeline: 3.04 us against 2 + 0.0001 us per byte: from 10401 bytes on.
  m.pipeline_us = 3.04;
  CHECK(trailer_min_bytes(m) == 10401);
  // Just above the eager limit the single copy is cheaper (2.41 us against 3.85 with the blocks'
  // copies), so homes stay in every message, as without trailers.
  CHECK(home_max_message_bytes(m) == -1);
  m.pipeline_us = 0.54;
  m.rendezvous_us = 0.1;
  m.single_copy_us_per_byte = 0.000073;
  // Single copy 0.1 + 0.000073 b against pipelined 0.54: the gain turns positive between 6027
  // and 6028 bytes.
  auto gain = [&m](double b) { return m.rendezvous_us + m.single_copy_us_per_byte * b - m.pipeline_us; };
  const std::int64_t t = trailer_min_bytes(m);
  CHECK(t == 6028);
  CHECK(gain(static_cast<double>(t)) > 0);
  CHECK(gain(static_cast<double>(t - 1)) <= 0);
  // Dearer per byte too: never.
  m.pipeline_us_per_byte = 0.0002;
  CHECK(trailer_min_bytes(m) == -1);
  // Cheaper for small messages only: not a threshold, so none.
  m.pipeline_us = 0.5;
  CHECK(trailer_min_bytes(m) == -1);
}

TEST_CASE("home_max_message_bytes: the eager limit where the single copy is priced dearer than the pipeline") {
  engine::CostModel m;
  CHECK(home_max_message_bytes(m) == -1);  // built-in: 2 us + nothing against 2 us + the blocks' copies
  m.single_copy_us_per_byte = 0.001;       // a slow single copy: no homes above the eager limit
  CHECK(home_max_message_bytes(m, -1) == m.eager_limit_bytes);
  // Trailers from beyond the first rendezvous size leave small rendezvous messages one run.
  CHECK(home_max_message_bytes(m, m.eager_limit_bytes + 100) == m.eager_limit_bytes);
  CHECK(home_max_message_bytes(m, m.eager_limit_bytes + 1) == -1);  // trailers on every one
  CHECK(home_max_message_bytes(m, 0) == -1);
  // A pipeline dear per byte outweighs a slow single copy: 300 + (0.8 + 0.0002) x 4065 us
  // pipelined against 2 + 0.5 x 4065 us by single copy: homes in every message.
  m.single_copy_us_per_byte = 0.5;
  CHECK(home_max_message_bytes(m, -1) == m.eager_limit_bytes);
  m.pipeline_us = 300;
  m.pipeline_us_per_byte = 0.8;
  CHECK(home_max_message_bytes(m, -1) == -1);
}

TEST_CASE("lower_options: the model's trailers and homes, the engine's default elsewhere") {
  engine::CostModel m;
  const engine::LowerOptions neutral;
  engine::LowerOptions lo = lower_options(m);
  CHECK(lo.trailer_min_bytes == -1);
  CHECK(lo.home_max_message_bytes == -1);
  CHECK(lo.struct_min_bytes == neutral.struct_min_bytes);
  m.pipeline_us = 0.5;  // the pipeline cheaper from the first rendezvous message on
  lo = lower_options(m);
  CHECK(lo.trailer_min_bytes == m.eager_limit_bytes + 1);
  CHECK(lo.home_max_message_bytes == -1);
  m = engine::CostModel{};
  m.single_copy_us_per_byte = 0.00005;
  m.pipeline_us_per_byte = 0.0001;  // the single copy cheaper per byte: no trailers, but...
  m.rendezvous_us = 4;              // ...dearer just above the limit: no homes there
  lo = lower_options(m);
  CHECK(lo.trailer_min_bytes == -1);
  CHECK(lo.home_max_message_bytes == m.eager_limit_bytes);
}

}  // namespace
}  // namespace cartplan::openmpi
