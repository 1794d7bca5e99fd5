/* quickstart: the halo exchange of a 2-D stencil code on a 2x2 torus (run it on 4 ranks). Each
 * rank owns an 8x8 interior of doubles with one ghost layer; Cart_halo_create describes the array
 * once, a persistent exchange fills the ghost cells (faces, edges, corners) from the neighbours,
 * and every cell is checked against its global position. Errors abort the job
 * (MPI_ERRORS_ARE_FATAL, MPI's default), so return codes are not checked here. */
#include <cartplan/cartplan_mpi.h>
#include <stdio.h>

#define N 8           /* interior cells per dimension */
#define G 1           /* ghost width */
#define E (N + 2 * G) /* array extent */

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int dims[2] = {2, 2}, periods[2] = {1, 1}, me, c[2], bad = 0;
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  MPI_Comm_rank(cart, &me);
  MPI_Cart_coords(cart, me, 2, c);
  static double u[E][E]; /* an interior cell holds 100 x + y, (x, y) its position on the 16x16 torus */
  for (int i = 0; i < E; ++i)
    for (int j = 0; j < E; ++j)
      u[i][j] = i < G || i >= N + G || j < G || j >= N + G ? -1.0 : 100.0 * (c[0] * N + i - G) + (c[1] * N + j - G);

  int interior[2] = {N, N}, ghost[2] = {G, G};
  Cart_Halo halo;
  Cart_halo_create(cart, 2, interior, ghost, ghost, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL, &halo);
  Cart_Request req;
  Cart_halo_exchange_init(u, halo, MPI_INFO_NULL, &req); /* or Cart_halo_exchange(u, halo) each time */
  for (int it = 0; it < 10; ++it) {
    Cart_start(&req);
    /* here: update the interior cells that need no ghost cell */
    Cart_wait(&req);
  }
  for (int i = 0; i < E; ++i) /* every ghost cell now holds its global position's value too */
    for (int j = 0; j < E; ++j) {
      const int x = (c[0] * N + i - G + dims[0] * N) % (dims[0] * N), y = (c[1] * N + j - G + dims[1] * N) % (dims[1] * N);
      bad += u[i][j] != 100.0 * x + y;
    }
  Cart_request_free(&req);
  Cart_halo_free(&halo);
  MPI_Comm_free(&cart);

  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) printf("quickstart: %s\n", bad ? "FAILED" : "OK");
  MPI_Finalize();
  return bad != 0;
}
