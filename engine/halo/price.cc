// Pricing halo programs with the cost model's transport-neutral terms.
#include "engine/halo/price.h"

#include <cstdio>

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

std::string term(const char* name, double count, const char* unit, double price, double us) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s %.0f%s x %.4g = %.3f", name, count, unit, price, us);
  return buf;
}

}  // namespace

HaloCost price_program(const HaloProgram& program, const CostModel& model) {
  HaloCost c;
  c.rank = program.rank;
  c.counts = count(program);
  const std::int64_t e = program.array.elem_bytes;
  for (const HaloPhaseProgram& ph : program.phases) {
    for (const HaloTransfer& t : ph.sends) {
      if (t.peer == program.rank) continue;
      if (t.cells * e > model.eager_limit_bytes) c.rendezvous_us += model.rendezvous_us;
    }
  }
  for (const std::vector<int>& ext : program.temp_extents) {
    std::int64_t cells = 1;
    for (int x : ext) cells *= x;
    c.temp_bytes += cells * e;
  }
  c.message_us = model.alpha_us * static_cast<double>(c.counts.sends);
  c.wire_us = model.beta_us_per_byte * static_cast<double>(c.counts.sent_bytes);
  c.phase_us = model.phase_us * c.counts.phases;
  c.copy_us = model.copy_us_per_byte * static_cast<double>(c.counts.self_bytes);
  c.us = c.message_us + c.wire_us + c.rendezvous_us + c.phase_us + c.copy_us;
  return c;
}

Result<HaloCost> price_halo(const HaloBinder& binder, const CostModel& model, const std::optional<Grid>& grid) {
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
    HaloCost cost = price_program(*p, model);
    if (!best || cost.us > best->us || (cost.us == best->us && cost.rank < best->rank)) best = cost;
  }
  return *best;
}

std::string explain(const HaloCost& c, const CostModel& m) {
  const HaloCounts& n = c.counts;
  std::string s = term("messages", static_cast<double>(n.sends), "", m.alpha_us, c.message_us);
  s += " | " + term("wire", static_cast<double>(n.sent_bytes), " B", m.beta_us_per_byte, c.wire_us);
  s += " | " + term("rendezvous", m.rendezvous_us > 0 ? c.rendezvous_us / m.rendezvous_us : 0.0, "", m.rendezvous_us, c.rendezvous_us);
  s += " | " + term("phases", n.phases, "", m.phase_us, c.phase_us);
  s += " | " + term("self copies", static_cast<double>(n.self_bytes), " B", m.copy_us_per_byte, c.copy_us);
  return s;
}

}  // namespace cartplan::engine::halo
