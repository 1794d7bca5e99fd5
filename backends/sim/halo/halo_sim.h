// The halo simulator (docs/halo.md): runs every rank's halo program (engine/halo/program.h) on
// real arrays in one process and checks the result cell by cell. Interior cells hold values
// that depend on the rank and the cell; ghost cells start as a sentinel. Transfers move real
// bytes, region by region in the array's memory order (C or Fortran), as MPI subarray
// datatypes would; a receive must match the sender's transfer of its tag in size.
//
// Checked: no transfer is missing or left over; in a phase no cell is written twice, or read by
// a send and written by a receive; afterwards every required ghost cell (sign vector in the
// stencil, source process in the grid) holds the source cell's value and was written exactly
// once, every other ghost cell still holds the sentinel and was never written, and the
// interior is unchanged.
//
// Uneven decompositions (engine/halo/uneven.h): ranks may run plans of their own interiors.
// Each rank's array is its own plan's; a required ghost cell x of region t comes from the rank
// at self + t, cell x_k - n_k(self) where t_k = +1, x_k + n_k(source) where t_k = -1, x_k where
// t_k = 0, with n the interiors of the two ranks' plans. A rank whose interior breaks the block
// structure (its extent in dimension k differs from another rank's with the same coordinate k)
// shows up as receives of the wrong size or ghost cells with no source cell or a wrong value,
// where a message carries that extent: the simulator checks the data, so an exchange that stays
// consistent despite the odd interior (no message along the other dimensions carries it) passes.
//
//   Result<HaloSimReport> r = simulate_halo(binder, grid);
//   if (r && !r->ok) for (const std::string& e : r->errors) std::cerr << e << "\n";
//   r = simulate_halo_blocks(h, {{4, 3, 3}, {5, 4}}, HaloPlanOptions{}, *Grid::create({3, 2}, {true, false}));
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/grid.h"
#include "engine/halo/choose.h"
#include "engine/halo/description.h"
#include "engine/halo/bind.h"
#include "engine/halo/program.h"
#include "ir/result.h"

namespace cartplan::sim::halo {

struct HaloSimOptions {
  std::uint64_t seed = 1;                             // of the interior values
  std::int64_t max_memory_bytes = std::int64_t{1} << 30;  // arrays and temps of all ranks
  std::size_t max_errors = 50;
  // Tests only: changes each rank's program before it runs (fault injection).
  std::function<void(engine::halo::HaloProgram&)> tamper;
};

struct HaloSimReport {
  bool ok = true;
  std::vector<std::string> errors;
  int ranks = 0;
  std::int64_t transfers = 0;       // sends to other ranks, all ranks
  std::int64_t wire_bytes = 0;      // their bytes
  std::int64_t self_bytes = 0;      // bytes ranks sent to themselves
  std::int64_t ghost_bytes = 0;     // required ghost cells of all ranks, in bytes
  std::int64_t written_bytes = 0;   // ghost cells written, in bytes (== ghost_bytes when ok)
  std::int64_t max_rank_sent_bytes = 0;  // the most any rank sent (to others and itself)
  int phases = 0;
};

// Errors (not failures of the plan) for a grid of another dimension or more memory than allowed.
Result<HaloSimReport> simulate_halo(const engine::halo::HaloBinder& binder, const engine::Grid& grid, const HaloSimOptions& options = {});

// The plan of the rank at some coordinates (uneven decompositions: its own interior).
using HaloPlanOf = std::function<Result<ir::halo::HaloPlan>(const engine::Coords&)>;

// Every rank runs plan_of(its coordinates) (equal plans are bound once). Errors: plan_of's
// (named with the rank), a plan that does not verify, a plan of another dimension than the
// grid, more memory than allowed.
Result<HaloSimReport> simulate_halo(const HaloPlanOf& plan_of, const engine::Grid& grid, const HaloSimOptions& options = {});

// A block decomposition: the rank at coords runs engine::halo::plan_block(like on `grid`,
// extents, coords, options) (engine/halo/block_plan.h: `like`'s ghost widths, element, order and
// stencil with the interior interior_at(extents, coords), by make_halo_plan with
// choice_interior = the largest blocks, as every rank of the MPI backend and `cartplan halo
// plan/rank --global` plan), and all ranks run. Errors: extents that do not fit the grid
// (extents[k].size() != dims[k]), a rank's description or planning error (named with the rank),
// as simulate_halo.
Result<HaloSimReport> simulate_halo_blocks(const engine::halo::HaloDescription& like, const std::vector<std::vector<int>>& extents,
                                           engine::halo::HaloPlanOptions options, const engine::Grid& grid, const HaloSimOptions& sim = {});

}  // namespace cartplan::sim::halo
