// Neighborhood: the same list of relative offsets on every process (a t-neighbourhood).
// Duplicates and the zero offset are allowed; block i of a collective belongs to offset i.
//
//   Result<Neighborhood> n = Neighborhood::create(2, {{1, 0}, {-1, 0}, {0, 1}, {0, -1}});
//   int C0 = n->distinct_nonzero(0);   // C_k of seed 000: distinct non-zero k-th coordinates
#pragma once

#include <vector>

#include "ir/plan.h"
#include "ir/result.h"

namespace cartplan::engine {

using ir::Offset;

class Neighborhood {
 public:
  // Limits that keep planning and 64-bit arithmetic safe; exceeding them is a user error.
  static constexpr int kMaxDims = ir::kMaxDims;  // the one limit (ir/plan.h)
  static constexpr int kMaxOffsets = 1 << 20;
  static constexpr int kMaxCoordinate = 1 << 28;

  // ndims in [1, kMaxDims], 1..kMaxOffsets offsets each of length ndims, |coordinate| <= kMaxCoordinate.
  static Result<Neighborhood> create(int ndims, std::vector<Offset> offsets);

  int ndims() const { return ndims_; }
  int size() const { return static_cast<int>(offsets_.size()); }  // entries, incl. zero and duplicates
  const std::vector<Offset>& offsets() const { return offsets_; }
  const Offset& operator[](int i) const { return offsets_[i]; }

  int nonzero_count() const;             // t of the stats: offsets other than the zero vector
  int distinct_nonzero(int dim) const;   // C_k
  static bool is_zero(const Offset& o);
  static int nonzeros(const Offset& o);  // z_i: hops of block i

 private:
  Neighborhood(int ndims, std::vector<Offset> offsets) : ndims_(ndims), offsets_(std::move(offsets)) {}
  int ndims_ = 0;
  std::vector<Offset> offsets_;
};

}  // namespace cartplan::engine
