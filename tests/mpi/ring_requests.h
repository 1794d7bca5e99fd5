// The ring and the mixed completion loop that the request tests share (persistent_request_test,
// nonblocking_request_test): a periodic ring with offsets -2, -1, +1, +2 as a distributed graph,
// rank- and iteration-dependent block values, and one step of MPI_Waitany / MPI_Testsome /
// MPI_Testany / MPI_Testall over {a plain receive, a collective}.
//
//   MPI_Comm comm = ring_requests::ring(h);
//   ... block i of rank r came from rank wrap(r - kOffsets[i], p) with value(that rank, i, iter)
#pragma once

#include <mpi.h>

#include <vector>

#include "tests/mpi/harness.h"

namespace cartplan::mpitest::ring_requests {

inline constexpr int kOffsets[] = {-2, -1, 1, 2};

inline int wrap(int r, int p) { return ((r % p) + p) % p; }
inline int value(int rank, int block, int iter) { return (iter * 1024 + rank) * 8 + block; }

inline MPI_Comm ring(const Harness& h) {
  std::vector<int> sources, dests;
  for (int o : kOffsets) {
    sources.push_back(wrap(h.rank - o, h.size));
    dests.push_back(wrap(h.rank + o, h.size));
  }
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 4, sources.data(), MPI_UNWEIGHTED, 4, dests.data(), MPI_UNWEIGHTED,
                                 MPI_INFO_NULL, 0, &comm);
  return comm;
}

// Block i comes from rank - offset i, which sent it as its block i (alltoall) or its only one.
inline bool ring_data_ok(const Harness& h, const std::vector<int>& recv, bool gather, int iter) {
  bool ok = true;
  for (int i = 0; i < 4; ++i) ok = ok && recv[i] == value(wrap(h.rank - kOffsets[i], h.size), gather ? 0 : i, iter);
  return ok;
}

// How the mixed loops complete {reqs[0] = a plain receive, reqs[1] = the collective}.
enum class Completion { kWaitany, kTestsome, kTestany, kTestall };
inline const char* const kCompletionNames[] = {"MPI_Waitany", "MPI_Testsome", "MPI_Testany", "MPI_Testall"};

// One call of `how` on the two; counts what it reported in `reported`. -1 once both are
// null or inactive (MPI_UNDEFINED), else how many it reported.
inline int complete_some(Completion how, MPI_Request reqs[2], int reported[2]) {
  int n = 0, idx[2] = {-1, -1}, flag = 0;
  switch (how) {
    case Completion::kWaitany: MPI_Waitany(2, reqs, &idx[0], MPI_STATUS_IGNORE); n = idx[0] == MPI_UNDEFINED ? 0 : 1; break;
    case Completion::kTestsome: MPI_Testsome(2, reqs, &n, idx, MPI_STATUSES_IGNORE); break;
    case Completion::kTestany:
      MPI_Testany(2, reqs, &idx[0], &flag, MPI_STATUS_IGNORE);
      n = flag && idx[0] != MPI_UNDEFINED ? 1 : 0;
      break;
    case Completion::kTestall:
      MPI_Testall(2, reqs, &flag, MPI_STATUSES_IGNORE);
      if (flag) for (int i = 0; i < 2; ++i) if (!reported[i]) idx[n++] = i;
      break;
  }
  if (n == MPI_UNDEFINED) return -1;
  for (int k = 0; k < n; ++k) ++reported[idx[k]];
  return n;
}

}  // namespace cartplan::mpitest::ring_requests
