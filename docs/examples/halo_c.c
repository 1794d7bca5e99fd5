/* halo_c: a C example (docs/api.md). A 2x2 periodic process grid (run it on 4 ranks) with the
 * 8-neighbour (Moore) stencil: every rank sends block i (COUNT ints) to its neighbour at
 * +offset[i] with a persistent Cart_alltoall, receives block i from -offset[i] into a separate
 * buffer, and checks every received value. Exit status 0 when every check passes.
 *
 *   mpicc -Wall -Werror docs/examples/halo_c.c $(pkg-config --cflags --libs cartplan) -o halo_c
 *   mpirun -np 4 ./halo_c
 */
#include <cartplan/cartplan_mpi.h>
#include <stdio.h>

#define T 8     /* neighbours */
#define COUNT 3 /* ints per block */

/* What rank r sends in block i, position j: different for every rank, block and position. */
static int value(int r, int i, int j) { return 1000 * r + 10 * i + j; }

static int check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) fprintf(stderr, "halo_c: %s failed: %s\n", what, Cart_error_message());
  return rc != MPI_SUCCESS;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0, failures = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4) {
    fprintf(stderr, "halo_c: run me on 4 ranks (mpirun -np 4), not %d\n", size);
    MPI_Finalize();
    return 2;
  }

  int dims[2] = {2, 2}, periods[2] = {1, 1};
  int offsets[2 * T] = {-1, -1, -1, 0, -1, 1, 0, -1, 0, 1, 1, -1, 1, 0, 1, 1};
  MPI_Comm cart;
  if (check(Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, T, offsets, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &cart),
            "Cart_neighborhood_create")) {
    MPI_Finalize();
    return 1;
  }
  int me = 0;
  MPI_Comm_rank(cart, &me);

  int sendbuf[T * COUNT], recvbuf[T * COUNT];
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < COUNT; ++j) sendbuf[i * COUNT + j] = value(me, i, j);

  Cart_Request req;
  failures += check(Cart_alltoall_init(sendbuf, COUNT, MPI_INT, recvbuf, COUNT, MPI_INT, cart, MPI_INFO_NULL, &req),
                    "Cart_alltoall_init");
  for (int it = 0; it < 3 && !failures; ++it) {
    for (int k = 0; k < T * COUNT; ++k) recvbuf[k] = -1;
    failures += check(Cart_start(&req), "Cart_start");
    failures += check(Cart_wait(&req), "Cart_wait");
    /* Block i came from the process at -offset[i]. */
    for (int i = 0; i < T; ++i) {
      int from[2] = {-offsets[2 * i], -offsets[2 * i + 1]}, src = MPI_PROC_NULL;
      failures += check(Cart_relative_rank(cart, from, &src), "Cart_relative_rank");
      for (int j = 0; j < COUNT; ++j)
        if (recvbuf[i * COUNT + j] != value(src, i, j)) {
          fprintf(stderr, "halo_c: rank %d block %d[%d] = %d, expected %d\n", me, i, j, recvbuf[i * COUNT + j], value(src, i, j));
          ++failures;
        }
    }
  }
  failures += check(Cart_request_free(&req), "Cart_request_free");
  MPI_Comm_free(&cart);

  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) printf("halo_c: %s\n", total == 0 ? "OK" : "FAILED");
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
