// Measuring mode (Options::tune_measure, Info cartplan_tune = measure): at persistent init,
// time the optimizer's close candidates on scratch receive memory and keep the fastest on every
// rank, instead of the model's pick (docs/cost-model.md#measuring-mode).
//
//   Settlement settled;                        // from settle(), kind kPersistent
//   MpiStatus s = measure_candidates(nc, spec, options, settle_status, &settled);
//   // settled.entry may now be another candidate's plan, the same on every rank
#pragma once

#include <cstddef>
#include <vector>

#include "backends/mpi/exchange_settle.h"
#include "backends/mpi/measure_trials.h"  // measured_pick

namespace cartplan::mpi {

// Collective over the communicator (persistent init only). Replaces settled->entry with the
// candidate measured fastest by measured_pick; leaves it when there is one candidate or the
// receive span is too large for scratch (exchange_measure.cc). `settled`: settle's status; a
// rank whose settle failed after the agreement (past_agreement) still calls, and every rank
// then returns the largest error class (one agreement, made even with fewer than two candidates).
MpiStatus measure_candidates(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options, const MpiStatus& settled,
                             Settlement* agreed);

}  // namespace cartplan::mpi
