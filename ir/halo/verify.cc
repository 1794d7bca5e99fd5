// Halo plan verification, first layer: structure, bounds and per-phase hazards; then the
// symbolic execution of trace.h.
#include "ir/halo/verify.h"

#include <set>

#include "ir/halo/error_list.h"
#include "ir/halo/trace.h"

namespace cartplan::ir::halo {
namespace {

constexpr std::size_t kMaxPhaseParts = std::size_t{1} << 14;

std::string part_where(int f, int i, const Message& m, int p) { return message_where(f, i, m) + ", part " + std::to_string(p); }

void check_header(const HaloPlanParts& p, ErrorList& errors) {
  if (auto e = neighborhood_error(p.array, p.neighborhood)) errors.add(*e);
  std::vector<bool> seen(p.array.ndims, false);
  bool perm = static_cast<int>(p.dim_order.size()) == p.array.ndims;
  for (int k : p.dim_order) {
    if (k < 0 || k >= p.array.ndims || seen[k]) perm = false;
    else seen[k] = true;
  }
  if (!perm) errors.add("dim_order " + to_string(Offset(p.dim_order)) + " is not a permutation of the array's dimensions");
  for (std::size_t s = 0; s < p.temps.size(); ++s) {
    const std::vector<int>& e = p.temps[s].extent;
    bool ok = static_cast<int>(e.size()) == p.array.ndims;
    double bytes = static_cast<double>(p.array.elem_bytes);
    for (int x : e) ok = ok && x >= 1 && x <= kMaxHaloExtent, bytes *= x;
    if (!ok) errors.add("temp[" + std::to_string(s) + "]: extent " + to_string(Offset(e)) + " is not a box of the array's dimensions");
    else if (bytes > 0x1p62) errors.add("temp[" + std::to_string(s) + "] has more than 2^62 bytes");
  }
}

bool place_ok(const HaloPlanParts& p, const Place& place, const std::vector<int>& extent, const std::string& at, const char* side,
              ErrorList& errors) {
  if (place.lo.size() != extent.size()) return errors.add(at + ": " + side + ".lo has the wrong number of coordinates"), false;
  if (place.buffer == Buffer::kTemp && (place.slot < 0 || place.slot >= static_cast<int>(p.temps.size())))
    return errors.add(at + ": " + side + " names temp[" + std::to_string(place.slot) + "], the plan has " + std::to_string(p.temps.size())), false;
  const Box b{place.lo, extent}, bounds = buffer_box(p, place.buffer, place.slot);
  if (!contains(bounds, b))
    return errors.add(at + ": " + side + " box " + to_string(b) + " leaves " + buffer_name(place.buffer, place.slot) + " " + to_string(bounds)), false;
  return true;
}

// One part's own checks; true if its boxes can be used for the phase checks.
bool check_part(const HaloPlanParts& p, const Part& part, const std::string& at, ErrorList& errors) {
  bool ok = static_cast<int>(part.extent.size()) == p.array.ndims;
  for (int e : part.extent) ok = ok && e >= 1;
  if (!ok) return errors.add(at + ": extent " + to_string(Offset(part.extent)) + " is not a non-empty box of the array's dimensions"), false;
  ok = place_ok(p, part.from, part.extent, at, "from", errors);
  ok = place_ok(p, part.to, part.extent, at, "to", errors) && ok;
  if (ok && part.to.buffer == Buffer::kArray && overlaps(part.to_box(), p.array.interior_box()))
    errors.add(at + ": writes interior cells " + to_string(intersect(part.to_box(), p.array.interior_box())) + " of the array");
  return ok;
}

bool check_message(const HaloPlanParts& p, const Phase& ph, int f, int i, std::set<int>& tags, ErrorList& errors) {
  const Message& m = ph.messages[i];
  const std::string at = message_where(f, i, m);
  bool ok = static_cast<int>(m.shift.size()) == p.array.ndims && is_sign_vector(m.shift);
  bool zero = true;
  for (std::size_t k = 0; ok && k < m.shift.size(); ++k) {
    zero = zero && m.shift[k] == 0;
    if (ph.dim >= 0 && static_cast<int>(k) != ph.dim && m.shift[k] != 0)
      errors.add(at + ": the phase routes dimension " + std::to_string(ph.dim) + ", the shift moves along " + std::to_string(k));
  }
  if (!ok || zero) errors.add(at + ": the shift is not a non-zero sign vector of " + std::to_string(p.array.ndims) + " coordinates");
  if (!tags.insert(m.tag).second) errors.add(at + ": tag " + std::to_string(m.tag) + " is used twice");
  if (m.parts.empty()) errors.add(at + ": a message without parts");
  for (std::size_t q = 0; q < m.parts.size(); ++q) ok = check_part(p, m.parts[q], part_where(f, i, m, q), errors) && ok;
  return ok && !zero;
}

struct Access {
  Buffer buffer;
  int slot;
  Box box;
  std::string where;
};

bool same_buffer(const Access& a, const Access& b) { return a.buffer == b.buffer && (a.buffer == Buffer::kArray || a.slot == b.slot); }

// All messages of a phase run at once: no cell written twice, none read and written. (Pairs of
// boxes: a phase may have at most kMaxPhaseParts parts, which keeps this quick.)
void check_hazards(const Phase& ph, int f, ErrorList& errors) {
  std::size_t parts = 0;
  for (const Message& m : ph.messages) parts += m.parts.size();
  if (parts > kMaxPhaseParts) {
    errors.add("phase " + std::to_string(f) + " has " + std::to_string(parts) + " parts; verify checks phases of at most " +
               std::to_string(kMaxPhaseParts));
    return;
  }
  std::vector<Access> reads, writes;
  for (std::size_t i = 0; i < ph.messages.size(); ++i) {
    const Message& m = ph.messages[i];
    for (std::size_t q = 0; q < m.parts.size(); ++q) {
      const Part& part = m.parts[q];
      reads.push_back({part.from.buffer, part.from.slot, part.from_box(), part_where(f, i, m, q)});
      writes.push_back({part.to.buffer, part.to.slot, part.to_box(), part_where(f, i, m, q)});
    }
  }
  for (std::size_t a = 0; a < writes.size(); ++a) {
    for (std::size_t b = a + 1; b < writes.size(); ++b) {
      if (same_buffer(writes[a], writes[b]) && overlaps(writes[a].box, writes[b].box))
        errors.add(writes[b].where + ": writes " + buffer_name(writes[b].buffer, writes[b].slot) + " cells " +
                   to_string(intersect(writes[a].box, writes[b].box)) + " that " + writes[a].where + " writes in the same phase");
    }
    for (const Access& r : reads) {
      if (same_buffer(writes[a], r) && overlaps(writes[a].box, r.box))
        errors.add(writes[a].where + ": writes " + buffer_name(r.buffer, r.slot) + " cells " + to_string(intersect(writes[a].box, r.box)) +
                   " that " + r.where + " sends in the same phase");
    }
  }
}

void check_body(const HaloPlanParts& p, ErrorList& errors) {
  std::set<int> tags;
  for (std::size_t f = 0; f < p.phases.size(); ++f) {
    const Phase& ph = p.phases[f];
    if (ph.dim < Phase::kAllDims || ph.dim >= p.array.ndims)
      errors.add("phase " + std::to_string(f) + ": dim " + std::to_string(ph.dim) + " is not a dimension of the array (or -1)");
    if (ph.messages.empty()) errors.add("phase " + std::to_string(f) + ": a phase without messages");
    bool ok = true;
    for (std::size_t i = 0; i < ph.messages.size(); ++i) ok = check_message(p, ph, f, i, tags, errors) && ok;
    if (ok) check_hazards(ph, f, errors);
  }
}

std::string stats_text(const HaloStats& s) {
  return "messages " + std::to_string(s.messages) + ", phases " + std::to_string(s.phases) + ", wire_cells " + std::to_string(s.wire_cells) +
         ", ghost_cells " + std::to_string(s.ghost_cells) + ", temp_cells " + std::to_string(s.temp_cells);
}

}  // namespace

std::string message_where(int phase, int message, const Message& m) {
  return "phase " + std::to_string(phase) + ", message " + std::to_string(message) + " (shift " + to_string(m.shift) + ", tag " +
         std::to_string(m.tag) + ")";
}

std::optional<std::string> neighborhood_error(const ArrayShape& a, const std::vector<Offset>& n) {
  if (auto e = shape_error(a)) return e;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string at = "neighbourhood offset " + to_string(n[i]);
    if (static_cast<int>(n[i].size()) != a.ndims) return at + " has " + std::to_string(n[i].size()) + " coordinates, the array " + std::to_string(a.ndims) + " dimensions";
    if (!is_sign_vector(n[i])) return at + " is not a sign vector: halo neighbourhoods name ghost regions by coordinates -1, 0 and 1 (a deeper halo is a wider ghost, not a farther offset)";
    if (n[i] == Offset(a.ndims, 0)) return at + ": the zero offset names no ghost region";
    if (i > 0 && !(n[i - 1] < n[i])) return at + ": offsets must be distinct and in increasing lexicographic order";
    for (int k = 0; k < a.ndims; ++k) {
      const int width = n[i][k] > 0 ? a.ghost_hi[k] : n[i][k] < 0 ? a.ghost_lo[k] : 0;
      if (width > a.interior[k])
        return std::string(n[i][k] > 0 ? "ghost_hi" : "ghost_lo") + "[" + std::to_string(k) + "] = " + std::to_string(width) +
               " is wider than the interior (" + std::to_string(a.interior[k]) + " cells) it is filled from (the neighbour at " + to_string(n[i]) + ")";
    }
  }
  return std::nullopt;
}

std::vector<std::string> verify_structure(const HaloPlan& plan, std::size_t max_errors) {
  ErrorList errors(max_errors);
  const HaloPlanParts& p = plan.parts();
  if (auto e = shape_error(p.array)) {
    errors.add(*e);
    return errors.take();
  }
  check_header(p, errors);
  if (!errors.empty()) return errors.take();
  check_body(p, errors);
  if (!errors.empty()) return errors.take();
  const HaloStats derived = derived_stats(p);
  if (!(derived == p.stats)) errors.add("stats say " + stats_text(p.stats) + "; the plan has " + stats_text(derived));
  return errors.take();
}

std::vector<std::string> verify(const HaloPlan& plan, std::size_t max_errors) {
  std::vector<std::string> errors = verify_structure(plan, max_errors);
  if (!errors.empty()) return errors;
  return trace_halo(plan, max_errors).errors;
}

}  // namespace cartplan::ir::halo
