// quickstart (C++): the README's C++ form in a whole program. Every rank of a 2x2 torus (run it
// on 4 ranks) sends its rank to its four neighbours with a persistent alltoall and checks that
// block i came from the rank at -offset[i]. Errors throw cartplan::mpi::MpiError.
#include <cartplan/cartplan.hpp>
#include <mpi.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    // README: begin
    cartplan::mpi::CartComm cart(MPI_COMM_WORLD, {2, 2}, {1, 1}, {{1, 0}, {-1, 0}, {0, 1}, {0, -1}});
    std::vector<int> send(4, rank), recv(4, -1);  // block i goes to +offset[i], one int each
    auto halo = cartplan::mpi::Collective::alltoall(cart, send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT);
    for (int it = 0; it < 10; ++it) halo.run();  // start() + wait(); or overlap work between them
    // recv[i] came from cart.sources()[i], the rank at -offset[i]
    // README: end
    const std::vector<int> sources = cart.sources();
    for (int i = 0; i < 4; ++i) bad += recv[i] != sources[i];
  } catch (const cartplan::mpi::MpiError& e) {
    std::fprintf(stderr, "quickstart_cpp: %s (MPI error class %d)\n", e.what(), e.code());
    ++bad;
  }
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("quickstart_cpp: %s\n", bad ? "FAILED" : "OK");
  MPI_Finalize();
  return bad != 0;
}
