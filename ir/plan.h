// The plan IR: a rank-independent, immutable schedule of communication rounds for one
// Cartesian collective (see ../shared/design/ARCHITECTURE.md, "The plan IR").
//
// A plan holds no ranks, grid sizes or addresses. Buffers are named by kind and index
// (send/recv block i, temp slot k) and bound to memory only by a backend.
//
//   ir::Plan plan = engine::plan_combining(ir::Op::kAlltoall, nbh, engine::auto_dim_order(nbh));
//   for (const ir::Phase& phase : plan.phases())
//     for (const ir::Round& round : phase.rounds) use(round.shift, round.send, round.recv);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cartplan::ir {

// A relative coordinate vector (one entry per dimension).
using Offset = std::vector<int>;

enum class Op { kAlltoall, kAllgather };
enum class Algorithm { kDirect, kCombining };
enum class BufKind { kSend, kRecv, kTemp };

// A block of the send or recv buffer (index = neighbourhood position), or a temp slot.
struct BufRef {
  BufKind kind = BufKind::kSend;
  int index = 0;  // block index for send/recv, slot index for temp
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

// Rounds that run concurrently. `dim` is the routed dimension, or kAllDims for direct plans.
struct Phase {
  static constexpr int kAllDims = -1;
  int dim = kAllDims;
  std::vector<Round> rounds;
  friend bool operator==(const Phase&, const Phase&) = default;
};

// A local move after the last phase (zero offset; duplicate offsets in allgather).
struct Copy {
  BufRef from;
  BufRef to;
  friend bool operator==(const Copy&, const Copy&) = default;
};

// Temp slot k holds one block shaped like recv block `shape_of`.
struct TempSlot {
  int shape_of = 0;
  friend bool operator==(const TempSlot&, const TempSlot&) = default;
};

// The optimizer's inputs and its view of the combining alternative.
struct CostInfo {
  double alpha_us = 0;           // per message
  double beta_us_per_byte = 0;   // per byte
  std::int64_t block_bytes = 0;  // block size the prediction was made for
  int combining_rounds = 0;      // C = sum of C_k
  int combining_volume = 0;      // V of the combining plan in this plan's dimension order
  double direct_us = 0;          // t * (alpha + beta * m)
  double combining_us = 0;       // C * alpha + beta * V * m
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
  Algorithm algorithm = Algorithm::kDirect;
  int ndims = 0;
  std::vector<Offset> neighborhood;  // block i <-> neighborhood[i]
  std::vector<int> dim_order;
  std::vector<TempSlot> temp_slots;
  std::vector<Phase> phases;
  std::vector<Copy> copies;
  Stats stats;
  friend bool operator==(const PlanParts&, const PlanParts&) = default;
};

// An immutable plan. Built by a planner or parsed from JSON; never modified afterwards.
class Plan {
 public:
  explicit Plan(PlanParts parts) : p_(std::move(parts)) {}

  Op op() const { return p_.op; }
  Algorithm algorithm() const { return p_.algorithm; }
  int ndims() const { return p_.ndims; }
  const std::vector<Offset>& neighborhood() const { return p_.neighborhood; }
  int num_blocks() const { return static_cast<int>(p_.neighborhood.size()); }
  // Blocks in the send buffer: one per neighbour for alltoall, one for allgather.
  int num_send_blocks() const { return p_.op == Op::kAllgather ? 1 : num_blocks(); }
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

// Names used in JSON and text output.
const char* to_string(Op op);
const char* to_string(Algorithm algorithm);
const char* to_string(BufKind kind);
// "send[3]", "recv[0]", "temp[2]".
std::string to_string(const BufRef& ref);
// "(1,0,-1)"
std::string to_string(const Offset& offset);

}  // namespace cartplan::ir
