// The cost model (v2): what one exchange of a plan costs on one process, as a sum of terms
// (count x price; features.h counts them on the lowered program, predict.h prices them, the
// terms are defined in docs/cost-model.md):
//   alpha_us            per message (a round to another process)
//   phase_us            per phase with messages (a phase cannot start before the previous one
//                       has arrived; on an oversubscribed node that is a context switch)
//   beta_us_per_byte    per byte on the wire
//   copy_us_per_byte    per byte copied locally (packing and unpacking multi-entry messages,
//                       rounds that wrap to the process itself, the plan's local copies)
//   rendezvous_us       per contiguous message above eager_limit_bytes (Open MPI's eager-to-
//                       rendezvous switch: one more round trip, then ob1 reads the data with
//                       one single-copy get, CMA on a node)
//   single_copy_us_per_byte  per byte of those contiguous messages, on top of beta (the single
//                       copy runs on the receiver's core alone, while both sides of a pipeline
//                       copy at once, so the two paths can differ per byte)
//   pipeline_us         per struct datatype message above eager_limit_bytes (not contiguous:
//                       ob1 pipelines it through shared-memory fragments instead). A struct
//                       message whose parts are one run of memory on both sides is contiguous to
//                       Open MPI and pays rendezvous_us instead (features.h)
//   pipeline_us_per_byte  per byte of those pipelined messages, on top of beta; may be negative,
//                       down to -beta: the pipeline overlaps the sender's copy into fragments
//                       with the receiver's copy out of them, which an eager message (one
//                       fragment) cannot. With one price per message only, a fit must choose
//                       between a pipeline that is free for large messages and one that is dear
//                       for messages just above the limit
//   segment_us          per segment of a message sent or received by struct datatype (Open
//                       MPI's datatype engine walks them one by one on both sides; lower.h
//                       sends large blocks that way instead of copying them)
//   scatter_us_per_byte per byte a struct receive puts straight into the caller's scattered
//                       blocks (Open MPI's copy out of its fragments, dearer than a contiguous
//                       receive followed by a memcpy)
// The built-in prices are of the order of an intra-node Open MPI exchange; bench/calibrate fits
// the terms per machine and process count and writes a file (cost_model_file.h) that the MPI
// backend finds on its own (cost_model_locate.h). docs/cost-model.md says where the defaults
// come from and why terms were dropped.
// v1 had alpha and beta only: a v1 file loads with the other terms zero.
//
//   CostModel m;                       // defaults
//   double us = m.message_us(4096);    // alpha + beta * 4096 (+ rendezvous above the limit)
#pragma once

#include <cstdint>

namespace cartplan::engine {

struct CostModel {
  static constexpr double kDefaultAlphaUs = 1.0;
  static constexpr double kDefaultBetaUsPerByte = 0.0005;
  static constexpr double kDefaultPhaseUs = 0.5;
  // Without a calibration, the phase term where a node runs more processes than it has cores:
  // a rank that waits for the previous phase gives its core away, and the next phase waits for
  // a context switch, which costs several messages.
  static constexpr double kOversubscribedPhaseUs = 5.0;
  static constexpr double kDefaultCopyUsPerByte = 0.0002;
  // Open MPI 4.1 vader sends fragments of 4096 bytes that also hold ob1's match header, so a
  // 4096-byte payload already takes the rendezvous path.
  static constexpr std::int64_t kDefaultEagerLimitBytes = 4064;
  static constexpr double kDefaultRendezvousUs = 2.0;
  // The built-in model does not tell the two rendezvous paths apart; calibrate does (which one
  // is cheaper depends on the machine's single-copy mechanism).
  static constexpr double kDefaultPipelineUs = kDefaultRendezvousUs;
  // The built-in model prices a pipelined byte like any byte on the wire; calibrate fits it.
  static constexpr double kDefaultPipelineUsPerByte = 0;
  // Nor the per-byte price of the two paths; calibrate fits it (it needs large messages to show).
  static constexpr double kDefaultSingleCopyUsPerByte = 0;
  // The built-in price per segment; bench/calibrate fits it per machine.
  static constexpr double kDefaultSegmentUs = 0.06;
  // The built-in price of a scattered byte (a copy's price and a little more); bench/calibrate
  // fits it per machine.
  static constexpr double kDefaultScatterUsPerByte = 0.00005;
  double alpha_us = kDefaultAlphaUs;
  double beta_us_per_byte = kDefaultBetaUsPerByte;
  double phase_us = kDefaultPhaseUs;
  double copy_us_per_byte = kDefaultCopyUsPerByte;
  std::int64_t eager_limit_bytes = kDefaultEagerLimitBytes;  // messages above it pay rendezvous_us
  double rendezvous_us = kDefaultRendezvousUs;
  double single_copy_us_per_byte = kDefaultSingleCopyUsPerByte;
  double pipeline_us = kDefaultPipelineUs;
  double pipeline_us_per_byte = kDefaultPipelineUsPerByte;  // >= -beta_us_per_byte
  double segment_us = kDefaultSegmentUs;
  double scatter_us_per_byte = kDefaultScatterUsPerByte;

  // A message of `bytes` on its own (no phase, no copies).
  double message_us(std::int64_t bytes) const {
    const double b = static_cast<double>(bytes);
    return alpha_us + beta_us_per_byte * b + (bytes > eager_limit_bytes ? rendezvous_us + single_copy_us_per_byte * b : 0.0);
  }
  // The alpha/beta-only model of v1 (the other terms zero).
  static CostModel linear(double alpha_us, double beta_us_per_byte) {
    CostModel m;
    m.alpha_us = alpha_us;
    m.beta_us_per_byte = beta_us_per_byte;
    m.phase_us = 0;
    m.copy_us_per_byte = 0;
    m.rendezvous_us = 0;
    m.single_copy_us_per_byte = 0;
    m.pipeline_us = 0;
    m.pipeline_us_per_byte = 0;
    m.segment_us = 0;
    m.scatter_us_per_byte = 0;
    return m;
  }
  friend bool operator==(const CostModel&, const CostModel&) = default;
};

}  // namespace cartplan::engine
