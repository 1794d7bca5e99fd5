// The interposition layer against Open MPI itself: every accelerated neighbourhood collective is
// compared byte for byte with the same call made through PMPI_ (Open MPI's implementation) on
// the same communicator, over random graphs: dims of size 1..4, d = 1..4, periodic and not,
// duplicates and the zero offset, sources and destinations in different (per-rank random)
// orders, grids from Info hints, from an earlier MPI_Cart_create or from MPI_Dims_create,
// MPI_Dist_graph_create_adjacent and MPI_Dist_graph_create, reorder 0 and 1. Requests are mixed
// with the program's own in MPI_Waitall / MPI_Testall / MPI_Startall / MPI_Request_free.
//
//   interpose_test [--trials N] [--cycles N] [--disabled] [--algorithm auto|direct|combining]
//   --cycles: create/free loops (with a call each) and a bound on memory growth
//   --disabled: sets CARTPLAN_INTERPOSE=0 before MPI_Init and checks nothing is accelerated
//   --algorithm: sets CARTPLAN_INTERPOSE_ALGORITHM before MPI_Init; direct or combining force
//   that plan, and every communicator with a stencil must then run its calls through cartplan
// Each graph is also duplicated with MPI_Comm_dup and MPI_Comm_idup, and the duplicates tested.
#include <mpi.h>
#include <mpi-ext.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tests/mpi/harness.h"

extern "C" int CARTPLAN_Interposed(MPI_Comm comm);
extern "C" long CARTPLAN_Accelerated_calls(MPI_Comm comm);

namespace {

using cartplan::mpitest::Harness;

struct Graph {
  std::vector<int> dims, periods;
  std::vector<std::vector<int>> offsets;
  std::vector<int> sources, dests;
  MPI_Comm comm = MPI_COMM_NULL;
  std::string name;
  bool expect_accelerated = false;
};

std::vector<int> coords_of(int rank, const std::vector<int>& dims) {
  std::vector<int> c(dims.size());
  for (int k = static_cast<int>(dims.size()) - 1; k >= 0; --k) {
    c[k] = rank % dims[k];
    rank /= dims[k];
  }
  return c;
}

// Row-major rank of coords + sign * offset, or -1 outside the mesh.
int relative(int rank, const std::vector<int>& o, int sign, const std::vector<int>& dims, const std::vector<int>& periods) {
  std::vector<int> c = coords_of(rank, dims);
  int r = 0;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    int v = c[k] + sign * o[k];
    if (periods[k]) v = ((v % dims[k]) + dims[k]) % dims[k];
    else if (v < 0 || v >= dims[k]) return -1;
    r = r * dims[k] + v;
  }
  return r;
}

// Random factorization of p into d factors.
std::vector<int> factor(int p, int d, std::mt19937& rng) {
  std::vector<int> dims(d, 1);
  for (int f = 2; p > 1;) {
    if (p % f == 0) {
      dims[rng() % d] *= f;
      p /= f;
    } else {
      ++f;
    }
  }
  return dims;
}

