// The do-no-harm rule's terms that do not need a communicator: the oversubscribed phase, the
// completion of non-blocking and persistent requests, and the fragments of cartplan's plan under
// the agreed lowering (policy.h).
#include "backends/interpose/policy.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "backends/mpi/info_options.h"
#include "engine/cost_model.h"
#include "engine/neighborhood.h"
#include "engine/optimizer.h"

namespace cartplan::interpose {
namespace {

constexpr double kSwitch = engine::CostModel::kOversubscribedPhaseUs;

TEST_CASE("completion costs nothing with a core per process, and nothing for blocking calls") {
  for (Form form : {Form::kBlocking, Form::kNonblocking, Form::kPersistent}) {
    CHECK(completion_us(form, 1.0) == 0.0);
    CHECK(completion_us(form, 0.5) == 0.0);  // fewer processes than cores
  }
  CHECK(completion_us(Form::kBlocking, 2.0) == 0.0);
  CHECK(completion_us(Form::kBlocking, 13.5) == 0.0);
}

TEST_CASE("completion on an oversubscribed node: one context switch per other process on the core") {
  CHECK(completion_us(Form::kNonblocking, 2.0) == doctest::Approx(kSwitch));
  CHECK(completion_us(Form::kPersistent, 2.0) == doctest::Approx(kSwitch));
  CHECK(completion_us(Form::kNonblocking, 4.5) == doctest::Approx(3.5 * kSwitch));
  CHECK(completion_us(Form::kNonblocking, 3.0) > completion_us(Form::kNonblocking, 2.0));
}

TEST_CASE("the oversubscribed phase term never drops below the model's own") {
  CHECK(oversubscribed_phase_us(2.9, 1.0) == doctest::Approx(2.9));
  CHECK(oversubscribed_phase_us(2.9, 2.0) == doctest::Approx(std::max(2.9, kSwitch)));
  CHECK(oversubscribed_phase_us(0.5, 13.5) == doctest::Approx(12.5 * kSwitch));
}

TEST_CASE("fragments are counted under the agreed lowering: a trailer byte pushes a 256-byte message over the inline limit") {
  // A ring of 8, offsets -1 and +1, the direct plan: two messages of one 256-byte block each.
  Result<engine::Neighborhood> nbh = engine::Neighborhood::create(1, {{-1}, {1}});
  REQUIRE(nbh.ok());
  const engine::Grid grid = *engine::Grid::create({8}, {true});
  engine::PlanOptions po;
  po.algo = engine::AlgoChoice::kDirect;
  po.block_bytes = 256;
  Result<ir::Plan> plan = engine::make_plan(ir::Op::kAlltoall, *nbh, po);
  REQUIRE(plan.ok());
  mpi::Options options;  // the built-in model: no trailers, so no fragment at 256 bytes
  CHECK(cartplan_fragments(*plan, {256}, grid, mpi::agreed_lower_options(options)) == doctest::Approx(0.0));
  options.trailer_min_bytes = 1;  // Info cartplan_trailer_min_bytes=1, agreed at creation: 257-byte messages
  CHECK(cartplan_fragments(*plan, {256}, grid, mpi::agreed_lower_options(options)) == doctest::Approx(2.0));
  CHECK(cartplan_fragments(*plan, {257}, grid, engine::LowerOptions{}) == doctest::Approx(2.0));
}

}  // namespace
}  // namespace cartplan::interpose
