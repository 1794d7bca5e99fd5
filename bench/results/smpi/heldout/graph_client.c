/* Held-out graph client: every rank talks to r+-1, r+-3 and r+7 (mod p) (and hears from r-7),
   persistent Cart_graph_neighbor_alltoall (auto) and blocking allgather, data checked. */
#include <cartplan/cartplan_mpi.h>
#include <stdio.h>
#define M 16
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int p, r, bad = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p); MPI_Comm_rank(MPI_COMM_WORLD, &r);
  int d[5] = {(r + 1) % p, (r - 1 + p) % p, (r + 3) % p, (r - 3 + 3 * p) % p, (r + 7) % p};
  int s[5] = {(r - 1 + p) % p, (r + 1) % p, (r - 3 + 3 * p) % p, (r + 3) % p, (r - 7 + 7 * p) % p};
  MPI_Comm g;
  if (Cart_graph_comm_create_adjacent(MPI_COMM_WORLD, 5, s, 5, d, MPI_INFO_NULL, &g) != MPI_SUCCESS) { printf("create: %s\n", Cart_error_message()); return 1; }
  int sb[5 * M], rb[5 * M];
  Cart_Request q;
  if (Cart_graph_neighbor_alltoall_init(sb, M, MPI_INT, rb, M, MPI_INT, g, MPI_INFO_NULL, &q) != MPI_SUCCESS) { printf("init: %s\n", Cart_error_message()); return 1; }
  for (int it = 0; it < 3; ++it) {
    for (int k = 0; k < 5; ++k) for (int j = 0; j < M; ++j) sb[k * M + j] = r * 10000 + k * 100 + j + it;
    for (int k = 0; k < 5 * M; ++k) rb[k] = -1;
    Cart_start(&q); Cart_wait(&q);
    /* block j from source s[j]: s[j] sent its block k where d_k(s[j]) == r: the same index j */
    for (int k = 0; k < 5; ++k) for (int j = 0; j < M; ++j) if (rb[k * M + j] != s[k] * 10000 + k * 100 + j + it) ++bad;
  }
  Cart_request_free(&q);
  int mine[2] = {r, -r}, all[10];
  Cart_graph_neighbor_allgather(mine, 2, MPI_INT, all, 2, MPI_INT, g);
  for (int k = 0; k < 5; ++k) if (all[2 * k] != s[k] || all[2 * k + 1] != -s[k]) ++bad;
  int tot; MPI_Allreduce(&bad, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (r == 0) printf("graph: p %d %s (%d bad)\n", p, tot ? "FAILED" : "OK", tot);
  MPI_Comm_free(&g);
  MPI_Finalize();
  return tot != 0;
}
