// The halo simulator: every rank's program on real arrays, checked cell by cell.
#include "backends/sim/halo/halo_sim.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "engine/halo/block_plan.h"
#include "engine/halo/program.h"
#include "engine/halo/uneven.h"
#include "ir/halo/error_list.h"

namespace cartplan::sim::halo {

namespace ih = ir::halo;
namespace eh = engine::halo;

namespace {

constexpr std::uint8_t kGhostSentinel = 0xA5, kTempFill = 0x5A;

std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// One buffer of one rank: bytes in the array's order, and per cell its writes and the phase
// that last read or wrote it.
struct Storage {
  std::vector<int> sizes;
  std::vector<std::int64_t> strides;
  ih::Order order = ih::Order::kC;
  std::int64_t elem = 1;
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint8_t> writes;
  std::vector<int> read_in, written_in;

  Storage(std::vector<int> s, ih::Order o, std::int64_t e) : sizes(std::move(s)), strides(sizes.size()), order(o), elem(e) {
    std::int64_t stride = 1;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const std::size_t k = o == ih::Order::kC ? sizes.size() - 1 - i : i;
      strides[k] = stride;
      stride *= sizes[k];
    }
    bytes.assign(static_cast<std::size_t>(stride * e), 0);
    writes.assign(stride, 0);
    read_in.assign(stride, -1);
    written_in.assign(stride, -1);
  }
  // The 0-based coordinates of cell index i.
  std::vector<int> coords_of(std::int64_t i) const {
    std::vector<int> c(sizes.size());
    for (std::size_t k = 0; k < sizes.size(); ++k) c[k] = static_cast<int>((i / strides[k]) % sizes[k]);
    return c;
  }
  std::int64_t index(const std::vector<int>& start) const {
    std::int64_t i = 0;
    for (std::size_t k = 0; k < start.size(); ++k) i += start[k] * strides[k];
    return i;
  }
  // f(cell index) for every cell of the box, in memory order (the order MPI's subarray
  // datatype puts them on the wire).
  template <class F>
  void for_each(const std::vector<int>& start, const std::vector<int>& extent, F f) const {
    const std::size_t d = start.size();
    std::vector<int> j(d, 0);
    while (true) {
      std::int64_t i = 0;
      for (std::size_t k = 0; k < d; ++k) i += (start[k] + j[k]) * strides[k];
      f(i);
      std::size_t n = 0;
      for (; n < d; ++n) {
        const std::size_t k = order == ih::Order::kC ? d - 1 - n : n;
        if (++j[k] < extent[k]) break;
        j[k] = 0;
      }
      if (n == d) return;
    }
  }
};

// A region that lies inside an existing buffer (tampered programs may break this).
bool region_fits(const std::vector<Storage>& buffers, const eh::HaloRegion& r) {
  const int b = r.buffer == eh::HaloRegion::kArray ? 0 : 1 + r.buffer;
  if (b < 0 || b >= static_cast<int>(buffers.size())) return false;
  const std::vector<int>& sizes = buffers[b].sizes;
  if (r.start.size() != sizes.size() || r.extent.size() != sizes.size()) return false;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    if (r.start[k] < 0 || r.extent[k] < 1 || r.start[k] + r.extent[k] > sizes[k]) return false;
  }
  return true;
}

struct RankState {
  engine::Coords coords;
  eh::HaloProgram program;
  std::vector<Storage> buffers;  // 0: the array; 1 + s: temp s
  Storage& of(int buffer) { return buffers[buffer == eh::HaloRegion::kArray ? 0 : 1 + buffer]; }
};

void fill_value(std::uint64_t seed, int rank, std::int64_t cell, std::int64_t elem, std::uint8_t* out) {
  for (std::int64_t b = 0; b < elem; b += 8) {
    const std::uint64_t v = mix(seed ^ mix(static_cast<std::uint64_t>(rank) * 0x100000001B3ULL ^ mix(static_cast<std::uint64_t>(cell) + 977 * b)));
    std::memcpy(out + b, &v, static_cast<std::size_t>(std::min<std::int64_t>(8, elem - b)));
  }
}

