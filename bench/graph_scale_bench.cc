// Graph collectives at scale, for SimGrid's SMPI (also runs under Open MPI): on a graph from a
// GRAPH spec (engine/graph/graph_spec.h), persistent Cart_graph_neighbor_allgather, _alltoall or
// _alltoallv with each algorithm (linear, the baseline: the Isend/Irecv loop MPI libraries run;
// pairing, seed 003; cumulative; grid on the 2-D virtual grid; gridN, the grid on the N-D one
// (Info cartplan_grid_dims = N: grid3, grid4, grid8, ...); auto; auto-LIST, auto with Info cartplan_auto_candidates=LIST,
// e.g. auto-grid, or auto-all for every candidate, the default before it became auto).
// No MPI_Neighbor_* and no MPI distributed graph are
// needed: rank 0 builds the graph and hands every rank its lists, each variant gets its own
// communicator from Cart_graph_comm_create_adjacent (so its init pays its own pattern
// construction), and every recv byte is checked against the value its origin wrote before
// anything is timed. Per variant: the init time (slowest rank, pattern construction and auto's
// agreement included), the slowest rank's time per call (median and quartiles over repetitions,
// the first one dropped as warm-up, variants interleaved) and the break-even number of calls,
// set-up / (linear - variant), where set-up is the variant's first init on its communicator (its
// patterns are built there; later points on the same communicator reuse them, so their init is
// smaller). Under SMPI also each variant's sync time (column "sync us": one call after a
// barrier, last rank's entry to last rank's exit on the one simulated clock; NaN elsewhere),
// which, unlike the per-rank times, holds no barrier exit skew (docs/smpi.md, "Timing").
// Several ops and block sizes run in one simulation; a markdown table per point
// (bench/smpi/graph_report.py parses them).
//
//   smpirun -np 256 ... graph_scale_bench --graph moore:dims=16x16,r=2 --ops allgather,alltoallv --bytes 4,1024
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "bench/bench_util.h"
#include "engine/graph/graph_spec.h"

namespace {

using cartplan::bench::Summary;

struct Args {
  std::string graph = "moore:dims=4x2,r=1", ops = "allgather", sizes = "4", variants = "linear,pairing,cumulative,auto";
  int iters = 3, reps = 2, theta = 4;
  std::string op;  // of the point being run
  int bytes = 0;
};

bool parse(int argc, char** argv, Args* a) {
  if (argc % 2 == 0) return false;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--graph") a->graph = v;
    else if (k == "--ops") a->ops = v;
    else if (k == "--bytes") a->sizes = v;
    else if (k == "--iters") a->iters = std::stoi(v);
    else if (k == "--reps") a->reps = std::stoi(v);
    else if (k == "--theta") a->theta = std::stoi(v);
    else if (k == "--variants") a->variants = v;
    else return false;
  }
  return a->iters > 0 && a->reps > 1;
}

// This rank's lists, and for recv block j the index k of the send block its source sends over
// that edge (MPI's k-th edge rule): what it must hold is the source's block k.
struct Lists {
  std::vector<int> in, out, sender_block;
};

std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

unsigned char byte_of(int origin, int k, int i) { return static_cast<unsigned char>(mix((std::uint64_t(origin) << 32) ^ (std::uint64_t(k) << 12)) + i * 7); }

// alltoallv: block k of `origin` has between bytes/2 and bytes/2 + bytes bytes (mean about bytes).
int vbytes(int origin, int k, int bytes) { return bytes / 2 + static_cast<int>(mix(std::uint64_t(origin) * 7919 + k) % std::uint64_t(bytes + 1)); }

// Rank 0's side: per rank its in-list, out-list and sender blocks, flattened for MPI_Scatterv.
std::vector<std::vector<int>> lists_of(const cartplan::ir::graph::Topology& t) {
  const int p = t.size();
  std::vector<std::map<int, std::vector<int>>> ks(static_cast<std::size_t>(p));  // [b][a]: a's blocks to b
  for (int a = 0; a < p; ++a)
    for (std::size_t k = 0; k < t.ranks[a].out.size(); ++k) ks[t.ranks[a].out[k]][a].push_back(static_cast<int>(k));
  std::vector<std::vector<int>> flat(static_cast<std::size_t>(p));
  for (int b = 0; b < p; ++b) {
    const auto& r = t.ranks[b];
    std::vector<int>& f = flat[b];
    f = {static_cast<int>(r.in.size()), static_cast<int>(r.out.size())};
    f.insert(f.end(), r.in.begin(), r.in.end());
    f.insert(f.end(), r.out.begin(), r.out.end());
    std::map<int, std::size_t> seen;
    for (int a : r.in) f.push_back(ks[b][a][seen[a]++]);
  }
  return flat;
}

