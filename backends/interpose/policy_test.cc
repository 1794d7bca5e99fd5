// The do-no-harm rule's terms that do not need a communicator: the oversubscribed phase and the
// completion of non-blocking and persistent requests (policy.h).
#include "backends/interpose/policy.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "engine/cost_model.h"

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

}  // namespace
}  // namespace cartplan::interpose
