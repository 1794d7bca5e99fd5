// Reduction benchmark (issue 12): Cart_allreduce and Cart_reduce_scatter (direct, combining, auto;
// blocking and persistent) against what users write today, MPI_Neighbor_allgather (or
// MPI_Neighbor_alltoall) on a distributed graph of the same neighbourhood followed by a local
// loop that sums the t received vectors. Box neighbourhoods box:d=D,n=3,f=-1 (t = 3^d offsets,
// zero included) on a periodic grid from MPI_Dims_create, vectors of m doubles, MPI_SUM.
// Variants run interleaved in random order; the time of a repetition is the slowest rank's.
// Each line reports the plans' rounds and volume (block transfers per process) next to the
// times, and the speedup over the emulation (its median / the variant's median).
//
//   mpirun -np 2 reduce_bench --d 2,3,4,5 --m 1,10,100,1000 --reps 30 --csv out.csv
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "bench/bench_util.h"
#include "engine/optimizer.h"
#include "engine/spec.h"

namespace {

using cartplan::bench::Summary;
using cartplan::bench::summarize;

struct Args {
  std::vector<int> ds = {2, 3, 4, 5};
  std::vector<int> ms = {1, 10, 100, 1000};
  int reps = 30, warmup = 5;
  std::string csv;
};

void die(const std::string& msg) {
  std::fprintf(stderr, "reduce_bench: %s\n", msg.c_str());
  MPI_Abort(MPI_COMM_WORLD, 2);
}

void ok(int rc, const char* what) {
  if (rc != MPI_SUCCESS) die(std::string(what) + " failed: " + Cart_error_message());
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) die("missing value after " + k);
      return argv[++i];
    };
    if (k == "--d") {
      auto v = cartplan::bench::parse_int_list(next(), 1, 6);
      if (!v) die("bad --d");
      a.ds = *v;
    } else if (k == "--m") {
      auto v = cartplan::bench::parse_int_list(next(), 1, 1 << 20);
      if (!v) die("bad --m");
      a.ms = *v;
    } else if (k == "--reps") {
      auto v = cartplan::bench::parse_int(next(), 1, 100000);
      if (!v) die("bad --reps");
      a.reps = static_cast<int>(*v);
    } else if (k == "--warmup") {
      auto v = cartplan::bench::parse_int(next(), 0, 100000);
      if (!v) die("bad --warmup");
      a.warmup = static_cast<int>(*v);
    } else if (k == "--csv") {
      a.csv = next();
    } else {
      die("unknown argument " + k + " (--d, --m, --reps, --warmup, --csv)");
    }
  }
  return a;
}

struct Variant {
  std::string name;
  int rounds = 0, volume = 0;  // of the plan (0 for the emulation: t messages)
  std::function<void()> run;
  std::function<void()> cleanup;
};