// Collective: rank 0 builds the graph; false (on every rank) if the spec is bad or its size is not p.
bool distribute(const std::string& spec, int rank, int size, Lists* mine) {
  std::vector<std::vector<int>> flat;
  int ok = 1;
  if (rank == 0) {
    auto t = cartplan::engine::graph::parse_graph_spec(spec);
    ok = t && t->size() == size;
    if (!t) std::fprintf(stderr, "graph_scale_bench: %s\n", t.error().c_str());
    else if (!ok) std::fprintf(stderr, "graph_scale_bench: the graph has %d ranks, the run %d\n", t->size(), size);
    if (ok) flat = lists_of(*t);
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!ok) return false;
  std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size)), all;
  for (int r = 0; rank == 0 && r < size; ++r) {
    counts[r] = static_cast<int>(flat[r].size());
    displs[r] = static_cast<int>(all.size());
    all.insert(all.end(), flat[r].begin(), flat[r].end());
  }
  int n = 0;
  MPI_Scatter(counts.data(), 1, MPI_INT, &n, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> got(static_cast<std::size_t>(n));
  MPI_Scatterv(all.data(), counts.data(), displs.data(), MPI_INT, got.data(), n, MPI_INT, 0, MPI_COMM_WORLD);
  const int in = got[0], out = got[1];
  mine->in.assign(got.begin() + 2, got.begin() + 2 + in);
  mine->out.assign(got.begin() + 2 + in, got.begin() + 2 + in + out);
  mine->sender_block.assign(got.begin() + 2 + in + out, got.end());
  return true;
}

// Buffers of one op: send blocks filled with their identity's bytes; expected recv bytes.
struct Buffers {
  std::vector<unsigned char> send, recv, expect;
  std::vector<int> scounts, sdispls, rcounts, rdispls;
};

Buffers make_buffers(const Args& a, const Lists& l, int rank) {
  Buffers b;
  const bool personal = a.op != "allgather", varied = a.op == "alltoallv";
  const std::size_t sblocks = personal ? l.out.size() : 1;
  for (std::size_t k = 0; k < sblocks; ++k) {
    const int n = varied ? vbytes(rank, static_cast<int>(k), a.bytes) : a.bytes;
    b.scounts.push_back(n);
    b.sdispls.push_back(static_cast<int>(b.send.size()));
    for (int i = 0; i < n; ++i) b.send.push_back(byte_of(rank, static_cast<int>(k), i));
  }
  for (std::size_t j = 0; j < l.in.size(); ++j) {
    const int k = personal ? l.sender_block[j] : 0, n = varied ? vbytes(l.in[j], k, a.bytes) : a.bytes;
    b.rcounts.push_back(n);
    b.rdispls.push_back(static_cast<int>(b.expect.size()));
    for (int i = 0; i < n; ++i) b.expect.push_back(byte_of(l.in[j], k, i));
  }
  b.send.push_back(0);  // never an empty vector: data() is not NULL
  b.expect.push_back(0xA5);
  b.recv.resize(b.expect.size());
  for (std::size_t i = 0; i + 1 < b.recv.size(); ++i) b.recv[i] = static_cast<unsigned char>(~b.expect[i]);  // unwritten bytes fail
  b.recv.back() = b.expect.back();  // the byte after the blocks must stay as it is
  return b;
}

int init(const Args& a, Buffers& b, MPI_Comm g, MPI_Info info, Cart_Request* r) {
  if (a.op == "allgather")
    return Cart_graph_neighbor_allgather_init(b.send.data(), a.bytes, MPI_BYTE, b.recv.data(), a.bytes, MPI_BYTE, g, info, r);
  if (a.op == "alltoall")
    return Cart_graph_neighbor_alltoall_init(b.send.data(), a.bytes, MPI_BYTE, b.recv.data(), a.bytes, MPI_BYTE, g, info, r);
  return Cart_graph_neighbor_alltoallv_init(b.send.data(), b.scounts.data(), b.sdispls.data(), MPI_BYTE, b.recv.data(),
                                            b.rcounts.data(), b.rdispls.data(), MPI_BYTE, g, info, r);
}

