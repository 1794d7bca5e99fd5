// halo: a 2-D 9-point / 5-point or 3-D 27-point Jacobi run whose halo exchange goes through cartplan (auto, direct, combining) and MPI_Neighbor_alltoallw, each timed and checked bit-for-bit against a serial run.
//
//   mpirun -np 4 bazel-bin/tools/halo [--dims 2|3] [--points 9|5|27] [--n N] [--halo K] [--iters I]
//                                     [--periodic 0|1] [--procs P,Q[,R]]
//
// Every rank owns one (n+2k)^d array of doubles (row-major). Each of the 3^d-1 Moore
// neighbours gets a subarray datatype on that one array (send: the k-deep interior slab next to
// the neighbour; recv: the matching halo region), so all displacements are 0, as in seed 000,
// Listing 3. The 9- and 27-point runs exchange before every sweep.
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
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "ir/parse_number.h"

namespace {

int g_world_rank = 0;

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
  int n = -1;  // -1: the default for d
  int k = 1;
  int iters = 50;
  int periodic = 0;
  std::vector<int> procs;  // empty: MPI_Dims_create
};

const char* kUsage =
    "usage: halo [--dims 2|3] [--points 9|5|27] [--n N] [--halo K] [--iters I] [--periodic 0|1] [--procs P,Q[,R]]\n"
    "  --dims      2 (9-point stencil) or 3 (27-point stencil); default 2\n"
    "  --points    9 (2-D) or 27 (3-D): exchange every sweep; 5 (2-D only): 5-point stencil whose\n"
    "              k-deep halo is exchanged every k sweeps, corners triangular; default 9 / 27\n"
    "  --n         local interior size per dimension; default 64 (2-D), 16 (3-D)\n"
    "  --halo      halo depth k, 1 <= k <= n; default 1\n"
    "  --iters     Jacobi iterations and timed exchanges per variant; default 50\n"
    "  --periodic  1 for a torus, 0 for a mesh with fixed boundary values; default 0\n"
    "  --procs     process grid (d values, product <= np); default MPI_Dims_create\n";

// Returns an empty string when the options are good, else the message to print. Only depends
// on argv and np, so every rank reaches the same verdict without communicating.
std::string parse_args(int argc, char** argv, int np, Config* c, bool* help) {
  *help = false;
  std::string procs_text;
  bool have_procs = false;
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
               arg == "--procs") {
      if (i + 1 >= argc) return "option " + arg + " needs a value";
      value = argv[++i];
    } else {
      return "unknown argument '" + arg + "'";
    }
    if (arg == "--procs") {
      procs_text = value;
      have_procs = true;
      continue;
    }
    if (arg != "--dims" && arg != "--points" && arg != "--n" && arg != "--halo" && arg != "--iters" && arg != "--periodic")
      return "unknown option '" + arg + "'";
    const cartplan::Result<int> parsed = cartplan::parse_int(value);
    if (!parsed) return "option " + arg + ": " + parsed.error();
    const int v = *parsed;
    if (arg == "--dims") c->d = v;
    else if (arg == "--points") c->points = v;
    else if (arg == "--n") c->n = v;
    else if (arg == "--halo") c->k = v;
    else if (arg == "--iters") c->iters = v;
    else c->periodic = v;
  }
  if (c->d != 2 && c->d != 3) return "--dims must be 2 or 3, not " + std::to_string(c->d);
  if (c->points == -1) c->points = c->d == 2 ? 9 : 27;
  if (c->d == 2 && c->points != 9 && c->points != 5)
    return "--points must be 9 or 5 with --dims 2, not " + std::to_string(c->points);
  if (c->d == 3 && c->points != 27) return "--points must be 27 with --dims 3, not " + std::to_string(c->points);
  if (c->n == -1) c->n = c->d == 2 ? 64 : 16;
  if (c->n < 1) return "--n must be at least 1, not " + std::to_string(c->n);
  if (c->k < 1) return "--halo must be at least 1, not " + std::to_string(c->k);
  // A neighbour's slab must lie inside its interior, or the send and halo regions would overlap.
  if (c->k > c->n) return "--halo " + std::to_string(c->k) + " is deeper than the interior (--n " + std::to_string(c->n) + ")";
  if (c->iters < 1) return "--iters must be at least 1, not " + std::to_string(c->iters);
  if (c->periodic != 0 && c->periodic != 1) return "--periodic must be 0 or 1, not " + std::to_string(c->periodic);
  // Counts are ints in MPI: one rank's whole array must fit, with room for the gather on rank 0.
  double local_cells = std::pow(static_cast<double>(c->n) + 2.0 * c->k, c->d);
  if (local_cells * np > static_cast<double>(INT_MAX) / 4)
    return "--n " + std::to_string(c->n) + " with --halo " + std::to_string(c->k) + " is too large for this program";
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

