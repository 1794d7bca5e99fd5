// SMPI probe: one MPI_Allreduce and one MPI_Iallreduce (+ MPI_Wait) of one int, each after a
// barrier, timed as the slowest rank (docs/smpi.md, "SMPI quirks"). Not part of the build:
//   smpicc bench/smpi/iallreduce_probe.c -o /tmp/probe && smpirun -np 256 -platform \
//     bench/smpi/platforms/fattree_p4096.xml -hostfile bench/smpi/platforms/fattree_p4096.hosts /tmp/probe
#include <mpi.h>
#include <stdio.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r, p; MPI_Comm_rank(MPI_COMM_WORLD, &r); MPI_Comm_size(MPI_COMM_WORLD, &p);
  int in = r, out = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  double t1 = MPI_Wtime();
  MPI_Barrier(MPI_COMM_WORLD);
  double t2 = MPI_Wtime();
  MPI_Request q; MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &q); MPI_Wait(&q, MPI_STATUS_IGNORE);
  double t3 = MPI_Wtime();
  double a = t1 - t0, b = t3 - t2, ma, mb;
  MPI_Reduce(&a, &ma, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&b, &mb, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (r == 0) printf("p %d allreduce %.1f us iallreduce %.1f us (out %d)\n", p, ma * 1e6, mb * 1e6, out);
  MPI_Finalize();
}
