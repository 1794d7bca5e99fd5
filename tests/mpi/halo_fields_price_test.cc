// MPI test (np = 4: a 2x2 periodic grid) that the halo API's fields forms run a plan priced for
// the fields' element sizes added up. With a cost model the test writes (CARTPLAN_COST_MODEL:
// messages 1 us, phases 0.5 us, eager limit 200 bytes, rendezvous 2 us), the planner's choice
// for a 4x4 interior with ghost width 1 flips between 8-byte elements (dimwise: its largest
// message, 12 cells, stays eager) and 24-byte elements (dimwise's largest message is 288 bytes,
// rendezvous; direct's are at most 192). A halo created for MPI_DOUBLE must report the choice
// for 8 bytes (Cart_halo_plan); persistent fields requests of 24 bytes per cell (double, int,
// double, int; and three doubles with types NULL) the choice for 24, of 16 bytes (two doubles)
// the choice for 16, a single array the halo's, and in measuring mode a candidate priced for 24
// (Cart_halo_request_plan). The expected plans are the engine's (make_halo_plan of the same
// description and model), and the test checks that the choices for 8 and 24 bytes differ, so it
// fails if the fields forms keep the plan of one field. The blocking form has no plan to query:
// it must build as many subarray datatypes (count_type_builds.h) as the persistent request of
// the same arrays, and another number than a halo forced to the algorithm chosen for 8 bytes.
// Where the ranks' models differ (yet agree on the halo's plan) the fields forms keep the
// halo's plan. Every cell of every array is checked after blocking and persistent exchanges
// (rank-, field-, cell- and round-dependent values), also through six sums of element sizes by
// the blocking form, more than the halo keeps plans for (evicting_sizes).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "engine/cost_model_locate.h"
#include "engine/halo/choose.h"
#include "engine/halo/description.h"
#include "ir/halo/json.h"
#include "tests/mpi/count_type_builds.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;
namespace eh = cartplan::engine::halo;

constexpr int kN = 4;            // interior extent in both dimensions
constexpr int kE = kN + 2;       // array extent (ghost width 1 on both sides)
constexpr int kCells = kE * kE;  // C order: cell (x0, x1) at x0 * kE + x1

// `alpha_us`: the price of a message (1.0 on every rank, or slightly more on one rank for
// models that differ but agree on the halo's plan).
void use_model(Harness& h, const char* alpha_us) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir && *dir ? dir : "/tmp") + "/halo_fields_price_model_" + std::to_string(h.rank) + ".json";
  FILE* f = std::fopen(path.c_str(), "w");
  h.check(f != nullptr, "writes the cost model " + path);
  if (!f) return;
  std::fprintf(f, "{\"schema\": \"cartplan.cost_model/2\", \"alpha_us\": %s, \"beta_us_per_byte\": 0.0005, \"phase_us\": 0.5,\n"
                  " \"copy_us_per_byte\": 0.0002, \"eager_limit_bytes\": 200, \"rendezvous_us\": 2.0, \"single_copy_us_per_byte\": 0.0,\n"
                  " \"pipeline_us\": 0.0, \"pipeline_us_per_byte\": 0.0}\n",
               alpha_us);
  std::fclose(f);
  setenv("CARTPLAN_COST_MODEL", path.c_str(), 1);
}

// The engine's plan for this halo with elements of `bytes`, as canonical JSON ("" on error).
std::string engine_plan(Harness& h, std::int64_t bytes) {
  cartplan::ir::halo::ArrayShape shape;
  shape.ndims = 2;
  shape.interior = {kN, kN};
  shape.ghost_lo = shape.ghost_hi = {1, 1};
  shape.elem_bytes = bytes;
  auto grid = cartplan::engine::Grid::create({2, 2}, {true, true});
  auto model = cartplan::engine::locate_cost_model(std::nullopt, h.size, std::getenv);
  if (!grid || !model) return "";
  auto d = eh::describe_halo(shape, "moore:d=2,r=1", *grid);
  if (!d) return "";
  eh::HaloPlanOptions o;
  o.model = model->model;
  auto plan = eh::make_halo_plan(*d, o);
  return plan ? cartplan::ir::halo::to_json_string(*plan) : "";
}

std::string algorithm_of(const std::string& json) {
  const std::string key = "\"algorithm\": \"";
  const std::size_t at = json.find(key);
  if (at == std::string::npos) return "";
  return json.substr(at + key.size(), json.find('"', at + key.size()) - at - key.size());
}

double value(int rank, int field, int x0, int x1, int round) { return 1 + rank * 1000 + field * 100000 + x0 * 50 + x1 * 7 + round * 3; }