class Simulation {
 public:
  // binders[r]: the binder of rank r's plan (uneven decompositions: its own).
  Simulation(std::vector<const eh::HaloBinder*> b, const engine::Grid& g, const HaloSimOptions& o)
      : binders_(std::move(b)), grid_(g), opt_(o), errors_(o.max_errors) {}
  Result<HaloSimReport> run();

 private:
  std::vector<const eh::HaloBinder*> binders_;
  const engine::Grid& grid_;
  const HaloSimOptions& opt_;
  ih::ErrorList errors_;
  std::vector<RankState> ranks_;
  HaloSimReport rep_;

  const ih::ArrayShape& array(int r) const { return binders_[r]->plan().array(); }
  using Mail = std::map<std::tuple<int, int, int>, std::vector<std::uint8_t>>;  // (from, to, tag) -> bytes
  std::optional<std::string> set_up();
  void run_phase(int f);
  void send_all(int f, Mail& mail);
  void receive_all(int f, Mail& mail);
  void check_rank(int r);
  // The source of rank r's ghost cell x (interior coordinates) of region t in the source's
  // array (0-based), or what is wrong (outside the source's interior: the block structure broke).
  std::optional<std::string> source_cell(int r, int source, const ir::Offset& t, const ih::Cell& x, ih::Cell* y, ih::Cell* at) const;
  // "array cell (-1,0)" (interior coordinates) or "temp[1] cell (0,2)".
  std::string cell_name(int r, int buffer, std::vector<int> c) const {
    if (buffer != eh::HaloRegion::kArray) return "temp[" + std::to_string(buffer) + "] cell " + ih::cell_string(c);
    for (int k = 0; k < array(r).ndims; ++k) c[k] -= array(r).ghost_lo[k];
    return "array cell " + ih::cell_string(c);
  }
  std::string rank_name(int r) const { return "rank " + std::to_string(r) + " " + ir::to_string(ranks_[r].coords); }
};

std::optional<std::string> Simulation::set_up() {
  double bytes = 0;
  for (int r = 0; r < grid_.size(); ++r) {
    const ih::ArrayShape& a = array(r);
    bytes += static_cast<double>(a.cells()) * (static_cast<double>(a.elem_bytes) + 9);
    for (const ih::Temp& t : binders_[r]->plan().temps()) {
      double c = 1;
      for (int x : t.extent) c *= x;
      bytes += c * (static_cast<double>(a.elem_bytes) + 9);
    }
  }
  if (bytes > static_cast<double>(opt_.max_memory_bytes))
    return "the arrays of " + std::to_string(grid_.size()) + " ranks need " + std::to_string(static_cast<long long>(bytes / (1 << 20))) +
           " MiB in the simulator (limit " + std::to_string(opt_.max_memory_bytes >> 20) + " MiB): use a smaller interior or grid";
  for (int r = 0; r < grid_.size(); ++r) {
    const ih::ArrayShape& a = array(r);
    std::vector<int> sizes(a.ndims);
    for (int k = 0; k < a.ndims; ++k) sizes[k] = a.extent(k);
    RankState s;
    s.coords = grid_.coords(r);
    Result<eh::HaloProgram> p = eh::lower_halo(*binders_[r], grid_, s.coords);
    if (!p) return p.error();
    s.program = std::move(*p);
    if (opt_.tamper) opt_.tamper(s.program);
    s.buffers.emplace_back(sizes, a.order, a.elem_bytes);
    for (const std::vector<int>& e : s.program.temp_extents) {
      s.buffers.emplace_back(e, a.order, a.elem_bytes);
      std::fill(s.buffers.back().bytes.begin(), s.buffers.back().bytes.end(), kTempFill);
    }
    Storage& arr = s.buffers[0];
    std::fill(arr.bytes.begin(), arr.bytes.end(), kGhostSentinel);
    arr.for_each(a.ghost_lo, a.interior, [&](std::int64_t i) { fill_value(opt_.seed, r, i, a.elem_bytes, &arr.bytes[i * a.elem_bytes]); });
    ranks_.push_back(std::move(s));
  }
  return std::nullopt;
}

