// Do no harm: whether the drop-in runs a neighbourhood collective through cartplan or passes it
// to Open MPI unchanged.
//
// Open MPI runs every neighbourhood collective as one round of point-to-point messages, one per
// edge (the edges to the process itself included). cartplan accelerates a call only where the
// plan it would run is predicted cheaper than that by a clear margin, its own per-call cost
// included:
//     predicted(plan) + overhead(form) + completion(form)  <=  (1 - kClearMargin) * predicted(one message per edge)
// where overhead(form) = overhead_messages(form) * alpha and completion(form) is what finishing
// a non-blocking or persistent request through the progress engine costs (completion_us)
// with the communicator's cost model (a calibration found as the native API finds one, else the
// built-in defaults), on a node that runs more processes than it has cores with a phase term
// scaled by the oversubscription (oversubscribed_phase_us). A direct plan that sends what Open
// MPI sends is predicted the same, so it passes through; cartplan's direct plan is cheaper only
// where it sends fewer messages (the blocks of repeated offsets, which small grids make, go as
// one) or copies what Open MPI sends to the process itself. Every input is the same on every
// rank (the block size of a call, the agreed model and grid), so every rank decides alike.
//
// CARTPLAN_INTERPOSE_ALGORITHM=direct|combining forces that plan on every communicator the
// drop-in can take (for tests and experiments); auto (default) applies the rule above.
//
//   Verdict v = judge(*a.nc, entry->plan, {8}, Form::kNonblocking, a.per_core);
//   if (!v.accelerate) ... pass through; v.why says why (CARTPLAN_VERBOSE=1 prints it)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/mpi/neighborhood_comm.h"
#include "engine/grid.h"
#include "engine/lower.h"
#include "ir/plan.h"

namespace cartplan::interpose {

enum class Form { kBlocking, kNonblocking, kPersistent };
const char* form_name(Form form);

enum class Forced { kAuto, kDirect, kCombining };
// CARTPLAN_INTERPOSE_ALGORITHM (read once; anything else than auto, direct or combining is
// reported once on stderr and taken as auto).
Forced forced_algorithm();

// The clear margin: the cost model's terms are fitted within about 10 % for single plans
// (engine/optimizer.h, kHybridGain), so a smaller predicted gain is not one the model can see.
inline constexpr double kClearMargin = 0.10;

// What cartplan's code costs per call on top of the messages its plan sends, by form, counted
// in messages: the rule charges overhead_messages(form) * alpha of the model it prices with.
// Measured with bench/osu_neighbor.sh on a one-offset shift at np = 2, where cartplan's plan and
// Open MPI's send the same one message per process (forced direct against plain), divided by
// the per-message price bench/calibrate fitted on the same machine (alpha of
// bench/results/cpp-2core/cost_model.json): both are software on the CPU of the message path,
// so their ratio carries over to other machines better than microseconds would.
double overhead_messages(Form form);

// The phase term on a node that runs `per_core` processes of the job per core (above 1): a rank
// that waits for the previous phase gives its core away, and the phase can only start once the
// other processes sharing the core have run: about one context switch each.
// CostModel::kOversubscribedPhaseUs was measured with two processes per core (bash run.sh at
// np = 4 on 2 cores), so the term is that per extra process per core, never below `base`.
// For example 27 processes on 2 cores: 5 us * 12.5 = 62.5 us per phase.
double oversubscribed_phase_us(double base, double per_core);

// What completing a non-blocking or persistent request costs cartplan beyond Open MPI, on a
// node that runs `per_core` processes of the job per core. Open MPI's libnbc sees its messages
// complete by reading their completion flags inside a progress round; cartplan, outside Open
// MPI, learns it only by testing them with MPI_Testall from its progress callback (or from the
// waiting call), which runs a nested progress round, and on an oversubscribed node every round
// that finds nothing yields the core. The waiting process thus waits once more for the other
// processes sharing its core: one context switch each, as in oversubscribed_phase_us,
// kOversubscribedPhaseUs * (per_core - 1). With a core per process that nested round is only
// a poll of the transport, part of overhead_messages (measured at np = 2): 0. Blocking calls
// wait with MPI_Waitall on the messages themselves: 0.
double completion_us(Form form, double per_core);

struct Verdict {
  bool accelerate = false;
  std::string why;
};

// How many of the messages of cartplan's `plan` Open MPI sends as fragments (above the fast
// box's inline limit) in the program of a process with all its neighbours, each weighted by the
// share of processes that send it on a mesh; rank-independent. `lowering` must be the one the
// verdict predicts with and the executor agrees on (mpi::agreed_lower_options of the
// communicator's options): a trailer byte can push a message over the limit.
double cartplan_fragments(const ir::Plan& plan, const std::vector<std::int64_t>& block_bytes, const engine::Grid& grid,
                          const engine::LowerOptions& lowering);

// The decision for one call shape: `plan` is what cartplan would run (auto's pick, or the
// forced plan), `block_bytes` one size or one per block, `per_core` as agreed at detection.
Verdict judge(const mpi::NeighborhoodComm& nc, const ir::Plan& plan, const std::vector<std::int64_t>& block_bytes, Form form,
              double per_core);

}  // namespace cartplan::interpose
