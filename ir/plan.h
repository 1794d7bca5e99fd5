// The plan IR: a rank-independent, immutable schedule of communication rounds for one
// Cartesian collective (docs/plan-ir.md; the design: docs/architecture.md).
//
// A plan holds no ranks, grid sizes or addresses. Buffers are named by kind and index
// (send/recv block i, temp slot k) and bound to memory only by a backend.
//
//   ir::Plan plan = engine::plan_combining(ir::Op::kAlltoall, nbh, engine::auto_dim_order(nbh));
//   for (const ir::Phase& phase : plan.phases())
//     for (const ir::Round& round : phase.rounds) use(round.shift, round.send, round.recv);
#pragma once

#include <cassert>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cartplan::ir {

// The most dimensions anything in cartplan has: plans (the JSON parser), grids and
// neighbourhoods all check against this one limit.
inline constexpr int kMaxDims = 16;

// A relative coordinate vector (one entry per dimension).
using Offset = std::vector<int>;

// The collectives. Schema cartplan.plan/1 knows only alltoall and allgather; the reductions and
// the rooted operations (seed 001 Sect. 2, seed 002 Sect. 4) need cartplan.plan/2.
//  - allreduce:      recv[0] = op over send[0] of the processes at -neighborhood[i], every i
//                    (the zero offset contributes the own vector, a duplicate offset several times)
//  - reduce_scatter: recv[0] = op over send[i] of the processes at -neighborhood[i], every i
//  - bcast, gather, scatter, reduce: rooted. A rooted plan is the plan of its symmetric op
//    (bcast, gather: allgather; scatter: alltoall; reduce: allreduce) run by every process; the
//    root is not part of the plan (plans are rank-independent) but an argument of bind(), which
//    keeps only data that starts at the root (bcast, scatter) or ends at the root (gather,
//    reduce). So data moves only within the root's neighbourhood, as seed 001 defines.
enum class Op { kAlltoall, kAllgather, kAllreduce, kReduceScatter, kBcast, kGather, kScatter, kReduce };
// How blocks travel (seed 000): straight to their targets (direct), or forwarded and combined
// on the way (combining).
enum class Algorithm { kDirect, kCombining };
// What a plan is, named by the planner that built it (JSON "algorithm"; the last two need
// schema cartplan.plan/3):
//  - kDirect:    plan_direct, every block in one all-dimensions phase;
//  - kCombining: plan_combining, one phase per routed dimension;
//  - kLogRound:  plan_log_round with a log-routed dimension (several phases along it, loground.h);
//  - kHybrid:    plan_hybrid, some offsets sent directly in front of the combining phases.
// Log-round and hybrid plans forward blocks: their algorithm is combining.
enum class PlanKind { kDirect, kCombining, kLogRound, kHybrid };
Algorithm algorithm_of(PlanKind kind);
enum class BufKind { kSend, kRecv, kTemp };

// A block of the send or recv buffer (index = neighbourhood position), or a temp slot.
// `reduce` is only meaningful where data is written (a round's recv entries, a copy's `to`), and
// only in reduction plans: the incoming data is combined into the location with the
// collective's op instead of overwriting it. A location that holds no data yet (on a mesh, or
// before its first write) simply takes the incoming data. The op itself is not in the plan.
struct BufRef {
  BufKind kind = BufKind::kSend;
  int index = 0;  // block index for send/recv, slot index for temp
  bool reduce = false;
  friend bool operator==(const BufRef&, const BufRef&) = default;
};

// One send-receive: send `send` (packed in list order) to self+shift, receive the same
// number of entries into `recv` from self-shift. `tag` is unique per round in the plan.
struct Round {
  Offset shift;
  int tag = 0;
  std::vector<BufRef> send;
  std::vector<BufRef> recv;
  friend bool operator==(const Round&, const Round&) = default;
};

// A local move (zero offset; duplicate offsets in allgather) or, with to.reduce, a local
// reduction (the own contribution in reduction plans).
struct Copy {
  BufRef from;
  BufRef to;
  friend bool operator==(const Copy&, const Copy&) = default;
};

// Rounds that run concurrently. `dim` is the routed dimension, or kAllDims for direct plans.
// `copies` (schema 2) are local steps run in list order after all receives of the phase have
// been applied and before the next phase starts (partial sums of combining reductions).
struct Phase {
  static constexpr int kAllDims = -1;
  int dim = kAllDims;
  std::vector<Round> rounds;
  std::vector<Copy> copies = {};
  friend bool operator==(const Phase&, const Phase&) = default;
};

// Temp slot k holds one block shaped like recv block `shape_of`.
struct TempSlot {
  int shape_of = 0;
  friend bool operator==(const TempSlot&, const TempSlot&) = default;
};

// The optimizer's inputs and its view of the combining alternative (engine::with_choice_stats).
struct CostInfo {
  double alpha_us = 0;           // the model's per-message price
  double beta_us_per_byte = 0;   // the model's per-byte price
  std::int64_t block_bytes = 0;  // block size the prediction was made for (the mean of per-block sizes)
  int combining_rounds = 0;      // C = sum of C_k
  int combining_volume = 0;      // V of the combining plan in this plan's dimension order
  // Predicted totals (engine::predict, every term of the cost model, the request's block sizes
  // and grid) of the direct plan and of the combining plan in this plan's dimension order.
  // Under the linear model alone, without a grid and with distinct offsets, they are
  // t * (alpha + beta * m) and C * alpha + beta * V * m.
  double direct_us = 0;
  double combining_us = 0;
  friend bool operator==(const CostInfo&, const CostInfo&) = default;
};

