// The drop-in's non-blocking uniform calls with derived datatypes (linked in, run with
// CARTPLAN_INTERPOSE_ALGORITHM=combining): MPI_Ineighbor_alltoall on a distributed graph of the
// 2-D Moore torus with a strided send datatype and a contiguous derived receive datatype builds
// an exchange per request in flight once; later calls take them from the communicator's pool by
// layout (builds counted by the private copies, MPI_Type_create_resized, cartplan makes of
// each derived datatype it builds with); three requests in flight, completed in a rank-dependent order (MPI_Wait in
// order, in reverse, or MPI_Test round-robin); a datatype freed and created again with another
// layout builds again, its data right; every call accelerated on every rank.
#include <mpi.h>

#include <string>
#include <vector>

#include "tests/mpi/count_type_builds.h"
#include "tests/mpi/derived_case.h"
#include "tests/mpi/harness.h"

extern "C" long CARTPLAN_Accelerated_calls(MPI_Comm comm);

namespace {

using cartplan::mpitest::Harness;
using cartplan::mpitest::kElems;

constexpr int kBlocks = 8;
constexpr int kInFlight = 3;

struct Graph {
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<int> sources;
  std::vector<int> send = std::vector<int>(kBlocks * 4 * kElems);
  // One receive buffer per request in flight, kept from round to round (the pool keys addresses).
  std::vector<std::vector<int>> recv = std::vector<std::vector<int>>(kInFlight, std::vector<int>(kBlocks * kElems));
};

// Posts kInFlight MPI_Ineighbor_alltoall of one `stype` element per block (block i of the send
// buffer at i times its extent), completes them in rank order and checks every buffer: block i
// holds sources[i]'s block i at `stride`. `builds`: how many of the calls are expected to build
// (2 datatype copies each, MPI_Type_create_resized), the first ones; the others reuse (none).
void round_trip(Harness& h, Graph& g, MPI_Datatype stype, MPI_Datatype rtype, int stride, int base, int builds,
                const std::string& what) {
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_get_extent(stype, &lb, &extent);
  const int block = static_cast<int>(extent / static_cast<MPI_Aint>(sizeof(int)));
  for (std::size_t e = 0; e < g.send.size(); ++e) g.send[e] = h.rank * 10000 + static_cast<int>(e) + base;
  std::vector<std::vector<int>>& recv = g.recv;
  for (std::vector<int>& r : recv) r.assign(r.size(), -1);
  std::vector<MPI_Request> requests(kInFlight, MPI_REQUEST_NULL);
  std::vector<long> dups(kInFlight);
  for (int k = 0; k < kInFlight; ++k) {
    const long before = type_copies;
    const int rc = MPI_Ineighbor_alltoall(g.send.data(), 1, stype, recv[k].data(), 1, rtype, g.comm, &requests[k]);
    dups[k] = type_copies - before;
    h.check(rc == MPI_SUCCESS, what + ": MPI_Ineighbor_alltoall returns MPI_SUCCESS");
  }
  const int rc = cartplan::mpitest::complete_in_rank_order(
      h.rank, requests, MPI_REQUEST_NULL, [](MPI_Request* r) { return MPI_Wait(r, MPI_STATUS_IGNORE); },
      [](MPI_Request* r, int* flag) { return MPI_Test(r, flag, MPI_STATUS_IGNORE); });
  h.check(rc == MPI_SUCCESS, what + ": every request completes with MPI_SUCCESS");
  for (int k = 0; k < kInFlight; ++k) {
    bool ok = true;
    for (int i = 0; i < kBlocks; ++i)
      for (int j = 0; j < kElems; ++j)
        ok = ok && recv[k][i * kElems + j] == g.sources[i] * 10000 + block * i + stride * j + base;
    const std::string req = what + ": request " + std::to_string(k);
    h.check(ok, req + ": every block from its source");
    const long expected = k < builds ? 2 : 0;
    h.check(dups[k] == expected, req + (k < builds ? " builds" : " reuses a pooled exchange") + " (" + std::to_string(dups[k]) +
                                     " datatypes copied, expected " + std::to_string(expected) + ")");
  }
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  Graph g;
  g.comm = cartplan::mpitest::open_moore_graph(h.rank, h.size, &g.sources);
  MPI_Datatype rtype = cartplan::mpitest::contiguous_block();
  MPI_Datatype a = cartplan::mpitest::strided(2);
  round_trip(h, g, a, rtype, 2, 0, kInFlight, "first round");
  for (int r = 1; r <= 3; ++r) round_trip(h, g, a, rtype, 2, 100000 * r, 0, "round " + std::to_string(r));
  MPI_Type_free(&a);
  MPI_Datatype b = cartplan::mpitest::strided(3);
  round_trip(h, g, b, rtype, 3, 0, kInFlight, "new layout");
  round_trip(h, g, b, rtype, 3, 500000, 0, "new layout again");
  const long accelerated = CARTPLAN_Accelerated_calls(g.comm);
  h.check(accelerated == 6 * kInFlight, "the drop-in ran every call through cartplan on this rank (" + std::to_string(accelerated) + ")");
  MPI_Type_free(&b);
  MPI_Type_free(&rtype);
  MPI_Comm_free(&g.comm);
  return h.finish("interpose_derived_pool_test");
}
