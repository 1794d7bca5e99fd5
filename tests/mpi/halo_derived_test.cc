// Cart_halo_exchange_fields with derived element types keeps its exchange: the same derived
// types build once (builds counted by the MPI_Type_create_subarray calls the halo makes for its
// messages, through the profiling interface), with no global collective per call; a program's
// duplicate of a used type reuses; a type freed and created again with another layout builds
// again and moves what the new layout says (a stale exchange would move the other field too);
// the same layout under a new handle builds once, then reuses. Every cell is checked: ghost
// cells hold their source's values, interior cells are unchanged.
#include <mpi.h>

#include <string>
#include <vector>

#include "tests/mpi/count_collectives.h"
#include "tests/mpi/count_type_builds.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;

constexpr int kN = 6;            // interior cells per dimension
constexpr int kW = kN + 2;       // with one ghost cell on each side
constexpr int kFields = 2;       // arrays exchanged together
constexpr int kUntouched = -7;   // ghost cells before the exchange

struct Cell {
  int a, b;
};

struct Grid {
  MPI_Comm cart = MPI_COMM_NULL;
  Cart_Halo halo = CART_HALO_NULL;
  int dims[2] = {0, 0}, coords[2] = {0, 0};
  std::vector<std::vector<Cell>> fields = std::vector<std::vector<Cell>>(kFields, std::vector<Cell>(kW * kW));
};

// The value of field f's component at global cell (x, y) of the periodic torus.
int value(int f, int x, int y, int base) { return base + f * 100000 + x * 100 + y; }

Grid open_grid(int size) {
  Grid g;
  MPI_Dims_create(size, 2, g.dims);
  int periods[2] = {1, 1};
  MPI_Cart_create(MPI_COMM_WORLD, 2, g.dims, periods, 0, &g.cart);
  int rank = 0;
  MPI_Comm_rank(g.cart, &rank);
  MPI_Cart_coords(g.cart, rank, 2, g.coords);
  const int interior[2] = {kN, kN}, ghost[2] = {1, 1};
  Cart_halo_create(g.cart, 2, interior, ghost, ghost, MPI_INT, MPI_ORDER_C, MPI_INFO_NULL, &g.halo);  // Moore: every region
  return g;
}

// Global coordinate of local index i (ghost included) along dimension k, wrapped.
int global(const Grid& g, int k, int i) {
  const int n = g.dims[k] * kN;
  return ((g.coords[k] * kN + i - 1) % n + n) % n;
}

bool ghost(int i, int j) { return i == 0 || j == 0 || i == kW - 1 || j == kW - 1; }

// Interior cells: a = value, b = -value; ghost cells kUntouched.
void fill(Grid& g, int base) {
  for (int f = 0; f < kFields; ++f)
    for (int i = 0; i < kW; ++i)
      for (int j = 0; j < kW; ++j) {
        const int v = value(f, global(g, 0, i), global(g, 1, j), base);
        g.fields[f][i * kW + j] = ghost(i, j) ? Cell{kUntouched, kUntouched} : Cell{v, -v};
      }
}

// Every cell after an exchange whose element type moves a (and b when `moves_b`).
bool holds(const Grid& g, int base, bool moves_b) {
  for (int f = 0; f < kFields; ++f)
    for (int i = 0; i < kW; ++i)
      for (int j = 0; j < kW; ++j) {
        const int v = value(f, global(g, 0, i), global(g, 1, j), base);
        const Cell c = g.fields[f][i * kW + j];
        const int b = ghost(i, j) && !moves_b ? kUntouched : -v;
        if (c.a != v || c.b != b) return false;
      }
  return true;
}

// One Cart_halo_exchange_fields of both fields with element type `type`; `builds`: whether the
// call is expected to build its exchange (subarray datatypes made) or to rerun a kept one.
void exchange(Harness& h, Grid& g, MPI_Datatype type, bool moves_b, int base, bool builds, const std::string& what) {
  fill(g, base);
  void* arrays[kFields] = {g.fields[0].data(), g.fields[1].data()};
  const MPI_Datatype types[kFields] = {type, type};
  const long before = type_subarrays;
  const int rc = Cart_halo_exchange_fields(kFields, arrays, types, g.halo);
  const long made = type_subarrays - before;
  h.check(rc == MPI_SUCCESS, what + ": Cart_halo_exchange_fields returns MPI_SUCCESS");
  h.check(holds(g, base, moves_b), what + ": every ghost cell holds its source's value, the interior is unchanged");
  h.check(builds ? made > 0 : made == 0, what + (builds ? ": builds its exchange" : ": reruns the kept exchange") + " (" +
                                             std::to_string(made) + " subarray datatypes made)");
}

// Both components of a Cell (a derived type of 8 bytes), committed.
MPI_Datatype whole_cell() {
  MPI_Datatype t;
  MPI_Type_contiguous(2, MPI_INT, &t);
  MPI_Type_commit(&t);
  return t;
}

// Component a only: an int with the extent of a Cell, committed.
MPI_Datatype a_only() {
  MPI_Datatype t;
  MPI_Type_create_resized(MPI_INT, 0, sizeof(Cell), &t);
  MPI_Type_commit(&t);
  return t;
}

void run(Harness& h) {
  Grid g = open_grid(h.size);
  MPI_Datatype cell = whole_cell();
  exchange(h, g, cell, true, 0, true, "first call");
  const long collectives = global_collectives;
  for (int it = 1; it <= 4; ++it) exchange(h, g, cell, true, 1000000 * it, false, "repeated call " + std::to_string(it));
  h.check(global_collectives == collectives, "no global collective per call");

  MPI_Datatype cell2;
  MPI_Type_dup(cell, &cell2);
  exchange(h, g, cell2, true, 5000000, false, "program's duplicate");
  MPI_Type_free(&cell2);

  // Freed, then another layout: a stale exchange would move b too.
  MPI_Type_free(&cell);
  MPI_Datatype a = a_only();
  exchange(h, g, a, false, 0, true, "new layout");
  exchange(h, g, a, false, 6000000, false, "new layout again");

  // The same layout under a new handle: checked by one build, then kept.
  MPI_Type_free(&a);
  MPI_Datatype a2 = a_only();
  exchange(h, g, a2, false, 7000000, true, "same layout, new datatype");
  exchange(h, g, a2, false, 8000000, false, "same layout, new datatype again");
  MPI_Type_free(&a2);
  Cart_halo_free(&g.halo);
  MPI_Comm_free(&g.cart);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  run(h);
  return h.finish("halo_derived_test");
}
