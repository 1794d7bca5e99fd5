// derived_paths_bench: per-call time of the calls whose exchanges are reused for derived
// datatypes (by layout): non-blocking Cart_ialltoallw + Cart_wait and blocking
// Cart_halo_exchange_fields with a derived element type, beside blocking Cart_alltoallw with
// derived datatypes and Cart_halo_exchange with a predefined one (both kept before too), on a
// 2-D periodic Moore torus of n x n doubles with one ghost layer (the main job's default shape);
// and the halo's non-blocking Cart_halo_iexchange + Cart_wait (its exchange comes back from the halo
// communicator's pool after the first call) beside its persistent request (Cart_start + Cart_wait).
//   mpirun -np 4 bazel-bin/bench/derived_paths_bench [--n 64] [--iters 200]
// Prints one line per variant: its name and the max over ranks of the per-rank median time of
// one call in microseconds. The variants take turns, one call each, the starting variant
// rotating per iteration, so a drifting machine moves them together.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "bench/bench_util.h"

namespace {

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  std::fprintf(stderr, "derived_paths_bench: %s failed: %s\n", what, Cart_error_message());
  MPI_Abort(MPI_COMM_WORLD, 2);
}

struct Setup {
  int n = 64, iters = 200, t = 0;
  MPI_Comm cart = MPI_COMM_NULL;
  Cart_Halo halo = CART_HALO_NULL;
  Cart_Request persistent = CART_REQUEST_NULL;  // the halo's persistent exchange of u
  std::vector<double> u;  // (n + 2)^2, the exchanged array
  std::vector<MPI_Datatype> stypes, rtypes;  // per neighbour: interior slab sent, ghost region received
  std::vector<int> counts;
  std::vector<MPI_Aint> displs;
  MPI_Datatype element = MPI_DATATYPE_NULL;  // one double as a derived datatype
};

// The slab next to offset o and the ghost region on the opposite side, as subarrays of u.
void slab_types(const Setup& s, const int* o, MPI_Datatype* stype, MPI_Datatype* rtype) {
  const int w = s.n + 2;
  int sizes[2] = {w, w}, sub[2], sstart[2], rstart[2];
  for (int j = 0; j < 2; ++j) {
    sub[j] = o[j] == 0 ? s.n : 1;
    sstart[j] = o[j] > 0 ? s.n : 1;
    rstart[j] = o[j] > 0 ? 0 : o[j] < 0 ? s.n + 1 : 1;
  }
  MPI_Type_create_subarray(2, sizes, sub, sstart, MPI_ORDER_C, MPI_DOUBLE, stype);
  MPI_Type_commit(stype);
  MPI_Type_create_subarray(2, sizes, sub, rstart, MPI_ORDER_C, MPI_DOUBLE, rtype);
  MPI_Type_commit(rtype);
}

Setup set_up(int size, int n, int iters) {
  Setup s;
  s.n = n;
  s.iters = iters;
  int dims[2] = {0, 0}, periods[2] = {1, 1};
  MPI_Dims_create(size, 2, dims);
  std::vector<int> offsets;
  for (int x = -1; x <= 1; ++x)
    for (int y = -1; y <= 1; ++y)
      if (x || y) offsets.insert(offsets.end(), {x, y});
  s.t = static_cast<int>(offsets.size() / 2);
  check(Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, s.t, offsets.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &s.cart),
        "Cart_neighborhood_create");
  const int interior[2] = {n, n}, ghost[2] = {1, 1};
  check(Cart_halo_create(s.cart, 2, interior, ghost, ghost, MPI_DOUBLE, MPI_ORDER_C, MPI_INFO_NULL, &s.halo), "Cart_halo_create");
  s.u.assign(static_cast<std::size_t>((n + 2) * (n + 2)), 1.0);
  check(Cart_halo_exchange_init(s.u.data(), s.halo, MPI_INFO_NULL, &s.persistent), "Cart_halo_exchange_init");
  s.stypes.resize(s.t);
  s.rtypes.resize(s.t);
  for (int i = 0; i < s.t; ++i) slab_types(s, &offsets[2 * i], &s.stypes[i], &s.rtypes[i]);
  s.counts.assign(s.t, 1);
  s.displs.assign(s.t, 0);
  MPI_Type_contiguous(1, MPI_DOUBLE, &s.element);
  MPI_Type_commit(&s.element);
  return s;
}