void Simulation::run_phase(int f) {
  Mail mail;
  send_all(f, mail);
  receive_all(f, mail);
  for (const auto& [key, wire] : mail)
    errors_.add("phase " + std::to_string(f) + ": rank " + std::to_string(std::get<0>(key)) + " sends tag " + std::to_string(std::get<2>(key)) + " to rank " +
                std::to_string(std::get<1>(key)) + ", which does not receive it");
}

// Every rank's sends of phase f, packed from the state before the phase.
void Simulation::send_all(int f, Mail& mail) {
  for (int r = 0; r < grid_.size(); ++r) {
    if (f >= static_cast<int>(ranks_[r].program.phases.size())) continue;
    for (const eh::HaloTransfer& t : ranks_[r].program.phases[f].sends) {
      std::vector<std::uint8_t> wire;
      for (const eh::HaloRegion& reg : t.regions) {
        if (!region_fits(ranks_[r].buffers, reg)) {
          errors_.add("phase " + std::to_string(f) + ", " + rank_name(r) + ": a send region leaves its buffer");
          continue;
        }
        Storage& s = ranks_[r].of(reg.buffer);
        s.for_each(reg.start, reg.extent, [&](std::int64_t i) {
          s.read_in[i] = f;
          wire.insert(wire.end(), s.bytes.begin() + i * s.elem, s.bytes.begin() + (i + 1) * s.elem);
        });
      }
      std::int64_t& into = t.peer == r ? rep_.self_bytes : rep_.wire_bytes;
      into += static_cast<std::int64_t>(wire.size());
      if (t.peer != r) ++rep_.transfers;
      if (!mail.emplace(std::make_tuple(r, t.peer, t.tag), std::move(wire)).second)
        errors_.add("phase " + std::to_string(f) + ", " + rank_name(r) + ": two sends of tag " + std::to_string(t.tag) + " to rank " + std::to_string(t.peer));
    }
  }
}

// Every rank's receives of phase f, unpacked from the matching sends.
void Simulation::receive_all(int f, Mail& mail) {
  for (int r = 0; r < grid_.size(); ++r) {
    if (f >= static_cast<int>(ranks_[r].program.phases.size())) continue;
    const std::int64_t elem = array(r).elem_bytes;
    for (const eh::HaloTransfer& t : ranks_[r].program.phases[f].recvs) {
      const std::string at = "phase " + std::to_string(f) + ", " + rank_name(r) + ", receive tag " + std::to_string(t.tag) + " from rank " + std::to_string(t.peer);
      auto it = mail.find(std::make_tuple(t.peer, r, t.tag));
      if (it == mail.end()) {
        errors_.add(at + ": the rank sends no such message");
        continue;
      }
      const std::vector<std::uint8_t> wire = std::move(it->second);
      mail.erase(it);
      if (static_cast<std::int64_t>(wire.size()) != t.cells * elem) {
        errors_.add(at + ": " + std::to_string(wire.size()) + " bytes arrive, the receive expects " + std::to_string(t.cells * elem));
        continue;
      }
      std::size_t pos = 0;
      for (const eh::HaloRegion& reg : t.regions) {
        if (!region_fits(ranks_[r].buffers, reg)) {
          errors_.add(at + ": a receive region leaves its buffer");
          break;
        }
        Storage& s = ranks_[r].of(reg.buffer);
        s.for_each(reg.start, reg.extent, [&](std::int64_t i) {
          if (s.read_in[i] == f || s.written_in[i] == f) {
            errors_.add(at + ": writes " + cell_name(r, reg.buffer, s.coords_of(i)) + ", which is " + (s.read_in[i] == f ? "sent" : "written") +
                        " in the same phase");
          }
          s.written_in[i] = f;
          if (s.writes[i] < 255) ++s.writes[i];
          std::memcpy(&s.bytes[i * s.elem], &wire[pos], static_cast<std::size_t>(s.elem));
          pos += static_cast<std::size_t>(s.elem);
        });
      }
    }
  }
}

