// Cost-model calibration: measures the terms of the v2 cost model (engine/cost_model.h) on the
// running machine and process count, and writes a cost-model file (engine/cost_model_file.h)
// that the optimizer, `cartplan --cost-model`, the Info key cartplan_cost_model and the MPI
// backend's lookup (CARTPLAN_COST_MODEL, ~/.config/cartplan/cost_model_np<P>.json) read.
// Run under mpirun with at least 2 ranks, or under smpirun on a simulated platform (the SMPI
// build, installed as cartplan-calibrate; docs/smpi.md):
//
//   mpirun -np 2 calibrate --out bench/results/cpp-2core/cost_model.json [--quick] [--reps R]
//                          [--eager-limit BYTES]
//                          [--timing barrier|back-to-back|sync] [--sizes M,M,..] [--specs SPEC;SPEC;..]
//   smpirun -np 64 -platform P.xml -hostfile P.hosts cartplan-calibrate --out model.json [--quick]
//
// The fit: time = the sum over engine::kCostTerms of price * count, every term fitted by
// non-negative least squares on relative errors (rows weighted by 1/time^2: the optimizer must
// order 2-us plans as well as 200-us ones). The rows are persistent alltoalls and allgathers of the plan kinds the
// optimizer chooses between (direct, combining, combining packed, combining in the reversed
// dimension order, hybrid, log-round) on box neighbourhoods (d = 2..4, n = 3; d = 2, n = 7, 9)
// and block sizes on both sides of the eager limit. The counts are engine::predict's (those of
// the lowered program, engine/features.h) for the plan each request really runs (Cart_request_plan), on this grid, so the file prices exactly
// what the optimizer counts (the fixed cost of a call goes into the phase term: every plan has
// a phase). The rows run with the built-in model's home limit and trailers (engine/lower.h);
// where the fitted model's differ, they are measured once more with the fit's and the model is
// fitted on both passes, so that the file prices the lowering it will produce. The output also
// says in how many (neighbourhood, op, size) groups the fitted model's cheapest variant is
// within 10% of the fastest (on the rows that ran the fitted model's lowering).
// The phase term needs phases that all send messages: at np = 2 every grid is 2x1x.. and only
// log-round plans have more than one, so calibrate at the process count you run (np = 4 gives
// 2x2 grids). The eager limit is not fitted: it is Open MPI's
// (CostModel::kDefaultEagerLimitBytes) and given with --eager-limit. The ping-pong alpha/beta
// are recorded next to the fit. On several nodes of R >= 2 ranks the node's link is probed
// (node_link_probe) and written with phase_overlap 1 (not with --no-node-link); the placement
// counts are not fitted.
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "backends/mpi/node_map.h"
#include "backends/mpi/openmpi_profile.h"
#include "bench/bench_util.h"
#include "bench/calibrate_sizes.h"
#include "engine/bind.h"
#include "engine/cost_model_file.h"
#include "engine/loground.h"
#include "engine/predict.h"
#include "engine/planner.h"
#include "engine/spec.h"
#include "ir/json.h"

#ifdef CARTPLAN_SMPI
#include <xbt/config.hpp>  // the simulated eager limit (smpi/async-small-thresh)
#endif

namespace {

void die(const std::string& msg) {
  std::fprintf(stderr, "calibrate: %s\n", msg.c_str());
#ifdef CARTPLAN_SMPI
  // smpirun exits 0 after MPI_Abort (SMPI 3.32): a script could not tell that calibrate failed.
  // Ending the simulating process makes smpirun report "Execution failed with code 2".
  std::fflush(nullptr);
  std::_Exit(2);
#endif
  MPI_Abort(MPI_COMM_WORLD, 2);
}

// Why --out cannot be written ("" if it can), found before measuring. The file is created
// exclusively (O_CREAT | O_EXCL), so the check knows it made it and removes only that one; an
// existing file (readable or not) is opened for appending, neither truncated nor removed.
std::string output_problem(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0666);
  const bool created = fd >= 0;
  if (!created && errno == EEXIST) fd = ::open(path.c_str(), O_WRONLY | O_APPEND);
  if (fd < 0) return "cannot write --out " + path + ": " + std::strerror(errno);
  ::close(fd);
  if (created) ::unlink(path.c_str());
  return "";
}

// Non-negative least squares y ~ X c, c >= 0 (X: rows of features), by cyclic coordinate
// descent with exact minimisation along each coordinate (invariant to the features' scales).
std::vector<double> nnls(const std::vector<std::vector<double>>& X, const std::vector<double>& y) {
  const std::size_t n = X.empty() ? 0 : X[0].size();
  std::vector<std::vector<double>> H(n, std::vector<double>(n, 0));
  std::vector<double> g(n, 0), c(n, 0);
  for (std::size_t r = 0; r < X.size(); ++r)
    for (std::size_t i = 0; i < n; ++i) {
      g[i] += X[r][i] * y[r];
      for (std::size_t j = 0; j < n; ++j) H[i][j] += X[r][i] * X[r][j];
    }
  for (int sweep = 0; sweep < 20000; ++sweep) {
    double moved = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (H[i][i] <= 0) continue;
      double grad = -g[i];
      for (std::size_t j = 0; j < n; ++j) grad += H[i][j] * c[j];
      const double next = std::max(0.0, c[i] - grad / H[i][i]);
      moved = std::max(moved, std::abs(next - c[i]) / std::max(1e-12, std::abs(next)));
      c[i] = next;
    }
    if (moved < 1e-12) break;
  }
  return c;
}

