// The collective detection of Cartesian stencils behind distributed-graph communicators.
#include "backends/interpose/detect.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "backends/interpose/cart_records.h"
#include "backends/interpose/policy.h"
#include "backends/mpi/oversubscribed.h"
#include "engine/cost_model_locate.h"
#include "engine/neighborhood.h"
#include "ir/parse_number.h"

namespace cartplan::interpose {
namespace {

constexpr int kMaxDimsTried = 4;  // MPI_Dims_create candidates: d = 1..4
constexpr int kCandidates = 2 + 2 * kMaxDimsTried;
constexpr std::int64_t kMaxMergedOffsets = 1 << 16;

struct Candidate {
  std::string source;
  std::vector<int> dims, periods;
  std::vector<int> grid_rank;  // graph rank -> grid rank; empty: the same (row-major)
  std::int64_t descriptor = 0; // 0: no candidate here
  // Local evaluation.
  bool valid = false;
  std::vector<ir::Offset> dest, src;
  std::int64_t hash = 0;
  engine::Coords me;
  int my_grid_rank = 0;
};

std::uint64_t mix(std::uint64_t h, std::uint64_t v) { return (h ^ (v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2))) * 0x100000001B3ull; }

// A positive value that is the same on every rank for the same candidate.
std::int64_t describe(const Candidate& c) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // not the slot: the same grid from two sources is tried once
  for (int v : c.dims) h = mix(h, static_cast<std::uint64_t>(v));
  for (int v : c.periods) h = mix(h, static_cast<std::uint64_t>(v) + 3);
  for (int v : c.grid_rank) h = mix(h, static_cast<std::uint64_t>(v) + 11);
  return static_cast<std::int64_t>(h >> 2) | 1;
}

bool info_get(MPI_Info info, const char* key, std::string* out) {
  if (info == MPI_INFO_NULL) return false;
  int len = 0, flag = 0;
  if (PMPI_Info_get_valuelen(info, key, &len, &flag) != MPI_SUCCESS || !flag) return false;
  std::string v(static_cast<std::size_t>(len) + 1, '\0');
  PMPI_Info_get(info, key, len + 1, v.data(), &flag);
  v.resize(static_cast<std::size_t>(len));
  *out = v;
  return flag != 0;
}

// A comma-separated hint ("4,4,2"); values in [0, 2^30], anything malformed is rejected.
bool parse_ints(const std::string& s, std::vector<int>* out) {
  Result<std::vector<int>> v = parse_int_list(s, 0, 1 << 30);
  if (!v) return false;
  *out = *v;
  return true;
}

// The candidates of step 1, in the order they are tried; empty slots have descriptor 0.
std::vector<Candidate> candidates(MPI_Comm comm, MPI_Info info, int p) {
  std::vector<Candidate> out(kCandidates);
  std::string dims_s, periods_s;
  if (info_get(info, "cartplan_dims", &dims_s)) {
    Candidate& c = out[0];
    c.source = "Info hints";
    if (parse_ints(dims_s, &c.dims)) {
      c.periods.assign(c.dims.size(), 1);
      if (info_get(info, "cartplan_periods", &periods_s) && (!parse_ints(periods_s, &c.periods) || c.periods.size() != c.dims.size()))
        c.periods.clear();  // malformed: this candidate is invalid everywhere
    }
  }
  if (std::optional<CartGrid> g = find_cart(comm)) {
    Candidate& c = out[1];
    c.source = "MPI_Cart_create";
    c.dims = g->dims;
    c.periods = g->periods;
    bool identity = true;
    for (int r = 0; r < static_cast<int>(g->grid_rank.size()); ++r) identity = identity && g->grid_rank[r] == r;
    if (!identity) c.grid_rank = g->grid_rank;
  }
  for (int d = 1; d <= kMaxDimsTried; ++d) {
    std::vector<int> dims(d, 0);
    if (PMPI_Dims_create(p, d, dims.data()) != MPI_SUCCESS) continue;
    for (int periodic = 1; periodic >= 0; --periodic) {
      Candidate& c = out[2 + 2 * (d - 1) + (1 - periodic)];
      c.source = "MPI_Dims_create";
      c.dims = dims;
      c.periods.assign(d, periodic);
    }
  }
  for (int slot = 0; slot < kCandidates; ++slot)
    if (!out[slot].source.empty()) out[slot].descriptor = describe(out[slot]);
  return out;
}

