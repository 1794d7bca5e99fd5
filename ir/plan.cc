// Names of the plan IR's enums and buffer references, shared by JSON and text output.
#include "ir/plan.h"

namespace cartplan::ir {

const char* to_string(Op op) { return op == Op::kAlltoall ? "alltoall" : "allgather"; }

const char* to_string(Algorithm algorithm) {
  return algorithm == Algorithm::kDirect ? "direct" : "combining";
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