// Every rank draws the same random graph (same seed); the list orders are per rank.
Graph make_graph(Harness& h, std::mt19937& shared, std::mt19937& mine, int trial) {
  Graph g;
  const int d = 1 + static_cast<int>(shared() % 4);
  g.dims = factor(h.size, d, shared);
  g.periods.resize(d);
  for (int& p : g.periods) p = static_cast<int>(shared() % 2);
  const int t = 1 + static_cast<int>(shared() % 8);
  for (int i = 0; i < t; ++i) {
    if (i > 0 && shared() % 5 == 0) {
      g.offsets.push_back(g.offsets[shared() % g.offsets.size()]);
      continue;
    }
    std::vector<int> o(d);
    for (int& v : o) v = static_cast<int>(shared() % 5) - 2;
    if (shared() % 8 == 0) std::fill(o.begin(), o.end(), 0);
    g.offsets.push_back(o);
  }
  for (const auto& o : g.offsets) {
    const int to = relative(h.rank, o, +1, g.dims, g.periods), from = relative(h.rank, o, -1, g.dims, g.periods);
    if (to >= 0) g.dests.push_back(to);
    if (from >= 0) g.sources.push_back(from);
  }
  const int order = static_cast<int>(shared() % 3);  // 0: offset order, 1: sources shuffled, 2: both shuffled
  if (order >= 1) std::shuffle(g.sources.begin(), g.sources.end(), mine);
  if (order == 2) std::shuffle(g.dests.begin(), g.dests.end(), mine);
  const int grid_from = static_cast<int>(shared() % 3);  // 0: Info hints, 1: MPI_Cart_create, 2: nothing
  const bool adjacent = shared() % 4 != 0;
  const int reorder = static_cast<int>(shared() % 2);
  MPI_Info info = MPI_INFO_NULL;
  MPI_Comm cart = MPI_COMM_NULL;
  if (grid_from == 0) {
    MPI_Info_create(&info);
    std::string ds, ps;
    for (int k = 0; k < d; ++k) {
      ds += (k ? "," : "") + std::to_string(g.dims[k]);
      ps += (k ? "," : "") + std::to_string(g.periods[k]);
    }
    MPI_Info_set(info, "cartplan_dims", ds.c_str());
    MPI_Info_set(info, "cartplan_periods", ps.c_str());
    if (shared() % 2) MPI_Info_set(info, "cartplan_algorithm", shared() % 2 ? "combining" : "direct");
  } else if (grid_from == 1) {
    MPI_Cart_create(MPI_COMM_WORLD, d, g.dims.data(), g.periods.data(), 0, &cart);
  }
  if (adjacent) {
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(g.sources.size()), g.sources.data(), MPI_UNWEIGHTED,
                                   static_cast<int>(g.dests.size()), g.dests.data(), MPI_UNWEIGHTED, info, reorder, &g.comm);
  } else {
    const int n = 1, degree = static_cast<int>(g.dests.size());
    std::vector<int> targets = g.dests;
    targets.push_back(-1);  // never read; Open MPI rejects a NULL array even for degree 0
    MPI_Dist_graph_create(MPI_COMM_WORLD, n, &h.rank, &degree, targets.data(), MPI_UNWEIGHTED, info, reorder, &g.comm);
  }
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  if (cart != MPI_COMM_NULL) MPI_Comm_free(&cart);
  int same_rank = 0, all_same = 0, degree = static_cast<int>(g.dests.size()), max_degree = 0;
  MPI_Comm_rank(g.comm, &same_rank);
  same_rank = same_rank == h.rank;
  MPI_Allreduce(&same_rank, &all_same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&degree, &max_degree, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  // With a grid named by hints or MPI_Cart_create, and ranks kept, detection must succeed.
  g.expect_accelerated = grid_from < 2 && all_same && max_degree > 0;
  g.name = "trial " + std::to_string(trial) + " d=" + std::to_string(d) + " t=" + std::to_string(t) + " grid_from=" +
           std::to_string(grid_from) + (adjacent ? " adjacent" : " create") + " reorder=" + std::to_string(reorder);
  return g;
}

// The neighbour lists as the communicator reports them (the order MPI's semantics use).
void neighbors(MPI_Comm comm, std::vector<int>* sources, std::vector<int>* dests) {
  int in = 0, out = 0, weighted = 0;
  MPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
  sources->resize(in);
  dests->resize(out);
  std::vector<int> sw(in + 1), dw(out + 1);
  MPI_Dist_graph_neighbors(comm, in, sources->data(), weighted ? sw.data() : MPI_UNWEIGHTED, out, dests->data(),
                           weighted ? dw.data() : MPI_UNWEIGHTED);
}

int value(int rank, int block, int elem, int salt) { return rank * 1000003 + block * 1009 + elem * 7 + salt * 31 + 1; }

struct Buffers {
  std::vector<int> send, want, got;
};

// One comparison: `run_ours` and `run_ref` fill recv buffers from identical send buffers.
template <class Ours, class Ref>
void compare(Harness& h, const std::string& what, std::size_t recv_size, const std::vector<int>& send, Ours run_ours, Ref run_ref) {
  std::vector<int> want(recv_size, -7), got(recv_size, -7);
  const int rc_ref = run_ref(send.data(), want.data());
  const int rc = run_ours(send.data(), got.data());
  h.check(rc == MPI_SUCCESS && rc_ref == MPI_SUCCESS, what + ": return codes " + std::to_string(rc) + " / " + std::to_string(rc_ref));
  h.check(want == got, what + ": data differs from Open MPI's");
}