// rounds / volume of the plan an algorithm choice gives for blocks of `bytes` on `grid`.
std::pair<int, int> plan_size(cartplan::ir::Op op, const cartplan::engine::Neighborhood& nbh, const cartplan::engine::Grid& grid,
                              cartplan::engine::AlgoChoice algo, std::int64_t bytes, bool* combining) {
  cartplan::engine::PlanOptions po;
  po.algo = algo;
  po.block_bytes = bytes;
  po.grid = grid;
  auto plan = cartplan::engine::make_plan(op, nbh, po);
  if (!plan) die(plan.error());
  if (combining) *combining = plan->algorithm() == cartplan::ir::Algorithm::kCombining;
  return {plan->stats().rounds, plan->stats().volume};
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const Args args = parse(argc, argv);
  int np = 1, me = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  std::ofstream csv;
  if (me == 0 && !args.csv.empty()) {
    csv.open(args.csv);
    csv << "np,d,t,op,m,variant,algorithm,rounds,volume,n,median_us,q1_us,q3_us,lowq_us,speedup\n";
  }
  const char* algos[] = {"auto", "direct", "combining"};
  for (int d : args.ds) {
    const std::string spec = "box:d=" + std::to_string(d) + ",n=3,f=-1";
    auto nbh = cartplan::engine::parse_spec(spec);
    if (!nbh) die(nbh.error());
    const int t = nbh->size();
    std::vector<int> dims(d, 0), periods(d, 1), offsets;
    MPI_Dims_create(np, d, dims.data());
    for (const auto& o : nbh->offsets()) offsets.insert(offsets.end(), o.begin(), o.end());
    auto grid = cartplan::engine::Grid::create(dims, std::vector<bool>(d, true));
    if (!grid) die(grid.error());
    MPI_Comm carts[3];
    for (int a = 0; a < 3; ++a) {
      MPI_Info info;
      MPI_Info_create(&info);
      MPI_Info_set(info, "cartplan_algorithm", algos[a]);
      ok(Cart_neighborhood_create(MPI_COMM_WORLD, d, dims.data(), periods.data(), t, offsets.data(), MPI_UNWEIGHTED, info, 0,
                                  &carts[a]),
         "Cart_neighborhood_create");
      MPI_Info_free(&info);
    }
    int tt = 0, in = 0, out = 0;
    ok(Cart_neighbor_degrees(carts[0], &tt, &in, &out), "Cart_neighbor_degrees");
    std::vector<int> gs(in), gt(out);
    ok(Cart_graph_get(carts[0], in, gs.data(), out, gt.data()), "Cart_graph_get");
    MPI_Comm graph;
    MPI_Dist_graph_create_adjacent(carts[0], in, gs.data(), MPI_UNWEIGHTED, out, gt.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                   &graph);

    for (const char* opname : {"allreduce", "reduce_scatter"}) {
      const bool rs = std::string(opname) == "reduce_scatter";
      const cartplan::ir::Op op = rs ? cartplan::ir::Op::kReduceScatter : cartplan::ir::Op::kAllreduce;
      for (int m : args.ms) {
        std::vector<double> send(static_cast<std::size_t>(rs ? t : 1) * m), gathered(static_cast<std::size_t>(t) * m);
        for (std::size_t k = 0; k < send.size(); ++k) send[k] = me * 1.5 + static_cast<double>(k % 997) * 0.25;
        std::vector<double> emulated(m), result(m);
        std::vector<Variant> variants;
        // The emulation: t messages (MPI's own neighbourhood collective), then t-1 vector sums.
        Variant emu;
        emu.name = rs ? "mpi_alltoall+sum" : "mpi_allgather+sum";
        emu.rounds = t;
        emu.volume = t;
        emu.run = [&, m, rs] {
          if (rs)
            MPI_Neighbor_alltoall(send.data(), m, MPI_DOUBLE, gathered.data(), m, MPI_DOUBLE, graph);
          else
            MPI_Neighbor_allgather(send.data(), m, MPI_DOUBLE, gathered.data(), m, MPI_DOUBLE, graph);
          std::copy(gathered.begin(), gathered.begin() + m, emulated.begin());
          for (int i = 1; i < t; ++i)
            for (int e = 0; e < m; ++e) emulated[e] += gathered[static_cast<std::size_t>(i) * m + e];
        };
        variants.push_back(emu);
        std::vector<std::string> algorithm_of(1, "-");
        for (int a = 0; a < 3; ++a) {
          bool comb = false;
          const auto [rounds, volume] =
              plan_size(op, *nbh, *grid, static_cast<cartplan::engine::AlgoChoice>(a), std::int64_t{8} * m, &comb);
          Variant v;
          v.name = std::string("cart_") + opname + "_" + algos[a];
          v.rounds = rounds;
          v.volume = volume;
          MPI_Comm cart = carts[a];
          v.run = [&, cart, m, rs] {
            if (rs) ok(Cart_reduce_scatter(send.data(), result.data(), m, MPI_DOUBLE, MPI_SUM, cart), "Cart_reduce_scatter");
            else ok(Cart_allreduce(send.data(), result.data(), m, MPI_DOUBLE, MPI_SUM, cart), "Cart_allreduce");
          };
          variants.push_back(v);
          algorithm_of.push_back(comb ? "combining" : "direct");
          if (a == 0) {
            // The persistent form of the auto choice: built once, started every repetition.
            auto req = std::make_shared<Cart_Request>(CART_REQUEST_NULL);
            if (rs) ok(Cart_reduce_scatter_init(send.data(), result.data(), m, MPI_DOUBLE, MPI_SUM, cart, MPI_INFO_NULL, req.get()), "init");
            else ok(Cart_allreduce_init(send.data(), result.data(), m, MPI_DOUBLE, MPI_SUM, cart, MPI_INFO_NULL, req.get()), "init");
            Variant p = v;
            p.name = std::string("cart_") + opname + "_init_auto";
            p.run = [req] {
              ok(Cart_start(req.get()), "Cart_start");
              ok(Cart_wait(req.get()), "Cart_wait");
            };
            p.cleanup = [req] { Cart_request_free(req.get()); };
            variants.push_back(p);
            algorithm_of.push_back(comb ? "combining" : "direct");
          }
        }
        // Correctness once: every variant's result against the emulation (tolerance: the
        // combining order differs from the loop's).
        variants[0].run();
        for (std::size_t v = 1; v < variants.size(); ++v) {
          std::fill(result.begin(), result.end(), -1.0);
          variants[v].run();
          for (int e = 0; e < m; ++e)
            if (std::fabs(result[e] - emulated[e]) > 1e-9 * std::max(1.0, std::fabs(emulated[e])))
              die(variants[v].name + " differs from the emulation at element " + std::to_string(e));
        }
        std::mt19937 rng(1234u + static_cast<unsigned>(m * 31 + d));
        const std::size_t nv = variants.size();
        std::vector<std::vector<double>> samples(nv);
        std::vector<double> times(nv), maxed(nv);
        std::vector<std::size_t> order(nv);
        for (std::size_t v = 0; v < nv; ++v) order[v] = v;
        for (int rep = 0; rep < args.warmup + args.reps; ++rep) {
          std::shuffle(order.begin(), order.end(), rng);
          for (std::size_t v : order) {
            MPI_Barrier(MPI_COMM_WORLD);
            const double t0 = MPI_Wtime();
            variants[v].run();
            times[v] = (MPI_Wtime() - t0) * 1e6;
          }
          MPI_Allreduce(times.data(), maxed.data(), static_cast<int>(nv), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
          if (rep >= args.warmup)
            for (std::size_t v = 0; v < nv; ++v) samples[v].push_back(maxed[v]);
        }
        for (Variant& v : variants)
          if (v.cleanup) v.cleanup();
        if (me == 0) {
          std::vector<Summary> sums;
          for (auto& s : samples) sums.push_back(summarize(s));
          std::printf("== %s %s m=%d np=%d dims", spec.c_str(), opname, m, np);
          for (int x : dims) std::printf(" %d", x);
          std::printf(" (t=%d)\n", t);
          for (std::size_t v = 0; v < nv; ++v) {
            const Summary& s = sums[v];
            const double speedup = s.median > 0 ? sums[0].median / s.median : 0;
            std::printf("  %-30s %-9s rounds %3d volume %3d  median %9.2f us  [%8.2f, %8.2f]  speedup x%.2f\n",
                        variants[v].name.c_str(), algorithm_of[v].c_str(), variants[v].rounds, variants[v].volume, s.median, s.q1,
                        s.q3, speedup);
            if (csv.is_open())
              csv << np << "," << d << "," << t << "," << opname << "," << m << "," << variants[v].name << "," << algorithm_of[v]
                  << "," << variants[v].rounds << "," << variants[v].volume << "," << s.n << "," << s.median << "," << s.q1 << ","
                  << s.q3 << "," << s.low_quartile_mean << "," << speedup << "\n";
          }
          std::fflush(stdout);
        }
      }
    }
    MPI_Comm_free(&graph);
    for (MPI_Comm& c : carts) MPI_Comm_free(&c);
  }
  MPI_Finalize();
  return 0;
}