void evaluate(Candidate& c, int p, int me, const std::vector<int>& sources, const std::vector<int>& dests) {
  if (c.dims.empty() || c.periods.size() != c.dims.size()) return;
  std::vector<bool> per(c.periods.size());
  for (std::size_t k = 0; k < per.size(); ++k) per[k] = c.periods[k] != 0;
  Result<engine::Grid> grid = engine::Grid::create(c.dims, per);
  if (!grid || grid->size() != p) return;
  auto grid_rank = [&](int r) { return c.grid_rank.empty() ? r : c.grid_rank[r]; };
  c.my_grid_rank = grid_rank(me);
  if (c.my_grid_rank < 0 || c.my_grid_rank >= p) return;
  c.me = grid->coords(c.my_grid_rank);
  for (int q : dests) {
    if (q < 0 || q >= p || grid_rank(q) < 0 || grid_rank(q) >= p) return;
    c.dest.push_back(engine::canonical_offset(*grid, c.me, grid->coords(grid_rank(q))));
  }
  for (int q : sources) {
    if (q < 0 || q >= p || grid_rank(q) < 0 || grid_rank(q) >= p) return;
    c.src.push_back(engine::canonical_offset(*grid, grid->coords(grid_rank(q)), c.me));
  }
  std::uint64_t h = 0x84222325cbf29ce4ull;
  for (const auto& [o, n] : engine::count_offsets(c.dest)) {
    for (int v : o) h = mix(h, static_cast<std::uint64_t>(static_cast<std::int64_t>(v)));
    h = mix(h, static_cast<std::uint64_t>(n) + 0x51);
  }
  c.hash = static_cast<std::int64_t>(h >> 2);
  c.valid = true;
}

// The merge reduction's buffer: [d, capacity, entries, overflow] then (d coordinates,
// multiplicity) per entry.
std::vector<int> encode(int d, int capacity, const engine::OffsetCounts& counts, bool overflow) {
  std::vector<int> buf(4 + static_cast<std::size_t>(capacity) * (d + 1), 0);
  buf[0] = d;
  buf[1] = capacity;
  overflow = overflow || static_cast<int>(counts.size()) > capacity;
  buf[3] = overflow ? 1 : 0;
  if (overflow) return buf;
  buf[2] = static_cast<int>(counts.size());
  std::size_t at = 4;
  for (const auto& [o, n] : counts) {
    for (int v : o) buf[at++] = v;
    buf[at++] = n;
  }
  return buf;
}

engine::OffsetCounts decode(const int* buf) {
  const int d = buf[0], n = buf[2];
  engine::OffsetCounts out(static_cast<std::size_t>(n));
  const int* at = buf + 4;
  for (int i = 0; i < n; ++i) {
    out[i].first.assign(at, at + d);
    out[i].second = at[d];
    at += d + 1;
  }
  return out;
}

// One element per encoded buffer (a contiguous type of its ints): MPI may cut a vector of MPI_INT
// into segments between ranks (Open MPI's reduce-scatter allreduce does at 32 ranks), and a
// segment is no encoded buffer.
void merge_op(void* in, void* inout, int* len, MPI_Datatype* type) {
  int bytes = 0;
  PMPI_Type_size(*type, &bytes);
  const std::ptrdiff_t ints = bytes / static_cast<int>(sizeof(int));
  for (int e = 0; e < *len; ++e) {
    const int* a = static_cast<const int*>(in) + e * ints;
    int* b = static_cast<int*>(inout) + e * ints;
    const int d = b[0], capacity = b[1];
    const bool overflow = a[3] || b[3];
    const engine::OffsetCounts merged = overflow ? engine::OffsetCounts{} : engine::merge_counts(decode(a), decode(b));
    const std::vector<int> out = encode(d, capacity, merged, overflow);
    std::copy(out.begin(), out.end(), b);
  }
}

