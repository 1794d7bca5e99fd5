// Graph auto's candidate set from Info cartplan_auto_candidates: parsing and filtering.
#include "engine/graph/auto_candidates.h"

#include "engine/graph/grid.h"

namespace cartplan::engine::graph {

using ir::graph::GraphAlgorithm;

Result<AutoCandidates> parse_auto_candidates(std::string_view value) {
  if (value == "all") return AutoCandidates{};
  if (value == "auto") return kAutomaticCandidates;
  AutoCandidates a{false, false, false};
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = value.find(',', start);
    const std::string_view word = value.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (word == "pairing") a.pairing = true;
    else if (word == "cumulative") a.cumulative = true;
    else if (word == "grid") a.grid = true;
    else if (word != "linear")
      return fail("'" + std::string(word) + "' is not a candidate (expected auto, all, or a comma-separated list of linear, pairing, cumulative and grid)");
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return a;
}

std::vector<TableCandidate> restrict_candidates(const std::vector<TableCandidate>& candidates, const AutoCandidates& allowed) {
  std::vector<TableCandidate> out;
  for (const TableCandidate& c : candidates) {
    const bool keep = c.algorithm == GraphAlgorithm::kLinear || (c.algorithm == GraphAlgorithm::kPairing && allowed.pairing) ||
                      (c.algorithm == GraphAlgorithm::kCumulative && allowed.cumulative) ||
                      (c.algorithm == GraphAlgorithm::kGrid && allowed.grid);
    if (keep) out.push_back(c);
  }
  return out;
}

bool grids_suffice(int p, int grid_d) {
  if (p < 2) return true;  // nothing to combine
  for (const int d : {2, 3, 4, kMaxGridD}) {
    // auto: as the 2-D and 3-D grids say; 5 or more: the most-D grid (price_table.h's only_grid_d)
    if (grid_d == 0 ? d > 3 : grid_d > 4 ? d != kMaxGridD : grid_d != d) continue;
    const std::vector<int> dims = grid_dims(p, d);  // extents of 1 dropped, non-increasing
    if (dims.size() >= 2 && dims.front() <= kMaxGridAspect * dims.back()) return true;
  }
  return false;
}

AutoCandidates resolve_candidates(const AutoCandidates& a, bool grid_allowed, int p, int grid_d) {
  if (!a.automatic) return a;
  if (!grid_allowed) return AutoCandidates{true, true, false};
  return grids_suffice(p, grid_d) ? AutoCandidates{false, false, true} : AutoCandidates{true, true, true};
}

bool any_combining(const AutoCandidates& a, bool grid_allowed) { return a.pairing || a.cumulative || (a.grid && grid_allowed); }

TableCandidate allowed_pick(const TableCandidate& pick, const AutoCandidates& allowed) {
  return restrict_candidates({pick}, allowed).empty() ? TableCandidate{} : pick;
}

int candidates_key(const AutoCandidates& a) {
  return (a.pairing ? 1 : 0) | (a.cumulative ? 2 : 0) | (a.grid ? 4 : 0) | (a.automatic ? 8 : 0);
}

}  // namespace cartplan::engine::graph
