// The first calls on an MPI_Comm_idup duplicate of a distributed graph that is not a stencil
// (issue 34: the drop-in must never hang a correct program). Standard MPI only: run under plain
// Open MPI (the program is correct) and with the drop-in preloaded.
//
// Ranks 0..np-2 form an irregular graph (rank r sends to r+1 and, if r is even, to r+2, modulo
// np-1); rank np-1 has no edges. After MPI_Comm_idup + MPI_Wait, rank np-1 blocks in MPI_Recv from
// rank 0, which first makes a blocking MPI_Neighbor_allgather (then MPI_Neighbor_alltoall) on the
// duplicate and only then sends. Plain MPI completes: no neighbourhood call waits for rank np-1.
// A drop-in that ran a global collective in that first call (set-up of the duplicate's state)
// would wait for rank np-1 forever. The same with a persistent request (every rank inits first,
// then rank np-1 receives before its MPI_Start), on an MPI_Comm_idup of an MPI_Comm_dup. Then a
// second MPI_Comm_idup of the graph and an MPI_Comm_idup of the duplicate (the drop-in passes
// their calls through). Every result is checked against the senders' rank-dependent data.
//
//   idup_graph_test [--expect-accelerated]
// --expect-accelerated: the drop-in must be loaded (found with dlsym) and must have run the
// calls on the first duplicates through cartplan, on every rank (CARTPLAN_Accelerated_calls,
// CARTPLAN_Graph_collectives), and passed the last two duplicates' calls through.
#include <dlfcn.h>
#include <mpi.h>
#include <mpi-ext.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

struct Test {
  int rank = 0, size = 0, failures = 0;
  bool expect_accelerated = false;
  std::vector<int> sources, destinations;

  void check(bool ok, const std::string& what) {
    if (ok) return;
    ++failures;
    std::fprintf(stderr, "idup_graph_test rank %d: FAILED: %s\n", rank, what.c_str());
  }
  int isolated() const { return size - 1; }
};

void make_edges(Test& t) {
  const int m = t.size - 1;  // ranks with edges
  if (t.rank == t.isolated()) return;
  auto outs = [m](int r) {
    std::vector<int> d{(r + 1) % m};
    if (r % 2 == 0 && (r + 2) % m != r && (r + 2) % m != (r + 1) % m) d.push_back((r + 2) % m);
    if (d[0] == r) d.clear();  // m = 1: no self edge
    return d;
  };
  t.destinations = outs(t.rank);
  for (int r = 0; r < m; ++r)
    for (int d : outs(r))
      if (d == t.rank) t.sources.push_back(r);
}

int value(int from, int block, int call) { return 100000 * call + 1000 * from + block; }

// One neighbourhood call on `comm` (`gather`: allgather, else alltoall) of one int per block.
struct Call {
  bool gather;
  int id;
  std::vector<int> send, recv;
};

Call make_call(const Test& t, bool gather, int id) {
  Call c{gather, id, {}, {}};
  const std::size_t blocks = gather ? 1 : t.destinations.size();
  for (std::size_t k = 0; k < std::max<std::size_t>(blocks, 1); ++k) c.send.push_back(value(t.rank, gather ? 0 : static_cast<int>(k), id));
  c.recv.assign(std::max<std::size_t>(t.sources.size(), 1), -1);
  return c;
}

// Block j comes from sources[j]: its block 0 (allgather), or the block it sends to this rank
// (alltoall: the position of this rank in the source's destinations; one edge each way here).
void check_call(Test& t, const Call& c, const std::string& what) {
  bool ok = true;
  for (std::size_t j = 0; j < t.sources.size(); ++j) {
    int block = 0;
    if (!c.gather) {
      const int m = t.size - 1, s = t.sources[j];
      block = (s + 1) % m == t.rank ? 0 : 1;
    }
    ok = ok && c.recv[j] == value(t.sources[j], block, c.id);
  }
  t.check(ok, what + ": every block equals its sender's data");
}

int blocking(Call& c, MPI_Comm comm) {
  return c.gather ? MPI_Neighbor_allgather(c.send.data(), 1, MPI_INT, c.recv.data(), 1, MPI_INT, comm)
                  : MPI_Neighbor_alltoall(c.send.data(), 1, MPI_INT, c.recv.data(), 1, MPI_INT, comm);
}

