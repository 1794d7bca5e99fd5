/* quickstart: every rank of a 2x2 torus (run it on 4 ranks) sends one int to each of its four
 * neighbours with a persistent Cart_alltoall and checks what arrives. Errors abort the job
 * (MPI_ERRORS_ARE_FATAL, MPI's default), so return codes are not checked here. */
#include <cartplan/cartplan_mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int dims[2] = {2, 2}, periods[2] = {1, 1};
  int offsets[4 * 2] = {1, 0, -1, 0, 0, 1, 0, -1}; /* the 4 von Neumann neighbours */
  MPI_Comm cart;
  Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, 4, offsets, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &cart);
  int me, send[4], recv[4], bad = 0;
  MPI_Comm_rank(cart, &me);
  for (int i = 0; i < 4; ++i) send[i] = 100 * me + i; /* block i goes to +offset[i] */

  Cart_Request req;
  Cart_alltoall_init(send, 1, MPI_INT, recv, 1, MPI_INT, cart, MPI_INFO_NULL, &req);
  for (int it = 0; it < 10; ++it) {
    Cart_start(&req);
    Cart_wait(&req);
  }
  for (int i = 0; i < 4; ++i) { /* block i came from -offset[i] */
    int from[2] = {-offsets[2 * i], -offsets[2 * i + 1]}, src;
    Cart_relative_rank(cart, from, &src);
    bad += recv[i] != 100 * src + i;
  }
  Cart_request_free(&req);
  MPI_Comm_free(&cart);

  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) printf("quickstart: %s\n", bad ? "FAILED" : "OK");
  MPI_Finalize();
  return bad != 0;
}
