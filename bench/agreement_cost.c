// Open MPI probe: MPI_Allreduce against MPI_Iallreduce + MPI_Wait of 20 int64 (MAX), the size of
// cartplan's agreements (Exchange::agree_allreduce), each after a barrier; rank 0's median and
// quartiles (docs/mpi-semantics.md, "Progress"). Not part of the Bazel build:
//   mpicc -O2 bench/agreement_cost.c -o /tmp/agreement_cost && mpirun --oversubscribe -np 2 /tmp/agreement_cost
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
static int cmp(const void* a, const void* b) { double x = *(const double*)a, y = *(const double*)b; return x < y ? -1 : x > y; }
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r; MPI_Comm_rank(MPI_COMM_WORLD, &r);
  enum { N = 2000 };
  static double ta[N], tb[N];
  long long in[20], out[20];
  for (int i = 0; i < 20; ++i) in[i] = r + i;
  for (int it = 0; it < N; ++it) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Allreduce(in, out, 20, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    MPI_Barrier(MPI_COMM_WORLD);
    double t2 = MPI_Wtime();
    MPI_Request q; MPI_Iallreduce(in, out, 20, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD, &q); MPI_Wait(&q, MPI_STATUS_IGNORE);
    double t3 = MPI_Wtime();
    ta[it] = t1 - t0; tb[it] = t3 - t2;
  }
  qsort(ta, N, sizeof(double), cmp); qsort(tb, N, sizeof(double), cmp);
  if (r == 0) printf("rank 0: MPI_Allreduce median %.2f us (q1 %.2f q3 %.2f), MPI_Iallreduce+MPI_Wait median %.2f us (q1 %.2f q3 %.2f), 20 int64 MAX, %d calls each\n",
                     ta[N/2]*1e6, ta[N/4]*1e6, ta[3*N/4]*1e6, tb[N/2]*1e6, tb[N/4]*1e6, tb[3*N/4]*1e6, N);
  MPI_Finalize();
}
