// The first calls on an MPI_Comm_idup duplicate of a distributed graph that is not a stencil,
// or (--stencil) of one that is (issue 34: the drop-in must never hang a correct program).
// Standard MPI only: run under plain Open MPI (the program is correct) and with the drop-in
// preloaded.
//
// Ranks 0..np-2 form an irregular graph (rank r sends to r+1 and, if r is even, to r+2, modulo
// np-1); rank np-1 has no edges. After MPI_Comm_idup + MPI_Wait, rank np-1 blocks in MPI_Recv from
// rank 0, which first makes a blocking MPI_Neighbor_allgather (then MPI_Neighbor_alltoall) on the
// duplicate and only then sends. Plain MPI completes: no neighbourhood call waits for rank np-1.
// A drop-in that ran a global collective in that first call (set-up of the duplicate's state)
// would wait for rank np-1 forever. The same with a persistent request (every rank inits first,
// then rank np-1 receives before its MPI_Start), on an MPI_Comm_idup of an MPI_Comm_dup. Then a
// second MPI_Comm_idup of the graph and an MPI_Comm_idup of the duplicate (the drop-in passes
// their calls through). Non-blocking first calls on an MPI_Comm_idup of an MPI_Comm_dup (rank 0
// completes it by polling): rank 0 starts MPI_Ineighbor_* and only then enters an MPI_Comm_dup of
// MPI_COMM_WORLD, where the other ranks already are (they start theirs after it); a drop-in that
// waited in that call for an internal MPI_Comm_idup would wait for peers whose context-id
// allocation on MPI_COMM_WORLD (a lower id) may keep Open MPI from progressing it (docs/dropin.md:
// the drop-in's old stencil path did not hang on it here). Every result is checked against the
// senders' rank-dependent data.
//
// --stencil: a periodic 2-D grid (MPI_Dims_create, MPI_Cart_create) and the Moore stencil's
// eight offsets on every rank, as a distributed graph the drop-in reads as a stencil. Every rank
// has neighbours, so the blocking and persistent calls run in lockstep (no rank receives first).
//
//   idup_graph_test [--stencil] [--expect-accelerated]
// --expect-accelerated: the drop-in must be loaded (found with dlsym) and must have run the
// calls on the first duplicates through cartplan, on every rank (CARTPLAN_Accelerated_calls,
// CARTPLAN_Graph_collectives: 1 for a graph, 0 for a stencil), and passed the last two
// duplicates' calls through (a graph's are registered with no call run, a stencil's are not
// registered at all).
#include <dlfcn.h>
#include <unistd.h>
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
  bool expect_accelerated = false, stencil = false;
  std::vector<int> sources, destinations;

  void check(bool ok, const std::string& what) {
    if (ok) return;
    ++failures;
    std::fprintf(stderr, "idup_graph_test rank %d: FAILED: %s\n", rank, what.c_str());
  }
  int isolated() const { return stencil ? -1 : size - 1; }  // -1: none
  long passed_through() const { return stencil ? -1 : 0; }      // CARTPLAN_Accelerated_calls of a passed-through duplicate
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

