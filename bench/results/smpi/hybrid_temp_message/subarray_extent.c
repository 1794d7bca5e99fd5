/* subarray_extent.c: does MPI_Type_get_extent / MPI_Type_get_true_extent of a subarray datatype say
 * where the subarray's cells are? The MPI standard fixes a subarray type's lb at 0 and its extent at
 * the whole array (sizes x old extent); its true lb is the offset of its first cell. Each case builds
 * a subarray of doubles in a 10x10 array, receives 0, 1, 2... into it from MPI_BYTE (one process, to
 * itself) and prints the bounds MPI reports beside the cells that were written. Exit status 1 when
 * a reported true bound disagrees with the cells written.
 *
 *   smpicc -o subarray_extent_smpi subarray_extent.c && smpirun -np 1 -platform P.xml ./subarray_extent_smpi
 *   mpicc -o subarray_extent subarray_extent.c && mpirun -np 1 ./subarray_extent
 */
#include <mpi.h>
#include <stdio.h>

static int one_case(int sub0, int sub1, int start0, int start1) {
  int sizes[2] = {10, 10}, sub[2] = {sub0, sub1}, starts[2] = {start0, start1};
  MPI_Datatype t;
  MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
  MPI_Type_commit(&t);
  int size = 0;
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  MPI_Type_size(t, &size);
  MPI_Type_get_extent(t, &lb, &extent);
  MPI_Type_get_true_extent(t, &true_lb, &true_extent);
  double array[100], values[100];
  for (int i = 0; i < 100; ++i) array[i] = -1, values[i] = i;
  MPI_Sendrecv(values, size, MPI_BYTE, 0, 0, array, 1, t, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE);
  int first = -1, last = -1;
  for (int i = 0; i < 100; ++i)
    if (array[i] != -1) last = i, first = first < 0 ? i : first;
  const long written_lb = 8L * first, written_extent = 8L * (last + 1 - first);
  const int bad = written_lb != (long)true_lb || written_extent != (long)true_extent;
  printf("subarray %dx%d at (%d,%d): size %3d lb %ld extent %4ld true_lb %4ld true_extent %4ld | cells written: bytes %4ld..%4ld %s\n",
         sub0, sub1, start0, start1, size, (long)lb, (long)extent, (long)true_lb, (long)true_extent, written_lb,
         written_lb + written_extent, bad ? "WRONG true bounds" : "ok");
  MPI_Type_free(&t);
  return bad;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int bad = 0;
  bad |= one_case(1, 1, 0, 0);  /* a corner cell at the array's start */
  bad |= one_case(1, 1, 9, 0);  /* a corner cell elsewhere: what cartplan's halo corners are */
  bad |= one_case(1, 1, 4, 5);
  bad |= one_case(1, 8, 0, 1);  /* a row */
  bad |= one_case(8, 1, 1, 0);  /* a column */
  bad |= one_case(2, 2, 8, 8);
  MPI_Finalize();
  return bad;
}
