// Cart_halo_create on a plain MPI_Cart_create communicator learns the ranks per node
// (backends/mpi/node_map.h) once, at creation, only when every rank's cost model prices
// placement (non-zero off_node_* / node_link terms, CARTPLAN_COST_MODEL here) and all ranks
// use the same one. The test counts the node learning's MPI_Comm_split_type calls by
// interposing PMPI_Comm_split_type (node_map.cc calls it through PMPI): one per creation with a
// placement model, none with the built-in one or with models that differ between ranks (there
// every rank must still finish creation alike, never hang), none per exchange. On this machine
// every rank shares one node, so the ranks per node agreed is 0 and the plan cannot change:
// the test checks that creation works, that every rank holds the same plan, and the data.
#include <dlfcn.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/mpi/harness.h"

namespace {

long split_types = 0;  // PMPI_Comm_split_type calls of this process

}  // namespace

// The library's PMPI_Comm_split_type resolves to this one (the executable's symbol comes first);
// it counts and forwards to Open MPI's.
extern "C" int PMPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm* out) {
  using Fn = int (*)(MPI_Comm, int, int, MPI_Info, MPI_Comm*);
  static Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "PMPI_Comm_split_type"));
  ++split_types;
  return real(comm, type, key, info, out);
}

namespace {

using cartplan::mpitest::Harness;

// A version-2 model with a placement term (off_node_beta_us_per_byte) if `placement`, for this
// rank; returns its path.
std::string write_model(Harness& h, bool placement) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp ? tmp : "/tmp") + "/halo_placement_" + std::to_string(h.rank) + (placement ? "_p" : "_n") + ".json";
  if (FILE* f = std::fopen(path.c_str(), "w")) {
    std::fprintf(f, R"({"schema": "cartplan.cost_model/2", "alpha_us": 0.8, "beta_us_per_byte": 0.0003, "phase_us": 1.0, )"
                    R"("copy_us_per_byte": 0.0001, "rendezvous_us": 3.0, "single_copy_us_per_byte": 0.0001, "pipeline_us": 0, )"
                    R"("pipeline_us_per_byte": 0, "off_node_alpha_us": 0, "off_node_beta_us_per_byte": %s, )"
                    R"("node_link_us_per_byte": 0, "eager_limit_bytes": 4096})",
                 placement ? "0.003" : "0");
    std::fclose(f);
  }
  return path;
}

// Creates a halo (2-D periodic grid, 4 x 3 interior, one ghost layer, Moore) on a plain
// MPI_Cart_create communicator, exchanges once and checks the ghost cells; returns the
// PMPI_Comm_split_type calls creation made (-1 if creation failed) and the rc in *rc.
long create_and_exchange(Harness& h, const std::string& what, int* rc) {
  int dims[2] = {0, 0}, periods[2] = {1, 1};
  MPI_Dims_create(h.size, 2, dims);
  MPI_Comm cart = MPI_COMM_NULL;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
  const int interior[2] = {4, 3}, ghost[2] = {1, 1}, w0 = 6, w1 = 5;
  Cart_Halo halo = CART_HALO_NULL;
  const long before = split_types;
  *rc = Cart_halo_create(cart, 2, interior, ghost, ghost, MPI_INT, MPI_ORDER_C, MPI_INFO_NULL, &halo);
  const long made = split_types - before;
  if (*rc != MPI_SUCCESS) {
    h.check(false, what + ": Cart_halo_create fails: " + Cart_error_message());
    MPI_Comm_free(&cart);
    return -1;
  }
  // The same plan on every rank: its JSON's length and a checksum, max and min agree.
  char* json = nullptr;
  long sum[2] = {0, 0};
  if (Cart_halo_plan(halo, &json) == MPI_SUCCESS && json) {
    for (const char* c = json; *c; ++c) sum[0] = sum[0] * 31 % 1000000007 + static_cast<unsigned char>(*c), ++sum[1];
    Cart_free_plan_json(json);
  }
  long mine[4] = {sum[0], -sum[0], sum[1], -sum[1]}, all[4];
  MPI_Allreduce(mine, all, 4, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  h.check(sum[1] > 0 && all[0] == -all[1] && all[2] == -all[3], what + ": every rank holds the same plan");
  // Cell (i, j) of rank r holds r * 1000 + i * 10 + j; a ghost cell its source's interior cell.
  std::vector<int> u(w0 * w1, -1);
  for (int i = 1; i <= 4; ++i)
    for (int j = 1; j <= 3; ++j) u[i * w1 + j] = h.rank * 1000 + i * 10 + j;
  const long exchange_before = split_types;
  h.check(Cart_halo_exchange(u.data(), halo) == MPI_SUCCESS, what + ": Cart_halo_exchange succeeds");
  h.check(split_types == exchange_before, what + ": no node learning per exchange");
  int coords[2];
  MPI_Cart_coords(cart, h.rank, 2, coords);
  bool right = true;
  for (int i = 0; i < w0; ++i)
    for (int j = 0; j < w1; ++j) {
      const int di = i == 0 ? -1 : i == w0 - 1 ? 1 : 0, dj = j == 0 ? -1 : j == w1 - 1 ? 1 : 0;
      if (di == 0 && dj == 0) continue;
      int c[2] = {coords[0] + di, coords[1] + dj}, src = 0;
      MPI_Cart_rank(cart, c, &src);
      const int si = di == -1 ? 4 : di == 1 ? 1 : i, sj = dj == -1 ? 3 : dj == 1 ? 1 : j;
      right = right && u[i * w1 + j] == src * 1000 + si * 10 + sj;
    }
  h.check(right, what + ": every ghost cell holds its source's cell");
  Cart_halo_free(&halo);
  MPI_Comm_free(&cart);
  return made;
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  int rc = MPI_SUCCESS;
  unsetenv("CARTPLAN_COST_MODEL");
  const char* tmp = std::getenv("TEST_TMPDIR");
  setenv("XDG_CONFIG_HOME", (std::string(tmp ? tmp : "/tmp") + "/halo_placement_no_config").c_str(), 1);  // no calibration found
  long made = create_and_exchange(h, "built-in model", &rc);
  h.check(rc == MPI_SUCCESS && made == 0, "built-in model: creation works and learns no nodes (" + std::to_string(made) + " splits)");
  setenv("CARTPLAN_COST_MODEL", write_model(h, false).c_str(), 1);
  made = create_and_exchange(h, "model without placement terms", &rc);
  h.check(rc == MPI_SUCCESS && made == 0, "model without placement terms: no node learning (" + std::to_string(made) + ")");
  setenv("CARTPLAN_COST_MODEL", write_model(h, true).c_str(), 1);
  made = create_and_exchange(h, "placement model", &rc);
  h.check(rc == MPI_SUCCESS && made == 1, "placement model: creation learns the nodes once (" + std::to_string(made) + " splits)");
  // Rank 0 alone prices placement: no rank learns nodes (that would be a collective the others
  // never join); creation ends alike on every rank, success or the agreed error of different plans.
  if (h.size > 1) {
    setenv("CARTPLAN_COST_MODEL", write_model(h, h.rank == 0).c_str(), 1);
    made = create_and_exchange(h, "placement model on rank 0 only", &rc);
    const int failed = rc == MPI_SUCCESS ? 0 : 1;
    int mine[2] = {failed, -failed}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    h.check(all[0] == -all[1], "placement model on rank 0 only: every rank ends creation alike");
    h.check(made <= 0, "placement model on rank 0 only: no node learning (" + std::to_string(made) + ")");
  }
  unsetenv("CARTPLAN_COST_MODEL");
  return h.finish("halo_placement_test");
}
