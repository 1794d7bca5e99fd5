// MPI test of strided blocks in the optimizer's choice: a persistent alltoallw whose blocks are
// contiguous on some ranks and strided (a vector datatype) on others. Persistent init agrees
// on contiguity, so every rank plans alike (same plan text everywhere); with a cost model in
// which Open MPI's single copy is dear, all-contiguous blocks choose combining (struct datatype
// messages pipeline) and strided ones choose direct (their messages pipeline too); data is
// checked with rank-dependent values either way.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;

constexpr int kBlockInts = 2048;  // 8 KB blocks: above the eager limit
const int kOffsets[8][2] = {{-1, -1}, {-1, 0}, {-1, 1}, {0, -1}, {0, 1}, {1, -1}, {1, 0}, {1, 1}};

int value(int rank, int block, int j) { return (rank * 16 + block) * kBlockInts + j; }

// A model where a contiguous message above the eager limit costs 10 us and a pipelined one
// 0.5 us; one file per rank (the same values everywhere).
std::string write_model(int rank) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir ? dir : "/tmp") + "/cartplan_strided_model_" + std::to_string(rank) + ".json";
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return "";
  // The pipeline costs a little more per byte than the single copy, so the model wants no
  // trailers (engine/lower.h): they would pipeline contiguous blocks too, and contiguity would
  // no longer decide.
  std::fprintf(f,
               "{\"schema\": \"cartplan.cost_model/2\", \"alpha_us\": 0.5, \"beta_us_per_byte\": 0.0001, \"phase_us\": 5,"
               " \"copy_us_per_byte\": 0, \"eager_limit_bytes\": 4064, \"rendezvous_us\": 10, \"pipeline_us\": 0.5,"
               " \"pipeline_us_per_byte\": 0.000001, \"segment_us\": 0, \"scatter_us_per_byte\": 0}\n");
  std::fclose(f);
  return path;
}

// Runs one persistent alltoallw on `cart`; `strided` says whether this rank lays its blocks
// out with a stride of 2 ints. Returns the request's algorithm (1: combining) through *combining.
void run(Harness& h, MPI_Comm cart, bool strided, const std::string& what, int* combining) {
  const int t = 8, stride = strided ? 2 : 1;
  std::vector<int> sendbuf(static_cast<std::size_t>(t) * kBlockInts * stride, -7), recvbuf(sendbuf.size(), -1);
  MPI_Datatype block = MPI_INT;
  if (strided) {
    MPI_Type_vector(kBlockInts, 1, 2, MPI_INT, &block);
    MPI_Type_commit(&block);
  }
  std::vector<int> counts(t, strided ? 1 : kBlockInts);
  std::vector<MPI_Aint> displs(t);
  std::vector<MPI_Datatype> types(t, block);
  for (int i = 0; i < t; ++i) {
    displs[i] = static_cast<MPI_Aint>(i) * kBlockInts * stride * static_cast<MPI_Aint>(sizeof(int));
    for (int j = 0; j < kBlockInts; ++j) sendbuf[(static_cast<std::size_t>(i) * kBlockInts + j) * stride] = value(h.rank, i, j);
  }
  std::vector<int> sources(t), targets(t);
  h.check(Cart_neighbor_get(cart, t, sources.data(), MPI_UNWEIGHTED, t, targets.data(), MPI_UNWEIGHTED) == MPI_SUCCESS,
          what + ": Cart_neighbor_get");
  Cart_Request req = CART_REQUEST_NULL;
  h.check(Cart_alltoallw_init(sendbuf.data(), counts.data(), displs.data(), types.data(), recvbuf.data(), counts.data(),
                              displs.data(), types.data(), cart, MPI_INFO_NULL, &req) == MPI_SUCCESS,
          what + ": Cart_alltoallw_init: " + Cart_error_message());
  h.check(Cart_request_algorithm(req, combining) == MPI_SUCCESS, what + ": Cart_request_algorithm");
  // The same plan on every rank: its text hashed, the min and max of the hashes compared.
  char* json = nullptr;
  h.check(Cart_request_plan(req, &json) == MPI_SUCCESS, what + ": Cart_request_plan");
  const long long hash = static_cast<long long>(std::hash<std::string>{}(json ? json : "") >> 2);
  Cart_free_plan_json(json);
  long long lo = 0, hi = 0;
  MPI_Allreduce(&hash, &lo, 1, MPI_LONG_LONG, MPI_MIN, cart);
  MPI_Allreduce(&hash, &hi, 1, MPI_LONG_LONG, MPI_MAX, cart);
  h.check(lo == hi, what + ": ranks run different plans");
  for (int rep = 0; rep < 3; ++rep) {
    h.check(Cart_start(&req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS, what + ": start/wait");
    int bad = 0;
    for (int i = 0; i < t; ++i) {
      const int source = sources[i];
      for (int j = 0; j < kBlockInts; ++j) bad += recvbuf[(static_cast<std::size_t>(i) * kBlockInts + j) * stride] != value(source, i, j);
      if (strided)  // the gaps of a strided block are never written
        for (int j = 0; j < kBlockInts; ++j) bad += recvbuf[(static_cast<std::size_t>(i) * kBlockInts + j) * 2 + 1] != -1;
    }
    h.check(bad == 0, what + ": " + std::to_string(bad) + " wrong elements");
  }
  h.check(Cart_request_free(&req) == MPI_SUCCESS, what + ": Cart_request_free");
  if (strided) MPI_Type_free(&block);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  const std::string model = write_model(h.rank);
  h.check(!model.empty(), "cannot write the cost model file");
  int dims[2] = {0, 0}, periods[2] = {1, 1};
  MPI_Dims_create(h.size, 2, dims);
  std::vector<int> offsets;
  for (const auto& o : kOffsets) offsets.insert(offsets.end(), {o[0], o[1]});
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_cost_model", model.c_str());
  MPI_Comm cart = MPI_COMM_NULL;
  h.check(Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, 8, offsets.data(), MPI_UNWEIGHTED, info, 0, &cart) ==
              MPI_SUCCESS,
          std::string("Cart_neighborhood_create: ") + Cart_error_message());
  MPI_Info_free(&info);
  int contiguous_algo = -1, strided_algo = -1, mixed_algo = -1;
  run(h, cart, false, "contiguous everywhere", &contiguous_algo);
  run(h, cart, true, "strided everywhere", &strided_algo);
  run(h, cart, h.rank % 2 == 1, "strided on odd ranks", &mixed_algo);
  // On grids where both dimensions have two processes or more (np = 4: 2x2, np = 6: 3x2), the
  // model makes the choice depend on contiguity; a block strided on one rank counts everywhere.
  if (dims[0] >= 2 && dims[1] >= 2) {
    h.check(contiguous_algo == 1, "contiguous blocks: expected combining");
    h.check(strided_algo == 0, "strided blocks: expected direct");
    h.check(mixed_algo == 0, "blocks strided on odd ranks: expected direct on every rank");
  }
  MPI_Comm_free(&cart);
  std::remove(model.c_str());
  return h.finish("strided_test");
}
