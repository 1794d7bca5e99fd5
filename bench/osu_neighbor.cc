// An OSU-style latency benchmark of MPI's neighbourhood collectives, in the manner of OSU OMB's
// osu_neighbor_* and osu_ineighbor_*: for each message size, warm-up calls, then `iterations`
// back-to-back calls (non-blocking: MPI_Ineighbor_* then MPI_Wait; persistent: MPI_Start then
// MPI_Wait) on every rank, reported as the average over ranks (OSU's "Avg Latency") with the
// minimum and maximum. The loop is timed in batches of --batch calls: OSU's figure is the whole
// loop's time per call (avg_us); median_us is each rank's median batch time per call, averaged
// over ranks, which a preemption on a shared machine moves far less. With --check (OSU's -c)
// every received block of the last call of each size is checked.
//
// Built twice from this file:
//  - osu_neighbor: the standard API only (MPI_Dist_graph_create_adjacent, MPI_Neighbor_*,
//    MPI_Ineighbor_*, MPIX_Neighbor_*_init), so it runs unchanged under plain Open MPI and with
//    the drop-in preloaded (LD_PRELOAD=libcartplan_interpose.so).
//  - osu_neighbor_native (CARTPLAN_NATIVE_API): the same exchange through cartplan's own API
//    (Cart_neighborhood_create, Cart_*, Cart_i*, Cart_*_init), Info cartplan_algorithm from
//    --algorithm: the native plan the drop-in is compared with.
//
// Neighbourhood: the Moore stencil of radius r on a periodic d-dimensional grid from
// MPI_Dims_create (with --self, the zero offset too), neighbours in lexicographic offset order;
// --shift instead: the one offset (1, 0, ..., 0) (each process sends one block to one neighbour,
// the same messages in Open MPI and in any cartplan plan: what the per-call overhead is measured on).
// --topo cart: an MPI_Cart_create of the grid first, neighbours by MPI_Cart_rank, the graph on
// MPI_COMM_WORLD (the drop-in reads the grid from the Cartesian communicator); --topo graph:
// neighbours computed by hand, no Cartesian communicator. --holes (graph, standard API only):
// each rank drops about a quarter of its edges (the receiver drops the matching source), so the
// graph is no stencil: the drop-in then judges it for cartplan's graph collectives.
//
//   osu_neighbor --topo graph --d 1 --r 1 --op allgather --form nonblocking
//                --sizes 1,2,4,...,4096 --iterations 2000 [--warmup 200] [--check] [--pace US]
//   --paired: the same calls through Open MPI's own PMPI_ entry points timed beside them, in
//   alternating batches of one launch (paired_size, below)
// Output, rank 0: "bytes avg_us min_us max_us median_us" per size (--paired: "bytes own_us ref_us
// ratio"), then "ERRORS n" if --check failed.
#include <mpi.h>
#include <mpi-ext.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#ifdef CARTPLAN_NATIVE_API
#include "backends/mpi/cartplan_mpi.h"
#endif