// The variants: a name and one call.
std::vector<std::pair<std::string, std::function<void()>>> variants(Setup& s) {
  // Cart_alltoallw's send and receive regions of u are disjoint (interior slabs, ghost regions).
  auto w = [&s](Cart_Request* r) {
    return r ? Cart_ialltoallw(s.u.data(), s.counts.data(), s.displs.data(), s.stypes.data(), s.u.data(), s.counts.data(),
                               s.displs.data(), s.rtypes.data(), s.cart, r)
             : Cart_alltoallw(s.u.data(), s.counts.data(), s.displs.data(), s.stypes.data(), s.u.data(), s.counts.data(),
                              s.displs.data(), s.rtypes.data(), s.cart);
  };
  return {
      {"ialltoallw derived", [&s, w] {
         Cart_Request r = CART_REQUEST_NULL;
         check(w(&r), "Cart_ialltoallw");
         check(Cart_wait(&r), "Cart_wait");
       }},
      {"halo fields derived", [&s] {
         void* arrays[1] = {s.u.data()};
         check(Cart_halo_exchange_fields(1, arrays, &s.element, s.halo), "Cart_halo_exchange_fields");
       }},
      {"alltoallw blocking derived", [w] { check(w(nullptr), "Cart_alltoallw"); }},
      {"halo predefined", [&s] { check(Cart_halo_exchange(s.u.data(), s.halo), "Cart_halo_exchange"); }},
      {"halo non-blocking", [&s] {
         Cart_Request r = CART_REQUEST_NULL;
         check(Cart_halo_iexchange(s.u.data(), s.halo, &r), "Cart_halo_iexchange");
         check(Cart_wait(&r), "Cart_wait");
       }},
      {"halo persistent", [&s] {
         check(Cart_start(&s.persistent), "Cart_start");
         check(Cart_wait(&s.persistent), "Cart_wait");
       }},
  };
}

void run(Setup& s) {
  auto list = variants(s);
  const std::size_t v = list.size();
  std::vector<std::vector<double>> times(v);
  for (auto& [name, call] : list) call();  // warm-up: builds what each variant keeps
  for (int it = 0; it < s.iters; ++it)
    for (std::size_t j = 0; j < v; ++j) {
      const std::size_t k = (j + static_cast<std::size_t>(it)) % v;
      const auto t0 = cartplan::bench::Clock::now();
      list[k].second();
      times[k].push_back(cartplan::bench::micros(cartplan::bench::Clock::now() - t0));
    }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (std::size_t k = 0; k < v; ++k) {
    double mine = cartplan::bench::summarize(times[k]).median, worst = 0;
    MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) std::printf("%-28s %.2f\n", list[k].first.c_str(), worst);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 1, n = 64, iters = 200;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string arg = argv[i];
    const auto v = cartplan::bench::parse_int(argv[i + 1], 1, 1 << 20);
    if ((arg != "--n" && arg != "--iters") || !v) {
      std::fprintf(stderr, "usage: derived_paths_bench [--n N] [--iters I]\n");
      MPI_Finalize();
      return 2;
    }
    (arg == "--n" ? n : iters) = static_cast<int>(*v);
  }
  Setup s = set_up(size, n, iters);
  run(s);
  for (std::size_t i = 0; i < s.stypes.size(); ++i) {
    MPI_Type_free(&s.stypes[i]);
    MPI_Type_free(&s.rtypes[i]);
  }
  MPI_Type_free(&s.element);
  Cart_request_free(&s.persistent);
  Cart_halo_free(&s.halo);
  MPI_Comm_free(&s.cart);
  MPI_Finalize();
  return 0;
}