// Moore stencil on a periodic 2-D grid: destination k is this rank's coordinates + offset k,
// source k the coordinates - offset k (duplicates where a dimension has fewer than 3 ranks).
void make_stencil(Test& t) {
  int dims[2] = {0, 0}, periods[2] = {1, 1}, me[2] = {0, 0};
  MPI_Dims_create(t.size, 2, dims);
  MPI_Comm cart = MPI_COMM_NULL;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  MPI_Cart_coords(cart, t.rank, 2, me);
  for (int dx = -1; dx <= 1; ++dx)
    for (int dy = -1; dy <= 1; ++dy) {
      if (!dx && !dy) continue;
      int to[2] = {me[0] + dx, me[1] + dy}, from[2] = {me[0] - dx, me[1] - dy}, r = 0;
      MPI_Cart_rank(cart, to, &r);
      t.destinations.push_back(r);
      MPI_Cart_rank(cart, from, &r);
      t.sources.push_back(r);
    }
  MPI_Comm_free(&cart);
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
    if (!c.gather && t.stencil) {
      block = static_cast<int>(j);  // source j sends its block j (the same offset; duplicates match in order)
    } else if (!c.gather) {
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
  if (t.isolated() >= 0 && t.rank == t.isolated()) rc |= MPI_Recv(&token, 1, MPI_INT, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  rc |= call();
  if (t.isolated() >= 0 && t.rank == 0) rc |= MPI_Send(&token, 1, MPI_INT, t.isolated(), 11, MPI_COMM_WORLD);
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
  if (t.expect_accelerated)
    t.check(graph(comm) == (t.stencil ? 0 : 1), what + (t.stencil ? ": a stencil, not graph collectives" : ": cartplan's graph collectives took the graph"));
  return mine;
}

// MPI_Comm_idup, completed with MPI_Wait or (`poll`) with MPI_Test every 2 ms: then MPI
// progresses on this rank only inside those tests, and the others may return from their
// MPI_Wait while anything else MPI_Comm_idup started here is still in flight.
MPI_Comm idup(MPI_Comm comm, bool poll = false) {
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Comm_idup(comm, &dup, &r);
  for (int done = 0; poll && !done; usleep(2000)) MPI_Test(&r, &done, MPI_STATUS_IGNORE);
  MPI_Wait(&r, MPI_STATUS_IGNORE);  // MPI_REQUEST_NULL once tested complete: returns at once
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
  // An MPI_Comm_idup of this duplicate: it has no spare communicator, its calls pass through.
  MPI_Comm again = idup(dup);
  Call c = make_call(t, false, id++);
  recv_pattern(t, again, [&] { return blocking(c, again); }, "MPI_Comm_idup of an MPI_Comm_idup duplicate");
  check_call(t, c, "MPI_Comm_idup of an MPI_Comm_idup duplicate");
  if (t.expect_accelerated)
    t.check(accelerated(t, again, "idup of idup") == t.passed_through(), "MPI_Comm_idup of an idup duplicate: passed through");
  MPI_Comm_free(&again);
  MPI_Comm_free(&dup);
}

// On an MPI_Comm_idup of an MPI_Comm_dup of `graph`: `first_call` makes an allgather, then an
// alltoall, the duplicate's first calls (`form`: how), each checked; forced, both must have run
// through cartplan.
using FirstCall = std::function<int(Call&, MPI_Comm, const std::string&)>;
void on_idup_of_dup(Test& t, MPI_Comm graph, int id, const std::string& form, const FirstCall& first_call, bool rank0_polls = false) {
  MPI_Comm mid = MPI_COMM_NULL;
  MPI_Comm_dup(graph, &mid);
  MPI_Comm dup = idup(mid, rank0_polls && t.rank == 0);
  for (bool gather : {true, false}) {
    Call c = make_call(t, gather, id++);
    const std::string what = "MPI_Comm_idup of MPI_Comm_dup, then " + form + (gather ? " allgather" : " alltoall");
    t.check(first_call(c, dup, what) == MPI_SUCCESS, what + ": no error");
    check_call(t, c, what);
  }
  const std::string calls = "MPI_Comm_idup's " + form + " calls";
  const long ran = accelerated(t, dup, calls);
  if (t.expect_accelerated) t.check(ran == 2, calls + " ran through cartplan (" + std::to_string(ran) + " of 2)");
  MPI_Comm_free(&dup);
  MPI_Comm_free(&mid);
}

// Every rank inits first (cartplan agrees at init); the rank without edges then receives before
// its MPI_Start while rank 0 starts, waits and sends.
void run_persistent(Test& t, MPI_Comm graph) {
  on_idup_of_dup(t, graph, 10, "persistent", [&](Call& c, MPI_Comm dup, const std::string& what) {
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = c.gather ? MPIX_Neighbor_allgather_init(c.send.data(), 1, MPI_INT, c.recv.data(), 1, MPI_INT, dup, MPI_INFO_NULL, &r)
                      : MPIX_Neighbor_alltoall_init(c.send.data(), 1, MPI_INT, c.recv.data(), 1, MPI_INT, dup, MPI_INFO_NULL, &r);
    recv_pattern(t, dup, [&] {
      const int started = MPI_Start(&r);
      return started | MPI_Wait(&r, MPI_STATUS_IGNORE);
    }, what);
    return rc | MPI_Request_free(&r);
  });
}

int nonblocking(Call& c, MPI_Comm comm, MPI_Request* r) {
  return c.gather ? MPI_Ineighbor_allgather(c.send.data(), 1, MPI_INT, c.recv.data(), 1, MPI_INT, comm, r)
                  : MPI_Ineighbor_alltoall(c.send.data(), 1, MPI_INT, c.recv.data(), 1, MPI_INT, comm, r);
}

// Rank 0 completes MPI_Comm_idup by polling, starts its first call on the duplicate, then joins
// the others' MPI_Comm_dup of MPI_COMM_WORLD; they start theirs after it. Correct MPI: starting
// a non-blocking call waits for nobody. A drop-in that waited there for an internal
// MPI_Comm_idup would hang: the others, inside an MPI_Comm_dup of a communicator with a lower
// context id, do not progress it (Open MPI 4.1 allocates context ids lowest parent first).
void run_nonblocking(Test& t, MPI_Comm graph) {
  on_idup_of_dup(t, graph, 30, "non-blocking", [&](Call& c, MPI_Comm dup, const std::string&) {
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Comm world = MPI_COMM_NULL;
    int rc = t.rank == 0 ? nonblocking(c, dup, &r) : MPI_SUCCESS;
    rc |= MPI_Comm_dup(MPI_COMM_WORLD, &world);
    if (t.rank != 0) rc |= nonblocking(c, dup, &r);
    rc |= MPI_Wait(&r, MPI_STATUS_IGNORE);
    return rc | MPI_Comm_free(&world);
  }, /*rank0_polls=*/true);
}

// A second MPI_Comm_idup of the graph: its spare communicator went to the first; passed through.
void run_second_idup(Test& t, MPI_Comm graph) {
  MPI_Comm dup = idup(graph);
  Call c = make_call(t, true, 20);
  recv_pattern(t, dup, [&] { return blocking(c, dup); }, "a second MPI_Comm_idup");
  check_call(t, c, "a second MPI_Comm_idup");
  if (t.expect_accelerated) t.check(accelerated(t, dup, "second idup") == t.passed_through(), "a second MPI_Comm_idup of the graph: passed through");
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
    else if (!std::strcmp(argv[i], "--stencil")) t.stencil = true;
  if (t.expect_accelerated && !dlsym(RTLD_DEFAULT, "CARTPLAN_Accelerated_calls")) t.check(false, "the drop-in is loaded");
  if (t.size < 3 && !t.stencil) {
    if (t.rank == 0) std::fprintf(stderr, "idup_graph_test: needs at least 3 ranks\n");
    MPI_Finalize();
    return 1;
  }
  if (t.stencil) {
    make_stencil(t);
  } else {
    make_edges(t);
  }
  MPI_Comm graph = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(t.sources.size()), t.sources.data(), MPI_UNWEIGHTED,
                                 static_cast<int>(t.destinations.size()), t.destinations.data(), MPI_UNWEIGHTED, MPI_INFO_NULL,
                                 0, &graph);
  run_blocking(t, graph);
  run_persistent(t, graph);
  run_nonblocking(t, graph);
  run_second_idup(t, graph);
  MPI_Comm_free(&graph);
  int failures = 0;
  MPI_Allreduce(&t.failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (t.rank == 0) std::printf("idup_graph_test%s: %s (%d failures, np %d)\n", t.stencil ? " --stencil" : "", failures ? "FAILED" : "passed", failures, t.size);
  MPI_Finalize();
  return failures ? 1 : 0;
}