namespace {

struct Config {
  std::string topo = "graph", op = "allgather", form = "blocking", algorithm = "auto";
  int d = 1, r = 1, iterations = 1000, warmup = 100, batch = 20, pace_us = 0;
  bool self = false, check = false, shift = false, holes = false, paired = false;
  std::vector<int> sizes{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
};

Config parse(int argc, char** argv) {
  Config c;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--self") c.self = true;
    else if (a == "--shift") c.shift = true;
    else if (a == "--check") c.check = true;
    else if (a == "--holes") c.holes = true;
    else if (a == "--paired") c.paired = true;
    else if (i + 1 == argc) break;  // every other option takes a value
    else if (a == "--topo") c.topo = argv[++i];
    else if (a == "--op") c.op = argv[++i];
    else if (a == "--form") c.form = argv[++i];
    else if (a == "--algorithm") c.algorithm = argv[++i];
    else if (a == "--d") c.d = std::atoi(argv[++i]);
    else if (a == "--r") c.r = std::atoi(argv[++i]);
    else if (a == "--iterations") c.iterations = std::atoi(argv[++i]);
    else if (a == "--warmup") c.warmup = std::atoi(argv[++i]);
    else if (a == "--batch") c.batch = std::max(1, std::atoi(argv[++i]));
    else if (a == "--pace") c.pace_us = std::atoi(argv[++i]);
    else if (a == "--sizes") {
      c.sizes.clear();
      for (char* s = argv[++i]; *s;) {
        c.sizes.push_back(static_cast<int>(std::strtol(s, &s, 10)));
        if (*s == ',') ++s;
      }
    }
  }
  return c;
}

// The Moore offsets of radius r (zero included only with --self), lexicographic.
std::vector<std::vector<int>> offsets(const Config& c) {
  std::vector<std::vector<int>> out;
  if (c.shift) {
    out.emplace_back(c.d, 0);
    out.back()[0] = 1;
    return out;
  }
  std::vector<int> o(c.d, -c.r);
  for (;;) {
    bool zero = true;
    for (int v : o) zero = zero && v == 0;
    if (!zero || c.self) out.push_back(o);
    int k = c.d - 1;
    while (k >= 0 && o[k] == c.r) o[k--] = -c.r;
    if (k < 0) return out;
    ++o[k];
  }
}

int row_major(const std::vector<int>& dims, const std::vector<int>& coords) {
  int r = 0;
  for (std::size_t k = 0; k < dims.size(); ++k) r = r * dims[k] + ((coords[k] % dims[k]) + dims[k]) % dims[k];
  return r;
}

struct Neighbourhood {
  std::vector<int> dims, sources, dests;
  std::vector<int> send_index, recv_index;  // the offset of each destination / source
  std::vector<std::vector<int>> offs;
};

// --holes: rank r does not send over offset i (tests/mpi/progress_test.cc's rule).
bool hole(const Config& c, int r, int i) { return c.holes && ((r * 2654435761u + i * 40503u + 12345u) >> 7) % 4 == 0; }

Neighbourhood neighbourhood(const Config& c, int p, int rank) {
  Neighbourhood n;
  n.dims.assign(c.d, 0);
  MPI_Dims_create(p, c.d, n.dims.data());
  n.offs = offsets(c);
  std::vector<int> me(c.d);
  for (int k = c.d - 1, q = rank; k >= 0; --k) {
    me[k] = q % n.dims[k];
    q /= n.dims[k];
  }
  for (int i = 0; i < static_cast<int>(n.offs.size()); ++i) {
    std::vector<int> to(me), from(me);
    for (int k = 0; k < c.d; ++k) {
      to[k] += n.offs[i][k];
      from[k] -= n.offs[i][k];
    }
    if (!hole(c, rank, i)) {
      n.dests.push_back(row_major(n.dims, to));
      n.send_index.push_back(i);
    }
    if (!hole(c, row_major(n.dims, from), i)) {
      n.sources.push_back(row_major(n.dims, from));
      n.recv_index.push_back(i);
    }
  }
  return n;
}

// ---- the two APIs -------------------------------------------------------------------------

#ifdef CARTPLAN_NATIVE_API
using Request = Cart_Request;

MPI_Comm open_comm(const Config& c, const Neighbourhood& n) {
  if (c.holes) {
    std::fprintf(stderr, "osu_neighbor_native: --holes needs the standard API (the native stencil API has no holes)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  std::vector<int> periods(c.d, 1), flat;
  for (const auto& o : n.offs) flat.insert(flat.end(), o.begin(), o.end());
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", c.algorithm.c_str());
  MPI_Comm cart = MPI_COMM_NULL;
  if (Cart_neighborhood_create(MPI_COMM_WORLD, c.d, n.dims.data(), periods.data(), static_cast<int>(n.offs.size()), flat.data(),
                               MPI_UNWEIGHTED, info, 0, &cart) != MPI_SUCCESS)
    MPI_Abort(MPI_COMM_WORLD, 2);
  MPI_Info_free(&info);
  return cart;
}

void blocking(bool gather, const char* s, int m, char* r, MPI_Comm comm) {
  gather ? Cart_allgather(s, m, MPI_BYTE, r, m, MPI_BYTE, comm) : Cart_alltoall(s, m, MPI_BYTE, r, m, MPI_BYTE, comm);
}
void start_nonblocking(bool gather, const char* s, int m, char* r, MPI_Comm comm, Request* q) {
  gather ? Cart_iallgather(s, m, MPI_BYTE, r, m, MPI_BYTE, comm, q) : Cart_ialltoall(s, m, MPI_BYTE, r, m, MPI_BYTE, comm, q);
}
void init(bool gather, const char* s, int m, char* r, MPI_Comm comm, Request* q) {
  gather ? Cart_allgather_init(s, m, MPI_BYTE, r, m, MPI_BYTE, comm, MPI_INFO_NULL, q)
         : Cart_alltoall_init(s, m, MPI_BYTE, r, m, MPI_BYTE, comm, MPI_INFO_NULL, q);
}
void start(Request* q) { Cart_start(q); }
void wait(Request* q) { Cart_wait(q); }
void release(Request* q) { Cart_request_free(q); }
#else
using Request = MPI_Request;

MPI_Comm open_comm(const Config& c, const Neighbourhood& n) {
  if (c.topo == "cart") {
    std::vector<int> periods(c.d, 1);
    MPI_Comm cart = MPI_COMM_NULL;
    MPI_Cart_create(MPI_COMM_WORLD, c.d, n.dims.data(), periods.data(), 0, &cart);
    MPI_Comm_free(&cart);
  }
  MPI_Comm graph = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(n.sources.size()), n.sources.data(), MPI_UNWEIGHTED,
                                 static_cast<int>(n.dests.size()), n.dests.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);
  return graph;
}

void blocking(bool gather, const char* s, int m, char* r, MPI_Comm comm) {
  gather ? MPI_Neighbor_allgather(s, m, MPI_BYTE, r, m, MPI_BYTE, comm) : MPI_Neighbor_alltoall(s, m, MPI_BYTE, r, m, MPI_BYTE, comm);
}
void start_nonblocking(bool gather, const char* s, int m, char* r, MPI_Comm comm, Request* q) {
  gather ? MPI_Ineighbor_allgather(s, m, MPI_BYTE, r, m, MPI_BYTE, comm, q)
         : MPI_Ineighbor_alltoall(s, m, MPI_BYTE, r, m, MPI_BYTE, comm, q);
}
void init(bool gather, const char* s, int m, char* r, MPI_Comm comm, Request* q) {
  gather ? MPIX_Neighbor_allgather_init(s, m, MPI_BYTE, r, m, MPI_BYTE, comm, MPI_INFO_NULL, q)
         : MPIX_Neighbor_alltoall_init(s, m, MPI_BYTE, r, m, MPI_BYTE, comm, MPI_INFO_NULL, q);
}
void start(Request* q) { MPI_Start(q); }
void wait(Request* q) { MPI_Wait(q, MPI_STATUS_IGNORE); }
void release(Request* q) { MPI_Request_free(q); }
#endif

// ---- timing -------------------------------------------------------------------------------

// One call of the configured form; the persistent request is created before (not timed).
// Never inlined: bench/callgrind_overhead.sh counts the instructions inside it.
__attribute__((noinline)) void one_call(const Config& c, bool gather, const std::vector<char>& send, std::vector<char>& recv,
                                        int m, MPI_Comm comm, Request* persistent) {
  if (c.form == "blocking") {
    blocking(gather, send.data(), m, recv.data(), comm);
  } else if (c.form == "nonblocking") {
    Request q;
    start_nonblocking(gather, send.data(), m, recv.data(), comm, &q);
    wait(&q);
  } else {
    start(persistent);
    wait(persistent);
  }
}

// --pace US (for counting instructions, not for timing): before each call rank 0 tells every
// other rank to go (a zero-byte message), then sleeps US microseconds. The others are then
// inside the call, and their messages have reached rank 0's transport when rank 0 makes its
// call, which therefore hardly polls; and rank 0 takes them in inside its call, not in some
// synchronisation before it (a barrier left after a fast peer sent would do that).
void pace(int us) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank != 0) {
    MPI_Recv(nullptr, 0, MPI_BYTE, 0, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return;
  }
  for (int q = 1; q < size; ++q) MPI_Send(nullptr, 0, MPI_BYTE, q, 77, MPI_COMM_WORLD);
  usleep(static_cast<useconds_t>(us));
}

// `n` calls (paced with --pace).
void calls(const Config& c, bool gather, const std::vector<char>& send, std::vector<char>& recv, int m, MPI_Comm comm,
           Request* persistent, int n) {
  for (int i = 0; i < n; ++i) {
    if (c.pace_us > 0) pace(c.pace_us);
    one_call(c, gather, send, recv, m, comm, persistent);
  }
}

// The timed calls, never inlined: bench/callgrind_overhead.sh zeroes its counts on entry, so
// that the warm-up (where the drop-in plans a new call shape) is not counted.
__attribute__((noinline)) void timed_calls(const Config& c, bool gather, const std::vector<char>& send, std::vector<char>& recv,
                                           int m, MPI_Comm comm, Request* persistent, int n) {
  calls(c, gather, send, recv, m, comm, persistent, n);
}

double median_of(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// ---- --paired: the same size through Open MPI's own entry points in the same launch --------

// The reference side: Open MPI's PMPI_ entry points (never the drop-in's, even when preloaded)
// on a distributed graph communicator with the same neighbours in the same order.
void reference_call(const Config& c, bool gather, const std::vector<char>& send, std::vector<char>& recv, int m,
                    MPI_Comm graph, MPI_Request* persistent) {
  const char* s = send.data();
  char* r = recv.data();
  if (c.form == "blocking") {
    gather ? PMPI_Neighbor_allgather(s, m, MPI_BYTE, r, m, MPI_BYTE, graph) : PMPI_Neighbor_alltoall(s, m, MPI_BYTE, r, m, MPI_BYTE, graph);
  } else if (c.form == "nonblocking") {
    MPI_Request q;
    gather ? PMPI_Ineighbor_allgather(s, m, MPI_BYTE, r, m, MPI_BYTE, graph, &q)
           : PMPI_Ineighbor_alltoall(s, m, MPI_BYTE, r, m, MPI_BYTE, graph, &q);
    PMPI_Wait(&q, MPI_STATUS_IGNORE);
  } else {
    PMPI_Start(persistent);
    PMPI_Wait(persistent, MPI_STATUS_IGNORE);
  }
}

// The reference side's communicator: the benchmark's own in the standard-API build (a graph);
// in the native build a distributed graph of the same neighbourhood, made through PMPI_.
MPI_Comm reference_comm(const Neighbourhood& n, MPI_Comm own) {
#ifdef CARTPLAN_NATIVE_API
  MPI_Comm graph = MPI_COMM_NULL;
  PMPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(n.sources.size()), n.sources.data(), MPI_UNWEIGHTED,
                                  static_cast<int>(n.dests.size()), n.dests.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);
  (void)own;
  return graph;
#else
  (void)n;
  return own;
#endif
}

// Batches of `k` calls of one side: 0 = the benchmark's own API (MPI_, the drop-in's when
// preloaded; or cartplan's native API), 1 = the reference. Returns the time per call in us.
double paired_batch(const Config& c, bool gather, const std::vector<char>& send, std::vector<char>& recv, int m,
                    MPI_Comm own, MPI_Comm graph, Request* mine, MPI_Request* ref, int side, int k) {
  const double b0 = MPI_Wtime();
  if (side == 0) {
    timed_calls(c, gather, send, recv, m, own, mine, k);
  } else {
    for (int i = 0; i < k; ++i) reference_call(c, gather, send, recv, m, graph, ref);
  }
  return (MPI_Wtime() - b0) * 1e6 / k;
}

// One size timed through both sides in one launch, in alternating batches whose order swaps every
// pair, so that both see the same machine state (on this 2-core VM a launch lands in one of a few
// speed modes, and a median over launches is decided by how many launches of each variant landed
// in the slow one). Prints "bytes own_us ref_us ratio": each side's median batch time per call and
// the median over batch pairs of own/ref, averaged over ranks.
void paired_size(const Config& c, bool gather, const std::vector<char>& send, std::vector<char>& recv, int m,
                 MPI_Comm own, MPI_Comm graph) {
  Request mine{};
  MPI_Request ref = MPI_REQUEST_NULL;
  if (c.form == "persistent") {
    init(gather, send.data(), m, recv.data(), own, &mine);
    gather ? PMPIX_Neighbor_allgather_init(send.data(), m, MPI_BYTE, recv.data(), m, MPI_BYTE, graph, MPI_INFO_NULL, &ref)
           : PMPIX_Neighbor_alltoall_init(send.data(), m, MPI_BYTE, recv.data(), m, MPI_BYTE, graph, MPI_INFO_NULL, &ref);
  }
  for (int side = 0; side < 2; ++side) paired_batch(c, gather, send, recv, m, own, graph, &mine, &ref, side, c.warmup);
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<double> t[2], ratio;
  for (int done = 0, pair = 0; done < c.iterations; done += c.batch, ++pair) {
    const int k = std::min(c.batch, c.iterations - done);
    for (int i = 0; i < 2; ++i) t[(i + pair) % 2].push_back(paired_batch(c, gather, send, recv, m, own, graph, &mine, &ref, (i + pair) % 2, k));
    ratio.push_back(t[0].back() / t[1].back());
  }
  if (c.form == "persistent") {
    release(&mine);
    PMPI_Request_free(&ref);
  }
  int p = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double v[3] = {median_of(t[0]), median_of(t[1]), median_of(ratio)}, sum[3];
  MPI_Reduce(v, sum, 3, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) std::printf("%d %.3f %.3f %.4f\n", m, sum[0] / p, sum[1] / p, sum[2] / p);
}


// Blocks of the last call against what their sources sent: block k of rank q is byte pattern
// (q, k) (allgather: (q, 0)).
long errors(const Neighbourhood& n, bool gather, const std::vector<char>& recv, int m) {
  long bad = 0;
  for (std::size_t j = 0; j < n.sources.size(); ++j)
    for (int b = 0; b < m; ++b)
      bad += recv[j * m + b] != static_cast<char>(n.sources[j] * 31 + (gather ? 0 : n.recv_index[j]) * 7 + b);
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const Config c = parse(argc, argv);
  int p = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const Neighbourhood n = neighbourhood(c, p, rank);
  MPI_Comm comm = open_comm(c, n);
  MPI_Comm reference = c.paired ? reference_comm(n, comm) : MPI_COMM_NULL;
  const bool gather = c.op == "allgather";
  const std::size_t out = n.dests.size(), in = n.sources.size();
  long bad = 0;
  for (int m : c.sizes) {
    std::vector<char> send((gather ? 1 : std::max<std::size_t>(out, 1)) * m), recv(std::max<std::size_t>(in, 1) * m, 0);
    for (std::size_t k = 0; k < (gather ? 1 : out); ++k)
      for (int b = 0; b < m; ++b) send[k * m + b] = static_cast<char>(rank * 31 + (gather ? 0 : n.send_index[k]) * 7 + b);
    if (c.paired) {
      paired_size(c, gather, send, recv, m, comm, reference);
      if (c.check) bad += errors(n, gather, recv, m);
      MPI_Barrier(MPI_COMM_WORLD);
      continue;
    }
    Request persistent{};
    if (c.form == "persistent") init(gather, send.data(), m, recv.data(), comm, &persistent);
    calls(c, gather, send, recv, m, comm, &persistent, c.warmup);
    MPI_Barrier(MPI_COMM_WORLD);
    std::vector<double> batches;
    const double t0 = MPI_Wtime();
    for (int done = 0; done < c.iterations; done += c.batch) {
      const int k = std::min(c.batch, c.iterations - done);
      const double b0 = MPI_Wtime();
      timed_calls(c, gather, send, recv, m, comm, &persistent, k);
      batches.push_back((MPI_Wtime() - b0) * 1e6 / k);
    }
    const double us = (MPI_Wtime() - t0) * 1e6 / c.iterations;
    const double median = median_of(batches);
    if (c.form == "persistent") release(&persistent);
    if (c.check) bad += errors(n, gather, recv, m);
    double sum = 0, lo = 0, hi = 0, median_sum = 0;
    MPI_Reduce(&us, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&us, &lo, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&us, &hi, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&median, &median_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) std::printf("%d %.3f %.3f %.3f %.3f\n", m, sum / p, lo, hi, median_sum / p);
    // No rank starts the next size before every rank has left this one's timed loop (OSU OMB
    // barriers after every call). Without it, a rank that finished early runs the next size's
    // warm-up while others still time this size: with the drop-in, that first call of a new
    // shape plans it (milliseconds of CPU), and on an oversubscribed node that planning took the
    // cores from the ranks still timing, which charged it to the wrong size.
    MPI_Barrier(MPI_COMM_WORLD);
  }
  long all_bad = 0;
  MPI_Reduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0 && all_bad) std::printf("ERRORS %ld\n", all_bad);
  if (reference != MPI_COMM_NULL && reference != comm) PMPI_Comm_free(&reference);
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return all_bad ? 1 : 0;
}
