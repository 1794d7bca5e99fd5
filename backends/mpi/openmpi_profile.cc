// The Open MPI profile's thresholds: trailers and homes from a cost model's prices.
#include "backends/mpi/openmpi_profile.h"

#include <algorithm>
#include <cmath>

namespace cartplan::openmpi {

std::int64_t trailer_min_bytes(const engine::CostModel& model) {
  // Single copy minus pipelined with a trailer, at b bytes: intercept + slope * b.
  const double intercept = model.rendezvous_us - model.pipeline_us;
  const double slope = model.single_copy_us_per_byte - model.pipeline_us_per_byte;
  const double first = static_cast<double>(model.eager_limit_bytes) + 1;
  if (!std::isfinite(intercept) || !std::isfinite(slope)) return -1;
  if (intercept + slope * first > 0) return slope >= 0 ? model.eager_limit_bytes + 1 : -1;
  if (slope <= 0) return -1;
  const double from = std::floor(-intercept / slope) + 1;  // the smallest b with a positive gain
  if (from >= 0x1p62) return -1;
  return std::max(model.eager_limit_bytes + 1, static_cast<std::int64_t>(from));
}

std::int64_t home_max_message_bytes(const engine::CostModel& model) {
  return home_max_message_bytes(model, trailer_min_bytes(model));
}

std::int64_t home_max_message_bytes(const engine::CostModel& model, std::int64_t trailer_min) {
  if (trailer_min >= 0 && trailer_min <= model.eager_limit_bytes + 1) return -1;
  const double b = static_cast<double>(model.eager_limit_bytes) + 1;
  const double single = model.rendezvous_us + model.single_copy_us_per_byte * b;
  const double pipelined = model.pipeline_us + (model.pipeline_us_per_byte + model.copy_us_per_byte) * b;
  return single > pipelined ? model.eager_limit_bytes : -1;
}

engine::LowerOptions lower_options(const engine::CostModel& model) {
  engine::LowerOptions lo;
  lo.trailer_min_bytes = trailer_min_bytes(model);
  lo.home_max_message_bytes = home_max_message_bytes(model, lo.trailer_min_bytes);
  return lo;
}

}  // namespace cartplan::openmpi