// Interior cells of array `field` from this rank, ghost cells -1.
template <typename T>
void fill(std::vector<T>& a, int rank, int field, int round) {
  for (int x0 = 0; x0 < kE; ++x0)
    for (int x1 = 0; x1 < kE; ++x1) {
      const bool inside = x0 >= 1 && x0 <= kN && x1 >= 1 && x1 <= kN;
      a[x0 * kE + x1] = static_cast<T>(inside ? value(rank, field, x0, x1, round) : -1);
    }
}

// Every cell: its own value in the interior, its source's in a ghost region (every region has
// one on a periodic grid: the rank at coords + sign vector, cell x - sign * n).
template <typename T>
int wrong_cells(const std::vector<T>& a, MPI_Comm cart, const int coords[2], int field, int round) {
  int me = 0, wrong = 0;
  MPI_Comm_rank(cart, &me);
  for (int x0 = 0; x0 < kE; ++x0)
    for (int x1 = 0; x1 < kE; ++x1) {
      const int s0 = x0 < 1 ? -1 : x0 > kN ? 1 : 0, s1 = x1 < 1 ? -1 : x1 > kN ? 1 : 0;
      int c[2] = {coords[0] + s0, coords[1] + s1}, src = me;
      if (s0 != 0 || s1 != 0) MPI_Cart_rank(cart, c, &src);
      if (a[x0 * kE + x1] != static_cast<T>(value(src, field, x0 - s0 * kN, x1 - s1 * kN, round))) ++wrong;
    }
  return wrong;
}

struct Fields {
  std::vector<double> d0, d1;
  std::vector<int> i0, i1;
  Fields() : d0(kCells), d1(kCells), i0(kCells), i1(kCells) {}
  void fill_all(int rank, int round) {
    fill(d0, rank, 0, round), fill(i0, rank, 1, round), fill(d1, rank, 2, round), fill(i1, rank, 3, round);
  }
  int wrong(MPI_Comm cart, const int coords[2], int round) const {
    return wrong_cells(d0, cart, coords, 0, round) + wrong_cells(i0, cart, coords, 1, round) + wrong_cells(d1, cart, coords, 2, round) +
           wrong_cells(i1, cart, coords, 3, round);
  }
};

std::string request_plan(Cart_Request r) {
  char* json = nullptr;
  if (Cart_halo_request_plan(r, &json) != MPI_SUCCESS) return "";
  std::string text = json;
  Cart_free_plan_json(json);
  return text;
}

