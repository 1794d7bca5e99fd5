// Names of the plan IR's enums and buffer references, shared by JSON and text output.
#include "ir/plan.h"

#include <algorithm>

namespace cartplan::ir {

int Plan::num_send_blocks() const { return personalized_send(p_.op) ? num_blocks() : 1; }
int Plan::num_recv_blocks() const { return one_recv_block(p_.op) ? 1 : num_blocks(); }

bool is_reduction(Op op) { return op == Op::kAllreduce || op == Op::kReduceScatter || op == Op::kReduce; }
bool is_rooted(Op op) { return root_is_origin(op) || root_is_target(op); }
bool is_reduction_or_rooted(Op op) { return is_reduction(op) || is_rooted(op); }
bool root_is_origin(Op op) { return op == Op::kBcast || op == Op::kScatter; }
bool root_is_target(Op op) { return op == Op::kGather || op == Op::kReduce; }

Op symmetric_op(Op op) {
  switch (op) {
    case Op::kBcast:
    case Op::kGather: return Op::kAllgather;
    case Op::kScatter: return Op::kAlltoall;
    case Op::kReduce: return Op::kAllreduce;
    default: return op;
  }
}

bool personalized_send(Op op) { return op == Op::kAlltoall || op == Op::kReduceScatter || op == Op::kScatter; }
bool one_recv_block(Op op) { return is_reduction(op); }
bool blocks_have_own_shape(Op op) { return op == Op::kAlltoall || op == Op::kScatter; }

Algorithm algorithm_of(PlanKind kind) { return kind == PlanKind::kDirect ? Algorithm::kDirect : Algorithm::kCombining; }

Stats derived_stats(const PlanParts& parts) {
  Stats s;
  for (const Offset& o : parts.neighborhood)
    if (std::any_of(o.begin(), o.end(), [](int x) { return x != 0; })) ++s.t;
  for (const Phase& phase : parts.phases) {
    s.phase_rounds.push_back(static_cast<int>(phase.rounds.size()));
    s.rounds += static_cast<int>(phase.rounds.size());
    for (const Round& r : phase.rounds) s.volume += static_cast<int>(r.send.size());
  }
  return s;
}

namespace {

// Schema 1 can express the plan's op and entries: alltoall/allgather, no reduce entries, no
// phase copies.
bool fits_schema1(const Plan& plan) {
  if (is_reduction_or_rooted(plan.op())) return false;
  for (const Phase& ph : plan.phases()) {
    if (!ph.copies.empty()) return false;
    for (const Round& r : ph.rounds)
      for (const BufRef& ref : r.recv)
        if (ref.reduce) return false;
  }
  for (const Copy& c : plan.copies())
    if (c.to.reduce) return false;
  return true;
}

}  // namespace

int min_schema_version(const Plan& plan) {
  if (plan.kind() == PlanKind::kLogRound || plan.kind() == PlanKind::kHybrid) return 3;
  return fits_schema1(plan) ? 1 : 2;
}

const char* to_string(Op op) {
  switch (op) {
    case Op::kAlltoall: return "alltoall";
    case Op::kAllgather: return "allgather";
    case Op::kAllreduce: return "allreduce";
    case Op::kReduceScatter: return "reduce_scatter";
    case Op::kBcast: return "bcast";
    case Op::kGather: return "gather";
    case Op::kScatter: return "scatter";
    case Op::kReduce: return "reduce";
  }
  return "?";
}

const char* to_string(Algorithm algorithm) {
  return algorithm == Algorithm::kDirect ? "direct" : "combining";
}

const char* to_string(PlanKind kind) {
  switch (kind) {
    case PlanKind::kDirect: return "direct";
    case PlanKind::kCombining: return "combining";
    case PlanKind::kLogRound: return "log-round";
    case PlanKind::kHybrid: return "hybrid";
  }
  return "?";
}

const char* to_string(BufKind kind) {
  switch (kind) {
    case BufKind::kSend: return "send";
    case BufKind::kRecv: return "recv";
    case BufKind::kTemp: return "temp";
  }
  return "?";
}

std::string to_string(const BufRef& ref) {
  return std::string(to_string(ref.kind)) + "[" + std::to_string(ref.index) + "]";
}

std::string to_string(const Offset& offset) {
  std::string s = "(";
  for (std::size_t k = 0; k < offset.size(); ++k) {
    if (k) s += ",";
    s += std::to_string(offset[k]);
  }
  return s + ")";
}

}  // namespace cartplan::ir
