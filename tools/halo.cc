// halo: a 2-D 9-point / 5-point or 3-D 27-point Jacobi run whose halo exchange goes through cartplan's halo API (Cart_halo_*: the plan auto picks, persistent and blocking, and the direct, combining and dimwise plans forced), cartplan's Cart_alltoallw (auto, direct, combining, hybrid, log-round; persistent, and auto blocking), a hand-written dimension-by-dimension exchange (halo_handwritten.h), the linear MPI_Irecv/MPI_Isend/MPI_Waitall loop over the neighbours and MPI_Neighbor_alltoallw, each checked bit-for-bit against a serial run, timed and printed beside the cost model's prediction and the bytes each rank sends.
//
//   mpirun -np 4 bazel-bin/tools/halo [--dims 2|3] [--points 9|5|27] [--n N | --global G[,G[,G]]] [--halo K] [--iters I]
//                                     [--periodic 0|1] [--procs P,Q[,R]] [--timing interleaved|blocks]
//                                     [--plan FILE]   (a JSON plan every Cart_alltoallw variant runs)
//   smpirun -np 64 -platform P.xml -hostfile P.hosts bazel-bin/tools/halo ...   (bazel build --config=smpi)
//
// The linear loop is what Open MPI's and MPICH's neighbourhood collectives do: every receive posted,
// then every send, then one MPI_Waitall. Under SimGrid's SMPI (CARTPLAN_SMPI), which lacks
// MPI_Dist_graph_create_adjacent, MPI_Neighbor_alltoallw is left out and the timing defaults to blocks.
//
// Every rank owns one (n+2k)^d array of doubles (row-major). Each of the 3^d-1 Moore
// neighbours gets a subarray datatype on that one array (send: the k-deep interior slab next to
// the neighbour; recv: the matching halo region), so all displacements are 0, as in seed 000,
// Listing 3. The 9- and 27-point runs exchange before every sweep.
//
// --global G cuts a global interior into blocks over the process grid instead (G/P cells, the
// first G%P ranks of a dimension one more): every rank's array is then its own block's, the halo
// API and the hand-written, linear and MPI_Neighbor_alltoallw exchanges run on it, and
// Cart_alltoallw's variants are left out where interiors differ (its blocks need one size on
// every rank).
//
// --points 5 is seed 002's application (Sect. 2): a 5-point stencil with a halo of depth k that
// is exchanged once every k sweeps. In between, each rank also updates the halo cells it can
// (sweep s of k updates the cells within L1 distance k-s of its interior), so after k sweeps its
// interior is right without having talked to anyone. A cell at L1 distance a+b (a, b >= 1)
// outside a corner of the interior is needed iff a+b <= k, so the four corner blocks are
// triangles of k(k-1)/2 cells (Cart_type_create_triangle), the side blocks n x k slabs; with
// k = 1 there are no corners and the neighbourhood is the 4 von Neumann neighbours.
// Exit status: 0 when every variant matches the serial run, 1 on a mismatch, 2 on bad
// options, 3 when an MPI or cartplan call fails.
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/mpi/cartplan_mpi.h"
#include "backends/mpi/model_in_use.h"
#include "backends/mpi/node_map.h"
#include "backends/mpi/openmpi_profile.h"
#include "engine/halo/bind.h"
#include "engine/halo/price.h"
#include "engine/halo/program.h"
#include "engine/halo/uneven.h"
#include "engine/grid.h"
#include "engine/predict.h"
#include "engine/program_print.h"
#include "ir/json.h"
#include "ir/halo/json.h"
#include "ir/parse_number.h"
#include "tools/halo_handwritten.h"

namespace {

int g_world_rank = 0;
#ifdef CARTPLAN_SMPI
constexpr bool kSharedArray = true;  // --check none shares the ranks' array (Runner)
#else
constexpr bool kSharedArray = false;
#endif

// cartplan agrees on errors across ranks, so every rank reports and aborts alike; aborting
// (rather than returning) keeps the rest of the program free of error plumbing.
void cart_check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  std::fprintf(stderr, "halo: rank %d: %s failed (MPI error class %d): %s\n", g_world_rank, what, rc, Cart_error_message());
  MPI_Abort(MPI_COMM_WORLD, 3);
}
#define CART(call) cart_check((call), #call)

struct Config {
  int d = 2;
  int points = -1;  // -1: the Moore stencil of d (9 or 27)
  int n = -1;  // -1: the default for d (or, with --global, unused)
  // --global: the global interior per dimension (one value: every dimension), cut into blocks
  // over the process grid (engine/halo/uneven.h's block_extents); empty: n per rank.
  std::vector<int> global;
  int k = 1;
  int iters = 50;
  int periodic = 0;
  std::vector<int> procs;  // empty: MPI_Dims_create
  std::string tune = "model";  // the halo API auto request's Info cartplan_tune at init
  // serial: Jacobi sweeps, every cell compared with a serial run on rank 0 (the whole global array);
  // exchange: no sweeps, one exchange per variant, every rank checks its own cells (one array per
  // rank, nothing global); none: no check, and under SMPI one array all ranks share (timing only).
  std::string check = "serial";
  std::string plan;  // a JSON plan file every Cart_alltoallw variant runs (Info cartplan_plan); "": they plan
  // The dimension order of the forced halo API dimwise variant (Info cartplan_dim_order) and of the
  // hand-written exchange; empty: the halo API searches, the hand-written exchange runs 0,1,..
  std::vector<int> dim_order;
  // interleaved: the variants take turns, one exchange each (a drifting machine moves them together);
  // blocks: each variant's exchanges back to back (deterministic simulators have no drift);
  // sync (SMPI): each exchange after a barrier, from the last rank's entry to the last rank's exit.
#ifdef CARTPLAN_SMPI
  std::string timing = "sync";
#else
  std::string timing = "interleaved";
#endif
};

const char* kUsage =
    "usage: halo [--dims 2|3] [--points 9|5|27] [--n N | --global G[,G[,G]]] [--halo K] [--iters I] [--periodic 0|1] [--procs P,Q[,R]]\n"
    "            [--timing interleaved|blocks|sync] [--tune model|measure] [--check serial|exchange|none]\n"
    "            [--plan FILE] [--dim-order K,K[,K]]\n"
    "  --dims      2 (9-point stencil) or 3 (27-point stencil); default 2\n"
    "  --points    9 (2-D) or 27 (3-D): exchange every sweep; 5 (2-D only): 5-point stencil whose\n"
    "              k-deep halo is exchanged every k sweeps, corners triangular; default 9 / 27\n"
    "  --n         local interior size per dimension; default 64 (2-D), 16 (3-D)\n"
    "  --global    instead of --n: the global interior (one value for every dimension, or one per\n"
    "              dimension) cut into blocks over the process grid, G/P cells each and the first G%P\n"
    "              ranks of a dimension one more, so interiors differ between ranks (uneven)\n"
    "  --halo      halo depth k, 1 <= k <= n; default 1\n"
    "  --iters     Jacobi iterations and timed exchanges per variant; default 50\n"
    "  --periodic  1 for a torus, 0 for a mesh with fixed boundary values; default 0\n"
    "  --procs     process grid (d values, product <= np); default MPI_Dims_create\n"
    "  --timing    interleaved: the variants take turns, one exchange each; blocks: each variant's\n"
    "              exchanges back to back; sync (SMPI only): each exchange after a barrier, from the\n"
    "              last rank's entry to the last rank's exit; default interleaved (sync under SMPI)\n"
    "  --tune      the halo API's auto request: model (the cost model's pick) or measure (Info\n"
    "              cartplan_tune = measure at init: the close candidates timed, the fastest kept);\n"
    "              the init's time is printed; default model\n"
    "  --check     serial: Jacobi sweeps, every cell compared with a serial run on rank 0; exchange: one\n"
    "              exchange per variant, no sweeps, each rank checks its own cells bit for bit (memory: one\n"
    "              array per rank, nothing global); none: no check, and under SMPI every rank's array is\n"
    "              one SMPI_SHARED_MALLOC block (all ranks share it: the data are meaningless, the simulated\n"
    "              times are not); default serial\n"
    "  --dim-order the dimension order of 'halo API dimwise' (Info cartplan_dim_order) and of the\n"
    "              hand-written exchange; default: the halo API's search, and 0,1,.. by hand\n"
    "  --plan      a JSON plan (cartplan plan, a dump) that every Cart_alltoallw variant runs instead of\n"
    "              planning (Info cartplan_plan on the communicator; the halo API variants still plan)\n";

// The options whose values are words (--timing, --tune, --check): "" or what is wrong.
std::string word_option_error(const Config& c) {
  if (c.timing != "interleaved" && c.timing != "blocks" && c.timing != "sync")
    return "--timing must be interleaved, blocks or sync, not '" + c.timing + "'";
#ifndef CARTPLAN_SMPI
  if (c.timing == "sync") return "--timing sync needs one clock for all ranks: only under SMPI";
#endif
  if (c.tune != "model" && c.tune != "measure") return "--tune must be model or measure, not '" + c.tune + "'";
  if (c.check != "serial" && c.check != "exchange" && c.check != "none")
    return "--check must be serial, exchange or none, not '" + c.check + "'";
  return {};
}

// --dim-order's value (after --dims is known): "" or what is wrong.
std::string parse_dim_order(const std::string& text, Config* c) {
  const cartplan::Result<std::vector<int>> order = cartplan::parse_int_list(text, 0, c->d - 1);
  if (!order || static_cast<int>(order->size()) != c->d || std::set<int>(order->begin(), order->end()).size() != order->size())
    return "--dim-order '" + text + "': expected a permutation of 0.." + std::to_string(c->d - 1) + " separated by commas";
  c->dim_order = *order;
  return {};
}

