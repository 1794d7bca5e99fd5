// Counting which rounds leave a node under block or cyclic placement, per node, cached per process.
#include "engine/placement.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <mutex>
#include <tuple>

namespace cartplan::engine {
namespace {

using Key = std::tuple<std::vector<int>, std::vector<bool>, int, int, std::vector<int>>;

// The peer of the process at `x` (rank r) at +dir*shift, or kNoRank outside a mesh.
int peer_of(const Grid& grid, const std::vector<int>& x, const std::vector<int>& strides, const Offset& shift,
            int dir) {
  int peer = 0;
  for (int k = 0; k < grid.ndims(); ++k) {
    const int n = grid.dims()[k];
    long c = static_cast<long>(x[k]) + static_cast<long>(dir) * shift[k];
    if (grid.periods()[k]) {
      c %= n;
      if (c < 0) c += n;
    } else if (c < 0 || c >= n) {
      return kNoRank;
    }
    peer += static_cast<int>(c) * strides[k];
  }
  return peer;
}

ShiftTraffic count_traffic(const Grid& grid, const Placement& placement, const Offset& shift) {
  const int d = grid.ndims(), nodes = node_count(grid, placement);
  std::vector<int> strides(d, 1), x(d, 0);
  for (int k = d - 2; k >= 0; --k) strides[k] = strides[k + 1] * grid.dims()[k + 1];
  ShiftTraffic t;
  t.node_out.assign(nodes, 0.0);
  t.node_in.assign(nodes, 0.0);
  double off = 0;
  for (int r = 0; r < grid.size(); ++r) {
    const int node = placement.node_of(r);
    const int to = peer_of(grid, x, strides, shift, +1), from = peer_of(grid, x, strides, shift, -1);
    if (to != kNoRank && placement.node_of(to) != node) {
      t.node_out[node] += 1;
      off += 1;
    }
    if (from != kNoRank && placement.node_of(from) != node) t.node_in[node] += 1;
    for (int k = d - 1; k >= 0 && ++x[k] == grid.dims()[k]; --k) x[k] = 0;  // row-major odometer
  }
  t.off_share = off / static_cast<double>(grid.size());
  return t;
}

}  // namespace

bool Placement::spans_nodes(int size) const {
  if (is_cyclic()) return ranks_per_node == 0 && cyclic_nodes >= 2 && size >= 2;
  return ranks_per_node >= 1 && ranks_per_node < size;
}

int Placement::node_count(int size) const {
  assert(is_cyclic() ? ranks_per_node == 0 && cyclic_nodes >= 1 : ranks_per_node >= 1);
  if (is_cyclic()) return std::min(size, cyclic_nodes);
  return (size + ranks_per_node - 1) / ranks_per_node;
}

int Placement::largest_node(int size) const {
  if (is_cyclic()) return (size + cyclic_nodes - 1) / cyclic_nodes;
  return std::min(size, ranks_per_node);
}

std::string Placement::describe() const {
  if (is_cyclic()) return "cyclic over " + std::to_string(cyclic_nodes) + " nodes";
  if (ranks_per_node >= 1) return std::to_string(ranks_per_node) + " ranks per node (block)";
  return "unknown";
}

int node_count(const Grid& grid, const Placement& placement) { return placement.node_count(grid.size()); }

std::shared_ptr<const ShiftTraffic> shift_traffic(const Grid& grid, const Placement& placement, const Offset& shift) {
  assert((placement.ranks_per_node >= 1 || placement.is_cyclic()) && static_cast<int>(shift.size()) == grid.ndims());
  static std::mutex mutex;
  static std::map<Key, std::shared_ptr<const ShiftTraffic>> cache;
  Key key{grid.dims(), grid.periods(), placement.ranks_per_node, placement.cyclic_nodes, shift};
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  auto t = std::make_shared<const ShiftTraffic>(count_traffic(grid, placement, shift));
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= 4096) cache.clear();  // a bound, not a policy: entries are cheap to recount
  cache.emplace(std::move(key), t);
  return t;
}

RoundTraffic round_traffic(const ir::Plan& plan, const std::optional<Grid>& grid, const Placement& placement) {
  if (!grid || grid->ndims() != plan.ndims() || !placement.spans_nodes(grid->size())) return {};
  RoundTraffic out(plan.phases().size());
  for (std::size_t p = 0; p < plan.phases().size(); ++p)
    for (const ir::Round& r : plan.phases()[p].rounds) out[p].push_back(shift_traffic(*grid, placement, r.shift));
  return out;
}

void add_scaled(Features& to, const Features& one, double w) {
  for (const CostTerm& t : kCostTerms) to.*t.feature += w * one.*t.feature;
}

void PlacementCounter::add(const ShiftTraffic& t, double bytes, double weight, const Features& one, Features& f) {
  f.off_node_messages += t.off_share;
  f.off_node_bytes += t.off_share * bytes;
  add_scaled(sides_.on, one, std::max(0.0, weight - t.off_share));
  add_scaled(sides_.off, one, t.off_share);
  sides_.off.off_node_messages += t.off_share;
  sides_.off.off_node_bytes += t.off_share * bytes;
  sends_ = true;
  if (out_.empty()) {
    out_.assign(t.node_out.size(), 0.0);
    in_.assign(t.node_in.size(), 0.0);
  }
  assert(out_.size() == t.node_out.size());
  for (std::size_t k = 0; k < out_.size(); ++k) {
    out_[k] += bytes * t.node_out[k];
    in_[k] += bytes * t.node_in[k];
  }
}

void PlacementCounter::end_phase(Features& f) {
  double most = 0;
  for (std::size_t k = 0; k < out_.size(); ++k) most = std::max({most, out_[k], in_[k]});
  f.node_link_bytes += most;
  if (sends_) {
    sides_.off.node_link_bytes = most;
    f.sides.push_back(sides_);
  }
  sides_ = PhaseSides{};
  sends_ = false;
  out_.clear();
  in_.clear();
}

}  // namespace cartplan::engine