// Six sums of element sizes (12, 16, 20, 24, 28 and 32 bytes) by the blocking form in turn, twice:
// more than a halo keeps plans (priced_) or blocking exchanges for, so every call plans and
// builds again; then persistent inits of 12 and 16 bytes evict the plan for 20 while the
// blocking exchange of 20 bytes stays kept, and that exchange runs again (it holds no reference
// to the plan), and the list of 12 bytes builds again from its kept plan. After every call,
// every cell of the five arrays: the exchanged ones their sources' values, the others untouched.
void evicting_sizes(Harness& h, Cart_Halo halo, MPI_Comm cart, const int coords[2]) {
  Fields f;
  std::vector<double> d2(kCells);
  void* const all[5] = {f.d0.data(), f.i0.data(), f.d1.data(), f.i1.data(), d2.data()};  // field k: all[k]
  const MPI_Datatype type_of[5] = {MPI_DOUBLE, MPI_INT, MPI_DOUBLE, MPI_INT, MPI_DOUBLE};
  const std::vector<std::vector<int>> lists = {{0, 1}, {0, 2}, {0, 1, 2}, {0, 1, 2, 3}, {0, 2, 4, 1}, {0, 2, 4, 1, 3}};
  int round = 10;
  auto run = [&](const std::vector<int>& list, bool blocking, const std::string& what) {
    f.fill_all(h.rank, ++round);
    fill(d2, h.rank, 4, round);
    std::vector<void*> arrays;
    std::vector<MPI_Datatype> types;
    for (int k : list) arrays.push_back(all[k]), types.push_back(type_of[k]);
    const int n = static_cast<int>(list.size());
    Cart_Request r = CART_REQUEST_NULL;
    if (blocking) {
      h.check(Cart_halo_exchange_fields(n, arrays.data(), types.data(), halo) == MPI_SUCCESS, what + ": " + Cart_error_message());
    } else {
      h.check(Cart_halo_exchange_fields_init(n, arrays.data(), types.data(), halo, MPI_INFO_NULL, &r) == MPI_SUCCESS &&
                  Cart_start(&r) == MPI_SUCCESS && Cart_wait(&r) == MPI_SUCCESS,
              what + ": " + Cart_error_message());
      Cart_request_free(&r);
    }
    auto wrong = [&](const auto& a, int k) {
      if (std::find(list.begin(), list.end(), k) != list.end()) return wrong_cells(a, cart, coords, k, round);
      auto want = a;
      fill(want, h.rank, k, round);
      return want == a ? 0 : 1;
    };
    const int bad = wrong(f.d0, 0) + wrong(f.i0, 1) + wrong(f.d1, 2) + wrong(f.i1, 3) + wrong(d2, 4);
    h.check(bad == 0, what + ": every cell of the five arrays (" + std::to_string(bad) + " wrong)");
  };
  for (int pass = 1; pass <= 2; ++pass)
    for (std::size_t i = 0; i < lists.size(); ++i)
      run(lists[i], true, "blocking fields, pass " + std::to_string(pass) + ", list " + std::to_string(i) + " of six sizes");
  run(lists[0], false, "persistent fields of 12 bytes");
  run(lists[1], false, "persistent fields of 16 bytes");
  run(lists[2], true, "the kept blocking exchange of 20 bytes, its plan evicted");
  run(lists[0], true, "blocking fields of 12 bytes, built again from the kept plan");
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  h.check(h.size == 4, "run on 4 ranks (a 2x2 grid)");
  if (h.size != 4) return h.finish("halo_fields_price_test");
  use_model(h, "1.0");
  const int dims[2] = {2, 2}, periods[2] = {1, 1};
  MPI_Comm cart = MPI_COMM_NULL;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
  int coords[2] = {0, 0};
  MPI_Cart_coords(cart, h.rank, 2, coords);
  const int interior[2] = {kN, kN}, ghost[2] = {1, 1};
  Cart_Halo halo = CART_HALO_NULL;
  h.check(Cart_halo_create(cart, 2, interior, ghost, ghost, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL, &halo) == MPI_SUCCESS,
          std::string("Cart_halo_create: ") + Cart_error_message());

  const std::string for8 = engine_plan(h, 8), for16 = engine_plan(h, 16), for24 = engine_plan(h, 24);
  h.check(!for8.empty() && !for16.empty() && !for24.empty(), "the engine plans the halo for 8, 16 and 24 bytes");
  h.check(algorithm_of(for8) != algorithm_of(for24),
          "the test's model flips the choice between 8 and 24 bytes (" + algorithm_of(for8) + ", " + algorithm_of(for24) + ")");
  char* json = nullptr;
  h.check(Cart_halo_plan(halo, &json) == MPI_SUCCESS && json && json == for8, "Cart_halo_plan is the engine's choice for 8 bytes");
  Cart_free_plan_json(json);

  Fields f;
  void* four[4] = {f.d0.data(), f.i0.data(), f.d1.data(), f.i1.data()};
  const MPI_Datatype mixed[4] = {MPI_DOUBLE, MPI_INT, MPI_DOUBLE, MPI_INT};
  Cart_Request r = CART_REQUEST_NULL;
  long before = type_subarrays;
  h.check(Cart_halo_exchange_fields_init(4, four, mixed, halo, MPI_INFO_NULL, &r) == MPI_SUCCESS,
          std::string("fields init (double, int, double, int): ") + Cart_error_message());
  const long persistent_built = type_subarrays - before;
  h.check(request_plan(r) == for24, "a request of double, int, double, int runs the engine's choice for 24 bytes");
  for (int round = 1; round <= 2; ++round) {
    f.fill_all(h.rank, round);
    h.check(Cart_start(&r) == MPI_SUCCESS && Cart_wait(&r) == MPI_SUCCESS, "fields request: start and wait");
    h.check(f.wrong(cart, coords, round) == 0, "fields request, round " + std::to_string(round) + ": every cell of the four arrays");
  }
  Cart_request_free(&r);
  f.fill_all(h.rank, 3);
  before = type_subarrays;
  h.check(Cart_halo_exchange_fields(4, four, mixed, halo) == MPI_SUCCESS, std::string("blocking fields: ") + Cart_error_message());
  const long blocking_built = type_subarrays - before;
  h.check(f.wrong(cart, coords, 3) == 0, "blocking fields: every cell of the four arrays");
  h.check(blocking_built == persistent_built, "blocking fields build the persistent request's messages (" +
                                                  std::to_string(blocking_built) + " and " + std::to_string(persistent_built) + " subarrays)");
  MPI_Info forced;
  MPI_Info_create(&forced);
  MPI_Info_set(forced, "cartplan_algorithm", algorithm_of(for8).c_str());
  Cart_Halo other = CART_HALO_NULL;
  h.check(Cart_halo_create(cart, 2, interior, ghost, ghost, MPI_DOUBLE, MPI_ORDER_C, forced, &other) == MPI_SUCCESS,
          "a halo forced to " + algorithm_of(for8));
  before = type_subarrays;
  h.check(Cart_halo_exchange_fields_init(4, four, mixed, other, MPI_INFO_NULL, &r) == MPI_SUCCESS, "the forced halo's fields init");
  const long forced_built = type_subarrays - before;
  h.check(forced_built != blocking_built, "blocking fields do not run " + algorithm_of(for8) + " (" + std::to_string(forced_built) +
                                              " subarrays)");
  Cart_request_free(&r);
  Cart_halo_free(&other);
  MPI_Info_free(&forced);
  f.fill_all(h.rank, 4);
  h.check(Cart_halo_exchange_fields(4, four, mixed, halo) == MPI_SUCCESS, "blocking fields again (the kept exchange)");
  h.check(f.wrong(cart, coords, 4) == 0, "blocking fields again: every cell of the four arrays");

  // Three doubles with types NULL (24 bytes), two doubles (16), one array (the halo's plan).
  std::vector<double> d2(kCells);
  void* three[3] = {f.d0.data(), f.d1.data(), d2.data()};
  h.check(Cart_halo_exchange_fields_init(3, three, nullptr, halo, MPI_INFO_NULL, &r) == MPI_SUCCESS && request_plan(r) == for24,
          "three doubles (types NULL) run the engine's choice for 24 bytes");
  Cart_request_free(&r);
  h.check(Cart_halo_exchange_fields_init(2, three, nullptr, halo, MPI_INFO_NULL, &r) == MPI_SUCCESS && request_plan(r) == for16,
          "two doubles run the engine's choice for 16 bytes");
  Cart_request_free(&r);
  h.check(Cart_halo_exchange_init(f.d0.data(), halo, MPI_INFO_NULL, &r) == MPI_SUCCESS && request_plan(r) == for8,
          "one array runs the halo's plan");
  Cart_request_free(&r);

  // Measuring mode times candidates priced for 24 bytes: the plan it keeps says so.
  MPI_Info measure;
  MPI_Info_create(&measure);
  MPI_Info_set(measure, "cartplan_tune", "measure");
  h.check(Cart_halo_exchange_fields_init(4, four, mixed, halo, measure, &r) == MPI_SUCCESS, "fields init, measuring mode");
  h.check(request_plan(r).find("\"elem_bytes\": 24") != std::string::npos, "measuring mode's plan is priced for 24 bytes");
  f.fill_all(h.rank, 5);
  h.check(Cart_start(&r) == MPI_SUCCESS && Cart_wait(&r) == MPI_SUCCESS && f.wrong(cart, coords, 5) == 0,
          "measuring mode's request: every cell of the four arrays");
  Cart_request_free(&r);
  MPI_Info_free(&measure);
  evicting_sizes(h, halo, cart, coords);

  Cart_halo_free(&halo);

  // Models that differ between ranks but give the same plan at creation: a plan made again for
  // other element sizes could differ between ranks, so the fields forms keep the halo's.
  use_model(h, h.rank == 0 ? "1.01" : "1.0");
  h.check(Cart_halo_create(cart, 2, interior, ghost, ghost, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL, &halo) == MPI_SUCCESS,
          std::string("Cart_halo_create, rank 0's model another: ") + Cart_error_message());
  h.check(Cart_halo_exchange_fields_init(4, four, mixed, halo, MPI_INFO_NULL, &r) == MPI_SUCCESS && request_plan(r) == for8,
          "ranks' models differ: a request of 24 bytes per cell runs the halo's plan");
  f.fill_all(h.rank, 6);
  h.check(Cart_start(&r) == MPI_SUCCESS && Cart_wait(&r) == MPI_SUCCESS && f.wrong(cart, coords, 6) == 0,
          "ranks' models differ: every cell of the four arrays (persistent)");
  Cart_request_free(&r);
  f.fill_all(h.rank, 7);
  h.check(Cart_halo_exchange_fields(4, four, mixed, halo) == MPI_SUCCESS && f.wrong(cart, coords, 7) == 0,
          "ranks' models differ: every cell of the four arrays (blocking)");
  Cart_halo_free(&halo);
  MPI_Comm_free(&cart);
  return h.finish("halo_fields_price_test");
}