// --global's value (after --dims is known): "" or what is wrong. One value stands for every dimension.
std::string parse_global(const std::string& text, bool have_n, Config* c) {
  if (have_n) return "--global and --n exclude each other: --global sets every rank's interior";
  const cartplan::Result<std::vector<int>> g = cartplan::parse_int_list(text, 1, INT_MAX);
  if (!g || (g->size() != 1 && static_cast<int>(g->size()) != c->d))
    return "--global '" + text + "': expected 1 or " + std::to_string(c->d) + " positive integers separated by commas";
  c->global = g->size() == 1 ? std::vector<int>(c->d, g->front()) : *g;
  return {};
}

// Returns an empty string when the options are good, else the message to print. Only depends
// on argv and np, so every rank reaches the same verdict without communicating.
std::string parse_args(int argc, char** argv, int np, Config* c, bool* help) {
  *help = false;
  std::string procs_text, order_text, global_text;
  bool have_procs = false, have_n = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    if (arg == "-h" || arg == "--help") {
      *help = true;
      return {};
    }
    const std::size_t eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (arg == "--dims" || arg == "--points" || arg == "--n" || arg == "--halo" || arg == "--iters" || arg == "--periodic" ||
               arg == "--procs" || arg == "--timing" || arg == "--tune" || arg == "--check" || arg == "--plan" || arg == "--dim-order" ||
               arg == "--global") {
      if (i + 1 >= argc) return "option " + arg + " needs a value";
      value = argv[++i];
    } else {
      return "unknown argument '" + arg + "'";
    }
    if (arg == "--procs" || arg == "--dim-order" || arg == "--global") {
      (arg == "--procs" ? procs_text : arg == "--global" ? global_text : order_text) = value;
      have_procs = have_procs || arg == "--procs";
      continue;
    }
    if (arg == "--timing" || arg == "--tune" || arg == "--check" || arg == "--plan") {
      (arg == "--timing" ? c->timing : arg == "--tune" ? c->tune : arg == "--check" ? c->check : c->plan) = value;
      continue;
    }
    if (arg != "--dims" && arg != "--points" && arg != "--n" && arg != "--halo" && arg != "--iters" && arg != "--periodic")
      return "unknown option '" + arg + "'";
    const cartplan::Result<int> parsed = cartplan::parse_int(value);
    if (!parsed) return "option " + arg + ": " + parsed.error();
    const int v = *parsed;
    if (arg == "--dims") c->d = v;
    else if (arg == "--points") c->points = v;
    else if (arg == "--n") c->n = v, have_n = true;
    else if (arg == "--halo") c->k = v;
    else if (arg == "--iters") c->iters = v;
    else c->periodic = v;
  }
  if (const std::string bad = word_option_error(*c); !bad.empty()) return bad;
  if (c->d != 2 && c->d != 3) return "--dims must be 2 or 3, not " + std::to_string(c->d);
  if (c->points == -1) c->points = c->d == 2 ? 9 : 27;
  if (c->d == 2 && c->points != 9 && c->points != 5)
    return "--points must be 9 or 5 with --dims 2, not " + std::to_string(c->points);
  if (c->d == 3 && c->points != 27) return "--points must be 27 with --dims 3, not " + std::to_string(c->points);
  if (c->n == -1) c->n = c->d == 2 ? 64 : 16;
  if (c->n < 1) return "--n must be at least 1, not " + std::to_string(c->n);
  if (c->k < 1) return "--halo must be at least 1, not " + std::to_string(c->k);
  if (c->iters < 1) return "--iters must be at least 1, not " + std::to_string(c->iters);
  if (c->periodic != 0 && c->periodic != 1) return "--periodic must be 0 or 1, not " + std::to_string(c->periodic);
  if (const std::string bad = global_text.empty() ? "" : parse_global(global_text, have_n, c); !bad.empty()) return bad;
  if (const std::string bad = order_text.empty() ? "" : parse_dim_order(order_text, c); !bad.empty()) return bad;
  if (have_procs) {
    const cartplan::Result<std::vector<int>> procs = cartplan::parse_int_list(procs_text, 1, INT_MAX);
    if (!procs) return "--procs '" + procs_text + "': expected positive integers separated by commas";
    c->procs = *procs;
    if (static_cast<int>(c->procs.size()) != c->d)
      return "--procs '" + procs_text + "' has " + std::to_string(c->procs.size()) + " values; --dims " + std::to_string(c->d) +
             " needs " + std::to_string(c->d);
    long long product = 1;
    for (int p : c->procs) product *= p;
    if (product > np)
      return "--procs '" + procs_text + "' needs " + std::to_string(product) + " processes, only " + std::to_string(np) + " running";
  }
  return {};
}