// Least squares y = a*x1 + b*x2 (no intercept), with a, b >= 0 (a negative coefficient is set
// to zero and the other refitted alone).
void fit2(const std::vector<double>& x1, const std::vector<double>& x2, const std::vector<double>& y, double* a, double* b) {
  double s11 = 0, s12 = 0, s22 = 0, s1y = 0, s2y = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    s11 += x1[i] * x1[i];
    s12 += x1[i] * x2[i];
    s22 += x2[i] * x2[i];
    s1y += x1[i] * y[i];
    s2y += x2[i] * y[i];
  }
  const double det = s11 * s22 - s12 * s12;
  *a = det != 0 ? (s1y * s22 - s2y * s12) / det : 0;
  *b = det != 0 ? (s2y * s11 - s1y * s12) / det : 0;
  if (*a < 0) {
    *a = 0;
    *b = s22 > 0 ? std::max(0.0, s2y / s22) : 0;
  } else if (*b < 0) {
    *b = 0;
    *a = s11 > 0 ? std::max(0.0, s1y / s11) : 0;
  }
}

// Ping-pong between ranks 0 and 1: half the round-trip time per message size.
void ping_pong(int rank, int reps, std::vector<double>* sizes, std::vector<double>* times) {
  for (int bytes : {0, 8, 64, 512, 4096, 32768, 262144, 1048576}) {
    // Only ranks 0 and 1 need a buffer (under SMPI every rank's lives in one process).
    std::vector<char> buf(rank < 2 ? std::max(bytes, 1) : 1);
    std::vector<double> samples;
    for (int r = 0; r < reps + 5; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(buf.data(), bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buf.data(), bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(buf.data(), bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf.data(), bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
      }
      if (r >= 5) samples.push_back((MPI_Wtime() - t0) * 1e6 / 2);
    }
    double median = cartplan::bench::summarize(samples).median;
    MPI_Bcast(&median, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    sizes->push_back(bytes);
    times->push_back(median);
  }
}

// "32 ranks per node" (block; "0 ranks per node": one node, or neither pattern), or "cyclic placement
// over 2 nodes (32 ranks per node)".
std::string placement_text(const cartplan::engine::Placement& p, int np) {
  if (!p.is_cyclic()) return std::to_string(p.ranks_per_node) + " ranks per node";
  return "cyclic placement over " + std::to_string(p.cyclic_nodes) + " nodes (" + std::to_string(p.largest_node(np)) +
         " ranks per node)";
}

// One timed burst of the node-link probe: every rank of `probe` exchanges `bytes` with its partner
// (the i-th rank of the first node with the i-th of the second) at once; the max over the probe's ranks
// of each rank's time from the probe's barrier to its own completion, in us.
double node_link_burst(MPI_Comm probe, int partner, int bytes, std::vector<char>& out, std::vector<char>& in) {
  MPI_Barrier(probe);
  const double t0 = MPI_Wtime();
  MPI_Request reqs[2];
  MPI_Irecv(in.data(), bytes, MPI_BYTE, partner, 0, probe, &reqs[0]);
  MPI_Isend(out.data(), bytes, MPI_BYTE, partner, 0, probe, &reqs[1]);
  MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
  double us = (MPI_Wtime() - t0) * 1e6, slowest = 0;
  MPI_Allreduce(&us, &slowest, 1, MPI_DOUBLE, MPI_MAX, probe);
  return slowest;
}

// The growth per byte of a burst that loads a node's link (CostModel::node_link_us_per_byte is
// derived from it in main): the R ranks of the first node exchange S bytes pairwise with the R
// ranks of the second, all at once, so each node's link carries R x S bytes each way, as a halo
// phase loads it. The growth is the burst time's difference from S = 256 KiB to 1 MiB over the
// 768 KiB (latencies, handshakes and the barrier's skew cancel), the median of up to 20 bursts
// per size, in us per byte of one rank's message. `placement` (known) says which ranks are on
// the first two nodes: block, ranks 0..R-1 and R..2R-1; cyclic over N nodes, ranks 0, N, 2N, ...
// and 1, N + 1, ... (R the second node's count, the first's beyond it left out). 0 where the run
// does not have two nodes of R >= 2 ranks each (a block run's second node with fewer ranks is not
// probed). *pairs: R, the ranks per node that load the link in the probe.
double node_link_probe(int rank, int np, const cartplan::engine::Placement& placement, int reps, int* pairs) {
  const int r = placement.is_cyclic() ? placement.largest_node(np - 1) : placement.ranks_per_node;  // ranks 1, 1 + N, ...
  *pairs = r;
  double growth = 0;
  if (r < 2 || (!placement.is_cyclic() && np < 2 * r)) return growth;
  // This rank's node and place in it; in the probe, rank node x R + place (block: the same rank).
  const int node = placement.node_of(rank), place = placement.is_cyclic() ? rank / placement.cyclic_nodes : rank % r;
  MPI_Comm probe;
  MPI_Comm_split(MPI_COMM_WORLD, node < 2 && place < r ? 0 : MPI_UNDEFINED, node * r + place, &probe);
  if (probe != MPI_COMM_NULL) {
    const int small = 256 << 10, large = 1 << 20, partner = (1 - node) * r + place;
    std::vector<char> out(large, static_cast<char>(rank)), in(large);
    double median[2];
    for (int i = 0; i < 2; ++i) {
      std::vector<double> samples;
      for (int k = 0; k < std::min(reps, 20) + 1; ++k) {  // the first burst warms the connection up, untimed
        const double us = node_link_burst(probe, partner, i ? large : small, out, in);
        if (k > 0) samples.push_back(us);
      }
      median[i] = cartplan::bench::summarize(samples).median;
    }
    growth = (median[1] - median[0]) / (large - small);
    MPI_Comm_free(&probe);
  }
  MPI_Bcast(&growth, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return growth;
}

// The counts the model prices for `plan` on `grid`, one column per term of engine::kCostTerms
// (engine::predict's counts, so the fit prices what it counts). A term whose price may undercut
// another's (pipeline_us_per_byte >= -beta_us_per_byte) is fitted as the sum of the two at a
// non-negative rate: its count is taken out of the other term's column (prices_of undoes it).
// The counts leave placement out (no ranks per node): on several nodes the off-node terms are
// not fitted but the node's link is probed (node_link_probe) and priced beside concurrent sides.
// `counting`: a model whose eager limit, home limit (home_max_message_bytes) and trailer
// threshold (trailer_min_bytes) the requests ran with; the counts depend on nothing else of it.
std::vector<double> features(const cartplan::ir::Plan& plan, const cartplan::engine::Grid& grid, std::int64_t block_bytes,
                             const cartplan::engine::CostModel& counting, std::int64_t struct_min_bytes) {
  cartplan::engine::PredictOptions options;  // ranks_per_node 0: no placement counts
  options.lowering = cartplan::openmpi::lower_options(counting);  // as the requests ran (Info)
  options.lowering.struct_min_bytes = struct_min_bytes;
  const cartplan::engine::Features n = cartplan::engine::predict(plan, {block_bytes}, counting, grid, options).counts;
  std::vector<double> x;
  for (const cartplan::engine::CostTerm& t : cartplan::engine::kCostTerms) x.push_back(n.*t.feature);
  for (std::size_t i = 0; i < x.size(); ++i)
    if (const auto other = cartplan::engine::kCostTerms[i].at_least_minus) x[cartplan::engine::term_index(other)] -= x[i];
  return x;
}

// The model of fitted rates `c` (features()' columns), with `eager_limit_bytes`.
cartplan::engine::CostModel prices_of(const std::vector<double>& c, std::int64_t eager_limit_bytes) {
  using cartplan::engine::kCostTerms;
  cartplan::engine::CostModel m;
  for (std::size_t i = 0; i < kCostTerms.size(); ++i) m.*kCostTerms[i].price = c[i];
  for (std::size_t i = 0; i < kCostTerms.size(); ++i)
    if (const auto other = kCostTerms[i].at_least_minus) m.*kCostTerms[i].price -= c[cartplan::engine::term_index(other)];
  m.eager_limit_bytes = eager_limit_bytes;
  return m;
}

// "messages 6 phases 2 wire 2400 ..." of one row (features()' columns, in the model's counts).
std::string counts_text(std::vector<double> x) {
  using cartplan::engine::kCostTerms;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (const auto other = kCostTerms[i].at_least_minus) x[cartplan::engine::term_index(other)] += x[i];
  std::string s;
  char buf[64];
  for (std::size_t i = 0; i < x.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%s %.0f", i ? " " : "", kCostTerms[i].counts, x[i]);
    s += buf;
  }
  return s;
}

// "alpha_us 0.173 us, phase_us 2.94 us, ..." of a model.
std::string prices_text(const cartplan::engine::CostModel& m) {
  std::string s;
  char buf[96];
  for (const cartplan::engine::CostTerm& t : cartplan::engine::kCostTerms) {
    std::snprintf(buf, sizeof buf, "%s%s %.6g %s", s.empty() ? "" : ", ", t.name, m.*t.price, t.unit);
    s += buf;
  }
  return s;
}

// Measured rows: counts (features()), median times, and the (spec, op, size) group of each row:
// the choices the model must get right.
struct Rows {
  std::vector<std::vector<double>> X;
  std::vector<double> y;
  std::vector<std::string> group;
  void append(const Rows& more) {
    X.insert(X.end(), more.X.begin(), more.X.end());
    y.insert(y.end(), more.y.begin(), more.y.end());
    group.insert(group.end(), more.group.begin(), more.group.end());
  }
};

// How the rows are measured (--timing). barrier: every repetition of every variant after an
// MPI_Barrier, the max over ranks of its time, the median over repetitions (a drifting machine
// moves the variants of a group together: they are timed round-robin). back-to-back: per variant,
// an untimed barrier and one warm-up call, then `reps` calls in one interval per rank, the max
// over ranks of the mean per call. sync (SMPI only: it needs one clock for all ranks): per
// variant one warm-up call, then `reps` calls each after a barrier, from the last rank's entry to
// the last rank's exit, the median; no barrier skew and no steady state of back-to-back calls in
// it (docs/smpi.md, "Timing"), and deterministic, so one repetition is enough.
struct Method {
  int reps = 150;
  std::string timing = "barrier";
  std::vector<int> sizes;
  std::vector<std::string> specs;
  cartplan::engine::Placement placement;  // of this run (node_map.h); unknown: one node, or neither block nor cyclic
};

// The kinds of plan the optimizer chooses between (Info keys of Cart_neighborhood_create).
struct Variant {
  const char* name;
  const char* algo;
  bool packed, reversed;
};
constexpr Variant kVariants[] = {{"direct", "direct", false, false},           {"combining", "combining", false, false},
                                 {"combining-packed", "combining", true, false}, {"combining-reversed", "combining", false, true},
                                 {"hybrid", "hybrid", false, false},           {"log-round", "loground", false, false}};

struct Built {
  const Variant* v;
  std::int64_t struct_min;
  MPI_Comm cart;
};

// One communicator per variant the optimizer can build for `nbh` (log-round: dimensions with
// many coordinates; hybrid: two distinct offsets at least), lowered with `counting`'s home limit
// and trailers (not those of a model file the backend may find: the rows must run what they are
// priced as).
std::vector<Built> build_variants(const cartplan::engine::Neighborhood& nbh, std::vector<int> dims,
                                  const cartplan::engine::CostModel& counting) {
  const int d = nbh.ndims(), t = nbh.size();
  std::vector<int> periods(d, 1), offsets;
  for (const auto& o : nbh.offsets()) offsets.insert(offsets.end(), o.begin(), o.end());
  std::string reversed;
  for (int k = d - 1; k >= 0; --k) reversed += std::to_string(k) + (k ? "," : "");
  std::vector<Built> built;
  for (const Variant& v : kVariants) {
    if (std::string(v.name) == "log-round") {  // asked for, it is built even where it is combining's plan
      const std::vector<bool> log = cartplan::engine::log_round_dims(nbh);
      if (std::find(log.begin(), log.end(), true) == log.end()) continue;
    }
    const std::int64_t struct_min = v.packed ? -1 : cartplan::engine::LowerOptions::kDefaultStructMinBytes;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cartplan_algorithm", v.algo);
    MPI_Info_set(info, "cartplan_struct_min_bytes", std::to_string(struct_min).c_str());
    MPI_Info_set(info, "cartplan_home_max_bytes", std::to_string(cartplan::openmpi::home_max_message_bytes(counting)).c_str());
    MPI_Info_set(info, "cartplan_trailer_min_bytes", std::to_string(cartplan::openmpi::trailer_min_bytes(counting)).c_str());
    if (v.reversed) MPI_Info_set(info, "cartplan_dim_order", reversed.c_str());
    MPI_Comm cart;
    if (Cart_neighborhood_create(MPI_COMM_WORLD, d, dims.data(), periods.data(), t, offsets.data(), MPI_UNWEIGHTED, info, 0, &cart) !=
        MPI_SUCCESS)
      die(Cart_error_message());
    MPI_Info_free(&info);
    built.push_back({&v, struct_min, cart});
  }
  return built;
}

// One persistent request's time per call, back to back (Method): the slowest rank's mean.
double time_back_to_back(MPI_Comm cart, Cart_Request* req, int reps) {
  MPI_Barrier(cart);  // untimed: every variant starts from the same skew
  Cart_start(req);
  Cart_wait(req);
  const double t0 = MPI_Wtime();
  for (int r = 0; r < reps; ++r) {
    Cart_start(req);
    Cart_wait(req);
  }
  double mean = (MPI_Wtime() - t0) * 1e6 / reps, worst = 0;
  MPI_Allreduce(&mean, &worst, 1, MPI_DOUBLE, MPI_MAX, cart);
  return worst;
}

// One persistent request's synchronized time (Method, sync): the median over `reps` calls, each
// from the last rank's entry to the last rank's exit on the one clock all ranks share.
double time_synchronized(MPI_Comm cart, Cart_Request* req, int reps) {
  Cart_start(req);
  Cart_wait(req);
  std::vector<double> samples;
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(cart);
    double t[2] = {MPI_Wtime(), 0}, last[2] = {0, 0};
    Cart_start(req);
    Cart_wait(req);
    t[1] = MPI_Wtime();
    MPI_Allreduce(t, last, 2, MPI_DOUBLE, MPI_MAX, cart);
    samples.push_back((last[1] - last[0]) * 1e6);
  }
  return cartplan::bench::summarize(samples).median;
}

// Each request's time in microseconds (Method): the same on every rank.
std::vector<double> time_requests(const std::vector<Built>& built, std::vector<Cart_Request>& reqs, const Method& method) {
  std::vector<double> times(built.size());
  if (method.timing != "barrier") {
    for (std::size_t i = 0; i < built.size(); ++i)
      times[i] = method.timing == "sync" ? time_synchronized(built[i].cart, &reqs[i], method.reps)
                                         : time_back_to_back(built[i].cart, &reqs[i], method.reps);
    return times;
  }
  std::vector<std::vector<double>> samples(built.size());
  for (int r = 0; r < method.reps + 5; ++r) {
    for (std::size_t i = 0; i < built.size(); ++i) {
      MPI_Barrier(built[i].cart);
      const double t0 = MPI_Wtime();
      Cart_start(&reqs[i]);
      Cart_wait(&reqs[i]);
      double dt = (MPI_Wtime() - t0) * 1e6, worst = 0;
      MPI_Allreduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, built[i].cart);
      if (r >= 5) samples[i].push_back(worst);
    }
  }
  for (std::size_t i = 0; i < built.size(); ++i) times[i] = cartplan::bench::summarize(samples[i]).median;
  return times;
}

// Buffers whose contents do not matter, only their sizes. Under SMPI the ranks' buffers share
// memory (SMPI_SHARED_MALLOC): thousands of simulated ranks then fit in one process.
class Scratch {
 public:
  explicit Scratch(std::size_t ints) : n_(std::max<std::size_t>(ints, 1)) {
#ifdef CARTPLAN_SMPI
    p_ = static_cast<int*>(SMPI_SHARED_MALLOC(n_ * sizeof(int)));
#else
    v_.assign(n_, 0);
    p_ = v_.data();
#endif
  }
  ~Scratch() {
#ifdef CARTPLAN_SMPI
    SMPI_SHARED_FREE(p_);
#endif
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  int* data() { return p_; }

 private:
  std::size_t n_;
  int* p_ = nullptr;
  std::vector<int> v_;
};

// The rows of one neighbourhood, op and block size: every built variant as a persistent
// request, timed, with the counts of the plan it really runs (the backend plans with its own grid).
void add_rows(const char* spec, const std::vector<Built>& built, const cartplan::engine::Grid& grid, bool gather, int m,
              const Method& method, const cartplan::engine::CostModel& counting, int rank, Rows* rows) {
  const int t = cartplan::engine::parse_spec(spec)->size();
  Scratch sb(static_cast<std::size_t>(gather ? 1 : t) * m);
  std::vector<std::unique_ptr<Scratch>> rb;
  std::vector<Cart_Request> reqs(built.size());
  for (std::size_t i = 0; i < built.size(); ++i) {
    rb.push_back(std::make_unique<Scratch>(static_cast<std::size_t>(t) * m));
    const int rc = gather ? Cart_allgather_init(sb.data(), m, MPI_INT, rb[i]->data(), m, MPI_INT, built[i].cart, MPI_INFO_NULL, &reqs[i])
                          : Cart_alltoall_init(sb.data(), m, MPI_INT, rb[i]->data(), m, MPI_INT, built[i].cart, MPI_INFO_NULL, &reqs[i]);
    if (rc != MPI_SUCCESS) die(Cart_error_message());
  }
  const std::vector<double> times = time_requests(built, reqs, method);
  for (std::size_t i = 0; i < built.size(); ++i) {
    char* json = nullptr;
    if (Cart_request_plan(reqs[i], &json) != MPI_SUCCESS) die(Cart_error_message());
    const cartplan::Result<cartplan::ir::Plan> plan = cartplan::ir::plan_from_json_string(json);
    Cart_free_plan_json(json);
    if (!plan) die("the request's plan does not parse: " + plan.error());
    Cart_request_free(&reqs[i]);
    rows->X.push_back(features(*plan, grid, std::int64_t{4} * m, counting, built[i].struct_min));
    rows->y.push_back(times[i]);
    rows->group.push_back(std::string(spec) + (gather ? " allgather" : " alltoall") + " m=" + std::to_string(m));
    const std::vector<double>& f = rows->X.back();
    if (rank == 0)
      std::printf("  %-18s %-9s %-18s m=%-5d %s  median %9.2f us\n", spec, gather ? "allgather" : "alltoall",
                  built[i].v->name, m, counts_text(f).c_str(), rows->y.back());
  }
}

// The rows: every variant of every neighbourhood, op and size (Method), timed as persistent
// requests lowered with `counting`'s home limit and trailers, and their counts. The variants move
// the counts apart: packing trades pipelined messages for copies and single copies, the reversed
// order moves copies (and, for allgather, trades wire bytes for copies), hybrid and
// direct trade messages for bytes, log-round adds phases.
Rows measure(int np, int rank, const Method& method, const cartplan::engine::CostModel& counting) {
  Rows rows;
  for (const std::string& spec : method.specs) {
    auto nbh = cartplan::engine::parse_spec(spec);
    if (!nbh) die("spec " + spec + ": " + nbh.error());
    const int d = nbh->ndims();
    std::vector<int> dims(d, 0);
    MPI_Dims_create(np, d, dims.data());
    auto grid = cartplan::engine::Grid::create(dims, std::vector<bool>(d, true));
    for (const bool gather : {false, true}) {
      std::vector<Built> built = build_variants(*nbh, dims, counting);
      for (int m : method.sizes) add_rows(spec.c_str(), built, *grid, gather, m, method, counting, rank, &rows);
      for (Built& b : built) MPI_Comm_free(&b.cart);
    }
  }
  return rows;
}

// The fitted model and how well it explains and orders the rows.
struct Fit {
  cartplan::engine::CostModel model;
  double r2 = 0, worst = 0;
  int groups = 0, chosen_well = 0;
};

// Fits on `rows` and judges the choices on `judged` (the rows that ran what the fit lowers).
// `limits`: the eager limit the rows were counted with, copied into the fitted model.
Fit fit(const Rows& rows, const Rows& judged, const cartplan::engine::CostModel& limits) {
  // Every term is fitted, on relative errors: rows are weighted by 1/time^2, so the optimizer's
  // 2-us choices count as much as its 200-us ones. There is no separate constant per call:
  // every plan has at least one phase, so the phase term carries it. (A free constant took the
  // phase price with it at np = 4, 2x2 grids, where direct has one phase and combining two:
  // 7.7 us per call and 0.03 us per phase, and auto chose combining on the main job at 1.4x the
  // time of direct.)
  const std::vector<std::vector<double>>& X = rows.X;
  const std::vector<double>& y = rows.y;
  std::vector<std::vector<double>> Xw;
  std::vector<double> yw;
  for (std::size_t i = 0; i < y.size(); ++i) {
    Xw.emplace_back(X[i]);
    for (double& v : Xw.back()) v /= y[i];
    yw.push_back(1.0);
  }
  const std::vector<double> c = nnls(Xw, yw);
  Fit f;
  f.model = prices_of(c, limits.eager_limit_bytes);
  // A term no row counts (the placement terms on one node, pipelined bytes where nothing is
  // pipelined) has no evidence: it stays 0 (unset), not -beta through the undercutting columns.
  for (std::size_t j = 0; j < c.size(); ++j)
    if (std::all_of(X.begin(), X.end(), [j](const std::vector<double>& row) { return row[j] == 0; }))
      f.model.*cartplan::engine::kCostTerms[j].price = 0;
  double ss_res = 0, ss_tot = 0, mean = 0;
  for (double v : y) mean += v / static_cast<double>(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) {
    double pred = 0;
    for (std::size_t j = 0; j < c.size(); ++j) pred += c[j] * X[i][j];
    ss_res += (y[i] - pred) * (y[i] - pred);
    ss_tot += (y[i] - mean) * (y[i] - mean);
    f.worst = std::max(f.worst, std::abs(pred - y[i]) / std::max(y[i], 1e-9));
  }
  f.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
  // The choices on the judged rows: in how many (spec, op, size) groups does the fitted
  // model's cheapest variant run within 10% of the fastest one?
  std::set<std::string> seen;
  for (std::size_t i = 0; i < judged.y.size(); ++i) {
    if (!seen.insert(judged.group[i]).second) continue;
    std::size_t pick = i, fastest = i;
    double pick_pred = 1e300;
    for (std::size_t k = i; k < judged.y.size(); ++k) {
      if (judged.group[k] != judged.group[i]) continue;
      double pred = 0;
      for (std::size_t j = 0; j < c.size(); ++j) pred += c[j] * judged.X[k][j];
      if (pred < pick_pred) pick_pred = pred, pick = k;
      if (judged.y[k] < judged.y[fastest]) fastest = k;
    }
    ++f.groups;
    f.chosen_well += judged.y[pick] <= 1.10 * judged.y[fastest];
  }
  return f;
}

// The command line, with defaults for the MPI underneath: under SMPI (CARTPLAN_SMPI) one
// synchronized repetition per row (timing sync: the simulation is deterministic, so more only
// cost wall time), block sizes on both sides of the simulated eager limit, and that limit read
// from the simulator's configuration (smpi/async-small-thresh: what the platform file sets).
struct Options {
  std::string out;
  Method method;
  bool quick = false;
  // --no-node-link: no probe, no phase_overlap (the sum of a phase's sends). The probe and overlap
  // 1 were judged in simulation only (bench/results/smpi/nic_overlap.md), not on a real cluster.
  bool no_node_link = false;
  std::int64_t eager_limit = cartplan::engine::CostModel::kDefaultEagerLimitBytes;
};

const char* kUsage =
    "usage: calibrate --out FILE [--quick] [--reps R] [--timing barrier|back-to-back|sync] [--eager-limit BYTES]\n"
    "                 [--sizes M,M,..] [--specs SPEC;SPEC;..] [--no-node-link]";

// Block sizes in ints. Open MPI: on both sides of the eager limit for single blocks (1000 ints =
// 4000 bytes just under it, 1024 ints = 4096 bytes above) and for packed messages of several
// blocks. At 100 and 128 ints the deep halos' log-round messages (14 and 18 blocks) are
// pipelined just above the limit where combining's (7 and 9 blocks) are eager just below it:
// the rows that price the pipeline's handshake apart from its per-byte gain. Without the
// 1000-int rows no row had many eager messages of nearly the limit's size, the sweep's m = 1000
// case, and the fit mispriced it; the 16384-int rows (64 KB blocks, messages up to 5 MB) are
// where the single copy's per-byte price shows. SMPI: one size below every eager limit the
// platforms set, single blocks and packed messages around it, and large blocks; around 4096
// bytes where the platform sets a smaller limit or none (calibrate_sizes.h).
void default_method(const Options& o, Method* m) {
#ifdef CARTPLAN_SMPI
  m->reps = 1;
  m->timing = "sync";
  m->sizes = cartplan::bench::smpi_block_sizes(o.eager_limit, o.quick);  // at least 4096 bytes' worth
  m->specs = o.quick ? std::vector<std::string>{"box:d=2,n=3,f=-1", "box:d=3,n=3,f=-1", "box:d=2,n=7,f=-3"}
                     : std::vector<std::string>{"box:d=2,n=3,f=-1", "box:d=3,n=3,f=-1", "box:d=4,n=3,f=-1", "box:d=2,n=7,f=-3"};
#else
  if (o.quick) m->reps = std::min(m->reps, 10);
  m->sizes = o.quick ? std::vector<int>{1, 128, 1000, 1024, 2048, 16384} : std::vector<int>{1, 16, 100, 128, 512, 1000, 1024, 2048, 16384};
  m->specs = {"box:d=2,n=3,f=-1", "box:d=3,n=3,f=-1", "box:d=4,n=3,f=-1", "box:d=2,n=7,f=-3", "box:d=2,n=9,f=-4"};
#endif
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, sep);) out.push_back(item);
  return out;
}

