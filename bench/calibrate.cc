// Cost-model calibration: measures alpha (per message) and beta (per byte) on the running
// machine, by ping-pong and by fitting cartplan's own persistent exchanges, and writes a
// cost-model file (engine/cost_model_file.h) that the optimizer, `cartplan --cost-model` and the
// Info key cartplan_cost_model read. Run under mpirun with at least 2 ranks:
//
//   mpirun -np 2 calibrate --out bench/results/cpp-2core/cost_model.json
//
// The file's alpha/beta come from the exchange fit: time = alpha * (message rounds) + beta *
// (bytes sent), over direct and combining plans of box neighbourhoods and a range of block
// sizes. That captures what a ping-pong misses (the rounds of a phase overlap; phases do not),
// which is what the optimizer has to predict. The ping-pong values are recorded next to them.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "bench/bench_util.h"
#include "engine/bind.h"
#include "engine/optimizer.h"
#include "engine/planner.h"
#include "engine/spec.h"

namespace {

void die(const std::string& msg) {
  std::fprintf(stderr, "calibrate: %s\n", msg.c_str());
  MPI_Abort(MPI_COMM_WORLD, 2);
}

// Least squares y = a*x1 + b*x2 (no intercept), with a, b >= 0 (a negative coefficient is set
// to zero and the other refitted alone).
void fit2(const std::vector<double>& x1, const std::vector<double>& x2, const std::vector<double>& y, double* a, double* b) {
  double s11 = 0, s12 = 0, s22 = 0, s1y = 0, s2y = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    s11 += x1[i] * x1[i];
    s12 += x1[i] * x2[i];
    s22 += x2[i] * x2[i];
    s1y += x1[i] * y[i];
    s2y += x2[i] * y[i];
  }
  const double det = s11 * s22 - s12 * s12;
  *a = det != 0 ? (s1y * s22 - s2y * s12) / det : 0;
  *b = det != 0 ? (s2y * s11 - s1y * s12) / det : 0;
  if (*a < 0) {
    *a = 0;
    *b = s22 > 0 ? std::max(0.0, s2y / s22) : 0;
  } else if (*b < 0) {
    *b = 0;
    *a = s11 > 0 ? std::max(0.0, s1y / s11) : 0;
  }
}

