// Halo plan helpers: names, buffer bounds and the derived stats.
#include "ir/halo/plan.h"

namespace cartplan::ir::halo {

const char* to_string(HaloAlgorithm a) {
  switch (a) {
    case HaloAlgorithm::kDirect: return "direct";
    case HaloAlgorithm::kCombining: return "combining";
    case HaloAlgorithm::kDimwise: return "dimwise";
    case HaloAlgorithm::kSplit: return "split";
    case HaloAlgorithm::kHybrid: return "hybrid";
  }
  return "?";
}

HaloStats derived_stats(const HaloPlanParts& p) {
  HaloStats s;
  for (const Phase& ph : p.phases) {
    if (!ph.messages.empty()) ++s.phases;
    s.messages += static_cast<int>(ph.messages.size());
    for (const Message& m : ph.messages) {
      for (const Part& part : m.parts) s.wire_cells += part.to_box().cells();
    }
  }
  for (const Offset& t : p.neighborhood) s.ghost_cells += ghost_region(p.array, t).cells();
  for (const Temp& t : p.temps) s.temp_cells += Box{std::vector<int>(t.extent.size(), 0), t.extent}.cells();
  return s;
}

Box buffer_box(const HaloPlanParts& p, Buffer buffer, int slot) {
  if (buffer == Buffer::kArray) return p.array.whole();
  const std::vector<int>& e = p.temps[slot].extent;
  return Box{std::vector<int>(e.size(), 0), e};
}

std::string buffer_name(Buffer buffer, int slot) {
  return buffer == Buffer::kArray ? "array" : "temp[" + std::to_string(slot) + "]";
}

}  // namespace cartplan::ir::halo