Options parse_options(int argc, char** argv) {
  Options o;
  int reps = -1;
  std::string timing, sizes, specs;
#ifdef CARTPLAN_SMPI
  o.eager_limit = simgrid::config::get_value<int>("smpi/async-small-thresh");
#endif
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    const bool has = i + 1 < argc;
    if (k == "--out" && has) o.out = argv[++i];
    else if (k == "--reps" && has) reps = std::max(1, std::atoi(argv[++i]));
    else if (k == "--timing" && has) timing = argv[++i];
    else if (k == "--eager-limit" && has) o.eager_limit = std::max(0, std::atoi(argv[++i]));
    else if (k == "--quick") o.quick = true;
    else if (k == "--no-node-link") o.no_node_link = true;
    else if (k == "--sizes" && has) sizes = argv[++i];
    else if (k == "--specs" && has) specs = argv[++i];
    else die(kUsage);
  }
  default_method(o, &o.method);
  if (reps > 0) o.method.reps = reps;
  if (!timing.empty() && timing != "barrier" && timing != "back-to-back" && timing != "sync")
    die("--timing must be barrier, back-to-back or sync, not '" + timing + "'");
#ifndef CARTPLAN_SMPI
  if (timing == "sync") die("--timing sync needs one clock for all ranks: only under SMPI");
