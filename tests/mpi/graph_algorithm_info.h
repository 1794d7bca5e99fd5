// The graph tests' algorithm names as Info keys: "gridN" ("grid3", "grid4", "grid30") is the
// grid on the virtual grid grid_dims(p, N) (Info cartplan_algorithm=grid and
// cartplan_grid_dims=N), any other name is cartplan_algorithm's value.
//
//   MPI_Info info;  MPI_Info_create(&info);
//   set_graph_algorithm(info, "grid3");
//   if (has_3d_grid(size)) ...                  // else "grid3" runs the 2-D (or 1-D) grid
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace cartplan::mpitest {

inline void set_graph_algorithm(MPI_Info info, const char* algorithm) {
  const std::string a = algorithm;
  if (a.size() > 4 && a.rfind("grid", 0) == 0 && a.find_first_not_of("0123456789", 4) == std::string::npos) {
    MPI_Info_set(info, "cartplan_algorithm", "grid");
    MPI_Info_set(info, "cartplan_grid_dims", algorithm + 4);
  } else {
    MPI_Info_set(info, "cartplan_algorithm", algorithm);
  }
}

inline bool is_grid(const char* algorithm) { return std::string(algorithm).rfind("grid", 0) == 0; }

// A distributed graph of MPI_COMM_WORLD with this rank's sources `in` and destinations `out`,
// Info cartplan_algorithm (set_graph_algorithm; none for a null `algorithm`) and
// cartplan_theta, errors returned.
inline MPI_Comm graph_with_algorithm(const std::vector<int>& in, const std::vector<int>& out, const char* algorithm, const char* theta) {
  MPI_Info info;
  MPI_Info_create(&info);
  if (algorithm) set_graph_algorithm(info, algorithm);
  MPI_Info_set(info, "cartplan_theta", theta);
  int dummy = 0;
  MPI_Comm g = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(in.size()), in.empty() ? &dummy : in.data(), MPI_UNWEIGHTED,
                                 static_cast<int>(out.size()), out.empty() ? &dummy : out.data(), MPI_UNWEIGHTED, info, 0, &g);
  MPI_Info_free(&info);
  MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
  return g;
}

// The dimensions of the virtual grid of p ranks asked for d dimensions (engine/graph/grid.h's
// grid_dims: MPI_Dims_create's factors, extents of 1 dropped).
inline int grid_ndims(int p, int d) {
  std::vector<int> dims(static_cast<std::size_t>(d), 0);
  MPI_Dims_create(p, d, dims.data());
  int n = 0;
  for (int k = 0; k < d; ++k) n += dims[k] > 1;
  return n;
}

// Whether p ranks have a real 3-D grid (2x2x2 at 8, 3x2x2 at 12; not 2 to 7).
inline bool has_3d_grid(int p) { return grid_ndims(p, 3) == 3; }
// Whether p ranks have a real 4-D grid (2x2x2x2 at 16; not below).
inline bool has_4d_grid(int p) { return grid_ndims(p, 4) == 4; }

}  // namespace cartplan::mpitest
