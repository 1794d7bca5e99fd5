// CellClasses: the cells of a halo plan's buffers cut into boxes ("classes") that every part of
// the plan treats alike, so that verify() reasons about every cell while touching each class
// once. Per buffer and dimension the cuts are the buffer's bounds, the array's region bounds
// and every part's box bounds, closed under the parts' translations (a cut inside a part's
// source box is mirrored into its destination box and back). Then every part's box is a union
// of classes in both buffers and maps each class onto exactly one class: all cells of a class
// hold values of one process, shifted by one translation. A plan of the usual kind has a few
// cuts per dimension whatever the array's size.
//
//   Result<CellClasses> c = CellClasses::create(plan.parts());
//   c->for_each(CellClasses::kArrayFrame, box, [&](std::int64_t cls, const Cell& first) { ... });
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "ir/halo/plan.h"
#include "ir/result.h"

namespace cartplan::ir::halo {

class CellClasses {
 public:
  static constexpr int kArrayFrame = 0;  // frame 1 + s is temp slot s
  // Limits on what a hostile plan may cost: cuts per dimension and classes per buffer.
  static constexpr std::size_t kMaxCuts = 4096;
  static constexpr std::int64_t kMaxClasses = std::int64_t{1} << 22;
  // Steps of the closure (cuts mirrored, over all passes) before it gives up.
  static constexpr std::int64_t kMaxSteps = std::int64_t{1} << 27;

  // `plan` must be structurally valid (every box inside its buffer). Errors when the cuts
  // exceed the limits.
  static Result<CellClasses> create(const HaloPlanParts& plan);

  static int frame_of(Buffer buffer, int slot) { return buffer == Buffer::kArray ? kArrayFrame : 1 + slot; }
  int frames() const { return static_cast<int>(cuts_.size()); }
  std::int64_t count(int frame) const { return count_[frame]; }
  // f(class, first cell of the class) for every class of `box` (a union of classes), in
  // lexicographic order of their first cells.
  void for_each(int frame, const Box& box, const std::function<void(std::int64_t, const Cell&)>& f) const;
  // The number of classes of `box` (a union of classes).
  std::int64_t count_in(int frame, const Box& box) const;
  std::int64_t index_of(int frame, const Cell& x) const;
  Box class_box(int frame, std::int64_t index) const;

 private:
  std::vector<std::vector<std::vector<int>>> cuts_;  // [frame][dim]: sorted, first and last = bounds
  std::vector<std::int64_t> count_;
};

}  // namespace cartplan::ir::halo