double slowest(double us) {
  MPI_Allreduce(MPI_IN_PLACE, &us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return us;
}

// One variant's communicator (kept over the points: its first init builds the patterns, and
// that init's time is the variant's set-up), and the current point's request and buffers.
struct Variant {
  std::string name;
  MPI_Comm comm = MPI_COMM_NULL;
  Cart_Request req = CART_REQUEST_NULL;
  Buffers buf;
  double create_us = 0, setup_us = -1, init_us = 0;
  int ran = -1, ran_dims = 0;  // CART_GRAPH_* and, for grid, its virtual grid's dimensions
  long wrong = 0;
  std::vector<double> times, sync_times;
};

bool set_up(const Args& a, const Lists& l, int rank, Variant* v) {
  MPI_Info info;
  MPI_Info_create(&info);
  // The variant names that are not algorithm names: gridN (N >= 2, grid3, grid8, ...), the grid on
  // the N-D virtual grid grid_dims(p, N) (Info cartplan_grid_dims=N); auto-LIST, auto with Info
  // cartplan_auto_candidates=LIST (auto-grid: linear and the grids only).
  const bool grid_d = v->name.size() > 4 && v->name.rfind("grid", 0) == 0 &&
                      v->name.find_first_not_of("0123456789", 4) == std::string::npos,
             auto_list = v->name.rfind("auto-", 0) == 0;
  MPI_Info_set(info, "cartplan_algorithm", grid_d ? "grid" : auto_list ? "auto" : v->name.c_str());
  if (grid_d) MPI_Info_set(info, "cartplan_grid_dims", v->name.substr(4).c_str());
  if (auto_list) MPI_Info_set(info, "cartplan_auto_candidates", v->name.substr(5).c_str());
  MPI_Info_set(info, "cartplan_theta", std::to_string(a.theta).c_str());
  v->buf = make_buffers(a, l, rank);
  v->times.clear();
  v->sync_times.clear();
  v->wrong = 0;
  int rc = MPI_SUCCESS;
  double t0 = 0;
  if (v->comm == MPI_COMM_NULL) {
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    rc = Cart_graph_comm_create_adjacent(MPI_COMM_WORLD, static_cast<int>(l.in.size()), l.in.data(), static_cast<int>(l.out.size()),
                                         l.out.data(), info, &v->comm);
    v->create_us = slowest((MPI_Wtime() - t0) * 1e6);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  t0 = MPI_Wtime();
  if (rc == MPI_SUCCESS) rc = init(a, v->buf, v->comm, info, &v->req);
  v->init_us = slowest((MPI_Wtime() - t0) * 1e6);
  if (v->setup_us < 0) v->setup_us = v->init_us;
  MPI_Info_free(&info);
  if (rc != MPI_SUCCESS) {
    std::fprintf(stderr, "graph_scale_bench: rank %d, %s: %s\n", rank, v->name.c_str(), Cart_error_message());
    return false;
  }
  Cart_graph_request_algorithm(v->req, &v->ran);
  Cart_graph_request_grid_dims(v->req, &v->ran_dims);
  Cart_start(&v->req);
  Cart_wait(&v->req);
  for (std::size_t i = 0; i < v->buf.expect.size(); ++i) v->wrong += v->buf.recv[i] != v->buf.expect[i];
  MPI_Allreduce(MPI_IN_PLACE, &v->wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  return true;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= s.size()) {
    const std::size_t comma = std::min(s.find(',', at), s.size());
    out.push_back(s.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

void print(const Args& a, int size, const Lists& l, const std::vector<Variant>& vs) {
  long edges[2] = {static_cast<long>(l.out.size()), static_cast<long>(l.out.size())};
  MPI_Allreduce(MPI_IN_PLACE, &edges[0], 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &edges[1], 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return;
  std::printf("# graph %s, %s, %d-byte blocks%s, np %d, %ld edges, max out-degree %ld, theta %d, %d reps x %d calls (us per call, slowest rank)\n",
              a.graph.c_str(), a.op.c_str(), a.bytes, a.op == "alltoallv" ? " (mean; each in [b/2, 3b/2])" : "", size, edges[0], edges[1],
              a.theta, a.reps - 1, a.iters);
  std::printf("| variant | ran | median us | q1 | q3 | vs linear | create us | set-up us | init us | break-even calls | wrong bytes | sync us |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  const char* kinds[] = {"linear", "pairing", "cumulative", "grid"};  // CART_GRAPH_* order
  const double lin = vs.front().name == "linear" ? cartplan::bench::summarize(vs.front().times).median : 0;
  for (const Variant& v : vs) {
    const Summary s = cartplan::bench::summarize(v.times);
    std::string ratio = "-", even = "-";
    if (lin > 0) ratio = std::to_string(s.median / lin).substr(0, 5);
    // Break-even only for a variant that combines and is faster; auto running linear has none.
    if (lin > 0 && v.ran > 0) even = s.median < lin ? std::to_string(static_cast<long>(v.setup_us / (lin - s.median) + 0.999)) : "never";
    const double sync_us = v.sync_times.empty() ? std::nan("") : cartplan::bench::summarize(v.sync_times).median;
    std::string ran = v.ran >= 0 ? kinds[v.ran] : "?";
    if (v.ran_dims > 0) ran += " " + std::to_string(v.ran_dims) + "-D";
    std::printf("| %s | %s | %.2f | %.2f | %.2f | %s | %.0f | %.0f | %.0f | %s | %ld | %.2f |\n", v.name.c_str(), ran.c_str(),
                s.median, s.q1, s.q3, ratio.c_str(), v.create_us, v.setup_us, v.init_us, even.c_str(), v.wrong, sync_us);
  }
}

// One call started right after a barrier, from the moment the last rank entered the call (left
// the barrier) to the moment the last rank left the call, on SMPI's one simulated clock (NaN under other MPIs, whose clocks differ
// per node). Back-to-back timing per rank (time_all) contains the barrier's exit skew spread over
// the calls, tens of us at p = 256 (docs/smpi.md, "Timing"); this measure does not.
double time_synchronized(Variant& v) {
#ifdef CARTPLAN_SMPI
  MPI_Barrier(MPI_COMM_WORLD);
  double t[2] = {MPI_Wtime(), 0};
  Cart_start(&v.req);
  Cart_wait(&v.req);
  t[1] = MPI_Wtime();
  MPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return (t[1] - t[0]) * 1e6;
#else
  (void)v;
  return std::nan("");
#endif
}

void time_all(const Args& a, std::vector<Variant>& vs) {
  for (int r = 0; r < a.reps; ++r) {
    for (Variant& v : vs) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      for (int it = 0; it < a.iters; ++it) {
        Cart_start(&v.req);
        Cart_wait(&v.req);
      }
      const double us = slowest((MPI_Wtime() - t0) * 1e6 / a.iters);
      const double sync_us = time_synchronized(v);
      if (r > 0) v.times.push_back(us), v.sync_times.push_back(sync_us);  // the first repetition warms up
    }
  }
}

}  // namespace

// One point (op, block size) for every variant: set up on the variant's communicator, checked,
// timed if every variant delivered the right bytes, printed. Returns the wrong bytes.
long run_point(const Args& a, const Lists& l, int rank, int size, std::vector<Variant>& vs) {
  long wrong = 0;
  for (Variant& v : vs) {
    if (!set_up(a, l, rank, &v)) MPI_Abort(MPI_COMM_WORLD, 3);
    wrong += v.wrong;
  }
  if (wrong == 0) time_all(a, vs);  // nothing is timed unless every variant delivered the right bytes
  print(a, size, l, vs);
  std::fflush(stdout);  // a simulation stopped by a time limit keeps the points it finished
  for (Variant& v : vs) Cart_request_free(&v.req);
  return wrong;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Args a;
  Lists l;
  bool ok = parse(argc, argv, &a);
  for (const std::string& op : split(a.ops)) ok = ok && (op == "allgather" || op == "alltoall" || op == "alltoallv");
  if (!ok) {
    if (rank == 0)
      std::fprintf(stderr, "usage: graph_scale_bench --graph SPEC [--ops allgather,alltoall,alltoallv] [--bytes B,B] [--iters N] [--reps R>=2] [--theta T] [--variants linear,pairing,cumulative,grid,gridN (grid3, grid8, ...),auto,auto-LIST (auto-grid, auto-all)]\n");
    MPI_Finalize();
    return 2;
  }
  if (!distribute(a.graph, rank, size, &l)) {
    MPI_Finalize();
    return 2;
  }
  std::vector<Variant> vs;
  for (const std::string& name : split(a.variants)) {
    vs.emplace_back();
    vs.back().name = name;
  }
  long wrong = 0;
  for (const std::string& op : split(a.ops)) {
    for (const std::string& bytes : split(a.sizes)) {
      a.op = op;
      a.bytes = std::stoi(bytes);
      wrong += run_point(a, l, rank, size, vs);
    }
  }
  for (Variant& v : vs) MPI_Comm_free(&v.comm);
  MPI_Finalize();
  return wrong == 0 ? 0 : 1;
}