#endif
  if (!timing.empty()) o.method.timing = timing;
  if (!sizes.empty()) o.method.sizes.clear();
  for (const std::string& item : split(sizes, ',')) {
    const int m = std::atoi(item.c_str());
    if (m < 1) die("--sizes wants positive block sizes in ints separated by commas, not '" + item + "'");
    o.method.sizes.push_back(m);
  }
  if (!specs.empty()) o.method.specs = split(specs, ';');
  for (const std::string& spec : o.method.specs)
    if (auto n = cartplan::engine::parse_spec(spec); !n) die("--specs: " + spec + ": " + n.error());
  return o;
}

// Two passes at most. The lowering's home limit and trailers come from the model
// (home_max_message_bytes, trailer_min_bytes), so the rows must run those of the model they
// produce: the first pass counts and runs with the built-in model's (homes in every message,
// no trailers); where the fit's differ, the rows are measured again with the fit's, and the
// model is fitted on both passes (the first is the one with messages read by single copy,
// which trailers remove) and judged on the second. (At np = 2 here the fit homed blocks only
// up to the eager limit before trailers: log-round's 7-KB messages on deep halos then copied
// 14 KB more than the first pass measured, and ran 1 us slower than that fit predicted.)
Fit fit_in_passes(int np, int rank, const Options& o, Rows* rows) {
  cartplan::engine::CostModel counting;
  counting.eager_limit_bytes = o.eager_limit;
  *rows = measure(np, rank, o.method, counting);
  Fit f = fit(*rows, *rows, counting);
  auto limits = [](const cartplan::engine::CostModel& m) {
    return std::pair{cartplan::openmpi::home_max_message_bytes(m), cartplan::openmpi::trailer_min_bytes(m)};
  };
  const auto first = limits(counting), fitted = limits(f.model);
#ifdef CARTPLAN_SMPI
  // Under SMPI the lowering's home limit and trailers change only copies and datatypes, which the
  // simulation does not charge (no simulated computation): a second pass would time the same.
  return f;
#endif
  if (fitted == first) return f;
  if (rank == 0)
    std::printf("the fit homes blocks in messages up to %lld bytes and trails messages from %lld bytes on, the rows ran "
                "with %lld and %lld: measuring again with the fit's (first fit: choices within 10%% in %d of %d groups)\n",
                static_cast<long long>(fitted.first), static_cast<long long>(fitted.second), static_cast<long long>(first.first),
                static_cast<long long>(first.second), f.chosen_well, f.groups);
  const Rows second = measure(np, rank, o.method, f.model);
  rows->append(second);
  f = fit(*rows, second, counting);
  if (rank == 0 && limits(f.model) != fitted)
    std::printf("note: the second fit's home limit or trailer threshold differs again (%lld, %lld bytes); kept, not measured\n",
                static_cast<long long>(limits(f.model).first), static_cast<long long>(limits(f.model).second));
  return f;
}