// Ping-pong between ranks 0 and 1: half the round-trip time per message size.
void ping_pong(int rank, int reps, std::vector<double>* sizes, std::vector<double>* times) {
  for (int bytes : {0, 8, 64, 512, 4096, 32768, 262144, 1048576}) {
    std::vector<char> buf(std::max(bytes, 1));
    std::vector<double> samples;
    for (int r = 0; r < reps + 5; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(buf.data(), bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buf.data(), bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(buf.data(), bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf.data(), bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
      }
      if (r >= 5) samples.push_back((MPI_Wtime() - t0) * 1e6 / 2);
    }
    double median = cartplan::bench::summarize(samples).median;
    MPI_Bcast(&median, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    sizes->push_back(bytes);
    times->push_back(median);
  }
}

// Message rounds and bytes this rank really sends for a plan (rounds to itself are copies).
void features(const cartplan::ir::Plan& plan, const cartplan::engine::Grid& grid, int rank, std::int64_t block_bytes,
              double* rounds, double* bytes) {
  auto binder = cartplan::engine::Binder::create(plan);
  auto bound = binder->bind(grid, grid.coords(rank), {block_bytes});
  *rounds = *bytes = 0;
  for (const cartplan::engine::BoundRound& r : bound->rounds) {
    if (r.send_peer == cartplan::engine::kNoRank || r.send_peer == rank) continue;
    *rounds += 1;
    *bytes += static_cast<double>(r.send_bytes);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, np = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  std::string out;
  int reps = 40;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--out" && i + 1 < argc) out = argv[++i];
    else if (k == "--reps" && i + 1 < argc) reps = std::max(5, std::atoi(argv[++i]));
    else die("usage: calibrate --out FILE [--reps R]");
  }
  if (np < 2) die("needs at least 2 ranks");

  std::vector<double> pp_sizes, pp_times;
  ping_pong(rank, reps, &pp_sizes, &pp_times);
  double pp_alpha = 0, pp_beta = 0;
  fit2(std::vector<double>(pp_sizes.size(), 1.0), pp_sizes, pp_times, &pp_alpha, &pp_beta);

  // Exchange fit over direct and combining persistent alltoalls.
  std::vector<double> x_rounds, x_bytes, y;
  for (const char* spec : {"box:d=2,n=3,f=-1", "box:d=3,n=3,f=-1", "box:d=4,n=3,f=-1"}) {
    auto nbh = cartplan::engine::parse_spec(spec);
    const int d = nbh->ndims(), t = nbh->size();
    std::vector<int> dims(d, 0), periods(d, 1), offsets;
    MPI_Dims_create(np, d, dims.data());
    for (const auto& o : nbh->offsets()) offsets.insert(offsets.end(), o.begin(), o.end());
    auto grid = cartplan::engine::Grid::create(dims, std::vector<bool>(d, true));
    for (const char* algo : {"direct", "combining"}) {
      MPI_Info info;
      MPI_Info_create(&info);
      MPI_Info_set(info, "cartplan_algorithm", algo);
      MPI_Comm cart;
      if (Cart_neighborhood_create(MPI_COMM_WORLD, d, dims.data(), periods.data(), t, offsets.data(), MPI_UNWEIGHTED, info, 0,
                                   &cart) != MPI_SUCCESS)
        die(Cart_error_message());
      MPI_Info_free(&info);
      int me = 0;
      MPI_Comm_rank(cart, &me);
      cartplan::engine::PlanOptions po;
      po.algo = std::string(algo) == "direct" ? cartplan::engine::AlgoChoice::kDirect : cartplan::engine::AlgoChoice::kCombining;
      auto plan = cartplan::engine::make_plan(cartplan::ir::Op::kAlltoall, *nbh, po);
      for (int m : {1, 16, 128, 1024}) {
        std::vector<int> sb(static_cast<std::size_t>(t) * m, me), rb(static_cast<std::size_t>(t) * m);
        Cart_Request req;
        if (Cart_alltoall_init(sb.data(), m, MPI_INT, rb.data(), m, MPI_INT, cart, MPI_INFO_NULL, &req) != MPI_SUCCESS)
          die(Cart_error_message());
        std::vector<double> samples;
        for (int r = 0; r < reps + 5; ++r) {
          MPI_Barrier(cart);
          const double t0 = MPI_Wtime();
          Cart_start(&req);
          Cart_wait(&req);
          double dt = (MPI_Wtime() - t0) * 1e6, worst = 0;
          MPI_Allreduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, cart);
          if (r >= 5) samples.push_back(worst);
        }
        Cart_request_free(&req);
        double rounds = 0, bytes = 0;
        features(*plan, *grid, me, std::int64_t{4} * m, &rounds, &bytes);
        x_rounds.push_back(rounds);
        x_bytes.push_back(bytes);
        y.push_back(cartplan::bench::summarize(samples).median);
        if (rank == 0)
          std::printf("  %-18s %-9s m=%-5d rounds %4.0f bytes %9.0f  median %9.2f us\n", spec, algo, m, rounds, bytes, y.back());
      }
      MPI_Comm_free(&cart);
    }
  }
  double alpha = 0, beta = 0;
  fit2(x_rounds, x_bytes, y, &alpha, &beta);
  double ss_res = 0, ss_tot = 0, mean = 0;
  for (double v : y) mean += v / static_cast<double>(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double pred = alpha * x_rounds[i] + beta * x_bytes[i];
    ss_res += (y[i] - pred) * (y[i] - pred);
    ss_tot += (y[i] - mean) * (y[i] - mean);
  }
  const double r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
  if (rank == 0) {
    std::printf("ping-pong:    alpha %.3f us, beta %.6f us/byte\n", pp_alpha, pp_beta);
    std::printf("exchange fit: alpha %.3f us, beta %.6f us/byte (R^2 %.3f over %zu points)\n", alpha, beta, r2, y.size());
    if (!out.empty()) {
      std::ofstream f(out);
      f << "{\n  \"schema\": \"cartplan.cost_model/1\",\n  \"alpha_us\": " << alpha << ",\n  \"beta_us_per_byte\": " << beta
        << ",\n  \"method\": \"least-squares fit of persistent Cart_alltoall (direct and combining, box d=2..4 n=3, m = 1..1024 "
           "ints) to alpha*rounds + beta*bytes\",\n  \"np\": "
        << np << ",\n  \"r2\": " << r2 << ",\n  \"points\": " << y.size() << ",\n  \"pingpong\": {\"alpha_us\": " << pp_alpha
        << ", \"beta_us_per_byte\": " << pp_beta << "}\n}\n";
      std::printf("wrote %s\n", out.c_str());
    }
  }
  MPI_Finalize();
  return 0;
}
