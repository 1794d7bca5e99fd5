// MPI_PROC_NULL in the lists of MPI_Dist_graph_create_adjacent (Open MPI 4.1 accepts it): the
// drop-in must pass such a communicator through on every rank (its detection vetoes it), never
// hang in it. Standard MPI only, run under plain Open MPI and with the drop-in preloaded.
//
// Each rank r of a ring has sources {r-1, MPI_PROC_NULL} and destinations {r+1, MPI_PROC_NULL};
// then rank 0 only lists MPI_PROC_NULL (the others {r-1} and {r+1}), so the veto must be agreed.
// The program creates the communicator, checks that the drop-in (when loaded) reports it not
// accelerated on every rank, duplicates and frees it. It makes no neighbourhood call: Open MPI
// 4.1's own MPI_Neighbor_alltoall crashes on such a communicator (docs/graphs-results.md, "What
// is not done").
//
//   proc_null_graph_test [--expect-dropin]
// --expect-dropin: the drop-in must be loaded (found with dlsym).
#include <dlfcn.h>
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <initializer_list>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, failures = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  bool expect_dropin = false;
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--expect-dropin")) expect_dropin = true;
  auto fail = [&](const char* what) {
    ++failures;
    std::fprintf(stderr, "proc_null_graph_test rank %d: FAILED: %s\n", rank, what);
  };
  using Flag = int (*)(MPI_Comm);
  auto interposed = reinterpret_cast<Flag>(dlsym(RTLD_DEFAULT, "CARTPLAN_Interposed"));
  if (expect_dropin && !interposed) fail("the drop-in is loaded (CARTPLAN_Interposed found)");
  // Every rank lists MPI_PROC_NULL, then rank 0 only: the veto must be agreed (ranks 1 and 2
  // alone would pass detection), so no rank is accelerated in either.
  for (const bool rank0_only : {false, true}) {
    const bool listed = !rank0_only || rank == 0;
    const int degree = listed ? 2 : 1;
    const int sources[2] = {(rank + size - 1) % size, MPI_PROC_NULL};
    const int destinations[2] = {(rank + 1) % size, MPI_PROC_NULL};
    MPI_Comm graph = MPI_COMM_NULL;
    if (MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, degree, sources, MPI_UNWEIGHTED, degree, destinations, MPI_UNWEIGHTED,
                                       MPI_INFO_NULL, 0, &graph) != MPI_SUCCESS)
      fail("MPI_Dist_graph_create_adjacent with MPI_PROC_NULL");
    int indegree = -1, outdegree = -1, weighted = -1;
    MPI_Dist_graph_neighbors_count(graph, &indegree, &outdegree, &weighted);
    if (indegree != degree || outdegree != degree) fail("MPI_Dist_graph_neighbors_count counts MPI_PROC_NULL");
    if (interposed && interposed(graph) != 0)
      fail(rank0_only ? "the drop-in passes a graph with MPI_PROC_NULL on rank 0 only through (on every rank)"
                      : "the drop-in passes a graph with MPI_PROC_NULL through");
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Comm_dup(graph, &dup);
    if (interposed && interposed(dup) != 0) fail("the drop-in passes its MPI_Comm_dup through");
    MPI_Comm_free(&dup);
    MPI_Comm_free(&graph);
  }
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("proc_null_graph_test: %s (%d failures, np %d)\n", all ? "FAILED" : "passed", all, size);
  MPI_Finalize();
  return all ? 1 : 0;
}
