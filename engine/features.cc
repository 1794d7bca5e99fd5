// Counting the cost model's features on a lowered program.
#include "engine/features.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

namespace cartplan::engine {
namespace {

// Staging regions and scratch blocks that are parts of messages, with their messages' weights:
// a packing step writes a send's region, an unpacking step reads a receive's, a combine reads
// the scratch block a receive filled.
class StepWeights {
 public:
  void add(const Message& m, double weight) {
    for (const Loc& l : m.parts) {
      if (l.kind == Loc::Kind::kStaging && l.bytes > 0) (m.recv ? recv_ : send_).push_back({l.offset, l.offset + l.bytes, weight});
      if (l.kind == Loc::Kind::kScratch && m.recv) scratch_[l.index] = weight;
    }
  }
  void sort() {
    for (auto* v : {&send_, &recv_}) std::sort(v->begin(), v->end());
  }
  // The weight of a local step: that of the message whose region it fills or empties, else 1.
  double of(const Step& s) const {
    if (s.from.kind == Loc::Kind::kScratch)
      if (auto it = scratch_.find(s.from.index); it != scratch_.end()) return it->second;
    if (s.from.kind == Loc::Kind::kStaging)
      if (std::optional<double> w = find(recv_, s.from)) return *w;
    if (s.to.kind == Loc::Kind::kStaging)
      if (std::optional<double> w = find(send_, s.to)) return *w;
    return 1;
  }

 private:
  struct Region {
    std::int64_t begin, end;
    double weight;
    bool operator<(const Region& o) const { return begin < o.begin; }
  };
  static std::optional<double> find(const std::vector<Region>& v, const Loc& l) {
    auto it = std::upper_bound(v.begin(), v.end(), Region{l.offset, 0, 0});
    if (it == v.begin()) return std::nullopt;
    --it;
    if (l.offset + l.bytes > it->end) return std::nullopt;
    return it->weight;
  }
  std::vector<Region> send_, recv_;
  std::map<int, double> scratch_;  // scratch block -> weight of the receive that fills it
};

double weight_of(const Message& m, const std::vector<std::vector<double>>& weights) {
  return weights[static_cast<std::size_t>(m.phase)][static_cast<std::size_t>(m.round)];
}

}  // namespace

Features message_counts(const Message& m, const Message* other, std::int64_t eager_limit_bytes) {
  Features one;
  one.messages = 1;
  one.wire_bytes = static_cast<double>(m.bytes);
  if (m.bytes <= eager_limit_bytes) return one;
  if (one_run(m.parts) && (!other || one_run(other->parts))) {
    one.rendezvous = 1;
    one.single_copy_bytes = one.wire_bytes;
  } else {
    one.pipelined = 1;
    one.pipelined_bytes = one.wire_bytes;
  }
  return one;
}

bool one_run(const std::vector<Loc>& parts) {
  if (parts.size() == 1) return parts[0].contiguous;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const Loc& p = parts[i];
    if (!p.contiguous || p.kind == Loc::Kind::kScratch) return false;
    if (i == 0) continue;
    const Loc& q = parts[i - 1];
    if (p.kind != q.kind) return false;
    if (p.kind == Loc::Kind::kStaging ? q.offset + q.bytes != p.offset : p.index != q.index + 1) return false;
  }
  return true;
}

std::vector<std::vector<double>> round_weights(const ir::Plan& plan, const std::optional<Grid>& grid) {
  const bool use_grid = grid && grid->ndims() == plan.ndims();
  std::vector<std::vector<double>> w(plan.phases().size());
  for (std::size_t p = 0; p < plan.phases().size(); ++p)
    for (const ir::Round& r : plan.phases()[p].rounds) w[p].push_back(use_grid ? peer_share(r.shift, *grid) : 1.0);
  return w;
}

Features count_features(const Program& program, const std::vector<std::vector<double>>& weights,
                        std::int64_t eager_limit_bytes, const RoundTraffic& traffic) {
  Features f;
  StepWeights step_weights;
  PlacementCounter placed;
  for (const PhaseProgram& ph : program.phases) {
    // Both sides of each round: this process's send, and its receive of the same round, which
    // is what the peer receives of that send (every process of a torus looks alike).
    std::map<std::pair<int, int>, const Message*> received;
    for (const Message& m : ph.messages) {
      step_weights.add(m, weight_of(m, weights));
      if (m.recv) received[{m.phase, m.round}] = &m;
    }
    bool sends = false;
    for (const Message& m : ph.messages) {
      const double w = weight_of(m, weights);
      if (m.recv || w == 0) continue;
      sends = true;
      const auto found = received.find({m.phase, m.round});
      const Message* other = found == received.end() ? nullptr : found->second;
      const Features one = message_counts(m, other, eager_limit_bytes);
      add_scaled(f, one, w);
      if (!traffic.empty())
        placed.add(*traffic[static_cast<std::size_t>(m.phase)][static_cast<std::size_t>(m.round)], one.wire_bytes, w, one, f);
    }
    f.phases += sends;
    placed.end_phase(f);
  }
  step_weights.sort();
  auto copies = [&](const std::vector<Step>& steps) {
    for (const Step& s : steps) f.copy_bytes += step_weights.of(s) * static_cast<double>(s.from.bytes);
  };
  for (const PhaseProgram& ph : program.phases) {
    copies(ph.before);
    copies(ph.after);
  }
  copies(program.final_steps);
  return f;
}

}  // namespace cartplan::engine
