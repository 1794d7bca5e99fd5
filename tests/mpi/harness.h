// A tiny harness for tests that run under mpirun: checks are counted per rank, failures are
// printed with the rank, and the program's exit status says whether any rank failed.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"

namespace cartplan::mpitest {

// This process's resident memory in kB (VmRSS), or -1: how the soak and persistent tests see
// whether repeated work leaks.
inline long resident_kb() {
  FILE* f = std::fopen("/proc/self/status", "r");
  long kb = -1;
  char line[256];
  while (f && std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "VmRSS:", 6) == 0) kb = std::atol(line + 6);
  if (f) std::fclose(f);
  return kb;
}

struct Harness {
  int rank = 0, size = 1, provided = MPI_THREAD_SINGLE;
  long checks = 0, failures = 0;

  // required: an MPI thread level for MPI_Init_thread, or -1 for plain MPI_Init.
  Harness(int* argc, char*** argv, int required = -1) {
    if (required < 0) {
      MPI_Init(argc, argv);
    } else {
      MPI_Init_thread(argc, argv, required, &provided);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  }

  // Safe to call from several threads (checks of the threads test).
  void check(bool ok, const std::string& what) {
    __atomic_add_fetch(&checks, 1, __ATOMIC_RELAXED);
    if (ok) return;
    if (__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED) <= 20) std::fprintf(stderr, "[rank %d] FAILED: %s\n", rank, what.c_str());
  }

  // Ends the test: every rank learns whether any rank failed; rank 0 prints the summary.
  int finish(const char* name) {
    long totals[2] = {checks, failures}, sums[2] = {0, 0};
    MPI_Allreduce(totals, sums, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
      std::printf("%s on %d ranks: %ld checks, %ld failed\n", name, size, sums[0], sums[1]);
    MPI_Finalize();
    return sums[1] == 0 ? 0 : 1;
  }
};

// MPI's error class of a return code (MPI_SUCCESS stays MPI_SUCCESS).
inline int error_class(int rc) {
  int cls = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  return cls;
}

// Whether every rank of MPI_COMM_WORLD passed the same v (collective: two MPI_Allreduce).
inline bool same_everywhere(int v) {
  int lo = 0, hi = 0;
  MPI_Allreduce(&v, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&v, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

// Writes this rank's cost model file (cartplan.cost_model/1 with alpha_us, beta_us_per_byte) as
// <TEST_TMPDIR or /tmp>/<stem>_<rank>.json and returns its path, for CARTPLAN_COST_MODEL.
inline std::string write_cost_model(int rank, const std::string& stem, double alpha_us, double beta_us_per_byte) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir && *dir ? dir : "/tmp") + "/" + stem + "_" + std::to_string(rank) + ".json";
  if (FILE* f = std::fopen(path.c_str(), "w")) {
    std::fprintf(f, "{\"schema\": \"cartplan.cost_model/1\", \"alpha_us\": %g, \"beta_us_per_byte\": %g}\n", alpha_us, beta_us_per_byte);
    std::fclose(f);
  }
  return path;
}

// A cartplan communicator for a test case with Info cartplan_algorithm = `algo`; aborts the job
// (with cartplan's message) if creation fails, since nothing after it could be checked.
// `struct_min_bytes`, if given: Info cartplan_struct_min_bytes ("0": every message of several
// parts by struct datatype, "-1": always packed).
inline MPI_Comm open_cart(int d, const std::vector<int>& dims, const std::vector<int>& periods, int t,
                          const std::vector<int>& offsets, const char* algo, const char* struct_min_bytes = nullptr) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", algo);
  if (struct_min_bytes) MPI_Info_set(info, "cartplan_struct_min_bytes", struct_min_bytes);
  MPI_Comm cart = MPI_COMM_NULL;
  const int rc = Cart_neighborhood_create(MPI_COMM_WORLD, d, dims.data(), periods.data(), t, offsets.data(), MPI_UNWEIGHTED,
                                          info, 0, &cart);
  MPI_Info_free(&info);
  if (rc != MPI_SUCCESS) {
    std::fprintf(stderr, "Cart_neighborhood_create failed: %s\n", Cart_error_message());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return cart;
}

// A plain MPI Cartesian communicator over MPI_COMM_WORLD, 2-D (grid from MPI_Dims_create),
// periodic in each dimension where periods[i] is 1 (default: a torus), no cartplan Info.
inline MPI_Comm open_plain_cart2(int size, const int periods[2] = nullptr) {
  int dims[2] = {0, 0};
  const int torus[2] = {1, 1};
  MPI_Dims_create(size, 2, dims);
  MPI_Comm cart = MPI_COMM_NULL;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods ? periods : torus, 0, &cart);
  return cart;
}

// A cartplan communicator of the periodic 2-D Moore torus over MPI_COMM_WORLD (grid from
// MPI_Dims_create) in checking mode (Info cartplan_check=collective); MPI_COMM_NULL if creation
// fails, for the caller to report.
inline MPI_Comm open_checking_moore(int size) {
  int dims[2] = {0, 0}, periods[2] = {1, 1}, offsets[16], n = 0;
  MPI_Dims_create(size, 2, dims);
  for (int a = -1; a <= 1; ++a)
    for (int b = -1; b <= 1; ++b)
      if (a || b) offsets[n++] = a, offsets[n++] = b;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_check", "collective");
  MPI_Comm cart = MPI_COMM_NULL;
  if (Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, 8, offsets, MPI_UNWEIGHTED, info, 0, &cart) != MPI_SUCCESS)
    cart = MPI_COMM_NULL;
  MPI_Info_free(&info);
  return cart;
}

// A distributed graph over MPI_COMM_WORLD of the periodic 2-D Moore torus (grid from
// MPI_Dims_create, named to the drop-in by the Info hints cartplan_dims / cartplan_periods), as
// a plain MPI program builds it; *sources: the source of each of the 8 blocks, in order.
inline MPI_Comm open_moore_graph(int rank, int size, std::vector<int>* sources) {
  int dims[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  const int x = rank / dims[1], y = rank % dims[1];
  auto at = [&](int dx, int dy) { return ((x + dx + dims[0]) % dims[0]) * dims[1] + (y + dy + dims[1]) % dims[1]; };
  std::vector<int> dests;
  sources->clear();
  for (int dx = -1; dx <= 1; ++dx)
    for (int dy = -1; dy <= 1; ++dy)
      if (dx || dy) {
        dests.push_back(at(dx, dy));
        sources->push_back(at(-dx, -dy));
      }
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_dims", (std::to_string(dims[0]) + "," + std::to_string(dims[1])).c_str());
  MPI_Info_set(info, "cartplan_periods", "1,1");
  MPI_Comm graph = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 8, sources->data(), MPI_UNWEIGHTED, 8, dests.data(), MPI_UNWEIGHTED, info, 0,
                                 &graph);
  MPI_Info_free(&info);
  return graph;
}

}  // namespace cartplan::mpitest