// "0,2,1".
std::string comma_list(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

// Values are functions of global coordinates, so every rank and the serial run compute the
// very same bits for a cell without communicating.
double initial_value(const int g[3], int d) {
  double v = std::sin(0.11 * g[0] + 0.3) * std::cos(0.07 * g[1] - 0.2);
  if (d == 3) v += 0.5 * std::cos(0.13 * g[2] + 0.1);
  return v;
}
double boundary_value(const int g[3], int d) {
  double v = 1.0 + 0.01 * g[0] - 0.02 * g[1];
  if (d == 3) v += 0.015 * g[2];
  return v;
}

// initial_value per axis for one rank's cells: the cell at local index i of dimension j has
// global coordinate g[j][i] (wrapped: w) and is outside the global domain when out[j][i]; factor[j][i]
// is dimension j's term of initial_value at w. value(i0, i1, i2) multiplies and adds them in
// initial_value's order, so it gives initial_value's bits without a sine per cell.
struct AxisValues {
  int d = 2;
  std::vector<int> g[3], w[3];
  std::vector<char> out[3];
  std::vector<double> factor[3];
  // start[j]: the global index of the rank's first interior cell; global[j]: the global interior.
  AxisValues(int dims, const int ext[3], const int start[3], const int global[3], int k) : d(dims) {
    for (int j = 0; j < d; ++j)
      for (int i = 0; i < ext[j]; ++i) {
        const int gj = start[j] + i - k, m = global[j], wj = ((gj % m) + m) % m;
        g[j].push_back(gj);
        w[j].push_back(wj);
        out[j].push_back(gj < 0 || gj >= m);
        factor[j].push_back(j == 0 ? std::sin(0.11 * wj + 0.3) : j == 1 ? std::cos(0.07 * wj - 0.2) : std::cos(0.13 * wj + 0.1));
      }
  }
  double value(int i0, int i1, int i2) const {
    double v = factor[0][i0] * factor[1][i1];
    if (d == 3) v += 0.5 * factor[2][i2];
    return v;
  }
};

// An array of ext^d cells (row-major), ext = m + 2k, with interior [k, k+m) in every dimension.
struct Box {
  int d;
  int ext[3];
  int m[3];
  int k;
  std::size_t cells() const {
    std::size_t c = 1;
    for (int j = 0; j < d; ++j) c *= static_cast<std::size_t>(ext[j]);
    return c;
  }
  std::size_t index(const int i[3]) const {
    std::size_t x = 0;
    for (int j = 0; j < d; ++j) x = x * ext[j] + i[j];
    return x;
  }
};

// One Jacobi sweep of the interior. Local and serial runs call this same function, and the sum
// visits the 3^d cells in one fixed (lexicographic) order, so equal inputs give equal bits.
void jacobi(const Box& b, std::vector<double>& a, std::vector<double>& scratch) {
  const int k = b.k;
  if (b.d == 2) {
    const std::size_t s0 = b.ext[1];
    std::size_t o = 0;
    for (int i = k; i < k + b.m[0]; ++i)
      for (int j = k; j < k + b.m[1]; ++j) {
        double s = 0.0;
        for (int di = -1; di <= 1; ++di)
          for (int dj = -1; dj <= 1; ++dj) s += a[(i + di) * s0 + (j + dj)];
        scratch[o++] = s / 9.0;
      }
    o = 0;
    for (int i = k; i < k + b.m[0]; ++i)
      for (int j = k; j < k + b.m[1]; ++j) a[i * s0 + j] = scratch[o++];
  } else {
    const std::size_t s1 = b.ext[2], s0 = static_cast<std::size_t>(b.ext[1]) * s1;
    std::size_t o = 0;
    for (int i = k; i < k + b.m[0]; ++i)
      for (int j = k; j < k + b.m[1]; ++j)
        for (int l = k; l < k + b.m[2]; ++l) {
          double s = 0.0;
          for (int di = -1; di <= 1; ++di)
            for (int dj = -1; dj <= 1; ++dj)
              for (int dl = -1; dl <= 1; ++dl) s += a[(i + di) * s0 + (j + dj) * s1 + (l + dl)];
          scratch[o++] = s / 27.0;
        }
    o = 0;
    for (int i = k; i < k + b.m[0]; ++i)
      for (int j = k; j < k + b.m[1]; ++j)
        for (int l = k; l < k + b.m[2]; ++l) a[i * s0 + j * s1 + l] = scratch[o++];
  }
}

// L1 distance of cell (i, j) of a 2-D box from its interior (0 inside).
int outside_distance(const Box& b, int i, int j) {
  const int di = std::max({0, b.k - i, i - (b.k + b.m[0] - 1)});
  const int dj = std::max({0, b.k - j, j - (b.k + b.m[1] - 1)});
  return di + dj;
}

// One 5-point Jacobi sweep (2-D) of every cell within L1 distance `reach` of the interior for
// which updatable(i, j) holds; reach 0 is the interior. The serial run and every rank call this
// same function, and the sum visits the 5 cells in one fixed order, so equal inputs give equal bits.
template <class Updatable>
void jacobi5(const Box& b, std::vector<double>& a, std::vector<double>& scratch, int reach, Updatable updatable) {
  const std::size_t s0 = b.ext[1];
  const int lo0 = b.k - reach, hi0 = b.k + b.m[0] + reach, lo1 = b.k - reach, hi1 = b.k + b.m[1] + reach;
  for (int i = lo0; i < hi0; ++i)
    for (int j = lo1; j < hi1; ++j) {
      if (outside_distance(b, i, j) > reach || !updatable(i, j)) continue;
      const std::size_t c = i * s0 + j;
      scratch[c] = (a[c - s0] + a[c - 1] + a[c] + a[c + 1] + a[c + s0]) / 5.0;
    }
  for (int i = lo0; i < hi0; ++i)
    for (int j = lo1; j < hi1; ++j) {
      if (outside_distance(b, i, j) > reach || !updatable(i, j)) continue;
      a[i * s0 + j] = scratch[i * s0 + j];
    }
}

// Visits every cell of a box with its index tuple (unused dimensions stay 0).
template <class F>
void for_each_cell(const Box& b, F f) {
  int i[3] = {0, 0, 0};
  for (i[0] = 0; i[0] < b.ext[0]; ++i[0])
    for (i[1] = 0; i[1] < b.ext[1]; ++i[1])
      for (i[2] = 0; i[2] < (b.d == 3 ? b.ext[2] : 1); ++i[2]) f(i);
}

// The serial reference: the global array with a k-deep halo that is either the fixed boundary
// (mesh) or refreshed by wrapping before every sweep (torus), exactly what the exchange provides.
struct Serial {
  Box b;
  std::vector<double> a;
  bool periodic;
  void wrap() {
    std::vector<double>& v = a;
    const Box& bb = b;
    for_each_cell(bb, [&](const int i[3]) {
      int w[3] = {0, 0, 0};
      bool halo = false;
      for (int j = 0; j < bb.d; ++j) {
        const int g = i[j] - bb.k, n = bb.m[j];
        halo = halo || g < 0 || g >= n;
        w[j] = ((g % n) + n) % n + bb.k;
      }
      if (halo) v[bb.index(i)] = v[bb.index(w)];
    });
  }
};

Serial run_serial(const Config& c, const int global[3]) {
  Serial s;
  s.periodic = c.periodic != 0;
  s.b.d = c.d;
  s.b.k = c.k;
  for (int j = 0; j < 3; ++j) {
    s.b.m[j] = j < c.d ? global[j] : 1;
    s.b.ext[j] = j < c.d ? s.b.m[j] + 2 * c.k : 1;
  }
  s.a.assign(s.b.cells(), 0.0);
  for_each_cell(s.b, [&](const int i[3]) {
    int g[3] = {0, 0, 0};
    bool outside = false;
    for (int j = 0; j < c.d; ++j) {
      g[j] = i[j] - c.k;
      outside = outside || g[j] < 0 || g[j] >= s.b.m[j];
    }
    s.a[s.b.index(i)] = outside ? boundary_value(g, c.d) : initial_value(g, c.d);
  });
  std::vector<double> scratch(s.b.cells());
  for (int it = 0; it < c.iters; ++it) {
    if (s.periodic) s.wrap();
    if (c.points == 5) jacobi5(s.b, s.a, scratch, 0, [](int, int) { return true; });
    else jacobi(s.b, s.a, scratch);
  }
  // The distributed arrays are compared after a final exchange: their halos then hold the
  // neighbours' final interiors, which is the serial array after one more wrap.
  if (s.periodic) s.wrap();
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

struct Variant {
  std::string name;
  std::string algorithm;
  double us = 0.0;
  std::string check;
  // The cost model's prediction of the plan the variant runs (the linear loop: direct's, whose
  // messages it sends); NaN where there is none (MPI_Neighbor_alltoallw).
  double predicted_us = std::nan("");
  // Bytes this rank sends to other ranks per exchange (rank 0's report: the max over ranks); -1
  // where the variant's messages are not known here (cartplan's blocking Cart_alltoallw).
  std::int64_t bytes = -1;
};

// ---------------------------------------------------------------------------------------------
// Problem set-up: the process grid, the neighbourhood and this rank's box.

struct Problem {
  Config c;
  int np = 0;
  int dims[3] = {1, 1, 1};
  int periods[3] = {0, 0, 0};
  int grid_size = 1;
  bool star = false;         // the 5-point stencil (--points 5)
  int t = 0;                 // neighbours
  std::vector<int> offsets;  // t x d, lexicographic
  // The decomposition, the same on every rank: the global interior and, per dimension, each
  // coordinate's block extent and the global index of its first interior cell. Without --global
  // every extent is n.
  int global[3] = {1, 1, 1};
  std::vector<int> extents[3], starts[3];
  std::string error;  // sizes that do not work (set_up_problem): rank 0 prints it, exit 2
  // Whether interiors differ between ranks (--global not divisible by the grid).
  bool uneven() const {
    for (int j = 0; j < c.d; ++j)
      if (std::adjacent_find(extents[j].begin(), extents[j].end(), std::not_equal_to<int>()) != extents[j].end()) return true;
    return false;
  }
  MPI_Comm cart = MPI_COMM_NULL;  // MPI_COMM_NULL on idle ranks
  // Only on ranks of the grid:
  int me = 0;
  int coords[3] = {0, 0, 0};
  Box lb;
  std::size_t cells = 0;
};

// The global index of this rank's first interior cell, per dimension (0 beyond d).
std::array<int, 3> own_starts(const Problem& p) {
  std::array<int, 3> s{0, 0, 0};
  for (int j = 0; j < p.c.d; ++j) s[j] = p.starts[j][p.coords[j]];
  return s;
}

// The box of the rank at `coords`: its block's interior and a k-deep halo.
Box box_at(const Problem& p, const int coords[3]) {
  Box b;
  b.d = p.c.d;
  b.k = p.c.k;
  for (int j = 0; j < 3; ++j) {
    b.m[j] = j < b.d ? p.extents[j][coords[j]] : 1;
    b.ext[j] = j < b.d ? b.m[j] + 2 * b.k : 1;
  }
  return b;
}

// Cuts the global interior into the process grid's blocks (p->dims set): "" or what is wrong.
std::string decompose(Problem* p) {
  const Config& c = p->c;
  double largest_cells = 1;
  for (int j = 0; j < c.d; ++j) {
    const std::int64_t g = c.global.empty() ? static_cast<std::int64_t>(p->dims[j]) * c.n : c.global[j];
    const cartplan::Result<std::vector<int>> e = cartplan::engine::halo::block_extents(g, p->dims[j]);
    // Global indices (a cell's, wrapped) are ints: G + 2k stays far from overflow.
    if (!e || g > INT_MAX / 4)
      return "the global interior " + std::to_string(g) + " of dimension " + std::to_string(j) + " over " + std::to_string(p->dims[j]) +
             " ranks: " + (e ? std::string("above INT_MAX / 4") : e.error());
    p->global[j] = static_cast<int>(g);
    p->extents[j] = *e;
    p->starts[j].assign(1, 0);
    for (int x : *e) p->starts[j].push_back(p->starts[j].back() + x);
    const int smallest = *std::min_element(e->begin(), e->end());
    // A neighbour's slab must lie inside its interior, or the send and halo regions would overlap.
    if (c.k > smallest)
      return "--halo " + std::to_string(c.k) + " is deeper than the smallest interior (" + std::to_string(smallest) +
             (smallest == 1 ? " cell" : " cells") + " in dimension " + std::to_string(j) + ")";
    largest_cells *= (*std::max_element(e->begin(), e->end())) + 2.0 * c.k;
  }
  // Counts are ints in MPI: one rank's whole array must fit, with room for the gather on rank 0
  // (only the serial check gathers).
  if (largest_cells * (c.check == "serial" ? p->grid_size : 1) > static_cast<double>(INT_MAX) / 4)
    return "the local interior with --halo " + std::to_string(c.k) + " is too large for this program";
  return {};
}

Problem set_up_problem(const Config& c, int np) {
  Problem p;
  p.c = c;
  p.np = np;
  const int d = c.d, k = c.k;
  for (int j = 0; j < 3; ++j) p.periods[j] = c.periodic;
  if (c.procs.empty()) {
    int dd[3] = {0, 0, 0};
    MPI_Dims_create(np, d, dd);
    for (int j = 0; j < d; ++j) p.dims[j] = dd[j];
  } else {
    for (int j = 0; j < d; ++j) p.dims[j] = c.procs[j];
  }
  for (int j = 0; j < d; ++j) p.grid_size *= p.dims[j];
  p.error = decompose(&p);
  if (!p.error.empty()) return p;

  // The Moore neighbourhood without the zero offset, in lexicographic order (seed 001, Listing 6);
  // the 5-point stencil with k = 1 needs only the von Neumann neighbours.
  p.star = c.points == 5;
  const int metric = p.star && k == 1 ? CART_MANHATTAN : CART_CHEBYSHEV;
  CART(Cart_neighbors_count(d, metric, 1, 1, &p.t));
  p.offsets.resize(static_cast<std::size_t>(p.t) * d);
  CART(Cart_neighbors(d, metric, 1, 1, p.t, p.offsets.data()));
  // --plan: Info cartplan_plan on the communicator, so every Cart_alltoallw request runs that plan.
  MPI_Info info = MPI_INFO_NULL;
  if (!c.plan.empty()) {
    MPI_Info_create(&info);
    MPI_Info_set(info, "cartplan_plan", c.plan.c_str());
  }
  CART(Cart_neighborhood_create(MPI_COMM_WORLD, d, p.dims, p.periods, p.t, p.offsets.data(), MPI_UNWEIGHTED, info, 0, &p.cart));
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  if (p.cart == MPI_COMM_NULL) return p;

  MPI_Comm_rank(p.cart, &p.me);
  MPI_Cart_coords(p.cart, p.me, d, p.coords);
  p.lb = box_at(p, p.coords);
  p.cells = p.lb.cells();
  return p;
}

void print_header(const Problem& p) {
  const Config& c = p.c;
  const int d = c.d;
  std::string grid, local, global;
  int n = 0;  // the largest local extent (n itself without --global)
  for (int j = 0; j < d; ++j) {
    const auto [lo, hi] = std::minmax_element(p.extents[j].begin(), p.extents[j].end());
    n = std::max(n, *hi);
    grid += (j ? "x" : "") + std::to_string(p.dims[j]);
    local += (j ? "x" : "") + std::to_string(*lo) + (*lo == *hi ? "" : ".." + std::to_string(*hi));
    global += (j ? "x" : "") + std::to_string(p.global[j]);
  }
  std::printf("halo: %d-D %d-point Jacobi, np=%d, process grid %s%s, n=%d (local %s, global %s%s), halo k=%d%s, periodic=%d, iterations=%d%s\n",
              d, c.points, p.np, grid.c_str(),
              p.grid_size < p.np ? (", idle ranks: " + std::to_string(p.np - p.grid_size)).c_str() : "", n, local.c_str(),
              global.c_str(), c.global.empty() ? "" : " cut into blocks", c.k,
              p.star && c.k > 1 ? " (exchanged every k sweeps, triangular corners)" : "", c.periodic, c.iters,
              c.check == "serial" ? "" : (", check=" + c.check + " (no sweeps: only the exchanges run)").c_str());
  std::fflush(stdout);
}

// ---------------------------------------------------------------------------------------------
// Datatype set-up: one send and one receive type per neighbour on the rank's one array, and
// the same blocks as a distributed graph for MPI_Neighbor_alltoallw.

struct Datatypes {
  // cartplan: every neighbour, in neighbourhood order.
  std::vector<MPI_Datatype> stypes, rtypes;
  std::vector<int> counts;
  std::vector<MPI_Aint> displs;
  // The linear loop: block i comes from sources[i] and goes to targets[i] (MPI_PROC_NULL outside a mesh).
  std::vector<int> sources, targets;
  // MPI_Neighbor_alltoallw: the neighbours inside the mesh, on `graph`.
  MPI_Comm graph = MPI_COMM_NULL;
  std::vector<MPI_Datatype> gstypes, grtypes;
  std::vector<int> gscounts, grcounts;
  std::vector<MPI_Aint> gsdispls, grdispls;
};

// A corner of the 5-point stencil: the triangle of order k-1 whose right angle points along o,
// both in the interior corner it is sent from and in the halo it arrives in (the cells a, b >= 1
// steps beyond the corner with a + b <= k).
void create_corner_types(const Problem& p, const int* o, MPI_Datatype* stype, MPI_Datatype* rtype) {
  const int* m = p.lb.m;  // this rank's interior
  const int k = p.c.k;
  const int kind = o[0] > 0 ? (o[1] > 0 ? CART_TRIANGLE_LOWER_ANTI : CART_TRIANGLE_LOWER)
                            : (o[1] > 0 ? CART_TRIANGLE_UPPER : CART_TRIANGLE_UPPER_ANTI);
  const int ld = m[1] + 2 * k;
  MPI_Datatype tri;
  CART(Cart_type_create_triangle(k - 1, ld, kind, MPI_DOUBLE, &tri));
  int one = 1;
  MPI_Aint sdisp = 0, rdisp = 0;
  int sstart[2], rstart[2];
  for (int j = 0; j < 2; ++j) {
    sstart[j] = o[j] > 0 ? m[j] + 1 : k;
    rstart[j] = o[j] > 0 ? 1 : m[j] + k;
  }
  sdisp = static_cast<MPI_Aint>(sstart[0] * ld + sstart[1]) * static_cast<MPI_Aint>(sizeof(double));
  rdisp = static_cast<MPI_Aint>(rstart[0] * ld + rstart[1]) * static_cast<MPI_Aint>(sizeof(double));
  MPI_Type_create_hindexed(1, &one, &sdisp, tri, stype);
  MPI_Type_commit(stype);
  MPI_Type_create_hindexed(1, &one, &rdisp, tri, rtype);
  MPI_Type_commit(rtype);
  MPI_Type_free(&tri);
}

// A slab: the k-deep interior slab next to the neighbour, and the matching halo region.
void create_slab_types(const Problem& p, const int* o, MPI_Datatype* stype, MPI_Datatype* rtype) {
  const int d = p.c.d, k = p.c.k;
  const int* m = p.lb.m;  // this rank's interior: a face along a dimension it does not cross spans
                          // the interior there, which the neighbour shares (a block decomposition)
  int sizes[3], sub[3], sstart[3], rstart[3];
  for (int j = 0; j < d; ++j) {
    sizes[j] = m[j] + 2 * k;
    sub[j] = o[j] == 0 ? m[j] : k;
    sstart[j] = o[j] < 0 ? k : o[j] > 0 ? m[j] : k;
    rstart[j] = o[j] > 0 ? 0 : o[j] < 0 ? m[j] + k : k;
  }
  MPI_Type_create_subarray(d, sizes, sub, sstart, MPI_ORDER_C, MPI_DOUBLE, stype);
  MPI_Type_commit(stype);
  MPI_Type_create_subarray(d, sizes, sub, rstart, MPI_ORDER_C, MPI_DOUBLE, rtype);
  MPI_Type_commit(rtype);
}

#ifndef CARTPLAN_SMPI
// MPI_Neighbor_alltoallw on the same neighbourhood as a distributed graph: the blocks of
// neighbours outside the mesh are dropped, keeping neighbourhood order, which is the order
// Cart_graph_get lists sources and targets in. (Not under SMPI: no MPI_Dist_graph_create_adjacent.)
void create_graph_view(const Problem& p, Datatypes* dt) {
  const int t = p.t;
  int tt = 0, indeg = 0, outdeg = 0;
  CART(Cart_neighbor_degrees(p.cart, &tt, &indeg, &outdeg));
  std::vector<int> src(std::max(indeg, 1)), dst(std::max(outdeg, 1));
  CART(Cart_graph_get(p.cart, indeg, src.data(), outdeg, dst.data()));
  std::vector<int> gsrc, gdst;
  for (int i = 0; i < t; ++i) {
    if (dt->sources[i] != MPI_PROC_NULL) {
      gsrc.push_back(dt->sources[i]);
      dt->grtypes.push_back(dt->rtypes[i]);
    }
    if (dt->targets[i] != MPI_PROC_NULL) {
      gdst.push_back(dt->targets[i]);
      dt->gstypes.push_back(dt->stypes[i]);
    }
  }
  // The compaction above must be exactly Cart_graph_get's lists, or the types would be paired
  // with the wrong neighbours.
  if (static_cast<int>(gsrc.size()) != indeg || static_cast<int>(gdst.size()) != outdeg ||
      !std::equal(gsrc.begin(), gsrc.end(), src.begin()) || !std::equal(gdst.begin(), gdst.end(), dst.begin())) {
    std::fprintf(stderr, "halo: rank %d: Cart_graph_get disagrees with Cart_neighbor_get without MPI_PROC_NULL\n", g_world_rank);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  MPI_Dist_graph_create_adjacent(p.cart, indeg, src.data(), MPI_UNWEIGHTED, outdeg, dst.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                 &dt->graph);
  dt->gscounts.assign(std::max(outdeg, 1), 1);
  dt->grcounts.assign(std::max(indeg, 1), 1);
  dt->gsdispls.assign(std::max(outdeg, 1), 0);
  dt->grdispls.assign(std::max(indeg, 1), 0);
  if (dt->gstypes.empty()) dt->gstypes.push_back(MPI_DOUBLE);  // never read: keeps .data() non-NULL
  if (dt->grtypes.empty()) dt->grtypes.push_back(MPI_DOUBLE);
}
#endif

// Block i goes to +offset[i] and arrives from -offset[i]: send the slab on the side of
// offset[i], receive into the halo on the opposite side.
Datatypes set_up_datatypes(const Problem& p) {
  const int t = p.t, d = p.c.d;
  Datatypes dt;
  dt.stypes.resize(t);
  dt.rtypes.resize(t);
  dt.counts.assign(t, 1);
  dt.displs.assign(t, 0);
  for (int i = 0; i < t; ++i) {
    const int* o = &p.offsets[static_cast<std::size_t>(i) * d];
    if (p.star && o[0] != 0 && o[1] != 0) create_corner_types(p, o, &dt.stypes[i], &dt.rtypes[i]);
    else create_slab_types(p, o, &dt.stypes[i], &dt.rtypes[i]);
  }
  dt.sources.resize(t);
  dt.targets.resize(t);
  CART(Cart_neighbor_get(p.cart, t, dt.sources.data(), MPI_UNWEIGHTED, t, dt.targets.data(), MPI_UNWEIGHTED));
#ifndef CARTPLAN_SMPI
  create_graph_view(p, &dt);
#endif
  return dt;
}

void free_datatypes(Datatypes* dt) {
  if (dt->graph != MPI_COMM_NULL) MPI_Comm_free(&dt->graph);
  for (std::size_t i = 0; i < dt->stypes.size(); ++i) {
    MPI_Type_free(&dt->stypes[i]);
    MPI_Type_free(&dt->rtypes[i]);
  }
}

// ---------------------------------------------------------------------------------------------
// The runs: one rank's array, the serial reference (rank 0) and the bit-for-bit check.

class Runner {
 public:
  explicit Runner(const Problem& p)
      : p_(p), c_(p.c), serial_check_(p.c.check == "serial"), axes_(p.c.d, p.lb.ext, own_starts(p).data(), p.global, p.c.k) {
#ifdef CARTPLAN_SMPI
    // Every rank's array at one place (SMPI_SHARED_MALLOC from one line): p ranks in the memory of
    // one, and SMPI skips copying shared data. Only sizes reach the simulated network.
    if (c_.check == "none") shared_ = static_cast<double*>(SMPI_SHARED_MALLOC(p.cells * sizeof(double)));
#endif
    if (!shared_) grid_.assign(p.cells, 0.0);
    if (serial_check_) {
      scratch_.assign(p.cells, 0.0);
      if (p.me == 0) set_up_gather();
      if (p_.me == 0) serial_ = run_serial(c_, p_.global);
    }
  }
  ~Runner() {
#ifdef CARTPLAN_SMPI
    if (shared_) SMPI_SHARED_FREE(shared_);
#endif
  }
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  double* data() { return shared_ ? shared_ : grid_.data(); }

  // One variant: the Jacobi run, which leaves the halos holding the neighbours' final
  // interiors, then the gather and the check on rank 0. Returns "" or, on rank 0, the first
  // mismatch. Timing is separate (time_round_robin).
  std::string run(Variant& v, const std::function<void()>& exchange) {
    if (!serial_check_) return check_one_exchange(v, exchange);
    const int k = c_.k;
    const std::array<int, 3> start = own_starts(p_);
    initialize();
    if (p_.star) {
      // Exchange once per k sweeps; sweep s of the batch also updates the halo cells within
      // L1 distance k-s of the interior that lie inside the global domain (mesh boundary
      // cells keep their fixed values).
      auto updatable = [&](int i0, int i1) {
        if (c_.periodic) return true;
        const int g0 = start[0] + i0 - k, g1 = start[1] + i1 - k;
        return g0 >= 0 && g0 < p_.global[0] && g1 >= 0 && g1 < p_.global[1];
      };
      for (int it = 0; it < c_.iters; it += k) {
        exchange();
        for (int s = 1; s <= k && it + s <= c_.iters; ++s) jacobi5(p_.lb, grid_, scratch_, k - s, updatable);
      }
    } else {
      for (int it = 0; it < c_.iters; ++it) {
        exchange();
        jacobi(p_.lb, grid_, scratch_);
      }
    }
    exchange();  // the halos now hold the neighbours' final interiors, as in the serial array
    MPI_Gatherv(grid_.data(), static_cast<int>(p_.cells), MPI_DOUBLE, gathered_.data(), gather_counts_.data(),
                gather_displs_.data(), MPI_DOUBLE, 0, p_.cart);
    if (p_.me == 0) {
      const std::string mismatch = compare(v.name);
      v.check = mismatch.empty() ? "OK" : "MISMATCH";
      return mismatch;
    }
    return std::string();
  }

  // Times the variants' exchanges on the converged array (an exchange then rewrites the halos
  // with the values they already hold): 5 warm-up exchanges each, then c.iters rounds in which
  // every variant exchanges once, in an order shuffled per round (the same on every rank: one
  // seed). Interleaving keeps a drift of the machine (other processes, frequency, an
  // oversubscribed node's scheduling) from favouring whichever variant happens to run first.
  // The shuffle keeps any variant from always following the same one: on an oversubscribed
  // node, ranks that have moved on to a variant that computes before it communicates
  // (cartplan auto blocking built its plan per call before its cache keyed derived datatypes) hold the cores that ranks still in the
  // previous exchange need, and with a fixed order that variant always paid (twice its time).
  // v[j].us: the max over ranks of the per-rank median.
  void time_round_robin(std::vector<Variant>& v, const std::vector<std::function<void()>>& exchanges) {
    const std::size_t nv = exchanges.size();
    for (int w = 0; w < 5; ++w)
      for (const auto& e : exchanges) e();
    std::vector<std::vector<double>> times(nv, std::vector<double>(static_cast<std::size_t>(c_.iters)));
    std::vector<std::size_t> order(nv);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::mt19937 shuffle_rng(20261126);  // std::mt19937 and std::shuffle: the same sequence on every rank of one build
    for (int r = 0; r < c_.iters; ++r) {
      std::shuffle(order.begin(), order.end(), shuffle_rng);
      for (const std::size_t j : order) {
        const double t0 = MPI_Wtime();
        exchanges[j]();
        times[j][static_cast<std::size_t>(r)] = MPI_Wtime() - t0;
      }
    }
    for (std::size_t j = 0; j < nv; ++j) {
      double med = median(times[j]) * 1e6, worst = 0.0;
      MPI_Reduce(&med, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, p_.cart);
      v[j].us = worst;
    }
  }

  // Each variant's exchanges back to back: an untimed barrier, 5 warm-up exchanges, then c.iters
  // timed ones, one interval per rank from its own start to its own completion. v[j].us: the max
  // over ranks of the mean time per exchange. No barrier is timed. The barrier makes every variant
  // start from the same skew: back to back, a multi-phase exchange settles into a steady state
  // that depends on how the ranks started (docs/smpi.md), and the previous variant's tail differs.
  void time_blocks(std::vector<Variant>& v, const std::vector<std::function<void()>>& exchanges) {
    for (std::size_t j = 0; j < exchanges.size(); ++j) {
      MPI_Barrier(p_.cart);
      for (int w = 0; w < 5; ++w) exchanges[j]();
      const double t0 = MPI_Wtime();
      for (int r = 0; r < c_.iters; ++r) exchanges[j]();
      double mean = (MPI_Wtime() - t0) * 1e6 / c_.iters, worst = 0.0;
      MPI_Reduce(&mean, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, p_.cart);
      v[j].us = worst;
    }
  }

  // Each exchange after a barrier, timed from the last rank's entry to the last rank's exit on the
  // one clock all ranks share under SMPI; v[j].us: the median over c.iters exchanges, after one
  // warm-up. Every exchange starts from the same state: no barrier skew, no steady state.
  void time_sync(std::vector<Variant>& v, const std::vector<std::function<void()>>& exchanges) {
    for (std::size_t j = 0; j < exchanges.size(); ++j) {
      exchanges[j]();
      std::vector<double> samples;
      for (int r = 0; r < c_.iters; ++r) {
        MPI_Barrier(p_.cart);
        double t[2] = {MPI_Wtime(), 0}, last[2] = {0, 0};
        exchanges[j]();
        t[1] = MPI_Wtime();
        MPI_Reduce(t, last, 2, MPI_DOUBLE, MPI_MAX, 0, p_.cart);
        samples.push_back((last[1] - last[0]) * 1e6);
      }
      v[j].us = median(samples);
    }
  }

 private:
  // Fresh start for every variant. Halo cells that an exchange must fill start as NaN, so a
  // block that never arrives shows up in the check; boundary cells of a mesh get their fixed
  // value once, and the check proves cartplan never wrote them.
  void initialize() {
    double* a = data();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    each_own_cell([&](const int i[3], std::size_t at, bool halo, bool outside) {
      a[at] = !halo ? axes_.value(i[0], i[1], i[2]) : outside && !c_.periodic ? boundary_value(global(i).data(), c_.d) : nan;
    });
  }

  // Visits the rank's cells in memory order: f(index tuple, offset, in the halo, outside the
  // global domain). Unused dimensions stay 0.
  template <class F>
  void each_own_cell(F f) const {
    const Box& b = p_.lb;
    const int k = c_.k, d = c_.d;
    auto halo_at = [&](int j, int x) { return j < d && (x < k || x >= k + b.m[j]); };
    auto out_at = [&](int j, int x) { return j < d && axes_.out[j][x]; };
    std::size_t at = 0;
    int i[3] = {0, 0, 0};
    for (i[0] = 0; i[0] < b.ext[0]; ++i[0])
      for (i[1] = 0; i[1] < b.ext[1]; ++i[1]) {
        const bool halo01 = halo_at(0, i[0]) || halo_at(1, i[1]), out01 = out_at(0, i[0]) || out_at(1, i[1]);
        for (i[2] = 0; i[2] < b.ext[2]; ++i[2], ++at) f(i, at, halo01 || halo_at(2, i[2]), out01 || out_at(2, i[2]));
      }
  }

  std::array<int, 3> global(const int i[3]) const {
    std::array<int, 3> g{0, 0, 0};
    for (int j = 0; j < c_.d; ++j) g[j] = axes_.g[j][i[j]];
    return g;
  }

  // Room on rank 0 for every rank's array, whose sizes differ with --global.
  void set_up_gather() {
    for (int r = 0; r < p_.grid_size; ++r) {
      int rc[3] = {0, 0, 0};
      MPI_Cart_coords(p_.cart, r, c_.d, rc);
      gather_displs_.push_back(r == 0 ? 0 : gather_displs_.back() + gather_counts_.back());
      gather_counts_.push_back(static_cast<int>(box_at(p_, rc).cells()));
    }
    gathered_.assign(static_cast<std::size_t>(gather_displs_.back()) + gather_counts_.back(), 0.0);
  }

  // Compares every cell of every rank's array (interior and halo) with the serial array at
  // the same global position, bit for bit; returns "" or the first mismatch.
  std::string compare(const std::string& variant) const {
    const int d = c_.d, k = c_.k;
    for (int r = 0; r < p_.grid_size; ++r) {
      int rc[3] = {0, 0, 0};
      MPI_Cart_coords(p_.cart, r, d, rc);
      const Box rb = box_at(p_, rc);  // rank r's array
      const double* local = gathered_.data() + gather_displs_[r];
      std::string found;
      for_each_cell(rb, [&](const int i[3]) {
        if (!found.empty()) return;
        int s[3] = {0, 0, 0};
        bool halo = false, outside = false;
        for (int j = 0; j < d; ++j) {
          s[j] = p_.starts[j][rc[j]] + i[j];  // index into the serial array (which has the same k-deep halo)
          halo = halo || i[j] < k || i[j] >= k + rb.m[j];
          outside = outside || s[j] < k || s[j] >= k + p_.global[j];
        }
        // The 5-point stencil's halo holds the cells within L1 distance k of the interior;
        // the rest of the corners is never sent (only fixed boundary cells are compared there).
        if (p_.star && outside_distance(rb, i[0], i[1]) > k && !(outside && !c_.periodic)) return;
        const double got = local[rb.index(i)], want = serial_.a[serial_.b.index(s)];
        if (std::memcmp(&got, &want, sizeof got) != 0) {
          char buf[512];
          std::snprintf(buf, sizeof buf, "%s: rank %d %s cell (%d,%d,%d) = global (%d,%d,%d): got %.17g, serial %.17g",
                        variant.c_str(), r, halo ? "halo" : "interior", i[0], i[1], d == 3 ? i[2] : 0, s[0] - k, s[1] - k,
                        d == 3 ? s[2] - k : 0, got, want);
          found = buf;
        }
      });
      if (!found.empty()) return found;
    }
    return {};
  }

  // --check exchange: a fresh array, one exchange, then every rank compares each of its cells
  // with the value the cell must hold (initial_value of the global cell, wrapped on a torus; the
  // fixed boundary value outside a mesh; the 5-point stencil's unsent corner cells skipped), bit
  // for bit. Rank 0 learns the lowest rank with a mismatch and its first one. --check none: nothing.
  std::string check_one_exchange(Variant& v, const std::function<void()>& exchange) {
    if (c_.check == "none") {
      v.check = "unchecked";
      return {};
    }
    initialize();
    exchange();
    const std::string mine = compare_own_cells(v.name);
    int bad = mine.empty() ? INT_MAX : p_.me, first = INT_MAX;
    MPI_Allreduce(&bad, &first, 1, MPI_INT, MPI_MIN, p_.cart);
    std::string found;
    if (first != INT_MAX) {
      char buf[512] = {0};
      if (p_.me == first) std::snprintf(buf, sizeof buf, "%s", mine.c_str());
      if (first != 0 && p_.me == first) MPI_Send(buf, sizeof buf, MPI_CHAR, 0, 0, p_.cart);
      if (first != 0 && p_.me == 0) MPI_Recv(buf, sizeof buf, MPI_CHAR, first, 0, p_.cart, MPI_STATUS_IGNORE);
      found = buf;
    }
    v.check = first == INT_MAX ? "OK" : "MISMATCH";
    return p_.me == 0 ? found : std::string();
  }

  // The value cell i must hold after an exchange (NaN-free: every such cell is written or fixed).
  double expected(const int i[3], bool halo, bool outside) const {
    return halo && outside && !c_.periodic ? boundary_value(global(i).data(), c_.d) : axes_.value(i[0], i[1], i[2]);
  }

  std::string compare_own_cells(const std::string& variant) const {
    const double* a = shared_ ? shared_ : grid_.data();
    bool bad = false;
    int where[3] = {0, 0, 0}, flags[2] = {0, 0};
    each_own_cell([&](const int i[3], std::size_t at, bool halo, bool outside) {
      if (bad) return;
      // The 5-point stencil's corner cells beyond L1 distance k are never sent.
      if (p_.star && halo && outside_distance(p_.lb, i[0], i[1]) > c_.k && !(outside && !c_.periodic)) return;
      const double want = expected(i, halo, outside);
      if (std::memcmp(&a[at], &want, sizeof want) == 0) return;
      bad = true;
      std::copy(i, i + 3, where);
      flags[0] = halo, flags[1] = outside;
    });
    if (!bad) return {};
    const std::array<int, 3> g = global(where);
    char buf[512];
    std::snprintf(buf, sizeof buf, "%s: rank %d %s cell (%d,%d,%d) = global (%d,%d,%d): got %.17g, want %.17g", variant.c_str(), p_.me,
                  flags[0] ? "halo" : "interior", where[0], where[1], where[2], g[0], g[1], g[2], a[p_.lb.index(where)],
                  expected(where, flags[0], flags[1]));
    return buf;
  }

  const Problem& p_;
  const Config& c_;
  const bool serial_check_;
  const AxisValues axes_;
  double* shared_ = nullptr;  // --check none under SMPI: the array all ranks share
  std::vector<double> grid_, scratch_, gathered_;
  std::vector<int> gather_counts_, gather_displs_;  // rank 0, the serial check: each rank's cells
  Serial serial_;
};

// The plan a request runs.
cartplan::ir::Plan plan_of(Cart_Request req) {
  char* json = nullptr;
  CART(Cart_request_plan(req, &json));
  cartplan::Result<cartplan::ir::Plan> plan = cartplan::ir::plan_from_json_string(json);
  Cart_free_plan_json(json);
  if (!plan) {  // our own bug: the backend returned a plan it cannot read back
    std::fprintf(stderr, "halo: the request's plan does not parse: %s\n", plan.error().c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return *plan;
}

// The request's program on this rank without what only names its messages.
std::string program_of(Cart_Request req) {
  char* json = nullptr;
  CART(Cart_request_program(req, &json));
  std::string text = cartplan::engine::program_without_names(json);
  Cart_free_plan_json(json);
  return text;
}

// The bytes this rank sends to other ranks per exchange of a request (its program's count).
std::int64_t sent_bytes_of(Cart_Request req) {
  char* json = nullptr;
  CART(Cart_request_program(req, &json));
  const nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  Cart_free_plan_json(json);
  if (j.is_discarded() || !j.contains("counts")) return -1;
  return j["counts"].value("sent_bytes", std::int64_t{-1});
}

// The bytes of the send types whose targets are other ranks (the linear loop,
// MPI_Neighbor_alltoallw): what cartplan's counts call bytes sent.
std::int64_t type_bytes(const Problem& p, const std::vector<MPI_Datatype>& types, const std::vector<int>& targets) {
  std::int64_t b = 0;
  for (std::size_t i = 0; i < types.size(); ++i) {
    int size = 0;
    MPI_Type_size(types[i], &size);
    if (targets[i] != MPI_PROC_NULL && targets[i] != p.me) b += size;
  }
  return b;
}

// What the cost model needs to predict a plan of this exchange: the model the backend plans with
// (backends/mpi/model_in_use.h), the grid, and every block's size and layout, as the backend sees
// them (a block is contiguous when its send and recv types are one run of memory).
struct Pricing {
  cartplan::engine::CostModel model;
  std::optional<cartplan::engine::Grid> grid;
  std::vector<std::int64_t> sizes;
  std::vector<bool> contiguous;
  cartplan::engine::Placement placement;  // where the model prices placement (backends/mpi/node_map.h), as the backend
  double predict(const cartplan::ir::Plan& plan) const {
    cartplan::engine::PredictOptions options;
    options.contiguous = contiguous;
    options.placement = placement;
    options.lowering = cartplan::openmpi::lower_options(model);  // as the backend lowers without Info
    return cartplan::engine::predict(plan, sizes, model, grid, options).total_us();
  }
};

bool contiguous_type(MPI_Datatype type) {
  int size = 0;
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_size(type, &size);
  MPI_Type_get_true_extent(type, &lb, &extent);
  return extent == size;
}

Pricing set_up_pricing(const Problem& p, const Datatypes& dt) {
  Pricing pr;
  cartplan::Result<cartplan::engine::LocatedModel> m = cartplan::mpi::model_in_use(p.cart, std::nullopt);
  if (!m) {  // Cart_neighborhood_create found the same file and accepted it
    std::fprintf(stderr, "halo: cost model: %s\n", m.error().c_str());
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  pr.model = m->model;
  if (cartplan::mpi::node_placement(p.cart, &pr.placement) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 3);
  if (g_world_rank == 0)
    std::printf("halo: placement %s%s\n", pr.placement.describe().c_str(),
                cartplan::engine::prices_placement(pr.model) ? "" : " (the model prices none of it)");
  if (!cartplan::engine::prices_placement(pr.model)) pr.placement = {};
  pr.grid = cartplan::engine::Grid::create(std::vector<int>(p.dims, p.dims + p.c.d), std::vector<bool>(p.c.d, p.c.periodic != 0))
                .value();
  for (int i = 0; i < p.t; ++i) {
    int size = 0;
    MPI_Type_size(dt.stypes[i], &size);
    pr.sizes.push_back(size);
    pr.contiguous.push_back(contiguous_type(dt.stypes[i]) && contiguous_type(dt.rtypes[i]));
  }
  return pr;
}

// The persistent cartplan requests, one per algorithm (Info cartplan_algorithm), each with the
// kind of plan it runs and the model's prediction for that plan. An algorithm the backend
// refuses here (every rank agrees) is left out with a note.
void add_cart_variants(const Problem& p, Datatypes& dt, double* grid, const Pricing& pr, std::vector<Variant>* variants,
                       std::vector<Cart_Request>* requests) {
  for (const char* algo : {"auto", "direct", "combining", "hybrid", "loground"}) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cartplan_algorithm", algo);
    Cart_Request req = CART_REQUEST_NULL;
    const int rc = Cart_alltoallw_init(grid, dt.counts.data(), dt.displs.data(), dt.stypes.data(), grid, dt.counts.data(),
                                       dt.displs.data(), dt.rtypes.data(), p.cart, info, &req);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
      if (p.me == 0) std::printf("note: cartplan %s left out: %s\n", algo, Cart_error_message());
      continue;
    }
    const cartplan::ir::Plan plan = plan_of(req);
    Variant v;
    v.name = std::string("cartplan ") + algo;
    v.algorithm = cartplan::ir::plan_shape(plan);
    v.predicted_us = pr.predict(plan);
    v.bytes = sent_bytes_of(req);
    requests->push_back(req);
    variants->push_back(v);
  }
}

// The variant whose program equals auto's (the first request's) on every rank, or "".
std::string auto_twin_of(const Problem& p, const std::vector<Variant>& variants, const std::vector<Cart_Request>& requests) {
  for (std::size_t j = 1; j < requests.size(); ++j) {
    // Set-up time, once per run: all ranks must agree that the programs are equal.
    int same = program_of(requests[0]) == program_of(requests[j]) ? 1 : 0, everywhere = 0;
    MPI_Allreduce(&same, &everywhere, 1, MPI_INT, MPI_LAND, p.cart);
    if (everywhere) return variants[j].name;
  }
  return {};
}

// The halo API (Cart_halo_*) on the same array: the array is described (interior n^d, k ghost
// cells per side, doubles, C order), not its datatypes; the stencil is the communicator's. The
// variants: the persistent exchange of the halo planner's choice (auto), its blocking form on the
// same halo, and persistent exchanges of the plans auto chooses among (Info cartplan_algorithm).
// With --points 5 and k > 1 they fill the whole k x k corners, where the triangles suffice: more
// cells, same check.
struct HaloApi {
  std::vector<Cart_Halo> halos;        // [0]: auto
  std::vector<Cart_Request> requests;  // one per halo
  double dimwise_predicted = std::nan("");
  double init_us = 0;  // the auto request's init (timed_halo_init)
  std::int64_t dimwise_bytes = -1;
  void free() {
    for (Cart_Request& r : requests) CART(Cart_request_free(&r));
    for (Cart_Halo& h : halos) CART(Cart_halo_free(&h));
  }
};

// A halo's plan as the library sees it: its algorithm, the model's price (price_halo, what the
// planner's choice minimises: the busiest rank on this grid) and this rank's bytes sent (its
// program's count).
template <class T>
T plan_step(cartplan::Result<T> r) {
  if (!r) {  // our own bug: the library's plan does not read back, bind, price or lower
    std::fprintf(stderr, "halo: the halo's plan: %s\n", r.error().c_str());
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  return std::move(*r);
}

void halo_plan_facts(const Problem& p, Cart_Request request, const Pricing& pr, Variant* v) {
  namespace eh = cartplan::engine::halo;
  char* json = nullptr;
  CART(Cart_halo_request_plan(request, &json));
  const std::string text = json;
  Cart_free_plan_json(json);
  const cartplan::ir::halo::HaloPlan plan = plan_step(cartplan::ir::halo::halo_plan_from_json_string(text));
  const eh::HaloBinder binder = plan_step(eh::HaloBinder::create(plan));
  const cartplan::engine::Coords coords(p.coords, p.coords + p.c.d);
  v->algorithm = cartplan::ir::halo::to_string(plan.algorithm());
  v->predicted_us = plan_step(eh::price_halo(binder, pr.model, pr.grid, pr.placement)).us;
  v->bytes = eh::count(plan_step(eh::lower_halo(binder, *pr.grid, coords))).sent_bytes;
}

// The auto request's init (Info cartplan_tune from --tune), timed from a barrier to the slowest
// rank's return: what measuring mode costs once (simulated time under SMPI).
double timed_halo_init(const Problem& p, double* grid, Cart_Halo halo, Cart_Request* req) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_tune", p.c.tune.c_str());
  MPI_Barrier(p.cart);
  const double t0 = MPI_Wtime();
  CART(Cart_halo_exchange_init(grid, halo, info, req));
  double mine = (MPI_Wtime() - t0) * 1e6, slowest = 0;
  MPI_Info_free(&info);
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, p.cart);
  if (p.me == 0) std::printf("halo API auto init (--tune %s): %.2f us, the slowest rank\n", p.c.tune.c_str(), slowest);
  return slowest;
}

void add_halo_api_variants(const Problem& p, double* grid, const Pricing& pr, HaloApi* h, std::vector<Variant>* variants,
                           std::vector<std::function<void()>>* exchanges) {
  const int d = p.c.d, k = p.c.k;
  const std::vector<int> interior(p.lb.m, p.lb.m + d), ghost(d, k);  // this rank's own interior
  h->halos.reserve(4);
  h->requests.reserve(4);
  for (const char* algo : {"auto", "direct", "combining", "dimwise"}) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cartplan_algorithm", algo);
    if (std::string(algo) == "dimwise" && !p.c.dim_order.empty()) MPI_Info_set(info, "cartplan_dim_order", comma_list(p.c.dim_order).c_str());
    Cart_Halo halo = CART_HALO_NULL;
    CART(Cart_halo_create(p.cart, d, interior.data(), ghost.data(), ghost.data(), MPI_DOUBLE, MPI_ORDER_C, info, &halo));
    MPI_Info_free(&info);
    Cart_Request req = CART_REQUEST_NULL;
    if (h->halos.empty()) {
      h->init_us = timed_halo_init(p, grid, halo, &req);
    } else {
      CART(Cart_halo_exchange_init(grid, halo, MPI_INFO_NULL, &req));
    }
    const std::size_t i = h->halos.size();
    h->halos.push_back(halo);
    h->requests.push_back(req);
    Variant v;
    v.name = i == 0 ? "cartplan halo API" : std::string("halo API ") + algo;
    halo_plan_facts(p, req, pr, &v);
    if (std::string(algo) == "dimwise") {
      h->dimwise_predicted = v.predicted_us;
      h->dimwise_bytes = v.bytes;
    }
    variants->push_back(v);
    exchanges->push_back([h, i] {
      CART(Cart_start(&h->requests[i]));
      CART(Cart_wait(&h->requests[i]));
    });
    if (i != 0) continue;
    v.name = "cartplan halo blocking";  // the same halo, hence the same plan
    variants->push_back(v);
    exchanges->push_back([h, grid] { CART(Cart_halo_exchange(grid, h->halos[0])); });
  }
}

// The hand-written dimension-by-dimension exchange (halo_handwritten.h), priced as the halo API's
// dimwise plan, whose messages it sends. It fills every ghost region, so it serves the stencils
// whose halo is the whole box: not the 5-point stencil with k = 1 (no corners).
void add_handwritten(const Problem& p, double* grid, const HaloApi& h, std::unique_ptr<halo_tool::HandWritten>* hw,
                     std::vector<Variant>* variants, std::vector<std::function<void()>>* exchanges) {
  if (p.star && p.c.k == 1) {
    if (p.me == 0) std::printf("note: hand-written dimwise left out: it fills the corners, which the 5-point stencil with --halo 1 does not have\n");
    return;
  }
  std::vector<int> order = p.c.dim_order;
  if (order.empty())
    for (int j = 0; j < p.c.d; ++j) order.push_back(j);
  *hw = std::make_unique<halo_tool::HandWritten>(p.cart, std::vector<int>(p.lb.m, p.lb.m + p.c.d), p.c.k, order);
  halo_tool::HandWritten* x = hw->get();
  Variant v{"hand-written dimwise", "dimwise", 0.0, "", h.dimwise_predicted, x->bytes_sent()};
  variants->push_back(v);
  exchanges->push_back([x, grid] { x->exchange(grid); });
}

// The linear loop of Open MPI's and MPICH's neighbourhood collectives: every receive posted, then
// every send, then MPI_Waitall. Block i travels with tag i, so neighbours reached by two offsets
// (small periodic grids) still pair each block with its own type.
void linear_exchange(const Problem& p, const Datatypes& dt, double* grid, std::vector<MPI_Request>* reqs) {
  int n = 0;
  for (int i = 0; i < p.t; ++i)
    if (dt.sources[i] != MPI_PROC_NULL) MPI_Irecv(grid, 1, dt.rtypes[i], dt.sources[i], i, p.cart, &(*reqs)[n++]);
  for (int i = 0; i < p.t; ++i)
    if (dt.targets[i] != MPI_PROC_NULL) MPI_Isend(grid, 1, dt.stypes[i], dt.targets[i], i, p.cart, &(*reqs)[n++]);
  MPI_Waitall(n, reqs->data(), MPI_STATUSES_IGNORE);
}

// The baselines beside cartplan: cartplan's blocking Cart_alltoallw (auto, the communicator's
// default), the linear loop (predicted as the direct plan, whose messages it sends), and
// MPI_Neighbor_alltoallw (not under SMPI).
void add_baselines(const Problem& p, Datatypes& dt, double* grid, double direct_predicted, std::vector<Variant>* variants,
                   std::vector<std::function<void()>>* exchanges) {
  if (!p.uneven()) {
    variants->push_back({"cartplan auto blocking", "-", 0.0, "", std::nan("")});
    exchanges->push_back([&p, &dt, grid] {
      CART(Cart_alltoallw(grid, dt.counts.data(), dt.displs.data(), dt.stypes.data(), grid, dt.counts.data(), dt.displs.data(),
                          dt.rtypes.data(), p.cart));
    });
  }
  auto reqs = std::make_shared<std::vector<MPI_Request>>(2 * static_cast<std::size_t>(p.t));
  variants->push_back({"linear Isend/Irecv", "direct", 0.0, "", direct_predicted, type_bytes(p, dt.stypes, dt.targets)});
  exchanges->push_back([&p, &dt, grid, reqs] { linear_exchange(p, dt, grid, reqs.get()); });
  if (dt.graph == MPI_COMM_NULL) return;
  variants->push_back({"MPI_Neighbor_alltoallw", "-", 0.0, "", std::nan(""), type_bytes(p, dt.stypes, dt.targets)});
  exchanges->push_back([&dt, grid] {
    MPI_Neighbor_alltoallw(grid, dt.gscounts.data(), dt.gsdispls.data(), dt.gstypes.data(), grid, dt.grcounts.data(),
                           dt.grdispls.data(), dt.grtypes.data(), dt.graph);
  });
}

// Every variant, checked on its own fresh run, then timed together (Runner::time_round_robin or
// time_blocks); *first_mismatch is "" or the first mismatch rank 0 found. *auto_twin names the
// variant whose program equals auto's on every rank ("" if none): the two then differ only as two
// requests of one program do.
std::vector<Variant> run_variants(const Problem& p, Datatypes& dt, Runner& runner, std::string* auto_choice,
                                  std::string* auto_twin, std::string* first_mismatch) {
  std::vector<Variant> variants;
  std::vector<Cart_Request> requests;
  double* grid = runner.data();
  const Pricing pricing = set_up_pricing(p, dt);
  // Cart_alltoallw's blocks must have one size on every rank (cartplan_mpi.h), which an uneven
  // decomposition's faces do not: its variants run on even decompositions only.
  if (!p.uneven()) add_cart_variants(p, dt, grid, pricing, &variants, &requests);
  else if (p.me == 0) std::printf("note: Cart_alltoallw variants left out: block i must have one size on every rank, and these interiors differ\n");
  *auto_choice = variants.empty() ? "-" : variants[0].algorithm;
  *auto_twin = auto_twin_of(p, variants, requests);
  std::vector<std::function<void()>> exchanges;
  for (Cart_Request& req : requests)
    exchanges.push_back([&req] {
      CART(Cart_start(&req));
      CART(Cart_wait(&req));
    });
  double direct_predicted = std::nan("");
  HaloApi halo_api;
  add_halo_api_variants(p, grid, pricing, &halo_api, &variants, &exchanges);
  for (const Variant& v : variants)  // Cart_alltoallw's direct plan, else (uneven) the halo API's
    if (v.name == "cartplan direct" || (v.name == "halo API direct" && std::isnan(direct_predicted))) direct_predicted = v.predicted_us;
  std::unique_ptr<halo_tool::HandWritten> handwritten;
  add_handwritten(p, grid, halo_api, &handwritten, &variants, &exchanges);
  add_baselines(p, dt, grid, direct_predicted, &variants, &exchanges);
  for (std::size_t j = 0; j < variants.size(); ++j) {
    const std::string m = runner.run(variants[j], exchanges[j]);
    if (first_mismatch->empty()) *first_mismatch = m;
  }
  if (p.c.timing == "blocks") runner.time_blocks(variants, exchanges);
  else if (p.c.timing == "sync") runner.time_sync(variants, exchanges);
  else runner.time_round_robin(variants, exchanges);
  for (Cart_Request& req : requests) CART(Cart_request_free(&req));
  halo_api.free();
  for (Variant& v : variants) {  // rank 0 reports the busiest rank's bytes
    std::int64_t most = 0;
    MPI_Reduce(&v.bytes, &most, 1, MPI_INT64_T, MPI_MAX, 0, p.cart);
    v.bytes = most;
  }
  return variants;
}

// The halo API's auto (the main job's cartplan path) against the best variant and MPI_Neighbor_alltoallw.
void print_halo_summary(const std::vector<Variant>& variants) {
  const Variant* halo = nullptr;
  const Variant* best = nullptr;
  const Variant* neighbor = nullptr;
  for (const Variant& v : variants) {
    if (v.name == "cartplan halo API") halo = &v;
    if (v.name == "MPI_Neighbor_alltoallw") neighbor = &v;
    if (!best || v.us < best->us) best = &v;
  }
  if (!halo || !best) return;
  std::printf("halo API (the cartplan path) chose %s: %.2f us, %.3f x the best variant (%s, %.2f us)", halo->algorithm.c_str(),
              halo->us, halo->us / best->us, best->name.c_str(), best->us);
  if (neighbor) std::printf(", %.3f x MPI_Neighbor_alltoallw", halo->us / neighbor->us);
  std::printf("\n");
}

// Rank 0's table; returns the exit status (1 on a mismatch).
int print_report(const Config& c, const std::vector<Variant>& variants, const std::string& auto_choice,
                 const std::string& auto_twin, const std::string& first_mismatch) {
  int status = 0;
  if (auto_choice != "-") {  // Cart_alltoallw's auto ran (not on uneven interiors)
    std::printf("auto chose: %s\n", auto_choice.c_str());
    std::printf("auto runs the program of: %s\n", auto_twin.empty() ? "none of the other variants" : auto_twin.c_str());
  }
  std::printf("%-24s %-10s %14s %14s %12s  %s\n", "variant", "algorithm", "us/exchange", "predicted us", "bytes/rank", "check");
  for (const Variant& v : variants) {
    char predicted[32] = "-", bytes[32] = "-";
    if (!std::isnan(v.predicted_us)) std::snprintf(predicted, sizeof predicted, "%.2f", v.predicted_us);
    if (v.bytes >= 0) std::snprintf(bytes, sizeof bytes, "%lld", static_cast<long long>(v.bytes));
    std::printf("%-24s %-10s %14.2f %14s %12s  %s\n", v.name.c_str(), v.algorithm.c_str(), v.us, predicted, bytes, v.check.c_str());
  }
  if (c.timing == "sync")
    std::printf("(us/exchange: median of %d exchanges per variant, each after a barrier, from the last rank's entry\n"
                " to the last rank's exit on the simulated clock;\n", c.iters);
  else if (c.timing == "blocks")
    std::printf("(us/exchange: max over ranks of the per-rank mean of %d back-to-back exchanges per variant, after 5\n"
                " warm-up exchanges;\n", c.iters);
  else
    std::printf("(us/exchange: max over ranks of the per-rank median of %d exchanges per variant, timed in rounds\n"
                " of every variant once, shuffled per round, after 5 warm-up exchanges each;\n", c.iters);
  std::printf(" predicted: the cost model's price of the plan the variant runs (Cart_alltoallw plans: engine::predict;\n"
              " halo API plans: price_halo, the busiest rank), the linear loop priced as the direct plan, the\n"
              " hand-written exchange as the halo API's dimwise plan; bytes/rank: the most any rank sends to others)\n");
  print_halo_summary(variants);
  if (c.check == "none") {
    std::printf("check: NONE (--check none: no data checked%s)\n", kSharedArray ? "; the ranks shared one array" : "");
  } else if (first_mismatch.empty()) {
    std::printf(c.check == "serial" ? "check: OK (bit-for-bit)\n" : "check: OK (bit-for-bit, one exchange, each rank its own cells)\n");
  } else {
    std::printf("check: FAILED, first mismatch: %s\n", first_mismatch.c_str());
    status = 1;
  }
  std::fflush(stdout);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int np = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  const bool root = g_world_rank == 0;

  Config c;
  bool help = false;
  const std::string bad = parse_args(argc, argv, np, &c, &help);
  if (help || !bad.empty()) {
    if (root) {
      if (help) std::fputs(kUsage, stdout);
      else std::fprintf(stderr, "halo: %s\n%s", bad.c_str(), kUsage);
    }
    MPI_Finalize();
    return help ? 0 : 2;
  }

  Problem p = set_up_problem(c, np);
  if (!p.error.empty()) {  // every rank found the same (the sizes and the grid only)
    if (root) std::fprintf(stderr, "halo: %s\n", p.error.c_str());
    MPI_Finalize();
    return 2;
  }
  if (root) print_header(p);
  int status = 0;  // the exit status, decided on rank 0
  if (p.cart != MPI_COMM_NULL) {
    Datatypes dt = set_up_datatypes(p);
    Runner runner(p);
    std::string auto_choice, auto_twin, first_mismatch;
    const std::vector<Variant> variants = run_variants(p, dt, runner, &auto_choice, &auto_twin, &first_mismatch);
    if (p.me == 0) status = print_report(c, variants, auto_choice, auto_twin, first_mismatch);
    free_datatypes(&dt);
    MPI_Comm_free(&p.cart);
  }
  // Every rank exits with rank 0's verdict, so mpirun reports it whichever rank it looks at.
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