// The detection's result for the candidate every rank agreed on.
void accept(const Candidate& c, bool row_major, std::vector<ir::Offset> nbh, engine::EdgeOrder order, const mpi::Options& options,
            Detection* det) {
  det->accelerated = true;
  det->why.clear();
  det->grid_source = c.source;
  det->dims = c.dims;
  det->periods = c.periods;
  det->coords = c.me;
  det->grid_rank = c.my_grid_rank;
  det->row_major = row_major;
  det->nbh = std::move(nbh);
  det->order = std::move(order);
  det->options = options;
  // CARTPLAN_INTERPOSE_ALGORITHM forces the plan of every communicator the drop-in takes.
  if (forced_algorithm() == Forced::kDirect) det->options.algo = engine::AlgoChoice::kDirect;
  if (forced_algorithm() == Forced::kCombining) det->options.algo = engine::AlgoChoice::kCombining;
}

// Steps 3 for one candidate: the common neighbourhood, the local match and the agreement.
// `base`: the options before the graph's Info keys (the located cost model).
bool try_candidate(MPI_Comm comm, MPI_Info info, const Candidate& c, std::int64_t max_degree, const mpi::Options& base,
                   Detection* det) {
  const int d = static_cast<int>(c.dims.size());
  std::int64_t capacity = max_degree;
  for (int p : c.periods)
    if (!p) capacity *= 2;  // a mesh's corners see disjoint parts of N; at most 2^(non-periodic dims) parts
  if (capacity > kMaxMergedOffsets) {
    det->why = "neighbourhood too large to merge on the " + c.source + " grid";
    return false;
  }
  std::vector<int> mine = encode(d, static_cast<int>(capacity), engine::count_offsets(c.dest), false);
  std::vector<int> all(mine.size());
  MPI_Op op = MPI_OP_NULL;
  MPI_Datatype whole = MPI_DATATYPE_NULL;  // one element: merge_op sees whole encoded buffers
  bool ok = PMPI_Op_create(merge_op, 1, &op) == MPI_SUCCESS;
  ok = ok && PMPI_Type_contiguous(static_cast<int>(mine.size()), MPI_INT, &whole) == MPI_SUCCESS && PMPI_Type_commit(&whole) == MPI_SUCCESS;
  ok = ok && PMPI_Allreduce(mine.data(), all.data(), 1, whole, op, comm) == MPI_SUCCESS;
  if (whole != MPI_DATATYPE_NULL) PMPI_Type_free(&whole);
  if (op != MPI_OP_NULL) PMPI_Op_free(&op);
  if (!ok) {
    det->why = "the merge reduction failed";  // same everywhere only if MPI fails everywhere
    return false;
  }
  std::string why;
  std::int64_t local[4] = {1, c.grid_rank.empty() || c.my_grid_rank == det->grid_rank ? 1 : 0, 0, 0};
  std::vector<ir::Offset> nbh;
  engine::EdgeOrder order;
  mpi::Options options = base;
  if (all[3]) {
    local[0] = 0;
    why = "the edges do not form one neighbourhood on the " + c.source + " grid (too many distinct offsets)";
  } else {
    nbh = engine::expand(decode(all.data()));
    std::vector<bool> per(c.periods.begin(), c.periods.end());
    const engine::Grid grid = *engine::Grid::create(c.dims, per);
    if (nbh.empty()) {
      local[0] = 0;
      why = "no edges";
    } else if (Result<engine::EdgeOrder> m = engine::match_edges(grid, c.me, nbh, c.dest, c.src); !m) {
      local[0] = 0;
      why = "not isomorphic on the " + c.source + " grid: " + m.error();
    } else if (Result<engine::Neighborhood> n = engine::Neighborhood::create(d, nbh); !n) {
      local[0] = 0;
      why = n.error();
    } else if (mpi::MpiStatus s = mpi::parse_info(info, d, &options); !s.ok()) {
      local[0] = 0;
      why = s.message;
    } else {
      order = std::move(*m);
    }
  }
  // The options decide which calls are accelerated: every rank must have the same (a cost model
  // file found on one node only would make ranks decide differently).
  local[2] = mpi::options_fingerprint(options);
  local[3] = -local[2];
  std::int64_t agreed[4] = {0, 0, 0, 0};
  if (PMPI_Allreduce(local, agreed, 4, MPI_INT64_T, MPI_MIN, comm) != MPI_SUCCESS) {
    det->why = "the agreement failed";
    return false;
  }
  if (!agreed[0]) {
    det->why = local[0] ? "another rank's edges do not fit the " + c.source + " grid" : why;
    return false;
  }
  if (agreed[2] != -agreed[3]) {
    det->why = "ranks found different cost models or cartplan Info keys";
    return false;
  }
  accept(c, agreed[1] != 0, std::move(nbh), std::move(order), options, det);
  return true;
}

