// The linear alpha/beta cost model: a message of m bytes costs alpha + beta*m microseconds.
// Defaults are of the order of an intra-node Open MPI message on this class of machine
// (alpha = 1 us, beta = 0.0005 us/byte, i.e. 2 GB/s); benchmarks calibrate real values and
// users override them (CLI --alpha-us/--beta-us-per-byte, Info keys).
//
//   CostModel m;                       // defaults
//   double us = m.message_us(4096);    // 1 + 0.0005 * 4096
#pragma once

#include <cstdint>

namespace cartplan::engine {

struct CostModel {
  static constexpr double kDefaultAlphaUs = 1.0;
  static constexpr double kDefaultBetaUsPerByte = 0.0005;
  double alpha_us = kDefaultAlphaUs;
  double beta_us_per_byte = kDefaultBetaUsPerByte;

  double message_us(std::int64_t bytes) const { return alpha_us + beta_us_per_byte * static_cast<double>(bytes); }
};

}  // namespace cartplan::engine
