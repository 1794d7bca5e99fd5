// Pricing halo programs through the cost model's term table.
#include "engine/halo/price.h"

namespace cartplan::engine::halo {

namespace {

// The positions whose programs differ: periodic dimensions one, others first, inside, last.
std::vector<Coords> representatives(const Grid& grid) {
  std::vector<std::vector<int>> per_dim;
  for (int k = 0; k < grid.ndims(); ++k) {
    const int n = grid.dims()[k];
    if (grid.periods()[k] || n == 1) per_dim.push_back({0});
    else if (n == 2) per_dim.push_back({0, 1});
    else per_dim.push_back({0, 1, n - 1});
  }
  std::vector<Coords> out(1);
  for (const std::vector<int>& values : per_dim) {
    std::vector<Coords> next;
    for (const Coords& c : out) {
      for (int v : values) {
        next.push_back(c);
        next.back().push_back(v);
      }
    }
    out = std::move(next);
  }
  return out;
}

}  // namespace

// Each send's own counts (a message, its bytes, the rendezvous step above the eager limit) are built
// once, added to the totals and, with a node map, to the placement counts and the phase's sides, as
// count_features does (engine/features.cc).
Features halo_features(const HaloProgram& program, std::int64_t eager_limit_bytes, const Grid* grid,
                       const Placement& placement_of) {
  Features f;
  const std::int64_t e = program.array.elem_bytes;
  const HaloCounts n = count(program);
  f.phases = n.phases;
  f.copy_bytes = static_cast<double>(n.self_bytes);
  const bool placement = grid && placement_of.spans_nodes(grid->size());
  const Coords here = placement ? grid->coords(program.rank) : Coords{};
  PlacementCounter placed;
  for (const HaloPhaseProgram& ph : program.phases) {
    for (const HaloTransfer& t : ph.sends) {
      if (t.peer == program.rank) continue;
      Features one;
      one.messages = 1;
      one.wire_bytes = static_cast<double>(t.cells * e);
      one.rendezvous = t.cells * e > eager_limit_bytes ? 1 : 0;
      add_scaled(f, one, 1.0);
      if (!placement) continue;
      Offset shift = grid->coords(t.peer);
      for (int k = 0; k < grid->ndims(); ++k) shift[k] -= here[k];
      placed.add(*shift_traffic(*grid, placement_of, shift), one.wire_bytes, 1.0, one, f);
    }
    if (placement) placed.end_phase(f);
  }
  return f;
}

HaloCost price_program(const HaloProgram& program, const CostModel& model, const Grid* grid, const Placement& placement) {
  HaloCost c;
  c.rank = program.rank;
  c.counts = count(program);
  for (const std::vector<int>& ext : program.temp_extents) {
    std::int64_t cells = 1;
    for (int x : ext) cells *= x;
    c.temp_bytes += cells * program.array.elem_bytes;
  }
  c.terms = price(halo_features(program, model.eager_limit_bytes, grid, placement), model);
  c.us = c.terms.total_us();
  return c;
}

Result<HaloCost> price_halo(const HaloBinder& binder, const CostModel& model, const std::optional<Grid>& grid,
                            const Placement& placement) {
  const int d = binder.plan().ndims();
  std::optional<Grid> g = grid;
  if (!g) {
    Result<Grid> torus = Grid::create(std::vector<int>(d, 3), std::vector<bool>(d, true));
    if (!torus) return fail(torus.error());
    g = *torus;
  }
  std::optional<HaloCost> best;
  for (const Coords& c : representatives(*g)) {
    Result<HaloProgram> p = lower_halo(binder, *g, c);
    if (!p) return fail(p.error());
    HaloCost cost = price_program(*p, model, grid ? &*g : nullptr, placement);
    if (!best || cost.us > best->us || (cost.us == best->us && cost.rank < best->rank)) best = cost;
  }
  return *best;
}

std::string explain(const HaloCost& c, const CostModel& m) { return engine::explain(c.terms, m); }

}  // namespace cartplan::engine::halo