std::optional<std::string> Simulation::source_cell(int r, int source, const ir::Offset& t, const ih::Cell& x, ih::Cell* y, ih::Cell* at) const {
  const ih::ArrayShape &mine = array(r), &theirs = array(source);
  *y = x, *at = x;
  for (int k = 0; k < mine.ndims; ++k) {
    (*y)[k] = t[k] > 0 ? x[k] - mine.interior[k] : t[k] < 0 ? x[k] + theirs.interior[k] : x[k];
    (*at)[k] = (*y)[k] + theirs.ghost_lo[k];
    if ((*y)[k] < 0 || (*y)[k] >= theirs.interior[k])
      return "has no source cell: cell " + ih::cell_string(*y) + " lies outside the interior " + ir::to_string(theirs.interior) + " of rank " +
             std::to_string(source) + " (interiors must form blocks: one extent per coordinate of each dimension)";
  }
  return std::nullopt;
}

// The final state of one rank's array, cell by cell.
void Simulation::check_rank(int r) {
  const ih::ArrayShape& a = array(r);
  Storage& arr = ranks_[r].buffers[0];
  std::vector<std::uint8_t> want(static_cast<std::size_t>(a.elem_bytes));
  const std::vector<int> zero(a.ndims, 0);
  const std::set<ir::Offset> nbh(binders_[r]->plan().neighborhood().begin(), binders_[r]->plan().neighborhood().end());
  std::vector<int> sizes(a.ndims);
  for (int k = 0; k < a.ndims; ++k) sizes[k] = a.extent(k);
  arr.for_each(zero, sizes, [&](std::int64_t i) {
    ih::Cell x = arr.coords_of(i);
    for (int k = 0; k < a.ndims; ++k) x[k] -= a.ghost_lo[k];
    const ir::Offset t = ih::sign_of(a, x);
    const bool interior = t == ir::Offset(a.ndims, 0);
    const int source = interior ? r : nbh.count(t) ? grid_.relative_rank(ranks_[r].coords, t) : engine::kNoRank;
    const bool required = !interior && source != engine::kNoRank;
    std::string what;
    if (required) {
      ih::Cell y, at;  // the source cell, in interior coordinates and 0-based in the source's array
      std::optional<std::string> none = source_cell(r, source, t, x, &y, &at);
      want.resize(static_cast<std::size_t>(array(source).elem_bytes));
      if (!none) fill_value(opt_.seed, source, ranks_[source].buffers[0].index(at), array(source).elem_bytes, want.data());
      rep_.ghost_bytes += a.elem_bytes;
      rep_.written_bytes += arr.writes[i] > 0 ? a.elem_bytes : 0;
      if (none) what = *none;
      else if (arr.writes[i] != 1) what = "is written " + std::to_string(arr.writes[i]) + " times (required: once, from rank " + std::to_string(source) + ")";
      else if (want.size() != static_cast<std::size_t>(a.elem_bytes) || std::memcmp(want.data(), &arr.bytes[i * a.elem_bytes], want.size()) != 0)
        what = "holds a wrong value (expected cell " + ih::cell_string(y) + " of rank " + std::to_string(source) + ")";
    } else if (interior) {
      want.resize(static_cast<std::size_t>(a.elem_bytes));
      fill_value(opt_.seed, r, i, a.elem_bytes, want.data());
      if (arr.writes[i] != 0 || std::memcmp(want.data(), &arr.bytes[i * a.elem_bytes], want.size()) != 0) what = "(interior) was overwritten";
    } else if (arr.writes[i] != 0 || arr.bytes[i * a.elem_bytes] != kGhostSentinel) {
      what = "was written, but no cell may be: " + std::string(nbh.count(t) ? "its source lies outside the mesh" : "its sign vector " + ir::to_string(t) + " is not in the stencil");
    }
    if (!what.empty()) errors_.add(rank_name(r) + ": array cell " + ih::cell_string(x) + " " + what);
  });
}

