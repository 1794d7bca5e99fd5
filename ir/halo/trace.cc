// Element-level symbolic execution of halo plans over cell classes: values forward, then the
// final holders of every part backward.
#include "ir/halo/trace.h"

#include <optional>
#include <set>

#include "ir/halo/cell_classes.h"
#include "ir/halo/error_list.h"
#include "ir/halo/verify.h"

namespace cartplan::ir::halo {
namespace {

std::vector<int> plus(std::vector<int> a, const std::vector<int>& b, int sign = 1) {
  for (std::size_t k = 0; k < a.size(); ++k) a[k] += sign * b[k];
  return a;
}

// The value of cell x + delta of the process at holder + origin.
struct Content {
  Offset origin;
  std::vector<int> delta;
  friend bool operator==(const Content&, const Content&) = default;
};

std::string value_text(const Cell& x, const Content& c) {
  return "cell " + cell_string(plus(x, c.delta)) + " of the process at " + to_string(c.origin);
}

struct Write {
  int frame;
  std::int64_t cls;
  Cell cell;
  Content content;
  std::string where;
};

class Tracer {
 public:
  Tracer(const HaloPlanParts& p, const CellClasses& c, ErrorList& errors)
      : p_(p), c_(c), errors_(errors), nbh_(p.neighborhood.begin(), p.neighborhood.end()) {
    for (int f = 0; f < c.frames(); ++f) state_.emplace_back(c.count(f));
    first_writer_.resize(c.count(CellClasses::kArrayFrame));
    c_.for_each(CellClasses::kArrayFrame, p.array.interior_box(),
                [&](std::int64_t cls, const Cell&) { state_[0][cls] = Content{Offset(p.array.ndims, 0), std::vector<int>(p.array.ndims, 0)}; });
    parts_.resize(p.phases.size());
    for (std::size_t f = 0; f < p.phases.size(); ++f) {
      parts_[f].resize(p.phases[f].messages.size());
      for (std::size_t i = 0; i < parts_[f].size(); ++i) parts_[f][i].resize(p.phases[f].messages[i].parts.size());
    }
  }

  void forward() {
    for (std::size_t f = 0; f < p_.phases.size(); ++f) {
      std::vector<Write> writes;
      const Phase& ph = p_.phases[f];
      for (std::size_t i = 0; i < ph.messages.size(); ++i) {
        for (std::size_t q = 0; q < ph.messages[i].parts.size(); ++q) read_part(f, i, q, writes);
      }
      for (Write& w : writes) apply(w);
    }
  }

  void check_final();
  void backward();
  std::vector<std::vector<std::vector<PartTrace>>> take_parts() { return std::move(parts_); }

 private:
  const HaloPlanParts& p_;
  const CellClasses& c_;
  ErrorList& errors_;
  std::set<Offset> nbh_;
  std::vector<std::vector<std::optional<Content>>> state_;  // [frame][class]
  std::vector<std::string> first_writer_;                    // array classes
  std::vector<std::vector<std::vector<PartTrace>>> parts_;

