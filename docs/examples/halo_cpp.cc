// halo_cpp: a C++ example (docs/api.md), built by README's CMake consumer. A 2-D halo exchange on a 2x2 mesh (run it on 4 ranks): each rank owns an (N+2)x(N+2) array, the 8 Moore neighbours exchange edges and corners through subarray datatypes with a persistent cartplan::mpi::Collective, and every halo cell is checked.
//
//   cmake -S tests/consumers/cmake -B build -DCMAKE_PREFIX_PATH=PREFIX && cmake --build build
//   mpirun -np 4 build/halo_cpp
#include <cartplan/cartplan.hpp>
#include <mpi.h>

#include <cstdio>
#include <vector>

namespace {

constexpr int N = 6;          // interior cells per dimension
constexpr int E = N + 2;      // with a halo of depth 1
constexpr double kBoundary = -1.0;  // halo cells outside the mesh keep this value

// The value of global cell (gi, gj): what its owner stores, and what a neighbour's halo must hold.
double value(int gi, int gj) { return 100.0 * gi + gj; }

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0, failures = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4) {
    std::fprintf(stderr, "halo_cpp: run me on 4 ranks (mpirun -np 4), not %d\n", size);
    MPI_Finalize();
    return 2;
  }
  try {
    std::vector<std::vector<int>> offsets;
    for (int a = -1; a <= 1; ++a)
      for (int b = -1; b <= 1; ++b)
        if (a != 0 || b != 0) offsets.push_back({a, b});
    const int t = static_cast<int>(offsets.size());
    cartplan::mpi::CartComm cart(MPI_COMM_WORLD, {2, 2}, {0, 0}, offsets);  // a mesh: no wrap-around

    int me = 0, coords[2];
    MPI_Comm_rank(cart.get(), &me);
    MPI_Cart_coords(cart.get(), me, 2, coords);
    std::vector<double> grid(E * E, kBoundary);
    for (int i = 1; i <= N; ++i)
      for (int j = 1; j <= N; ++j) grid[i * E + j] = value(coords[0] * N + i - 1, coords[1] * N + j - 1);

    // Block i goes to +offset[i]: the interior edge/corner on that side; it arrives from
    // -offset[i] into the halo on the opposite side.
    std::vector<MPI_Datatype> stypes(t), rtypes(t);
    std::vector<int> counts(t, 1);
    std::vector<MPI_Aint> displs(t, 0);
    for (int i = 0; i < t; ++i) {
      int sizes[2] = {E, E}, sub[2], sstart[2], rstart[2];
      for (int k = 0; k < 2; ++k) {
        const int o = offsets[i][k];
        sub[k] = o == 0 ? N : 1;
        sstart[k] = o > 0 ? N : 1;
        rstart[k] = o > 0 ? 0 : o < 0 ? N + 1 : 1;
      }
      MPI_Type_create_subarray(2, sizes, sub, sstart, MPI_ORDER_C, MPI_DOUBLE, &stypes[i]);
      MPI_Type_create_subarray(2, sizes, sub, rstart, MPI_ORDER_C, MPI_DOUBLE, &rtypes[i]);
      MPI_Type_commit(&stypes[i]);
      MPI_Type_commit(&rtypes[i]);
    }
    auto halo = cartplan::mpi::Collective::alltoallw(cart, grid.data(), counts.data(), displs.data(), stypes.data(),
                                                     grid.data(), counts.data(), displs.data(), rtypes.data());
    halo.run();  // or halo.start(); ...; halo.wait();

    for (int i = 0; i < E; ++i)
      for (int j = 0; j < E; ++j) {
        const int gi = coords[0] * N + i - 1, gj = coords[1] * N + j - 1;
        const bool outside = gi < 0 || gi >= 2 * N || gj < 0 || gj >= 2 * N;
        const double want = outside ? kBoundary : value(gi, gj);
        if (grid[i * E + j] != want) {
          std::fprintf(stderr, "halo_cpp: rank %d cell (%d,%d) = %g, expected %g\n", me, i, j, grid[i * E + j], want);
          ++failures;
        }
      }
    std::printf("halo_cpp: rank %d, %s plan, %d neighbours\n", me, halo.combining() ? "combining" : "direct", cart.neighbor_count());
    for (int i = 0; i < t; ++i) {
      MPI_Type_free(&stypes[i]);
      MPI_Type_free(&rtypes[i]);
    }
  } catch (const cartplan::mpi::MpiError& e) {
    std::fprintf(stderr, "halo_cpp: %s (MPI error class %d)\n", e.what(), e.code());
    ++failures;
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::printf("halo_cpp: %s\n", total == 0 ? "OK" : "FAILED");
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