// Rank 0 makes the call on the duplicate, then sends to the rank without edges, which received
// first: a call that waited for every rank would never return on rank 0.
void recv_pattern(Test& t, MPI_Comm comm, const std::function<int()>& call, const std::string& what) {
  int token = 7, rc = MPI_SUCCESS;
  if (t.rank == t.isolated()) rc |= MPI_Recv(&token, 1, MPI_INT, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  rc |= call();
  if (t.rank == 0) rc |= MPI_Send(&token, 1, MPI_INT, t.isolated(), 11, MPI_COMM_WORLD);
  t.check(rc == MPI_SUCCESS, what + ": no error");
  (void)comm;
}

using Count = long (*)(MPI_Comm);
using Flag = int (*)(MPI_Comm);

// The calls the drop-in ran on `comm` (the same on every rank), or -2 without the drop-in.
long accelerated(Test& t, MPI_Comm comm, const std::string& what) {
  auto count = reinterpret_cast<Count>(dlsym(RTLD_DEFAULT, "CARTPLAN_Accelerated_calls"));
  auto graph = reinterpret_cast<Flag>(dlsym(RTLD_DEFAULT, "CARTPLAN_Graph_collectives"));
  if (!count || !graph) return -2;
  const long mine = count(comm);
  long lo = 0, hi = 0;
  MPI_Allreduce(&mine, &lo, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &hi, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  t.check(lo == hi, what + ": every rank ran the same calls through cartplan");
  if (t.expect_accelerated) t.check(graph(comm) == 1, what + ": cartplan's graph collectives took the graph");
  return mine;
}

MPI_Comm idup(MPI_Comm comm) {
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Comm_idup(comm, &dup, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  return dup;
}

void run_blocking(Test& t, MPI_Comm graph) {
  MPI_Comm dup = idup(graph);
  int id = 1;
  for (bool gather : {true, false}) {
    Call c = make_call(t, gather, id++);
    const std::string what = std::string("MPI_Comm_idup, then blocking ") + (gather ? "allgather" : "alltoall");
    recv_pattern(t, dup, [&] { return blocking(c, dup); }, what);
    check_call(t, c, what);
  }
  const long ran = accelerated(t, dup, "MPI_Comm_idup's blocking calls");
  if (t.expect_accelerated) t.check(ran == 2, "MPI_Comm_idup's blocking calls ran through cartplan (" + std::to_string(ran) + " of 2)");
  // An MPI_Comm_idup of this duplicate: it has no spare communicators, its calls pass through.
  MPI_Comm again = idup(dup);
  Call c = make_call(t, false, id++);
  recv_pattern(t, again, [&] { return blocking(c, again); }, "MPI_Comm_idup of an MPI_Comm_idup duplicate");
  check_call(t, c, "MPI_Comm_idup of an MPI_Comm_idup duplicate");
  if (t.expect_accelerated) t.check(accelerated(t, again, "idup of idup") == 0, "MPI_Comm_idup of an idup duplicate: passed through");
  MPI_Comm_free(&again);
  MPI_Comm_free(&dup);
}

// Every rank inits first (cartplan agrees at init); the rank without edges then receives before
// its MPI_Start while rank 0 starts, waits and sends.
void run_persistent(Test& t, MPI_Comm graph) {
  MPI_Comm mid = MPI_COMM_NULL;
  MPI_Comm_dup(graph, &mid);
  MPI_Comm dup = idup(mid);
  int id = 10;
  for (bool gather : {true, false}) {
    Call c = make_call(t, gather, id++);
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = gather ? MPIX_Neighbor_allgather_init(c.send.data(), 1, MPI_INT, c.recv.data(), 1, MPI_INT, dup, MPI_INFO_NULL, &r)
                    : MPIX_Neighbor_alltoall_init(c.send.data(), 1, MPI_INT, c.recv.data(), 1, MPI_INT, dup, MPI_INFO_NULL, &r);
    const std::string what = std::string("MPI_Comm_idup of MPI_Comm_dup, then persistent ") + (gather ? "allgather" : "alltoall");
    recv_pattern(t, dup, [&] {
      const int started = MPI_Start(&r);
      return started | MPI_Wait(&r, MPI_STATUS_IGNORE);
    }, what);
    rc |= MPI_Request_free(&r);
    t.check(rc == MPI_SUCCESS, what + ": init and free without error");
    check_call(t, c, what);
  }
  const long ran = accelerated(t, dup, "MPI_Comm_idup's persistent inits");
  if (t.expect_accelerated) t.check(ran == 2, "MPI_Comm_idup's persistent inits ran through cartplan (" + std::to_string(ran) + " of 2)");
  MPI_Comm_free(&dup);
  MPI_Comm_free(&mid);
}

// A second MPI_Comm_idup of the graph: its spare communicators went to the first; passed through.
void run_second_idup(Test& t, MPI_Comm graph) {
  MPI_Comm dup = idup(graph);
  Call c = make_call(t, true, 20);
  recv_pattern(t, dup, [&] { return blocking(c, dup); }, "a second MPI_Comm_idup");
  check_call(t, c, "a second MPI_Comm_idup");
  if (t.expect_accelerated) t.check(accelerated(t, dup, "second idup") == 0, "a second MPI_Comm_idup of the graph: passed through");
  MPI_Comm_free(&dup);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Test t;
  MPI_Comm_rank(MPI_COMM_WORLD, &t.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &t.size);
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--expect-accelerated")) t.expect_accelerated = true;
  if (t.expect_accelerated && !dlsym(RTLD_DEFAULT, "CARTPLAN_Accelerated_calls")) t.check(false, "the drop-in is loaded");
  if (t.size < 3) {
    if (t.rank == 0) std::fprintf(stderr, "idup_graph_test: needs at least 3 ranks\n");
    MPI_Finalize();
    return 1;
  }
  make_edges(t);
  MPI_Comm graph = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(t.sources.size()), t.sources.data(), MPI_UNWEIGHTED,
                                 static_cast<int>(t.destinations.size()), t.destinations.data(), MPI_UNWEIGHTED, MPI_INFO_NULL,
                                 0, &graph);
  run_blocking(t, graph);
  run_persistent(t, graph);
  run_second_idup(t, graph);
  MPI_Comm_free(&graph);
  int failures = 0;
  MPI_Allreduce(&t.failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (t.rank == 0) std::printf("idup_graph_test: %s (%d failures, np %d)\n", failures ? "FAILED" : "passed", failures, t.size);
  MPI_Finalize();
  return failures ? 1 : 0;
}
