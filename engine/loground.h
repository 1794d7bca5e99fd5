// Log-round (Bruck-style) routing of one dimension inside a combining plan (seed 002,
// Sect. 5.3, algorithm c). Along dimension k the blocks with coordinate c != 0 are routed in
// sub-phases j = 0, 1, ..: sub-phase j shifts by +2^j (blocks with c > 0 whose |c| has bit j
// set) and by -2^j (the same for c < 0). So the values {1..s} take ceil(log2(s+1)) rounds per
// direction instead of s, at the price of popcount(|c|) hops per block and one phase per bit.
// Each block moves monotonically towards its target, so every intermediate lies between the
// origin and the target: on meshes bind() keeps exactly the entries whose origin and target
// exist, and never routes through a process outside the mesh (no restriction to periodic
// dimensions is needed). Plans stay rank-independent (every shift is the same on every process)
// and pass the same ir::verify(); they are combining plans of kind ir::PlanKind::kLogRound
// (JSON "algorithm": "log-round") whose log-routed dimensions have several phases.
//
// Allgather (and bcast and gather, which run its plan) routes positions, not blocks: its prefix
// tree (planner.h, allgather_tree) reaches value c of a log-routed dimension through the
// positions of c's partial sums, lowest bit first. Each position is received once and shared by
// every value that passes it; for {1..s} every partial sum is itself a value, so the volume is
// the linear plan's and only the rounds drop.
//
// The general ring version (a rank-dependent distance per process, e.g. Bruck's alltoall over
// all p ranks) is out of scope: a plan holds relative shifts that are the same on every
// process, so it cannot express "forward by my rank's distance" (docs/architecture.md, "Planners").
//
//   std::vector<bool> log = log_round_dims(nbh);           // dims where log rounds save rounds
//   ir::Plan p = plan_log_round(ir::Op::kAlltoall, nbh, auto_dim_order(nbh), log);
#pragma once

#include <vector>

#include "engine/neighborhood.h"
#include "ir/plan.h"

namespace cartplan::engine {

// Ops with log-round plans: alltoall and allgather, and the rooted ops that run their plans
// (scatter; bcast and gather). Not the reductions.
bool supports_log_rounds(ir::Op op);

// Rounds of dimension k: linear (one per distinct non-zero value) and log-round (per sign, the
// number of bit positions set in some |value| of that sign).
int linear_rounds(const Neighborhood& nbh, int k);
int log_rounds(const Neighborhood& nbh, int k);

// The dimensions where log rounds need fewer rounds than linear ones (and every |value| < 2^30).
std::vector<bool> log_round_dims(const Neighborhood& nbh);

// The combining plan of `op` in `dim_order`, log-routed in the dimensions with
// log_dims[k] (kind log-round); with no such dimension it is plan_combining's plan (kind
// combining). Requires supports_log_rounds(op) and |value| < 2^30 in the log-routed dimensions.
ir::Plan plan_log_round(ir::Op op, const Neighborhood& nbh, const std::vector<int>& dim_order,
                        const std::vector<bool>& log_dims);

}  // namespace cartplan::engine
