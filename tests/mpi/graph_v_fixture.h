// What the tests of graph v calls that reuse sizes share (graph_sized_calls_test,
// graph_sized_requests_test): rank-dependent counts per edge in variants that change on one
// rank, gapped displacements, the graph communicator with a forced algorithm, and the process
// counters' change summed over ranks.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "backends/mpi/graph_sized_calls.h"
#include "backends/mpi/graph_sizes.h"
#include "ir/graph/topology.h"
#include "tests/mpi/graph_algorithm_info.h"

namespace cartplan::mpitest::graph_v {

// The count of the c-th edge from a to b in variant v (both ends compute it alike). Variant 1
// differs from 0 only for blocks that rank `changer` sends; variant 2 has empty blocks.
inline int count_of(int a, int b, int c, int v, int changer) {
  const int base = 1 + (a * 7 + b * 3 + c * 5) % 4;
  if (v == 1 && a == changer) return base + 2 + (b + c) % 3;
  if (v == 2) return (a + b + c) % 3 == 0 ? 0 : base;
  return base;
}

struct Sides {
  std::vector<int> sc, sd, rc, rd;
  int sbytes = 0, rbytes = 0;
};

// Counts and gapped displacements (in ints) for this rank's edges; `skew` shifts receive
// displacements so that a call with new buffers also has a new layout.
// allgatherv (`gather`): one send block, its count a function of the sender alone.
inline Sides sides(const std::vector<int>& in, const std::vector<int>& out, int rank, int v, int changer, int skew, bool gather) {
  Sides s;
  for (std::size_t k = 0; k < (gather ? 1 : out.size()); ++k) {
    int c = 0;
    for (std::size_t e = 0; e < k; ++e) c += out[e] == out[k];
    s.sc.push_back(gather ? count_of(rank, 0, 0, v, changer) : count_of(rank, out[k], c, v, changer));
    s.sd.push_back(s.sbytes + 1);
    s.sbytes += s.sc.back() + 1;
  }
  for (std::size_t j = 0; j < in.size(); ++j) {
    int c = 0;
    for (std::size_t e = 0; e < j; ++e) c += in[e] == in[j];
    s.rc.push_back(gather ? count_of(in[j], 0, 0, v, changer) : count_of(in[j], rank, c, v, changer));
    s.rd.push_back(s.rbytes + 2 + skew);
    s.rbytes += s.rc.back() + 2 + skew;
  }
  s.sbytes += 1;
  s.rbytes += 1;
  return s;
}

struct Graph {
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<int> in, out;
  bool gather = false;  // allgatherv, else alltoallv
  // The receive type: MPI_INT, or (stride 2) an int resized to the extent of two, a derived
  // type that is not contiguous (layouts rebuilt every call, parts unpacked by MPI_Unpack).
  MPI_Datatype rtype = MPI_INT;
  int stride = 1;
};

inline Graph make_graph(const cartplan::ir::graph::Topology& t, int rank, const char* algorithm, bool gather) {
  Graph g;
  g.gather = gather;
  g.in = t.ranks[rank].in;
  g.out = t.ranks[rank].out;
  MPI_Info info;
  MPI_Info_create(&info);
  cartplan::mpitest::set_graph_algorithm(info, algorithm);
  int dummy = 0;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(g.in.size()), g.in.empty() ? &dummy : g.in.data(), MPI_UNWEIGHTED,
                                 static_cast<int>(g.out.size()), g.out.empty() ? &dummy : g.out.data(), MPI_UNWEIGHTED, info, 0, &g.comm);
  MPI_Info_free(&info);
  MPI_Comm_set_errhandler(g.comm, MPI_ERRORS_RETURN);
  return g;
}

// The counters' changes over one call, summed over ranks.
// `size_passes`: size passes started (graph_sizes.h); `requests`: calls non-blocking requests ran.
struct Delta {
  long calls = 0, as_before = 0, with_sizes = 0, layouts = 0, requests = 0, size_passes = 0;
};

// Collective over MPI_COMM_WORLD: the counters' change since `before`/`passes_before`.
inline Delta delta_since(const cartplan::mpi::SizedCallStats& before, std::uint64_t passes_before = cartplan::mpi::size_passes_started()) {
  const cartplan::mpi::SizedCallStats now = cartplan::mpi::sized_call_stats();
  long mine[6] = {static_cast<long>(now.calls - before.calls), static_cast<long>(now.as_before - before.as_before),
                  static_cast<long>(now.with_sizes - before.with_sizes), static_cast<long>(now.layouts - before.layouts),
                  static_cast<long>(now.requests - before.requests),
                  static_cast<long>(cartplan::mpi::size_passes_started() - passes_before)};
  long all[6] = {0, 0, 0, 0, 0, 0};
  MPI_Allreduce(mine, all, 6, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  return {all[0], all[1], all[2], all[3], all[4], all[5]};
}

}  // namespace cartplan::mpitest::graph_v
