// Which combining candidates graph auto constructs and prices (Info cartplan_auto_candidates):
// auto pays every construction it prices before it picks (seed 003's pairing and cumulative
// take many rounds, the grid d rounds). The default, `auto`, constructs in a persistent init
// (where auto may run the grids) linear and the grids, and pairing and cumulative beside them
// only where p has no usable grid (grids_suffice: prime or badly factored p, where the grid is
// one message per peer or nearly); elsewhere (blocking, non-blocking) linear and seed 003's
// pair. The model (bench/results/graph_auto_cheap_model.md) prices what leaving the pair out
// loses where the grids suffice: at most 1.15x at its points (pairing, fat-tree model).
// Linear is always a candidate (the baseline every pick is measured against).
//
//   Result<AutoCandidates> a = parse_auto_candidates("auto");         // the default
//   AutoCandidates now = resolve_candidates(*a, grid_may_run, p, 0);  // linear and the grids if it may
//   std::vector<TableCandidate> c = restrict_candidates(all_auto_candidates, now);
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/graph/grid.h"
#include "engine/graph/price_table.h"
#include "ir/result.h"

namespace cartplan::engine::graph {

struct AutoCandidates {
  bool pairing = true;
  bool cumulative = true;
  bool grid = true;  // every grid row (2-D, 3-D, 4-D, most-D; cartplan_grid_dims narrows the pick further)
  // Info value auto: the three flags are replaced by resolve_candidates' choice.
  bool automatic = false;
  friend bool operator==(const AutoCandidates&, const AutoCandidates&) = default;
};

// The default (Info value auto).
inline constexpr AutoCandidates kAutomaticCandidates{true, true, true, true};

// "auto", "all", or a comma-separated list of linear, pairing, cumulative and grid (linear adds
// nothing: it is always a candidate; "linear" alone leaves auto only linear). Errors name the
// bad word.
Result<AutoCandidates> parse_auto_candidates(std::string_view value);

// Largest over smallest extent of a virtual grid that still counts as usable: p = 909 (101 x 9,
// 101 x 3 x 3) is where cumulative beats the grid in the model; every balanced grid of its
// points is within 2 (bench/results/graph_auto_cheap_model.md).
inline constexpr int kMaxGridAspect = 8;

// Whether p has a usable virtual grid (grid.h's grid_dims(p, d) for d = 2 and 3, or only
// `grid_d` (2, 3 or 4; 5 or more: the most-D grid grid_dims(p, kMaxGridD)) if it is not 0): 2 or
// more dimensions, the largest <= kMaxGridAspect x the smallest.
// True at p < 2 (nothing to combine). Only p: every rank agrees.
bool grids_suffice(int p, int grid_d);

// The set auto constructs: `a` itself for all or a list; for auto, where `grid_allowed` (auto may
// run grid: price_table.h's without_grid) linear and the grids, with pairing and cumulative too
// unless grids_suffice(p, grid_d); else linear, pairing and cumulative (the grids would be
// constructed for nothing). Every rank passes agreed values.
AutoCandidates resolve_candidates(const AutoCandidates& a, bool grid_allowed, int p, int grid_d);

// `candidates` without the rows `allowed` leaves out (linear always kept), in their order.
std::vector<TableCandidate> restrict_candidates(const std::vector<TableCandidate>& candidates, const AutoCandidates& allowed);

// Whether any combining candidate is left once grid is allowed or not (price_table.h's
// without_grid): none leaves auto nothing to construct or agree on, it runs linear.
bool any_combining(const AutoCandidates& allowed, bool grid_allowed);

// `pick` if the set allows it, else linear. pick_from_prices falls back to pairing when no
// combining row is priced (a row that prices 0 everywhere, the grids at p = 1, is no
// candidate): never a candidate the set left unconstructed.
TableCandidate allowed_pick(const TableCandidate& pick, const AutoCandidates& allowed);

// A small integer that tells two sets apart (bit 0 pairing, 1 cumulative, 2 grid, 3 auto): a
// key for agreed tables made from different sets, and for init's agreement on the Info value.
int candidates_key(const AutoCandidates& allowed);

}  // namespace cartplan::engine::graph
