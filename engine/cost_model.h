// The cost model's terms, defined once: what one exchange of a plan costs on one process is the
// sum over kCostTerms of (a feature counted on the lowered program) x (that term's price), and
// the one step rule: a message above eager_limit_bytes pays rendezvous_us if it is one run of
// memory on both sides, else pipeline_us (features.h decides which, counting it). The table
// drives the file format (cost_model_file.h), validation (check_cost_model), the agreement of
// ranks on a model (backends/mpi), `cartplan plan --explain` and predict's prices (predict.h)
// and calibrate's columns (bench/calibrate.cc), and prices halo plans (halo/price.h). Adding a
// term: a member of Features and of CostModel and a row here, and its count in features.cc (and in
// halo/price.cc's halo_features where halos have it). docs/cost-model.md defines the terms
// and says why terms were dropped.
//
//   CostModel m;                       // the built-in prices (kCostTerms' defaults)
//   double us = m.message_us(4096);    // alpha + beta * 4096 (+ rendezvous above the limit)
//   for (const CostTerm& t : kCostTerms) std::cout << t.name << " " << m.*t.price << " " << t.unit;
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace cartplan::engine {

struct PhaseSides;

// What the model counts on one process's program (features.h counts it; weights of mesh rounds
// make the counts fractional).
struct Features {
  double messages = 0;           // sends to another process
  double phases = 0;             // phases that send at least one message
  double wire_bytes = 0;         // bytes of those messages (trailers included)
  double copy_bytes = 0;         // bytes the program's local steps move (packing, unpacking, self
                                 // rounds, copies, combines)
  double rendezvous = 0;         // messages above the eager limit that are one run of memory on both
                                 // sides: the MPI library reads them with one transfer
  double single_copy_bytes = 0;  // bytes of those
  double pipelined = 0;          // messages above the eager limit that are not (a struct datatype, a
                                 // strided block, a trailer): the library pipelines them
  double pipelined_bytes = 0;    // bytes of those
  // Placement (placement.h; 0 without a known grid and ranks per node, or on one node):
  double off_node_messages = 0;  // messages to a process on another node
  double off_node_bytes = 0;     // bytes of those
  double node_link_bytes = 0;    // per phase, the bytes the most loaded node pushes through its
                                 // link to the network (all its processes' off-node bytes, the
                                 // larger direction), summed over phases
  // Per phase with messages, with placement counts only (empty without them): the message counts
  // of its sends to processes on the same node and to other nodes (phase_overlap, below).
  std::vector<PhaseSides> sides;
};

// One phase's message counts split by placement: `on` its sends within the node (messages,
// wire bytes and the eager/rendezvous step, each with the share of processes whose peer is on
// their node), `off` its sends to other nodes (the same, plus the placement counts).
struct PhaseSides {
  Features on, off;
};

// The prices (default-constructed: the built-in ones, kCostTerms' defaults).
struct CostModel {
  // Without a calibration, the phase price where a node runs more processes than it has cores:
  // a rank that waits for the previous phase gives its core away, and the next phase waits for
  // a context switch, which costs several messages.
  static constexpr double kOversubscribedPhaseUs = 5.0;
  // Messages above it take the rendezvous step. Where the built-in value comes from:
  // docs/cost-model.md.
  static constexpr std::int64_t kDefaultEagerLimitBytes = 4064;
  // The largest eager limit a model may have (1 TiB): thresholds derived from it (limit + 1,
  // sizes above it) stay far from integer overflow.
  static constexpr std::int64_t kMaxEagerLimitBytes = std::int64_t{1} << 40;
  double alpha_us, beta_us_per_byte, phase_us, copy_us_per_byte, rendezvous_us, single_copy_us_per_byte, pipeline_us,
      pipeline_us_per_byte, off_node_alpha_us, off_node_beta_us_per_byte, node_link_us_per_byte;
  std::int64_t eager_limit_bytes = kDefaultEagerLimitBytes;
  // The share, 0 to 1, of the cheaper side of each phase that runs under the dearer one: a
  // phase's sends within a node (memory) and to other nodes (the network) proceed concurrently,
  // so with 1 a phase's messages cost max(on-node, off-node) instead of their sum
  // (predict.h, price). Not a row of kCostTerms: its price depends on the other prices. 0 in
  // the built-in model and wherever placement is not counted.
  double phase_overlap = 0;

  CostModel();
  // A message of `bytes` on its own (no phase, no copies).
  double message_us(std::int64_t bytes) const {
    const double b = static_cast<double>(bytes);
    return alpha_us + beta_us_per_byte * b + (bytes > eager_limit_bytes ? rendezvous_us + single_copy_us_per_byte * b : 0.0);
  }
  // The alpha/beta-only model of v1 and seed 000 (every other price 0).
  static CostModel linear(double alpha_us, double beta_us_per_byte);
  friend bool operator==(const CostModel&, const CostModel&) = default;
};

// One priced term: `price` x the count `feature`.
struct CostTerm {
  const char* name;         // its member in cost-model files (and the CostModel member's name)
  const char* unit;         // of the price: "us" or "us/B"
  const char* counts;       // --explain's name of the feature ("messages", "wire")
  double CostModel::*price;
  double Features::*feature;
  double default_price;     // the built-in model's
  bool in_v1 = false;       // a member of version-1 files (alpha and beta; the others are 0 there)
  // Optional in version-2 files (files calibrated before the term existed): absent, the price is
  // `fallback`'s (another term's) if set, else default_price.
  bool optional = false;
  double CostModel::*fallback = nullptr;
  // The price's lower bound: 0, or minus this other term's price (set: the price may undercut
  // that term's, never below nothing).
  double CostModel::*at_least_minus = nullptr;
};

// In the order of files, of the agreement's fingerprint and of --explain.
inline constexpr std::array<CostTerm, 11> kCostTerms = {{
    // per message (a round to another process)
    {"alpha_us", "us", "messages", &CostModel::alpha_us, &Features::messages, 1.0, true},
    // per phase with messages: a phase cannot start before the previous one has arrived
    {"phase_us", "us", "phases", &CostModel::phase_us, &Features::phases, 0.5},
    // per byte on the wire
    {"beta_us_per_byte", "us/B", "wire", &CostModel::beta_us_per_byte, &Features::wire_bytes, 0.0005, true},
    // per byte copied locally (packing, unpacking, self rounds, copies, combines)
    {"copy_us_per_byte", "us/B", "copied", &CostModel::copy_us_per_byte, &Features::copy_bytes, 0.0002},
    // per message above the eager limit that is one run of memory on both sides (the step: one
    // more round trip, then the receiver reads the data in one transfer)
    {"rendezvous_us", "us", "rendezvous", &CostModel::rendezvous_us, &Features::rendezvous, 2.0},
    // per byte of those, on top of beta (the transfer runs on the receiver's core alone)
    {"single_copy_us_per_byte", "us/B", "single-copy", &CostModel::single_copy_us_per_byte,
     &Features::single_copy_bytes, 0.0, false, true},
    // per message above the eager limit that is not one run on some side: the library pipelines
    // it through fragments. A file without it prices them like the others
    {"pipeline_us", "us", "pipelined", &CostModel::pipeline_us, &Features::pipelined, 2.0, false, true,
     &CostModel::rendezvous_us},
    // per byte of those, on top of beta; may be negative down to -beta (the pipeline overlaps
    // the sender's copy with the receiver's, which an eager message cannot)
    {"pipeline_us_per_byte", "us/B", "pipelined", &CostModel::pipeline_us_per_byte, &Features::pipelined_bytes,
     0.0, false, true, nullptr, &CostModel::beta_us_per_byte},
    // Placement: 0 in the built-in model and wherever calibration saw no off-node traffic (one
    // node), so they price nothing there. Per message to another node, on top of alpha
    {"off_node_alpha_us", "us", "off-node", &CostModel::off_node_alpha_us, &Features::off_node_messages, 0.0,
     false, true},
    // per byte to another node, on top of beta; may be negative down to -beta (a NIC can be
    // faster per byte than a node's loopback)
    {"off_node_beta_us_per_byte", "us/B", "off-node", &CostModel::off_node_beta_us_per_byte,
     &Features::off_node_bytes, 0.0, false, true, nullptr, &CostModel::beta_us_per_byte},
    // per byte through the most loaded node's link, per phase: the node's processes share it
    {"node_link_us_per_byte", "us/B", "node-link", &CostModel::node_link_us_per_byte, &Features::node_link_bytes,
     0.0, false, true},
}};

// The index in kCostTerms of the term whose price is `price` (a CostModel member of the table).
constexpr std::size_t term_index(double CostModel::*price) {
  std::size_t i = 0;
  while (i + 1 < kCostTerms.size() && kCostTerms[i].price != price) ++i;
  return i;
}

// What is wrong with `m`'s price of `t` ("must be a finite number >= 0"), or "" if nothing.
std::string price_error(const CostTerm& t, const CostModel& m);
// The first term of `m` with a bad price, as "<name> <price_error>", or "" if none (nor a
// negative eager limit). Every model used for planning passes it.
std::string cost_model_error(const CostModel& m);

// Whether `t` is one of the three placement terms. Files omit them at 0 (cost_model_file.h), so a
// calibration without placement evidence stays readable by builds from before these terms.
constexpr bool is_placement_term(const CostTerm& t) {
  return t.price == &CostModel::off_node_alpha_us || t.price == &CostModel::off_node_beta_us_per_byte ||
         t.price == &CostModel::node_link_us_per_byte;
}

// Whether `m` prices placement (any of the three placement terms non-zero): only then do
// planners need the ranks per node (engine/placement.h), whose counts cost O(ranks) per shift.
// phase_overlap needs them too (it splits each phase by placement).
inline bool prices_placement(const CostModel& m) {
  return m.off_node_alpha_us != 0 || m.off_node_beta_us_per_byte != 0 || m.node_link_us_per_byte != 0 ||
         m.phase_overlap != 0;
}

inline CostModel::CostModel() {
  for (const CostTerm& t : kCostTerms) this->*t.price = t.default_price;
}

inline CostModel CostModel::linear(double alpha_us, double beta_us_per_byte) {
  CostModel m;
  for (const CostTerm& t : kCostTerms) m.*t.price = 0;
  m.alpha_us = alpha_us;
  m.beta_us_per_byte = beta_us_per_byte;
  return m;
}

}  // namespace cartplan::engine