struct Stats {
  int t = 0;       // non-zero offsets (the self block is a local copy)
  int rounds = 0;  // communication rounds
  int volume = 0;  // block transfers per process
  std::vector<int> phase_rounds;
  // (t - C) / (V - t) with t = non-zero offsets; nullopt when V <= t (combining never sends more).
  std::optional<double> cutoff_ratio;
  std::optional<CostInfo> cost;  // set by the optimizer
  friend bool operator==(const Stats&, const Stats&) = default;
};

// Everything a plan consists of; build one, then freeze it into a Plan.
struct PlanParts {
  Op op = Op::kAlltoall;
  PlanKind kind = PlanKind::kDirect;
  // algorithm_of(kind), filled in by Plan's constructor: set `kind`. (A field, not a function,
  // because engine/optimizer.cc reads parts.algorithm; a value set here must agree with kind.)
  Algorithm algorithm = Algorithm::kDirect;
  int ndims = 0;
  std::vector<Offset> neighborhood;  // block i <-> neighborhood[i]
  std::vector<int> dim_order;
  std::vector<TempSlot> temp_slots;
  std::vector<Phase> phases;
  std::vector<Copy> copies = {};
  Stats stats;
  friend bool operator==(const PlanParts&, const PlanParts&) = default;
};

// An immutable plan. Built by a planner or parsed from JSON; never modified afterwards.
class Plan {
 public:
  explicit Plan(PlanParts parts) : p_(std::move(parts)) {
    assert((p_.algorithm == Algorithm::kDirect || p_.algorithm == algorithm_of(p_.kind)) && "set PlanParts::kind");
    p_.algorithm = algorithm_of(p_.kind);
  }

  Op op() const { return p_.op; }
  PlanKind kind() const { return p_.kind; }
  // Direct, or combining for every kind that forwards blocks (combining, log-round, hybrid).
  Algorithm algorithm() const { return p_.algorithm; }
  int ndims() const { return p_.ndims; }
  const std::vector<Offset>& neighborhood() const { return p_.neighborhood; }
  int num_blocks() const { return static_cast<int>(p_.neighborhood.size()); }
  // Blocks in the send buffer: one per neighbour (alltoall, reduce_scatter, scatter) or one.
  int num_send_blocks() const;
  // Blocks in the recv buffer: one per neighbour, or one for allreduce, reduce_scatter, reduce.
  int num_recv_blocks() const;
  const std::vector<int>& dim_order() const { return p_.dim_order; }
  const std::vector<TempSlot>& temp_slots() const { return p_.temp_slots; }
  const std::vector<Phase>& phases() const { return p_.phases; }
  const std::vector<Copy>& copies() const { return p_.copies; }
  const Stats& stats() const { return p_.stats; }
  const PlanParts& parts() const { return p_; }

  // A copy of this plan with other statistics (how the optimizer stamps its prediction).
  Plan with_stats(Stats stats) const {
    PlanParts parts = p_;
    parts.stats = std::move(stats);
    return Plan(std::move(parts));
  }

  friend bool operator==(const Plan&, const Plan&) = default;

 private:
  PlanParts p_;
};

// Properties of the ops (see Op).
bool is_reduction(Op op);       // allreduce, reduce_scatter, reduce
bool is_rooted(Op op);          // bcast, gather, scatter, reduce
// Every op but alltoall and allgather: a reduction (data is combined) or rooted (bind() keeps
// only the data of one root), or both (reduce). The one name for this group: such plans need
// schema 2, and their lowering and MPI execution take a path of their own.
bool is_reduction_or_rooted(Op op);
bool root_is_origin(Op op);     // bcast, scatter: only the root's data moves
bool root_is_target(Op op);     // gather, reduce: only data for the root moves
Op symmetric_op(Op op);         // the op whose plan a rooted op runs (identity otherwise)
bool personalized_send(Op op);  // one send block per neighbour: alltoall, reduce_scatter, scatter
bool one_recv_block(Op op);     // allreduce, reduce_scatter, reduce
// Block i has its own shape (alltoall, scatter); otherwise every block has the same shape.
bool blocks_have_own_shape(Op op);
// The stats a plan's own contents determine, counted in one place: t (non-zero offsets),
// rounds, volume and phase_rounds; cutoff_ratio and cost stay unset (the optimizer's). Planners
// store them, verify() compares them with what a plan claims.
//   parts.stats = derived_stats(parts);
Stats derived_stats(const PlanParts& parts);
// The lowest JSON schema version that can express the plan: 1 (alltoall/allgather, no reduce
// entries, no phase copies, direct or combining), 2 (any op, direct or combining), 3 (log-round
// and hybrid plans).
int min_schema_version(const Plan& plan);

// Names used in JSON and text output.
const char* to_string(Op op);
const char* to_string(Algorithm algorithm);
const char* to_string(PlanKind kind);  // "direct", "combining", "log-round", "hybrid"
const char* to_string(BufKind kind);
// "send[3]", "recv[0]", "temp[2]".
std::string to_string(const BufRef& ref);
// "(1,0,-1)"
std::string to_string(const Offset& offset);

// Deprecated: to_string(plan.kind()). Kept for tools/halo.cc and engine/optimizer_test.cc.
inline const char* plan_shape(const Plan& plan) { return to_string(plan.kind()); }

}  // namespace cartplan::ir