Result<HaloSimReport> Simulation::run() {
  for (int r = 0; r < grid_.size(); ++r) {
    if (grid_.ndims() != array(r).ndims)
      return fail("the grid has " + std::to_string(grid_.ndims()) + " dimensions; the plan's array has " + std::to_string(array(r).ndims));
  }
  if (auto e = set_up()) return fail(*e);
  rep_.ranks = grid_.size();
  const int rank0_phases = static_cast<int>(binders_[0]->plan().phases().size());
  for (int r = 0; r < grid_.size(); ++r) {
    const int phases = static_cast<int>(binders_[r]->plan().phases().size());
    if (phases != rank0_phases)
      errors_.add(rank_name(r) + "'s plan has " + std::to_string(phases) + " phases, rank 0's " + std::to_string(rank0_phases));
    rep_.phases = std::max(rep_.phases, phases);  // every phase of every rank runs
  }
  for (int f = 0; f < rep_.phases; ++f) run_phase(f);
  for (int r = 0; r < grid_.size(); ++r) {
    check_rank(r);
    const engine::halo::HaloCounts c = engine::halo::count(ranks_[r].program);
    rep_.max_rank_sent_bytes = std::max(rep_.max_rank_sent_bytes, c.sent_bytes + c.self_bytes);
  }
  rep_.errors = errors_.take();
  rep_.ok = rep_.errors.empty();
  return rep_;
}

}  // namespace

Result<HaloSimReport> simulate_halo(const eh::HaloBinder& binder, const engine::Grid& grid, const HaloSimOptions& options) {
  Simulation sim(std::vector<const eh::HaloBinder*>(static_cast<std::size_t>(grid.size()), &binder), grid, options);
  return sim.run();
}

Result<HaloSimReport> simulate_halo(const HaloPlanOf& plan_of, const engine::Grid& grid, const HaloSimOptions& options) {
  std::deque<eh::HaloBinder> owned;
  std::multimap<std::vector<int>, const eh::HaloBinder*> by_interior;  // equal plans bound once
  std::vector<const eh::HaloBinder*> binders;
  for (int r = 0; r < grid.size(); ++r) {
    const std::string who = "rank " + std::to_string(r) + " " + ir::to_string(grid.coords(r)) + ": ";
    Result<ih::HaloPlan> plan = plan_of(grid.coords(r));
    if (!plan) return fail(who + plan.error());
    const eh::HaloBinder* same = nullptr;
    for (auto [it, end] = by_interior.equal_range(plan->array().interior); it != end && !same; ++it) same = it->second->plan() == *plan ? it->second : nullptr;
    if (!same) {
      Result<eh::HaloBinder> b = eh::HaloBinder::create(std::move(*plan));
      if (!b) return fail(who + b.error());
      same = &owned.emplace_back(std::move(*b));
      by_interior.emplace(same->plan().array().interior, same);
    }
    binders.push_back(same);
  }
  Simulation sim(std::move(binders), grid, options);
  return sim.run();
}

Result<HaloSimReport> simulate_halo_blocks(const eh::HaloDescription& like, const std::vector<std::vector<int>>& extents, eh::HaloPlanOptions options,
                                           const engine::Grid& grid, const HaloSimOptions& sim) {
  if (static_cast<int>(extents.size()) != grid.ndims())
    return fail("extents for " + std::to_string(extents.size()) + " dimensions; the grid has " + std::to_string(grid.ndims()));
  for (int k = 0; k < grid.ndims(); ++k) {
    if (static_cast<int>(extents[k].size()) != grid.dims()[k])
      return fail("extents[" + std::to_string(k) + "] has " + std::to_string(extents[k].size()) + " blocks; the grid has " + std::to_string(grid.dims()[k]) +
                  " processes in dimension " + std::to_string(k));
  }
  eh::HaloDescription on_grid = like;
  on_grid.grid = grid;
  std::map<std::vector<int>, ih::HaloPlan> plans;  // by interior: ranks of one interior share a plan
  return simulate_halo(
      [&](const engine::Coords& coords) -> Result<ih::HaloPlan> {
        const std::vector<int> interior = eh::interior_at(extents, coords);
        if (auto it = plans.find(interior); it != plans.end()) return it->second;
        Result<ih::HaloPlan> p = eh::plan_block(on_grid, extents, coords, options);
        if (!p) return fail(p.error());
        return plans.emplace(interior, std::move(*p)).first->second;
      },
      grid, sim);
}

}  // namespace cartplan::sim::halo
