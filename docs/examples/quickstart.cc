// quickstart (C++): the README's C++ form in a whole program. Each rank of a 2x2 torus (run it on
// 4 ranks) owns an 8x8 interior of doubles with one ghost layer; a cartplan::mpi::Halo describes
// the array once, a persistent exchange fills the ghost cells from the neighbours, and every cell
// is checked against its global position. Errors throw cartplan::mpi::MpiError.
#include <cartplan/cartplan.hpp>
#include <mpi.h>

#include <cstdio>
#include <vector>

namespace {

constexpr int kN = 8, kE = kN + 2;  // interior cells per dimension, array extent (one ghost layer)

// The value of the cell at array position (i, j) of the rank at coords c: 100 x + y, (x, y) its
// position on the 16x16 torus.
double value(const int c[2], int i, int j) {
  const int x = (c[0] * kN + i - 1 + 2 * kN) % (2 * kN), y = (c[1] * kN + j - 1 + 2 * kN) % (2 * kN);
  return 100.0 * x + y;
}

// The array with its interior set and its ghost cells -1.
std::vector<double> initial(const int c[2]) {
  std::vector<double> u(kE * kE, -1.0);
  for (int i = 1; i <= kN; ++i)
    for (int j = 1; j <= kN; ++j) u[i * kE + j] = value(c, i, j);
  return u;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, bad = 0, dims[2] = {2, 2}, periods[2] = {1, 1}, c[2] = {0, 0};
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  MPI_Comm_rank(cart, &rank);
  MPI_Cart_coords(cart, rank, 2, c);
  try {
    // README: begin
    cartplan::mpi::Halo halo(cart, {8, 8}, {1, 1}, {1, 1}, MPI_DOUBLE);  // cart: a 2x2 torus (MPI_Cart_create)
    std::vector<double> u = initial(c);                                  // 10x10: an 8x8 interior, one ghost layer
    cartplan::mpi::HaloRequest exchange = halo.exchange_init(u.data());
    for (int it = 0; it < 10; ++it) {
      exchange.start();
      // update the interior cells that need no ghost cell
      exchange.wait();
    }
    // README: end
    for (int i = 0; i < kE; ++i)
      for (int j = 0; j < kE; ++j) bad += u[i * kE + j] != value(c, i, j);
  } catch (const cartplan::mpi::MpiError& e) {
    std::fprintf(stderr, "quickstart_cpp: %s (MPI error class %d)\n", e.what(), e.code());
    ++bad;
  }
  MPI_Comm_free(&cart);
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("quickstart_cpp: %s\n", bad ? "FAILED" : "OK");
  MPI_Finalize();
  return bad != 0;
}