// This rank's neighbour lists, as MPI_Dist_graph_neighbors reports them.
bool read_lists(MPI_Comm comm, std::vector<int>* sources, std::vector<int>* dests) {
  int indeg = 0, outdeg = 0, weighted = 0;
  if (PMPI_Dist_graph_neighbors_count(comm, &indeg, &outdeg, &weighted) != MPI_SUCCESS) return false;
  sources->resize(indeg);
  dests->resize(outdeg);
  std::vector<int> sw(indeg + 1), dw(outdeg + 1);
  return PMPI_Dist_graph_neighbors(comm, indeg, sources->data(), weighted ? sw.data() : MPI_UNWEIGHTED, outdeg, dests->data(),
                                   weighted ? dw.data() : MPI_UNWEIGHTED) == MPI_SUCCESS;
}

// The cost model the native API would find for `p` processes (cost_model_locate.h), and how
// many processes of `comm` share a core on this node, times 1000 (1000: not oversubscribed).
// The model's phase term is scaled for oversubscription once the ranks agreed on the worst node.
struct Local {
  mpi::Options base;
  std::string model_error;
  std::int64_t per_core_milli = 1000;
  std::int64_t graphs_off = 0;  // CARTPLAN_INTERPOSE_GRAPHS=0 on this rank
};

// CARTPLAN_INTERPOSE_GRAPHS=0: graphs that are not a stencil pass through without any set-up
// (read per rank; agreed in step 2, so a rank that differs turns them off everywhere).
bool graphs_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("CARTPLAN_INTERPOSE_GRAPHS");
    return !v || std::string(v) != "0";
  }();
  return on;
}

Local local_facts(MPI_Comm comm, int p) {
  Local l;
  Result<engine::LocatedModel> found = engine::locate_cost_model(std::nullopt, p, std::getenv);
  if (found) l.base.model = found->model;
  else l.model_error = found.error();
  int on_node = 1, cores = 1;  // the cores the node's processes may use (affinity), as the native API counts them
  if (mpi::node_load(comm, &on_node, &cores) == MPI_SUCCESS && on_node > cores)
    l.per_core_milli = static_cast<std::int64_t>(on_node) * 1000 / cores;
  l.graphs_off = graphs_enabled() ? 0 : 1;
  return l;
}

// MPI_Dist_graph_create_adjacent accepts MPI_PROC_NULL in the lists (Open MPI returns it from
// MPI_Dist_graph_neighbors); cartplan's stencil and graph schedules address real ranks, and
// one rank's MPI_PROC_NULL would leave its peers waiting. It is a veto (step 2), so every rank
// passes the communicator through.
bool has_proc_null(const std::vector<int>& sources, const std::vector<int>& dests) {
  auto null = [](int r) { return r == MPI_PROC_NULL; };
  return std::any_of(sources.begin(), sources.end(), null) || std::any_of(dests.begin(), dests.end(), null);
}

// The words of step 2 before the candidates': veto, largest degree, most oversubscribed node,
// graph collectives off on some rank, the cost model's fingerprint (max, -max).
constexpr int kHeadWords = 6;