  void read_part(std::size_t f, std::size_t i, std::size_t q, std::vector<Write>& writes);
  void apply(const Write& w);
};

// The values a part carries (as they are before the phase), and where they go.
void Tracer::read_part(std::size_t f, std::size_t i, std::size_t q, std::vector<Write>& writes) {
  const Message& m = p_.phases[f].messages[i];
  const Part& part = m.parts[q];
  const std::string at = message_where(f, i, m) + ", part " + std::to_string(q);
  const int a = CellClasses::frame_of(part.from.buffer, part.from.slot), b = CellClasses::frame_of(part.to.buffer, part.to.slot);
  const std::vector<int> tau = plus(part.to.lo, part.from.lo, -1);
  std::optional<Offset> origin;
  bool reported = false;
  c_.for_each(a, part.from_box(), [&](std::int64_t cls, const Cell& x) {
    const std::optional<Content>& v = state_[a][cls];
    if (!v || (origin && *origin != v->origin)) {
      if (!reported)
        errors_.add(at + ": " + (v ? "mixes cells of the processes at " + to_string(*origin) + " and " + to_string(v->origin) +
                                         " (a part carries the cells of one process)"
                                   : "sends " + buffer_name(part.from.buffer, part.from.slot) + " cell " + cell_string(x) +
                                         " before it holds a value (read before write)"));
      reported = true;
      return;
    }
    origin = v->origin;
    const Cell y = plus(x, tau);
    writes.push_back({b, c_.index_of(b, y), y, Content{plus(v->origin, m.shift, -1), plus(v->delta, tau, -1)}, at});
  });
  parts_[f][i][q].origin = origin.value_or(Offset(p_.array.ndims, 0));
}

void Tracer::apply(const Write& w) {
  if (w.frame != CellClasses::kArrayFrame) {
    state_[w.frame][w.cls] = w.content;
    return;
  }
  const Offset t = sign_of(p_.array, w.cell);
  if (!nbh_.count(t)) {
    errors_.add(w.where + ": writes array cell " + cell_string(w.cell) + ", which no ghost region of the neighbourhood holds (its sign vector " +
                to_string(t) + " is not an offset)");
    return;
  }
  if (state_[0][w.cls]) {
    errors_.add(w.where + ": writes array cell " + cell_string(w.cell) + " a second time (" + first_writer_[w.cls] + " wrote it)");
    return;
  }
  std::vector<int> delta(t.size());
  for (std::size_t k = 0; k < t.size(); ++k) delta[k] = -t[k] * p_.array.interior[k];
  const Content want{t, delta};
  if (!(w.content == want))
    errors_.add(w.where + ": writes array cell " + cell_string(w.cell) + " with the value of " + value_text(w.cell, w.content) +
                "; it must hold " + value_text(w.cell, want));
  state_[0][w.cls] = w.content;
  first_writer_[w.cls] = w.where;
}

void Tracer::check_final() {
  for (const Offset& t : p_.neighborhood) {
    std::int64_t missing = 0;
    Cell first;
    c_.for_each(CellClasses::kArrayFrame, ghost_region(p_.array, t), [&](std::int64_t cls, const Cell& x) {
      if (state_[0][cls]) return;
      if (missing == 0) first = x;
      missing += c_.class_box(CellClasses::kArrayFrame, cls).cells();
    });
    if (missing > 0)
      errors_.add("ghost region " + to_string(t) + ": " + std::to_string(missing) + " cell(s) are never written, the first is array cell " +
                  cell_string(first));
  }
}

// Backward: which processes a value ends up in (as a required ghost cell), per location and
// time; a part's holders are those of the cells it writes, seen from the sender.
void Tracer::backward() {
  std::vector<std::vector<std::set<Offset>>> holders(c_.frames());
  for (int f = 0; f < c_.frames(); ++f) holders[f].resize(c_.count(f));
  const Offset zero(p_.array.ndims, 0);
  for (std::int64_t cls = 0; cls < c_.count(0); ++cls) {
    if (state_[0][cls] && state_[0][cls]->origin != zero) holders[0][cls].insert(zero);
  }
  for (std::size_t f = p_.phases.size(); f-- > 0;) {
    const Phase& ph = p_.phases[f];
    for (std::size_t i = 0; i < ph.messages.size(); ++i) {
      for (std::size_t q = 0; q < ph.messages[i].parts.size(); ++q) {
        const Part& part = ph.messages[i].parts[q];
        const int b = CellClasses::frame_of(part.to.buffer, part.to.slot);
        std::set<Offset> u;
        c_.for_each(b, part.to_box(), [&](std::int64_t cls, const Cell&) {
          for (const Offset& o : holders[b][cls]) u.insert(plus(o, ph.messages[i].shift));
        });
        parts_[f][i][q].holders.assign(u.begin(), u.end());
      }
    }
    for (const Message& m : ph.messages) {
      for (const Part& part : m.parts) {
        const int b = CellClasses::frame_of(part.to.buffer, part.to.slot);
        c_.for_each(b, part.to_box(), [&](std::int64_t cls, const Cell&) { holders[b][cls].clear(); });
      }
    }
    for (std::size_t i = 0; i < ph.messages.size(); ++i) {
      for (std::size_t q = 0; q < ph.messages[i].parts.size(); ++q) {
        const Part& part = ph.messages[i].parts[q];
        const int a = CellClasses::frame_of(part.from.buffer, part.from.slot);
        const std::vector<Offset>& hs = parts_[f][i][q].holders;
        c_.for_each(a, part.from_box(), [&](std::int64_t cls, const Cell&) { holders[a][cls].insert(hs.begin(), hs.end()); });
      }
    }
  }
}

}  // namespace

TraceResult trace_halo(const HaloPlan& plan, std::size_t max_errors) {
  ErrorList errors(max_errors);
  TraceResult r;
  Result<CellClasses> classes = CellClasses::create(plan.parts());
  if (!classes) {
    r.errors.push_back(classes.error());
    return r;
  }
  // Each part visits its classes a few times; a hostile plan could ask for billions.
  constexpr std::int64_t kMaxVisits = std::int64_t{1} << 27;
  std::int64_t visits = 0;
  for (const Phase& ph : plan.phases()) {
    for (const Message& m : ph.messages) {
      for (const Part& p : m.parts) visits += classes->count_in(CellClasses::frame_of(p.from.buffer, p.from.slot), p.from_box());
    }
  }
  if (visits > kMaxVisits) {
    r.errors.push_back("the plan's parts cover more than " + std::to_string(kMaxVisits) + " classes of cells in all; verify gives up");
    return r;
  }
  Tracer tracer(plan.parts(), *classes, errors);
  tracer.forward();
  if (errors.empty()) tracer.check_final();
  r.errors = errors.take();
  if (!r.errors.empty()) return r;
  tracer.backward();
  r.parts = tracer.take_parts();
  return r;
}

}  // namespace cartplan::ir::halo
