/* halo_api: the halo API in C (docs/halo.md). A global 11 x 9 array of doubles over a 2x2 process
 * grid (run it on 4 ranks), periodic in the first dimension only, cut into blocks: the first
 * row of ranks owns 6 rows and the second 5, the first column 5 columns and the second 4, so
 * interiors differ between ranks (an uneven decomposition, as 11 and 9 cells over 2 ranks make
 * it). Each rank's array has ghost widths 2 (below) and 1 (above) in both dimensions, C order.
 * Cart_halo_create describes it once; Cart_halo_exchange and a persistent
 * Cart_halo_exchange_init request fill the ghost cells of the 8 regions (faces, edges, corners)
 * from the neighbours that exist. Every cell is checked: a ghost cell holds its source's value,
 * or -1 where the source is outside the mesh. Exit status 0 when every check passes; rank 0
 * prints "halo_api: OK".
 *
 *   mpicc -Wall -Werror docs/examples/halo_api.c $(pkg-config --cflags --libs cartplan) -o halo_api
 *   mpirun -np 4 ./halo_api
 */
#include <cartplan/cartplan_mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define LO 2
#define HI 1
static const int global[2] = {11, 9};

/* Block c of dimension k over 2 ranks: the first takes the odd cell. */
static int extent(int k, int c) { return global[k] / 2 + (c < global[k] % 2 ? 1 : 0); }

/* The value of interior cell (i, j) of rank r in round k. */
static double value(int r, int i, int j, int k) { return 10000.0 * r + 100.0 * i + j + 0.25 * k; }

static void fill(double* a, const int n[2], int me, int k) {
  const int e1 = LO + n[1] + HI;
  for (int x = 0; x < LO + n[0] + HI; ++x)
    for (int y = 0; y < e1; ++y) {
      const int i = x - LO, j = y - LO;
      a[x * e1 + y] = (i >= 0 && i < n[0] && j >= 0 && j < n[1]) ? value(me, i, j, k) : -1.0;
    }
}

/* Cells that do not hold what they must. Below the interior a ghost cell comes from the source's
 * cell i + its extent; above it, from cell i - this rank's extent. */
static int wrong_cells(const double* a, const int n[2], MPI_Comm cart, int me, int k) {
  int coords[2], dims[2], periods[2], wrong = 0;
  MPI_Cart_get(cart, 2, dims, periods, coords);
  const int e1 = LO + n[1] + HI;
  for (int x = 0; x < LO + n[0] + HI; ++x)
    for (int y = 0; y < e1; ++y) {
      const int i = x - LO, j = y - LO;
      const int s0 = i < 0 ? -1 : i >= n[0] ? 1 : 0, s1 = j < 0 ? -1 : j >= n[1] ? 1 : 0;
      int c[2] = {(coords[0] + s0 + dims[0]) % dims[0], coords[1] + s1};  /* dimension 0 is periodic, 1 is not */
      double want = -1.0;
      if (s0 == 0 && s1 == 0) {
        want = value(me, i, j, k);
      } else if (c[1] >= 0 && c[1] < dims[1]) {
        int src = 0;
        MPI_Cart_rank(cart, c, &src);
        const int si = s0 < 0 ? i + extent(0, c[0]) : i - s0 * n[0];
        const int sj = s1 < 0 ? j + extent(1, c[1]) : j - s1 * n[1];
        want = value(src, si, sj, k);
      }
      wrong += a[x * e1 + y] != want;
    }
  return wrong;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0, me = 0, failures = 0, total = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4) {
    fprintf(stderr, "halo_api: run me on 4 ranks, not %d\n", size);
    MPI_Finalize();
    return 2;
  }
  int dims[2] = {2, 2}, periods[2] = {1, 0}, coords[2];
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
  MPI_Comm_rank(cart, &me);
  MPI_Cart_coords(cart, me, 2, coords);

  const int n[2] = {extent(0, coords[0]), extent(1, coords[1])};  /* this rank's interior */
  const int ghost_lo[2] = {LO, LO}, ghost_hi[2] = {HI, HI};
  double* a = malloc(sizeof(double) * (LO + n[0] + HI) * (LO + n[1] + HI));
  Cart_Halo halo;
  if (!a || Cart_halo_create(cart, 2, n, ghost_lo, ghost_hi, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL, &halo) != MPI_SUCCESS) {
    fprintf(stderr, "halo_api: Cart_halo_create failed: %s\n", Cart_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  fill(a, n, me, 0);
  failures += Cart_halo_exchange(a, halo) != MPI_SUCCESS;
  failures += wrong_cells(a, n, cart, me, 0);

  Cart_Request req;
  failures += Cart_halo_exchange_init(a, halo, MPI_INFO_NULL, &req) != MPI_SUCCESS;
  for (int k = 1; k <= 5; ++k) {
    fill(a, n, me, k);  /* new interior values: the request reads them at each start */
    failures += Cart_start(&req) != MPI_SUCCESS;
    failures += Cart_wait(&req) != MPI_SUCCESS;
    failures += wrong_cells(a, n, cart, me, k);
  }
  Cart_request_free(&req);
  Cart_halo_free(&halo);
  free(a);

  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) printf(total == 0 ? "halo_api: OK\n" : "halo_api: %d failures\n", total);
  MPI_Comm_free(&cart);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