// Step 2: one reduction (MAX) over every candidate, with the vetoes, the largest degree, the
// most oversubscribed node and what the graph collectives' verdicts need alike on every rank.
std::vector<std::int64_t> agree_candidates(MPI_Comm comm, std::int64_t veto, std::int64_t degree, const Local& local,
                                           const std::vector<Candidate>& cands, bool* ok) {
  std::vector<std::int64_t> agree(kHeadWords + 5 * static_cast<std::size_t>(kCandidates));
  agree[0] = veto;
  agree[1] = degree;
  agree[2] = local.per_core_milli;
  agree[3] = local.graphs_off;
  agree[4] = mpi::options_fingerprint(local.base);
  agree[5] = -agree[4];
  for (int s = 0; s < kCandidates; ++s) {
    const Candidate& c = cands[s];
    std::int64_t* a = agree.data() + kHeadWords + 5 * s;
    a[0] = c.descriptor;
    a[1] = -c.descriptor;
    a[2] = c.valid ? 0 : 1;
    a[3] = c.hash;
    a[4] = -c.hash;
  }
  std::vector<std::int64_t> all(agree.size());
  *ok = PMPI_Allreduce(agree.data(), all.data(), static_cast<int>(agree.size()), MPI_INT64_T, MPI_MAX, comm) == MPI_SUCCESS;
  return all;
}

}  // namespace

Detection detect(MPI_Comm comm, MPI_Info info) {
  Detection det;
  int p = 0, me = 0;
  PMPI_Comm_size(comm, &p);
  PMPI_Comm_rank(comm, &me);
  std::vector<int> sources, dests;
  Local local = local_facts(comm, p);
  const bool lists = read_lists(comm, &sources, &dests);
  const int veto = !lists ? 1 : has_proc_null(sources, dests) ? 3 : !local.model_error.empty() ? 2 : 0;
  det.indegree = static_cast<int>(sources.size());
  det.outdegree = static_cast<int>(dests.size());
  det.grid_rank = me;
  std::vector<Candidate> cands = candidates(comm, info, p);
  if (!veto)
    for (Candidate& c : cands)
      if (c.descriptor) evaluate(c, p, me, sources, dests);
  bool ok = false;
  const std::vector<std::int64_t> all =
      agree_candidates(comm, veto, std::max(det.indegree, det.outdegree), local, cands, &ok);
  if (!ok) {
    det.why = "the agreement failed";
    return det;
  }
  if (all[0]) {
    det.why = all[0] == 1   ? "the graph's neighbour lists could not be read"
              : all[0] == 3 ? "MPI_PROC_NULL in a rank's neighbour lists (cartplan's schedules name ranks; every call goes to Open MPI)"
                            : "a cost model file does not load: " + (local.model_error.empty() ? "on another rank" : local.model_error);
    return det;
  }
  if (all[1] == 0) {
    det.why = "no edges";
    return det;
  }
  det.per_core = std::max(1.0, static_cast<double>(all[2]) / 1000.0);
  local.base.model.phase_us = oversubscribed_phase_us(local.base.model.phase_us, det.per_core);
  // The graph collectives' verdicts price calls with this model on every rank: they need the
  // same one everywhere, and nobody who turned them off.
  det.graph_candidate = all[3] == 0 && all[4] == -all[5];
  if (all[3] == 0 && all[4] != -all[5]) det.graph_refusal = "ranks located different cost models";
  else if (all[3] != 0 && !local.graphs_off) det.graph_refusal = "another rank set CARTPLAN_INTERPOSE_GRAPHS=0";
  det.model = local.base.model;
  std::vector<std::int64_t> tried;
  det.why = "no grid fits (no Info hints cartplan_dims, no MPI_Cart_create over the same processes, no MPI_Dims_create factorization)";
  for (int s = 0; s < kCandidates; ++s) {
    const std::int64_t* a = all.data() + kHeadWords + 5 * s;
    const Candidate& c = cands[s];
    if (a[0] == 0 || a[0] != -a[1] || a[2] != 0) continue;  // absent, different on some rank, or unusable
    bool torus = true;
    for (int per : c.periods) torus = torus && per;
    if (torus && a[3] != -a[4]) continue;  // on a torus every rank has the same offsets
    if (std::find(tried.begin(), tried.end(), a[0]) != tried.end()) continue;
    tried.push_back(a[0]);
    if (try_candidate(comm, info, c, all[1], local.base, &det)) return det;
  }
  return det;
}

}  // namespace cartplan::interpose
