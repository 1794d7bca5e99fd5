// Which combining candidates graph auto constructs and prices (Info cartplan_auto_candidates):
// auto pays every construction it prices before it picks (seed 003's pairing and cumulative
// take many rounds, the grid d rounds). The default, `auto`, constructs the grids only where
// auto may run them (a persistent init that agreed its block sizes) and seed 003's pair only
// where it may not: wherever the grids are priced the model never found pairing or cumulative
// worth their set-up (bench/results/graph_auto_cheap_model.md). Linear is always a candidate
// (the baseline every pick is measured against).
//
//   Result<AutoCandidates> a = parse_auto_candidates("auto");   // the default
//   AutoCandidates now = resolve_candidates(*a, grid_may_run);  // linear and the grids if it may
//   std::vector<TableCandidate> c = restrict_candidates(all_auto_candidates, now);
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/graph/price_table.h"
#include "ir/result.h"

namespace cartplan::engine::graph {

struct AutoCandidates {
  bool pairing = true;
  bool cumulative = true;
  bool grid = true;  // both grid rows (2-D and 3-D; cartplan_grid_dims narrows the pick further)
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

// The set auto constructs: `a` itself for all or a list; for auto, linear and the grids where
// `grid_allowed` (auto may run grid: price_table.h's without_grid), else linear, pairing and
// cumulative (the grids would be constructed for nothing). Every rank passes agreed values.
AutoCandidates resolve_candidates(const AutoCandidates& a, bool grid_allowed);

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