void test_graph(Harness& h, Graph& g, std::mt19937& shared, int trial) {
  const int accelerated = CARTPLAN_Interposed(g.comm);
  if (g.expect_accelerated) h.check(accelerated == 1, g.name + ": not accelerated");
  std::vector<int> sources, dests;
  neighbors(g.comm, &sources, &dests);
  const int in = static_cast<int>(sources.size()), out = static_cast<int>(dests.size());
  const int m = 1 + static_cast<int>(shared() % 3);
  const int salt = trial;
  std::vector<int> send(static_cast<std::size_t>(out) * m), gsend(m);
  for (int k = 0; k < out; ++k)
    for (int e = 0; e < m; ++e) send[static_cast<std::size_t>(k) * m + e] = value(h.rank, k, e, salt);
  for (int e = 0; e < m; ++e) gsend[e] = value(h.rank, 99, e, salt);
  const std::size_t rsize = static_cast<std::size_t>(in) * m;
  const std::string n = g.name;
  MPI_Comm c = g.comm;

  // Blocking.
  compare(h, n + " alltoall", rsize, send,
          [&](const int* s, int* r) { return MPI_Neighbor_alltoall(s, m, MPI_INT, r, m, MPI_INT, c); },
          [&](const int* s, int* r) { return PMPI_Neighbor_alltoall(s, m, MPI_INT, r, m, MPI_INT, c); });
  compare(h, n + " allgather", rsize, gsend,
          [&](const int* s, int* r) { return MPI_Neighbor_allgather(s, m, MPI_INT, r, m, MPI_INT, c); },
          [&](const int* s, int* r) { return PMPI_Neighbor_allgather(s, m, MPI_INT, r, m, MPI_INT, c); });
  // A derived datatype: m ints as a vector with stride 1 (contiguous but not named).
  MPI_Datatype vec;
  MPI_Type_vector(m, 1, 1, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  compare(h, n + " alltoall(derived)", rsize, send,
          [&](const int* s, int* r) { return MPI_Neighbor_alltoall(s, 1, vec, r, 1, vec, c); },
          [&](const int* s, int* r) { return PMPI_Neighbor_alltoall(s, 1, vec, r, 1, vec, c); });

  // Non-blocking, completed together with a request of the program's own.
  auto with_own = [&](MPI_Request ours, int mode) {
    int token = h.rank, back = -1;
    MPI_Request reqs[3] = {MPI_REQUEST_NULL, ours, MPI_REQUEST_NULL};
    MPI_Irecv(&back, 1, MPI_INT, 0, 77, MPI_COMM_SELF, &reqs[0]);
    MPI_Isend(&token, 1, MPI_INT, 0, 77, MPI_COMM_SELF, &reqs[2]);
    int rc = MPI_SUCCESS;
    if (mode == 0) {
      rc = MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE);
    } else if (mode == 1) {
      for (int flag = 0; !flag && rc == MPI_SUCCESS;) rc = MPI_Testall(3, reqs, &flag, MPI_STATUSES_IGNORE);
    } else {
      for (int done = 0; done < 3 && rc == MPI_SUCCESS; ++done) {
        int index = 0;
        rc = MPI_Waitany(3, reqs, &index, MPI_STATUS_IGNORE);
      }
    }
    h.check(back == h.rank, n + ": own request mixed with ours");
    h.check(reqs[1] == MPI_REQUEST_NULL, n + ": non-blocking request not freed by completion");
    return rc;
  };
  const int mode = static_cast<int>(shared() % 3);
  compare(h, n + " ialltoall", rsize, send,
          [&](const int* s, int* r) {
            MPI_Request q;
            const int rc = MPI_Ineighbor_alltoall(s, m, MPI_INT, r, m, MPI_INT, c, &q);
            return rc != MPI_SUCCESS ? rc : with_own(q, mode);
          },
          [&](const int* s, int* r) { return PMPI_Neighbor_alltoall(s, m, MPI_INT, r, m, MPI_INT, c); });
  compare(h, n + " iallgather", rsize, gsend,
          [&](const int* s, int* r) {
            MPI_Request q;
            const int rc = MPI_Ineighbor_allgather(s, m, MPI_INT, r, m, MPI_INT, c, &q);
            return rc != MPI_SUCCESS ? rc : MPI_Wait(&q, MPI_STATUS_IGNORE);
          },
          [&](const int* s, int* r) { return PMPI_Neighbor_allgather(s, m, MPI_INT, r, m, MPI_INT, c); });

  // v forms: block k of m - (k % 2) ints at a shuffled displacement (uniform per position on
  // every rank only when m - (k%2) is the same for matching positions: Open MPI decides; cartplan
  // accelerates the persistent forms when sizes are uniform and passes through otherwise).
  // (At least one element each: Open MPI rejects NULL arrays even for degree 0.)
  std::vector<int> scounts(out + 1, m), sdispls(out + 1), rcounts(in + 1, m), rdispls(in + 1);
  for (int k = 0; k < out; ++k) sdispls[k] = (out - 1 - k) * m;
  for (int j = 0; j < in; ++j) rdispls[j] = (in - 1 - j) * m;
  compare(h, n + " alltoallv", rsize, send,
          [&](const int* s, int* r) {
            return MPI_Neighbor_alltoallv(s, scounts.data(), sdispls.data(), MPI_INT, r, rcounts.data(), rdispls.data(), MPI_INT, c);
          },
          [&](const int* s, int* r) {
            return PMPI_Neighbor_alltoallv(s, scounts.data(), sdispls.data(), MPI_INT, r, rcounts.data(), rdispls.data(), MPI_INT, c);
          });

  // Persistent: two requests started together with MPI_Startall, run three times, freed.
  std::vector<int> want_a(rsize, -7), want_g(rsize, -7), got_a(rsize, -7), got_g(rsize, -7), got_v(rsize, -7), want_v(rsize, -7);
  PMPI_Neighbor_alltoall(send.data(), m, MPI_INT, want_a.data(), m, MPI_INT, c);
  PMPI_Neighbor_allgather(gsend.data(), m, MPI_INT, want_g.data(), m, MPI_INT, c);
  PMPI_Neighbor_alltoallv(send.data(), scounts.data(), sdispls.data(), MPI_INT, want_v.data(), rcounts.data(), rdispls.data(), MPI_INT, c);
  MPI_Request p[3];
  int rc = MPIX_Neighbor_alltoall_init(send.data(), m, MPI_INT, got_a.data(), m, MPI_INT, c, MPI_INFO_NULL, &p[0]);
  rc |= MPIX_Neighbor_allgather_init(gsend.data(), m, MPI_INT, got_g.data(), m, MPI_INT, c, MPI_INFO_NULL, &p[1]);
  rc |= MPIX_Neighbor_alltoallv_init(send.data(), scounts.data(), sdispls.data(), MPI_INT, got_v.data(), rcounts.data(),
                                     rdispls.data(), MPI_INT, c, MPI_INFO_NULL, &p[2]);
  h.check(rc == MPI_SUCCESS, n + ": persistent init");
  for (int it = 0; it < 3 && rc == MPI_SUCCESS; ++it) {
    std::fill(got_a.begin(), got_a.end(), -7);
    std::fill(got_g.begin(), got_g.end(), -7);
    std::fill(got_v.begin(), got_v.end(), -7);
    rc = MPI_Startall(3, p);
    if (it == 1) {
      for (int flag = 0; !flag && rc == MPI_SUCCESS;) rc = MPI_Testall(3, p, &flag, MPI_STATUSES_IGNORE);
    } else {
      rc |= MPI_Waitall(3, p, MPI_STATUSES_IGNORE);
    }
    h.check(rc == MPI_SUCCESS, n + ": persistent start/complete");
    h.check(p[0] != MPI_REQUEST_NULL && p[1] != MPI_REQUEST_NULL, n + ": persistent requests stay allocated");
    h.check(got_a == want_a, n + " alltoall_init iteration " + std::to_string(it) + ": data differs from Open MPI's");
    h.check(got_g == want_g, n + " allgather_init iteration " + std::to_string(it) + ": data differs from Open MPI's");
    h.check(got_v == want_v, n + " alltoallv_init iteration " + std::to_string(it) + ": data differs from Open MPI's");
  }
  for (MPI_Request& q : p) MPI_Request_free(&q);
  MPI_Type_free(&vec);
}

}  // namespace

