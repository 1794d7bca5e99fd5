// HaloPlan: the rank-independent schedule of one halo exchange over an array (docs/halo.md).
// Like ir::Plan it holds no ranks, grid sizes or addresses: every process runs the same phases
// of messages, each to self + shift and from self - shift. Unlike ir::Plan, a message carries
// boxes of cells, each with its place in the sender's buffers and in the receiver's; a box may
// lie in the sender's ghost region, i.e. carry cells an earlier phase delivered to the sender
// (the extended faces of the dimension-by-dimension exchange). Temps are scratch boxes of the
// plan for cells in transit that no ghost region of their holder may hold.
//
// A phase's messages run concurrently; the next phase starts when they have completed on this
// process. Part p of a message copies the cells from.lo + i (0 <= i < extent) of the sender's
// buffer to to.lo + i of the receiver's, in wire order of the parts. On meshes, bind
// (engine/halo/bind.h) decides per rank which parts travel.
//
//   const ir::halo::HaloPlan& plan = ...;
//   for (const auto& phase : plan.phases())
//     for (const auto& m : phase.messages)
//       for (const auto& p : m.parts) use(m.shift, p.from_box(), p.to_box());
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/halo/array.h"
#include "ir/halo/box.h"

namespace cartplan::ir::halo {

// How the plan was built (engine/halo/planners.h):
//  - direct:    one message per neighbour, in one phase;
//  - combining: seed 000's Algorithm 1 on the regions (each region a block of its own,
//               forwarded dimension by dimension through temps);
//  - dimwise:   one phase per dimension, extended faces over ghost cells of earlier phases,
//               no temps (stencils whose regions' prefixes are all in the stencil);
//  - split:     dimwise where the stencil allows, temps holding only the needed cells where a
//               region's prefix is not in the stencil (seed 000 Sect. 3.4: shared parts travel
//               once, along one tree);
//  - hybrid:    dimwise for the largest prefix-closed part of the stencil, the rest direct in
//               the first phase.
enum class HaloAlgorithm { kDirect, kCombining, kDimwise, kSplit, kHybrid };
const char* to_string(HaloAlgorithm algorithm);

enum class Buffer { kArray, kTemp };

// A corner of a box in one of a process's buffers: the array, or temp `slot`.
struct Place {
  Buffer buffer = Buffer::kArray;
  int slot = 0;  // temps only
  Cell lo;
  friend bool operator==(const Place&, const Place&) = default;
};

struct Part {
  Place from;  // in the sender's buffers
  Place to;    // in the receiver's buffers
  std::vector<int> extent;
  Box from_box() const { return Box{from.lo, extent}; }
  Box to_box() const { return Box{to.lo, extent}; }
  friend bool operator==(const Part&, const Part&) = default;
};

// Sent to self + shift, received from self - shift; tags are unique in the plan.
struct Message {
  Offset shift;
  int tag = 0;
  std::vector<Part> parts;
  friend bool operator==(const Message&, const Message&) = default;
};

struct Phase {
  static constexpr int kAllDims = -1;
  int dim = kAllDims;  // the dimension all shifts move along, or kAllDims
  std::vector<Message> messages;
  friend bool operator==(const Phase&, const Phase&) = default;
};

// Temp slot: a box [0, extent) of cells in the array's element type and order.
struct Temp {
  std::vector<int> extent;
  friend bool operator==(const Temp&, const Temp&) = default;
};

// Counts a plan's contents determine (derived_stats); verify() checks what a plan claims.
struct HaloStats {
  int messages = 0;              // per process (where every neighbour is another process)
  int phases = 0;
  std::int64_t wire_cells = 0;   // cells sent per process
  std::int64_t ghost_cells = 0;  // ghost cells one process must receive (every neighbour present)
  std::int64_t temp_cells = 0;   // cells of all temps
  friend bool operator==(const HaloStats&, const HaloStats&) = default;
};

struct HaloPlanParts {
  HaloAlgorithm algorithm = HaloAlgorithm::kDirect;
  ArrayShape array;
  // The stencil: the sign vectors whose ghost regions are filled, non-zero, distinct, in
  // increasing lexicographic order.
  std::vector<Offset> neighborhood;
  std::vector<int> dim_order;  // the order the phases route dimensions (direct: natural)
  std::vector<Temp> temps;
  std::vector<Phase> phases;
  HaloStats stats;
  friend bool operator==(const HaloPlanParts&, const HaloPlanParts&) = default;
};

// Immutable once built (by a planner or the JSON reader).
class HaloPlan {
 public:
  explicit HaloPlan(HaloPlanParts parts) : p_(std::move(parts)) {}
  HaloAlgorithm algorithm() const { return p_.algorithm; }
  const ArrayShape& array() const { return p_.array; }
  int ndims() const { return p_.array.ndims; }
  const std::vector<Offset>& neighborhood() const { return p_.neighborhood; }
  const std::vector<int>& dim_order() const { return p_.dim_order; }
  const std::vector<Temp>& temps() const { return p_.temps; }
  const std::vector<Phase>& phases() const { return p_.phases; }
  const HaloStats& stats() const { return p_.stats; }
  const HaloPlanParts& parts() const { return p_; }
  friend bool operator==(const HaloPlan&, const HaloPlan&) = default;

 private:
  HaloPlanParts p_;
};

// The stats of a plan's contents. Planners store them; verify() compares.
//   parts.stats = derived_stats(parts);
HaloStats derived_stats(const HaloPlanParts& parts);

// The bounds of a buffer: the array's whole box, or temp slot's [0, extent).
Box buffer_box(const HaloPlanParts& parts, Buffer buffer, int slot);

// "array", "temp[2]"
std::string buffer_name(Buffer buffer, int slot);

}  // namespace cartplan::ir::halo
