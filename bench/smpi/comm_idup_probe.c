// SMPI probe: which non-blocking collectives a progressing wait can use (docs/smpi.md, "SMPI
// quirks"; backends/mpi/progressing_wait.h). `idup`: rank 0 starts MPI_Comm_idup, then sends to
// rank 1, which starts its own only after receiving; completes only if MPI_Comm_idup returns before
// every rank joined (SMPI 3.32 aborts in it: "Not yet implemented"). `barrier`: the same with
// MPI_Ibarrier, then MPI_Comm_dup, then an MPI_Ibcast likewise. Not part of the build:
//   smpicc bench/smpi/comm_idup_probe.c -o /tmp/idup_probe && smpirun -np 4 -platform \
//     bench/smpi/platforms/fattree_p64.xml -hostfile bench/smpi/platforms/fattree_p64.hosts /tmp/idup_probe idup|barrier
#include <mpi.h>
#include <stdio.h>
#include <string.h>

// Rank 0 starts `start` on MPI_COMM_WORLD (or `dup`), sends rank 1 a word, then tests until done;
// rank 1 receives the word before it starts; the others start at once.
static int late_peer(int r, int which, MPI_Comm* dup, int* b, int tag) {
  MPI_Request q;
  int x = 5, done = 0, tests = 0;
  if (r == 1) MPI_Recv(&x, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (which == 0) MPI_Comm_idup(MPI_COMM_WORLD, dup, &q);
  else if (which == 1) MPI_Ibarrier(MPI_COMM_WORLD, &q);
  else MPI_Ibcast(b, 1, MPI_INT, 0, *dup, &q);
  if (r == 0) MPI_Send(&x, 1, MPI_INT, 1, tag, MPI_COMM_WORLD);
  while (!done) {
    MPI_Test(&q, &done, MPI_STATUS_IGNORE);
    ++tests;
  }
  return tests;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r, p, b = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm dup = MPI_COMM_NULL;
  const int idup = argc > 1 && strcmp(argv[1], "idup") == 0;
  if (idup) {
    const int tests = late_peer(r, 0, &dup, &b, 0);
    if (r == 0) printf("MPI_Comm_idup returned before rank 1 joined; rank 0 tested %d times\n", tests);
  } else {
    const int tests = late_peer(r, 1, &dup, &b, 0);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    if (r == 0) b = 42;
    const int btests = late_peer(r, 2, &dup, &b, 1);
    int sum = 0;
    MPI_Allreduce(&b, &sum, 1, MPI_INT, MPI_SUM, dup);
    if (r == 0) printf("MPI_Ibarrier and MPI_Ibcast returned before rank 1 joined (tested %d and %d times); bcast sum %d of %d\n", tests, btests, sum, 42 * p);
  }
  MPI_Comm_free(&dup);
  MPI_Finalize();
  return 0;
}