Serial run_serial(const Config& c, const int dims[3]) {
  Serial s;
  s.periodic = c.periodic != 0;
  s.b.d = c.d;
  s.b.k = c.k;
  for (int j = 0; j < 3; ++j) {
    s.b.m[j] = j < c.d ? dims[j] * c.n : 1;
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
};

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

  const int d = c.d, n = c.n, k = c.k;
  int dims[3] = {1, 1, 1}, periods[3] = {c.periodic, c.periodic, c.periodic};
  if (c.procs.empty()) {
    int dd[3] = {0, 0, 0};
    MPI_Dims_create(np, d, dd);
    for (int j = 0; j < d; ++j) dims[j] = dd[j];
  } else {
    for (int j = 0; j < d; ++j) dims[j] = c.procs[j];
  }
  int grid_size = 1;
  for (int j = 0; j < d; ++j) grid_size *= dims[j];

  // The Moore neighbourhood without the zero offset, in lexicographic order (seed 001, Listing 6);
  // the 5-point stencil with k = 1 needs only the von Neumann neighbours.
  const bool star = c.points == 5;
  const int metric = star && k == 1 ? CART_MANHATTAN : CART_CHEBYSHEV;
  int t = 0;
  CART(Cart_neighbors_count(d, metric, 1, 1, &t));
  std::vector<int> offsets(static_cast<std::size_t>(t) * d);
  CART(Cart_neighbors(d, metric, 1, 1, t, offsets.data()));

  MPI_Comm cart = MPI_COMM_NULL;
  CART(Cart_neighborhood_create(MPI_COMM_WORLD, d, dims, periods, t, offsets.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &cart));

  if (root) {
    std::string grid, local, global;
    for (int j = 0; j < d; ++j) {
      grid += (j ? "x" : "") + std::to_string(dims[j]);
      local += (j ? "x" : "") + std::to_string(n);
      global += (j ? "x" : "") + std::to_string(dims[j] * n);
    }
    std::printf("halo: %d-D %d-point Jacobi, np=%d, process grid %s%s, n=%d (local %s, global %s), halo k=%d%s, periodic=%d, iterations=%d\n",
                d, c.points, np, grid.c_str(),
                grid_size < np ? (", idle ranks: " + std::to_string(np - grid_size)).c_str() : "", n, local.c_str(),
                global.c_str(), k, star && k > 1 ? " (exchanged every k sweeps, triangular corners)" : "", c.periodic,
                c.iters);
    std::fflush(stdout);
  }

  int status = 0;  // the exit status, decided on rank 0
  if (cart != MPI_COMM_NULL) {
    int me = 0;
    MPI_Comm_rank(cart, &me);
    int coords[3] = {0, 0, 0};
    MPI_Cart_coords(cart, me, d, coords);

    Box lb;
    lb.d = d;
    lb.k = k;
    for (int j = 0; j < 3; ++j) {
      lb.m[j] = j < d ? n : 1;
      lb.ext[j] = j < d ? n + 2 * k : 1;
    }
    const std::size_t cells = lb.cells();
    std::vector<double> grid(cells), scratch(cells);

    // Block i goes to +offset[i] and arrives from -offset[i]: send the slab on the side of
    // offset[i], receive into the halo on the opposite side.
    std::vector<MPI_Datatype> stypes(t), rtypes(t);
    std::vector<int> counts(t, 1);
    std::vector<MPI_Aint> displs(t, 0);
    for (int i = 0; i < t; ++i) {
      const int* o = &offsets[static_cast<std::size_t>(i) * d];
      if (star && o[0] != 0 && o[1] != 0) {
        // A corner of the 5-point stencil: the triangle of order k-1 whose right angle points
        // along o, both in the interior corner it is sent from and in the halo it arrives in
        // (the cells a, b >= 1 steps beyond the corner with a + b <= k).
        const int kind = o[0] > 0 ? (o[1] > 0 ? CART_TRIANGLE_LOWER_ANTI : CART_TRIANGLE_LOWER)
                                  : (o[1] > 0 ? CART_TRIANGLE_UPPER : CART_TRIANGLE_UPPER_ANTI);
        const int ld = n + 2 * k;
        MPI_Datatype tri;
        CART(Cart_type_create_triangle(k - 1, ld, kind, MPI_DOUBLE, &tri));
        int one = 1;
        MPI_Aint sdisp = 0, rdisp = 0;
        int sstart[2], rstart[2];
        for (int j = 0; j < 2; ++j) {
          sstart[j] = o[j] > 0 ? n + 1 : k;
          rstart[j] = o[j] > 0 ? 1 : n + k;
        }
        sdisp = static_cast<MPI_Aint>(sstart[0] * ld + sstart[1]) * static_cast<MPI_Aint>(sizeof(double));
        rdisp = static_cast<MPI_Aint>(rstart[0] * ld + rstart[1]) * static_cast<MPI_Aint>(sizeof(double));
        MPI_Type_create_hindexed(1, &one, &sdisp, tri, &stypes[i]);
        MPI_Type_commit(&stypes[i]);
        MPI_Type_create_hindexed(1, &one, &rdisp, tri, &rtypes[i]);
        MPI_Type_commit(&rtypes[i]);
        MPI_Type_free(&tri);
        continue;
      }
      int sizes[3], sub[3], sstart[3], rstart[3];
      for (int j = 0; j < d; ++j) {
        const int o = offsets[static_cast<std::size_t>(i) * d + j];
        sizes[j] = n + 2 * k;
        sub[j] = o == 0 ? n : k;
        sstart[j] = o < 0 ? k : o > 0 ? n : k;
        rstart[j] = o > 0 ? 0 : o < 0 ? n + k : k;
      }
      MPI_Type_create_subarray(d, sizes, sub, sstart, MPI_ORDER_C, MPI_DOUBLE, &stypes[i]);
      MPI_Type_commit(&stypes[i]);
      MPI_Type_create_subarray(d, sizes, sub, rstart, MPI_ORDER_C, MPI_DOUBLE, &rtypes[i]);
      MPI_Type_commit(&rtypes[i]);
    }

    // MPI_Neighbor_alltoallw on the same neighbourhood as a distributed graph: the blocks of
    // neighbours outside the mesh are dropped, keeping neighbourhood order, which is the order
    // Cart_graph_get lists sources and targets in.
    int tt = 0, indeg = 0, outdeg = 0;
    CART(Cart_neighbor_degrees(cart, &tt, &indeg, &outdeg));
    std::vector<int> all_src(t), all_dst(t), src(std::max(indeg, 1)), dst(std::max(outdeg, 1));
    CART(Cart_neighbor_get(cart, t, all_src.data(), MPI_UNWEIGHTED, t, all_dst.data(), MPI_UNWEIGHTED));
    CART(Cart_graph_get(cart, indeg, src.data(), outdeg, dst.data()));
    std::vector<MPI_Datatype> gstypes, grtypes;
    std::vector<int> gsrc, gdst;
    for (int i = 0; i < t; ++i) {
      if (all_src[i] != MPI_PROC_NULL) {
        gsrc.push_back(all_src[i]);
        grtypes.push_back(rtypes[i]);
      }
      if (all_dst[i] != MPI_PROC_NULL) {
        gdst.push_back(all_dst[i]);
        gstypes.push_back(stypes[i]);
      }
    }
    // The compaction above must be exactly Cart_graph_get's lists, or the types would be paired
    // with the wrong neighbours.
    if (static_cast<int>(gsrc.size()) != indeg || static_cast<int>(gdst.size()) != outdeg ||
        !std::equal(gsrc.begin(), gsrc.end(), src.begin()) || !std::equal(gdst.begin(), gdst.end(), dst.begin())) {
      std::fprintf(stderr, "halo: rank %d: Cart_graph_get disagrees with Cart_neighbor_get without MPI_PROC_NULL\n", g_world_rank);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Comm graph = MPI_COMM_NULL;
    MPI_Dist_graph_create_adjacent(cart, indeg, src.data(), MPI_UNWEIGHTED, outdeg, dst.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                   &graph);
    std::vector<int> gscounts(std::max(outdeg, 1), 1), grcounts(std::max(indeg, 1), 1);
    std::vector<MPI_Aint> gsdispls(std::max(outdeg, 1), 0), grdispls(std::max(indeg, 1), 0);
    if (gstypes.empty()) gstypes.push_back(MPI_DOUBLE);  // never read: keeps .data() non-NULL
    if (grtypes.empty()) grtypes.push_back(MPI_DOUBLE);

    // Fresh start for every variant. Halo cells that an exchange must fill start as NaN, so a
    // block that never arrives shows up in the check; boundary cells of a mesh get their fixed
    // value once, and the check proves cartplan never wrote them.
    auto initialize = [&] {
      for_each_cell(lb, [&](const int i[3]) {
        int g[3] = {0, 0, 0};
        bool halo = false, outside = false;
        for (int j = 0; j < d; ++j) {
          g[j] = coords[j] * n + i[j] - k;
          halo = halo || i[j] < k || i[j] >= k + n;
          outside = outside || g[j] < 0 || g[j] >= dims[j] * n;
        }
        double v = initial_value(g, d);
        if (halo) v = outside && !c.periodic ? boundary_value(g, d) : std::nan("");
        grid[lb.index(i)] = v;
      });
    };

    Serial serial;
    if (me == 0) serial = run_serial(c, dims);
    std::vector<double> gathered(me == 0 ? cells * grid_size : 0);

    // Compares every cell of every rank's array (interior and halo) with the serial array at
    // the same global position, bit for bit; returns "" or the first mismatch.
    auto compare = [&](const std::string& variant) -> std::string {
      for (int r = 0; r < grid_size; ++r) {
        int rc[3] = {0, 0, 0};
        MPI_Cart_coords(cart, r, d, rc);
        const double* local = gathered.data() + cells * r;
        std::string found;
        for_each_cell(lb, [&](const int i[3]) {
          if (!found.empty()) return;
          int s[3] = {0, 0, 0};
          bool halo = false, outside = false;
          for (int j = 0; j < d; ++j) {
            s[j] = rc[j] * n + i[j];  // index into the serial array (which has the same k-deep halo)
            halo = halo || i[j] < k || i[j] >= k + n;
            outside = outside || s[j] < k || s[j] >= k + dims[j] * n;
          }
          // The 5-point stencil's halo holds the cells within L1 distance k of the interior;
          // the rest of the corners is never sent (only fixed boundary cells are compared there).
          if (star && outside_distance(lb, i[0], i[1]) > k && !(outside && !c.periodic)) return;
          const double got = local[lb.index(i)], want = serial.a[serial.b.index(s)];
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
    };

    // One variant: the Jacobi run, then the timed exchanges (which leave the halos holding the
    // neighbours' final interiors), then the gather and the check on rank 0.
    auto run_variant = [&](Variant& v, auto exchange) {
      initialize();
      if (star) {
        // Exchange once per k sweeps; sweep s of the batch also updates the halo cells within
        // L1 distance k-s of the interior that lie inside the global domain (mesh boundary
        // cells keep their fixed values).
        auto updatable = [&](int i0, int i1) {
          if (c.periodic) return true;
          const int g0 = coords[0] * n + i0 - k, g1 = coords[1] * n + i1 - k;
          return g0 >= 0 && g0 < dims[0] * n && g1 >= 0 && g1 < dims[1] * n;
        };
        for (int it = 0; it < c.iters; it += k) {
          exchange();
          for (int s = 1; s <= k && it + s <= c.iters; ++s) jacobi5(lb, grid, scratch, k - s, updatable);
        }
      } else {
        for (int it = 0; it < c.iters; ++it) {
          exchange();
          jacobi(lb, grid, scratch);
        }
      }
      for (int w = 0; w < 5; ++w) exchange();
      std::vector<double> times(c.iters);
      for (int r = 0; r < c.iters; ++r) {
        const double t0 = MPI_Wtime();
        exchange();
        times[r] = MPI_Wtime() - t0;
      }
      double med = median(times) * 1e6, worst = 0.0;
      MPI_Reduce(&med, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, cart);
      v.us = worst;
      MPI_Gather(grid.data(), static_cast<int>(cells), MPI_DOUBLE, gathered.data(), static_cast<int>(cells), MPI_DOUBLE, 0, cart);
      if (me == 0) {
        const std::string mismatch = compare(v.name);
        v.check = mismatch.empty() ? "OK" : "MISMATCH";
        return mismatch;
      }
      return std::string();
    };

    std::vector<Variant> variants;
    std::string first_mismatch;
    std::string auto_choice;
    for (const char* algo : {"auto", "direct", "combining"}) {
      MPI_Info info;
      MPI_Info_create(&info);
      MPI_Info_set(info, "cartplan_algorithm", algo);
      Cart_Request req = CART_REQUEST_NULL;
      CART(Cart_alltoallw_init(grid.data(), counts.data(), displs.data(), stypes.data(), grid.data(), counts.data(), displs.data(),
                               rtypes.data(), cart, info, &req));
      MPI_Info_free(&info);
      int combining = 0;
      CART(Cart_request_algorithm(req, &combining));
      Variant v;
      v.name = std::string("cartplan ") + algo;
      v.algorithm = combining ? "combining" : "direct";
      if (std::string(algo) == "auto") auto_choice = v.algorithm;
      const std::string m = run_variant(v, [&] {
        CART(Cart_start(&req));
        CART(Cart_wait(&req));
      });
      if (first_mismatch.empty()) first_mismatch = m;
      CART(Cart_request_free(&req));
      variants.push_back(v);
    }
    {
      Variant v;
      v.name = "MPI_Neighbor_alltoallw";
      v.algorithm = "-";
      const std::string m = run_variant(v, [&] {
        MPI_Neighbor_alltoallw(grid.data(), gscounts.data(), gsdispls.data(), gstypes.data(), grid.data(), grcounts.data(),
                               grdispls.data(), grtypes.data(), graph);
      });
      if (first_mismatch.empty()) first_mismatch = m;
      variants.push_back(v);
    }

    if (me == 0) {
      std::printf("auto chose: %s\n", auto_choice.c_str());
      std::printf("%-24s %-10s %14s  %s\n", "variant", "algorithm", "us/exchange", "check");
      for (const Variant& v : variants)
        std::printf("%-24s %-10s %14.2f  %s\n", v.name.c_str(), v.algorithm.c_str(), v.us, v.check.c_str());
      std::printf("(us/exchange: max over ranks of the per-rank median of %d exchanges, after 5 warm-up exchanges)\n", c.iters);
      if (first_mismatch.empty()) {
        std::printf("check: OK (bit-for-bit)\n");
      } else {
        std::printf("check: FAILED, first mismatch: %s\n", first_mismatch.c_str());
        status = 1;
      }
      std::fflush(stdout);
    }

    MPI_Comm_free(&graph);
    for (int i = 0; i < t; ++i) {
      MPI_Type_free(&stypes[i]);
      MPI_Type_free(&rtypes[i]);
    }
    MPI_Comm_free(&cart);
  }
  // Every rank exits with rank 0's verdict, so mpirun reports it whichever rank it looks at.
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