int main(int argc, char** argv) {
  int trials = 60, cycles = 0;
  bool disabled = false;
  std::string algorithm = "auto";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--trials") && i + 1 < argc) trials = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--cycles") && i + 1 < argc) cycles = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--algorithm") && i + 1 < argc) algorithm = argv[++i];
    else if (!std::strcmp(argv[i], "--disabled")) disabled = true;
  }
  if (disabled) setenv("CARTPLAN_INTERPOSE", "0", 1);
  setenv("CARTPLAN_INTERPOSE_ALGORITHM", algorithm.c_str(), 1);
  Harness h(&argc, &argv);
  std::mt19937 shared(12345), mine(777 + h.rank);
  int accelerated = 0;
  for (int trial = 0; trial < trials; ++trial) {
    Graph g = make_graph(h, shared, mine, trial);
    accelerated += CARTPLAN_Interposed(g.comm);
    if (disabled) g.expect_accelerated = false;
    test_graph(h, g, shared, trial);
    // A duplicate keeps the acceleration (and the semantics).
    MPI_Comm dup;
    MPI_Comm_dup(g.comm, &dup);
    h.check(CARTPLAN_Interposed(dup) == CARTPLAN_Interposed(g.comm), g.name + ": MPI_Comm_dup changed acceleration");
    Graph gd = g;
    gd.comm = dup;
    gd.name += " (dup)";
    test_graph(h, gd, shared, trial);
    // MPI_Comm_idup too: the program completes the request before using the duplicate.
    MPI_Comm idup;
    MPI_Request req;
    MPI_Comm_idup(g.comm, &idup, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    h.check(CARTPLAN_Interposed(idup) == CARTPLAN_Interposed(g.comm), g.name + ": MPI_Comm_idup changed acceleration");
    Graph gi = g;
    gi.comm = idup;
    gi.name += " (idup)";
    test_graph(h, gi, shared, trial);
    // Forced plans: every call of a communicator with a stencil runs through cartplan.
    if (algorithm != "auto" && !disabled)
      for (MPI_Comm c : {g.comm, dup, idup})
        h.check(!CARTPLAN_Interposed(c) || CARTPLAN_Accelerated_calls(c) > 0, g.name + ": forced plan, yet no call accelerated");
    MPI_Comm_free(&idup);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&g.comm);
  }
  if (disabled) h.check(accelerated == 0, "CARTPLAN_INTERPOSE=0 still accelerated " + std::to_string(accelerated) + " communicators");
  else if (trials > 0) h.check(accelerated > trials / 4, "only " + std::to_string(accelerated) + " of " + std::to_string(trials) + " accelerated");
  if (h.rank == 0) std::printf("interpose_test: %d of %d communicators accelerated on rank 0\n", accelerated, trials);

  if (cycles > 0) {
    // Create/call/free loops on a periodic ring (np 1: a self loop), grid from Info hints.
    auto cycle = [&] {
      MPI_Info info;
      MPI_Info_create(&info);
      const std::string ds = std::to_string(h.size);
      MPI_Info_set(info, "cartplan_dims", ds.c_str());
      const int right = (h.rank + 1) % h.size, left = (h.rank + h.size - 1) % h.size;
      int srcs[2] = {left, right}, dsts[2] = {right, left};
      MPI_Comm c;
      MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, MPI_UNWEIGHTED, 2, dsts, MPI_UNWEIGHTED, info, 0, &c);
      MPI_Info_free(&info);
      int s[2] = {h.rank, -h.rank}, r[2] = {0, 0};
      MPI_Neighbor_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, c);
      const bool ok = r[0] == left && r[1] == -right && CARTPLAN_Interposed(c);
      MPI_Request q;
      MPIX_Neighbor_alltoall_init(s, 1, MPI_INT, r, 1, MPI_INT, c, MPI_INFO_NULL, &q);
      MPI_Start(&q);
      MPI_Wait(&q, MPI_STATUS_IGNORE);
      MPI_Request_free(&q);
      MPI_Comm_free(&c);
      return ok;
    };
    int bad = 0;
    for (int i = 0; i < 200; ++i) bad += !cycle();
    const long before = cartplan::mpitest::resident_kb();
    for (int i = 0; i < cycles; ++i) bad += !cycle();
    const long after = cartplan::mpitest::resident_kb();
    h.check(bad == 0, std::to_string(bad) + " create/free cycles gave wrong data or were not accelerated");
    h.check(after - before < 4096, "memory grew by " + std::to_string(after - before) + " kB over " + std::to_string(cycles) + " cycles");
    if (h.rank == 0) std::printf("interpose_test: %d cycles, VmRSS %ld -> %ld kB\n", cycles, before, after);
  }
  return h.finish("interpose_test");
}