// Rank 0: the fit's terms and quality, and the cost-model file (--out) with how it was made.
// False if --out could not be written.
bool report(const Options& o, const Fit& f, const Rows& rows, int np, double pp_alpha, double pp_beta) {
  const cartplan::engine::CostModel& model = f.model;
  const std::vector<int>& sizes = o.method.sizes;
  std::printf("ping-pong:    alpha %.3f us, beta %.6f us/byte\n", pp_alpha, pp_beta);
  cartplan::engine::CostModel fitted = model;  // what the rows fitted: without the probed link and overlap
  fitted.node_link_us_per_byte = 0, fitted.phase_overlap = 0;
  std::printf("exchange fit: %s, eager_limit_bytes %lld (R^2 %.3f, worst relative error %.2f, %zu points)\n",
              prices_text(fitted).c_str(), static_cast<long long>(o.eager_limit), f.r2, f.worst, rows.y.size());
  std::printf("choices: the model's cheapest variant runs within 10%% of the fastest in %d of %d groups\n", f.chosen_well, f.groups);
  const std::string link =
      model.phase_overlap > 0
          ? "; on " + placement_text(o.method.placement, np) +
                ", node_link_us_per_byte from a probe (node_link_probe: the ranks of two nodes exchanging 256 KiB "
                "and 1 MiB pairwise at once; the burst's growth per byte less beta, over the ranks per node) and phase_overlap 1 (a "
                "phase's on-node and off-node sends concurrent), neither fitted; r2, worst_relative_error and the choices are the "
                "fitted sum's, without them"
          : "";
  std::printf("written beside the fit: node_link_us_per_byte %.6g, phase_overlap %g\n", model.node_link_us_per_byte, model.phase_overlap);
  if (o.out.empty()) return true;
  std::string specs;
  for (const std::string& spec : o.method.specs) specs += (specs.empty() ? "" : "; ") + spec;
#ifdef CARTPLAN_SMPI
  const char* mpi = "SimGrid SMPI (simulated)";
  const char* passes = "one pass (the simulation charges no copies, so trailers and homes time the same)";
#else
  const char* mpi = "Open MPI";
  const char* passes = "measured without trailers and, where the fit wants them, again with them, fitted on both";
#endif
  char extra[3072];
  std::snprintf(extra, sizeof extra,
                R"({"method": "weighted (relative) non-negative least squares of persistent Cart_alltoall and Cart_allgather (direct, combining, combining with every message packed, combining in reversed dimension order, hybrid, log-round; %s; %zu block sizes from %d to %d ints) against engine::predict's counts, every term fitted, pipelined bytes at their own non-negative rate; %s%s", "mpi": "%s", "timing": "%s, %d repetitions", "np": %d, "quick": %s, "r2": %.6g, "worst_relative_error": %.6g, "points": %zu, "choices_within_10_percent": "%d of %d", "pingpong": {"alpha_us": %.6g, "beta_us_per_byte": %.6g}})",
                specs.c_str(), sizes.size(), *std::min_element(sizes.begin(), sizes.end()), *std::max_element(sizes.begin(), sizes.end()),
                passes, link.c_str(), mpi, o.method.timing.c_str(), o.method.reps, np, o.quick ? "true" : "false", f.r2, f.worst, rows.y.size(), f.chosen_well, f.groups, pp_alpha, pp_beta);
  std::ofstream file(o.out);
  file << cartplan::engine::cost_model_to_json(model, extra);
  file.close();
  if (!file) return false;
  std::printf("wrote %s\n", o.out.c_str());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, np = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  if (np < 2) die("needs at least 2 ranks");
  Options o = parse_options(argc, argv);
  // A model that cannot be written is found out before the measurements, not after them.
  int writable = 1;
  if (rank == 0 && !o.out.empty()) {
    const std::string problem = output_problem(o.out);
    if (!problem.empty()) {
      std::fprintf(stderr, "calibrate: %s\n", problem.c_str());
      writable = 0;
    }
  }
  MPI_Bcast(&writable, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!writable) die("--out cannot be written (above): nothing measured");
  // Block or cyclic placement, as Cart_neighborhood_create learns it: which ranks the probe pairs.
  if (cartplan::mpi::node_placement(MPI_COMM_WORLD, &o.method.placement) != MPI_SUCCESS) die("MPI_Comm_split_type failed");
  if (rank == 0)
    std::printf("calibrate: np %d, %zu neighbourhoods, %zu block sizes, %d repetitions, timing %s, eager limit %lld bytes, "
                "%s\n", np, o.method.specs.size(), o.method.sizes.size(), o.method.reps,
                o.method.timing.c_str(), static_cast<long long>(o.eager_limit), placement_text(o.method.placement, np).c_str());
  std::vector<double> pp_sizes, pp_times;
  ping_pong(rank, o.method.reps, &pp_sizes, &pp_times);
  double pp_alpha = 0, pp_beta = 0;
  fit2(std::vector<double>(pp_sizes.size(), 1.0), pp_sizes, pp_times, &pp_alpha, &pp_beta);
  Rows rows;
  Fit f = fit_in_passes(np, rank, o, &rows);
  // On several nodes a phase's on-node and off-node sends run concurrently and share the node's
  // link (docs/cost-model.md, "Phase overlap"): the probe prices the link, overlap 1 the concurrency.
  // The model prices the probe's burst on its off-node side as beta x S + node_link x R x S (one
  // message per rank, R per node on the link): the link's price is what the growth leaves beyond
  // beta, per rank sharing the link. None left (the link is no bottleneck): neither term is written.
  int r = 0;
  const bool known = o.method.placement.spans_nodes(np);
  const double growth = o.no_node_link || !known ? 0 : node_link_probe(rank, np, o.method.placement, o.method.reps, &r);
  const double link = growth > 0 ? (growth - f.model.beta_us_per_byte) / r : 0;
  if (link > 0) f.model.node_link_us_per_byte = link, f.model.phase_overlap = 1;
  if (rank == 0 && growth > 0)
    std::printf("node link probe: %.6g us per byte per rank (%d ranks per node); beta %.6g us/byte: %s\n", growth, r,
                f.model.beta_us_per_byte, link > 0 ? "the link is priced, phase_overlap 1" : "no link price left, neither written");
  if (rank == 0 && !report(o, f, rows, np, pp_alpha, pp_beta)) die("could not write --out " + o.out + " (the fit is printed above)");
  MPI_Finalize();
  return 0;
}
