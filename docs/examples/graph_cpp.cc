// graph_cpp: the C++ forms of the graph collectives and of the non-blocking halo exchange, built
// by the CMake consumer against an installed cartplan (run it on 4 ranks). Each rank sends to the
// next two ranks of a ring and to itself (a self edge), gathers its sources' values with a
// persistent cartplan::mpi::GraphCollective (forced to the grid algorithm, then auto) and a
// blocking and a non-blocking DistGraphComm::alltoall, and fills the ghost cells of a 2x2 torus's arrays with
// Halo::iexchange; every received value is checked against what its sender holds.
//
//   cmake -S tests/consumers/cmake -B build -DCMAKE_PREFIX_PATH=PREFIX && cmake --build build
//   mpirun -np 4 build/graph_cpp
#include <cartplan/cartplan.hpp>
#include <mpi.h>

#include <cstdio>
#include <vector>

namespace {

int failures = 0;

void expect(bool ok, const char* what, int rank) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "graph_cpp: rank %d: %s\n", rank, what);
}

// The ring graph: destinations me+1, me+2 and me; sources me-1, me-2 and me.
void graph_collectives(int me, int p) {
  const std::vector<int> out = {(me + 1) % p, (me + 2) % p, me}, in = {(me + p - 1) % p, (me + p - 2) % p, me};
  cartplan::mpi::DistGraphComm g(MPI_COMM_WORLD, in, out);
  for (const char* algorithm : {"grid", "auto"}) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cartplan_algorithm", algorithm);
    int mine = 0;
    std::vector<int> got(3, -1);
    auto r = cartplan::mpi::GraphCollective::allgather(g, &mine, 1, MPI_INT, got.data(), 1, MPI_INT, info);
    MPI_Info_free(&info);
    for (int round = 0; round < 3; ++round) {
      mine = 100 * me + round;
      r.run();
      for (int j = 0; j < 3; ++j) expect(got[j] == 100 * in[j] + round, "allgather: a source's value", me);
    }
  }
  std::vector<int> send = {10 * me + 1, 10 * me + 2, 10 * me}, recv(3, -1);  // block k to out[k]
  g.alltoall(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT);
  // Source in[0] = me-1 sent me its block 0, in[1] = me-2 its block 1, and my own block 2 came back.
  expect(recv[0] == 10 * in[0] + 1 && recv[1] == 10 * in[1] + 2 && recv[2] == 10 * me, "alltoall blocks", me);
  for (int& x : send) x += 1000;
  cartplan::mpi::GraphCollective r = g.ialltoall(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT);  // non-blocking
  r.wait();
  expect(recv[0] == 10 * in[0] + 1001 && recv[1] == 10 * in[1] + 1002 && recv[2] == 10 * me + 1000, "ialltoall blocks", me);
}

// A 2x2 torus of 3x3 interiors with one ghost layer: the ghost cell across each face, edge or
// corner holds the neighbour's value.
void nonblocking_halo(int me) {
  MPI_Comm cart;
  const int dims[2] = {2, 2}, periods[2] = {1, 1};
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  std::vector<double> a(25, -1.0);
  for (int i = 1; i <= 3; ++i)
    for (int j = 1; j <= 3; ++j) a[i * 5 + j] = me;  // the interior holds the rank
  {
    cartplan::mpi::Halo halo(cart, {3, 3}, {1, 1}, {1, 1}, MPI_DOUBLE);
    cartplan::mpi::HaloRequest r = halo.iexchange(a.data());
    r.wait();
  }
  int c[2];
  MPI_Cart_coords(cart, me, 2, c);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) {
      const int di = i == 0 ? -1 : i == 4 ? 1 : 0, dj = j == 0 ? -1 : j == 4 ? 1 : 0;
      int n[2] = {(c[0] + di + 2) % 2, (c[1] + dj + 2) % 2}, source = 0;
      MPI_Cart_rank(cart, n, &source);
      expect(a[i * 5 + j] == source, "Halo::iexchange: a cell holds its source's value", me);
    }
  MPI_Comm_free(&cart);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0, p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (p != 4) {
    if (me == 0) std::fprintf(stderr, "graph_cpp: run me on 4 ranks (mpirun -np 4), not %d\n", p);
    MPI_Finalize();
    return 2;
  }
  try {
    graph_collectives(me, p);
    nonblocking_halo(me);
  } catch (const cartplan::mpi::MpiError& e) {
    expect(false, e.what(), me);
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0 && total == 0) std::printf("graph_cpp: OK\n");
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
