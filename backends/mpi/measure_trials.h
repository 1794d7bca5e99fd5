// The timing half of measuring mode (docs/cost-model.md#measuring-mode), shared by persistent
// collectives (exchange_measure.h) and persistent halo exchanges (halo.h): which candidates to
// time, one agreement before the trials, round-robin synchronized trials whose samples every
// rank holds alike, and the choice among their medians.
//
//   std::vector<std::size_t> order = measure_order(predicted_us, model_pick);  // plan_cache.h
//   ... build one Exchange per candidate on scratch memory ...
//   bool skip = false;
//   MpiStatus s = agree_to_measure(comm, built, too_big, &skip);               // collective
//   std::size_t best = 0;
//   if (s.ok() && !skip) s = time_and_pick(xs, comm, names, predicted, &best);  // collective
//   ... build the exchange of candidate `best` on the caller's buffers (halo) ...
//   s = agree_on_kept(comm, kept_built);                                       // collective
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/mpi/exchange.h"
#include "backends/mpi/status.h"

namespace cartplan::mpi {

// Trials receive into scratch memory, never the caller's; beyond this many bytes of it a rank
// makes every rank skip the trials and keep the model's pick.
constexpr std::uint64_t kMeasureMaxScratchBytes = std::uint64_t{256} << 20;

// Collective over `comm`: one agreement before any trial runs. A rank that could not build a
// trial (`built` not ok; out of memory is MPI_ERR_NO_MEM, not an exception) fails every rank
// with the largest class; a rank whose scratch would be too large makes every rank skip the
// trials (*skip: keep the model's pick).
MpiStatus agree_to_measure(MPI_Comm comm, const MpiStatus& built, bool too_big, bool* skip);

// Collective over `comm`, after the trials: every rank learns whether any failed to build the
// exchange it keeps (the measured pick, on the caller's buffers), and then returns the largest
// error class (this rank's message if it failed), so that no rank returns a request whose
// peers returned an error.
MpiStatus agree_on_kept(MPI_Comm comm, const MpiStatus& built);

// Collective over `comm`: times xs (index 0: the model's pick) round-robin and sets *best to
// measured_pick of their medians, the same on every rank. With CARTPLAN_VERBOSE=1 rank
// `reporter` prints the trials (names[i], predicted_us[i] beside each).
MpiStatus time_and_pick(std::vector<std::unique_ptr<Exchange>>& xs, MPI_Comm comm, const std::vector<std::string>& names,
                        const std::vector<double>& predicted_us, bool reporter, std::size_t* best);

// Measuring mode's choice among the candidates' measured medians, the model's pick at index 0:
// the lowest median, but another candidate only if it is at least 5 % below the model's pick's.
// For example measured_pick({10, 9.6, 9.8}) == 0, ({10, 9, 8}) == 2.
std::size_t measured_pick(const std::vector<double>& medians);

}  // namespace cartplan::mpi
