// Exchange-time benchmark (seed 000 Sect. 4, seed 002 Sect. 7): cartplan's Cartesian
// collectives (direct, combining, auto; blocking and persistent) against Open MPI's
// MPI_Neighbor_*, MPI_Ineighbor_* and MPIX_Neighbor_*_init on a distributed graph of the same
// neighbourhood, and a packed lower-bound proxy of the combining plan (packed_proxy; and
// proxy_floor, the proxy plus the local writes no plan with its messages avoids), in one run
// with the variants interleaved in random order. Run under mpirun; rank 0 writes CSV.
// --candidates adds one persistent request per optimizer candidate (engine::plan_candidates,
// run through the Info key cartplan_plan), each with the model's prediction, and names the
// candidate auto picked: how good the model's choice is, measured in the same run.
//
//   mpirun -np 2 exchange_bench --stencil box:d=4,n=3,f=-1 --m 1,10,100 --reps 50 --csv out.csv
//   mpirun -np 8 exchange_bench --dims 2,2,2 --stencil box:d=3,n=3,f=-1 --candidates --m 1,100
// --min-ms T repeats a point until its timed repetitions take at least T ms (at most --max-reps):
// at 1-5 us per call, 10-20 repetitions cannot tell 10 % from noise, and more cost little.
#include <mpi.h>
#include <mpi-ext.h>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "backends/mpi/openmpi_profile.h"
#include "bench/bench_util.h"
#include "engine/bind.h"
#include "engine/cost_model.h"
#include "engine/cost_model_locate.h"
#include "engine/optimizer.h"
#include "engine/planner.h"
#include "engine/predict.h"
#include "engine/program_print.h"
#include "engine/spec.h"
#include "ir/json.h"

namespace {

using cartplan::bench::Summary;
using cartplan::bench::summarize;

struct Args {
  std::vector<std::string> stencils;
  std::vector<int> ms = {1, 10, 100};
  std::vector<std::string> ops = {"alltoall", "allgather", "alltoallv"};
  int reps = 30, warmup = 5;
  int min_ms = 0, max_reps = 1000;  // --min-ms / --max-reps: more repetitions for fast points
  unsigned seed = 1;
  std::string csv, cost_model;
  std::int64_t max_bytes = std::int64_t{64} << 20;  // per rank and buffer; larger configs are skipped
  bool blocking = true;
  std::string only;  // run only variants whose name contains this (profiling)
  bool candidates = false;  // one persistent variant per optimizer candidate ("cand:NAME")
  std::vector<int> dims;    // forced process grid (--dims); empty: MPI_Dims_create
};

// A variant: something that runs one exchange, plus cleanup.
struct Variant {
  std::string name;
  std::function<void()> run;
  std::function<void()> check;  // verifies the last run's recv buffer (may be empty)
  std::function<void()> cleanup;
  // The model's prediction for this variant's plan (NaN where the benchmark has none).
  double predicted_us = std::numeric_limits<double>::quiet_NaN();
  // A persistent cartplan request's program on this rank without tags and round numbers
  // (engine::program_without_names; empty for other variants): requests whose programs are
  // equal on every rank run the same messages and copies.
  std::string program = "";
};

int rank_of(MPI_Comm c) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}

void die(const std::string& msg) {
  std::fprintf(stderr, "exchange_bench: %s\n", msg.c_str());
  MPI_Abort(MPI_COMM_WORLD, 2);
}

void ok(int rc, const char* what) {
  if (rc != MPI_SUCCESS) die(std::string(what) + " failed: " + Cart_error_message());
}

// Sizes of the blocks: m ints (regular), or m^(d-z) ints for an offset with z non-zero
// coordinates and 0 for the zero offset (the seed's halo-like alltoallv).
std::vector<std::int64_t> block_ints(const cartplan::engine::Neighborhood& nbh, const std::string& op, int m) {
  std::vector<std::int64_t> n(nbh.size(), m);
  if (op != "alltoallv") return n;
  for (int i = 0; i < nbh.size(); ++i) {
    const int z = cartplan::engine::Neighborhood::nonzeros(nbh[i]);
    n[i] = z == 0 ? 0 : static_cast<std::int64_t>(std::llround(std::pow(m, nbh.ndims() - z)));
  }
  return n;
}

struct Buffers {
  std::vector<int> send, recv;
  std::vector<int> scounts, sdispls, rcounts, rdispls;
};

class Bench {
 public:
  Bench(const Args& a) : args_(a) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &np_);
    model_ = backend_model();
    if (rank_ == 0 && !a.csv.empty()) {
      csv_.open(a.csv);
      csv_ << "np,stencil,d,t,C,V_alltoall,V_allgather,op,m,bytes_per_rank,variant,reps,median_us,q1_us,q3_us,"
              "lowq_mean_us,tukey_mean_us,outliers,ratio_to_mpi,pred_direct_us,pred_combining_us,dims,predicted_us,auto_pick,program,runs\n";
    }
  }

  void run_stencil(const std::string& spec) {
    auto nbh = cartplan::engine::parse_spec(spec);
    if (!nbh) die("--stencil " + spec + ": " + nbh.error());
    const int d = nbh->ndims(), t = nbh->size();
    std::vector<int> dims(d, 0), periods(d, 1), offsets;
    if (args_.dims.empty()) {
      MPI_Dims_create(np_, d, dims.data());
    } else {
      // A forced grid (e.g. 2x2x2 at np = 8, where MPI_Dims_create also gives it, or 8x1 vs 4x2).
      if (static_cast<int>(args_.dims.size()) != d)
        die("--dims has " + std::to_string(args_.dims.size()) + " entries but --stencil " + spec + " has d = " +
            std::to_string(d));
      long long product = 1;
      for (int k : args_.dims) product *= k;
      if (product != np_)
        die("--dims multiplies to " + std::to_string(product) + " processes but the run has np = " + std::to_string(np_));
      dims = args_.dims;
    }
    for (const auto& o : nbh->offsets()) offsets.insert(offsets.end(), o.begin(), o.end());

    // One Cartesian communicator per algorithm (Info at creation), and the graph baseline.
    const char* algos[] = {"direct", "combining", "auto"};
    MPI_Comm carts[3];
    for (int a = 0; a < 3; ++a) {
      MPI_Info info;
      MPI_Info_create(&info);
      MPI_Info_set(info, "cartplan_algorithm", algos[a]);
      if (!args_.cost_model.empty()) MPI_Info_set(info, "cartplan_cost_model", args_.cost_model.c_str());
      ok(Cart_neighborhood_create(MPI_COMM_WORLD, d, dims.data(), periods.data(), t, offsets.data(), MPI_UNWEIGHTED, info, 0,
                                  &carts[a]),
         "Cart_neighborhood_create");
      MPI_Info_free(&info);
    }
    std::vector<int> sources(t), targets(t);
    ok(Cart_neighbor_get(carts[0], t, sources.data(), MPI_UNWEIGHTED, t, targets.data(), MPI_UNWEIGHTED), "Cart_neighbor_get");
    MPI_Comm graph;
    MPI_Dist_graph_create_adjacent(carts[0], t, sources.data(), MPI_UNWEIGHTED, t, targets.data(), MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &graph);
    MPI_Comm proxy_comm;
    MPI_Comm_dup(carts[0], &proxy_comm);

    for (const std::string& op : args_.ops)
      for (int m : args_.ms) run_case(spec, *nbh, dims, op, m, carts, graph, proxy_comm);

    MPI_Comm_free(&proxy_comm);
    MPI_Comm_free(&graph);
    for (MPI_Comm& c : carts) MPI_Comm_free(&c);
  }

 private:
  void run_case(const std::string& spec, const cartplan::engine::Neighborhood& nbh, const std::vector<int>& dims,
                const std::string& op, int m, MPI_Comm carts[3], MPI_Comm graph, MPI_Comm proxy_comm) {
    const int t = nbh.size();
    const bool gather = op == "allgather";
    const std::vector<std::int64_t> ints = block_ints(nbh, op, m);
    std::int64_t total = 0;
    for (std::int64_t n : ints) total += n;
    if (total * 4 > args_.max_bytes || total > INT32_MAX / 2) {
      if (rank_ == 0) std::printf("skip %s %s m=%d: %lld bytes per buffer exceed --max-bytes\n", spec.c_str(), op.c_str(), m,
                                  static_cast<long long>(total * 4));
      return;
    }
    // Send block i holds value(rank, i, j); recv buffers are compared against MPI's result.
    Buffers b;
    const int me = rank_of(carts[0]);
    b.scounts.resize(t);
    b.sdispls.resize(t);
    b.rcounts.resize(t);
    b.rdispls.resize(t);
    int pos = 0;
    for (int i = 0; i < t; ++i) {
      b.scounts[i] = b.rcounts[i] = static_cast<int>(ints[i]);
      b.sdispls[i] = b.rdispls[i] = pos;
      pos += static_cast<int>(ints[i]);
    }
    b.send.resize(gather ? m : pos);
    for (std::size_t k = 0; k < b.send.size(); ++k) b.send[k] = me * 1000003 + static_cast<int>(k);
    b.recv.assign(std::max(pos, 1), -1);
    std::vector<int> reference(b.recv.size(), -1);

    std::vector<Variant> variants;
    plan_json_.clear();
    runs_.clear();
    add_mpi_variants(variants, op, m, graph, b, reference);
    for (int a = 0; a < 3; ++a) add_cart_variants(variants, op, m, carts[a], a, b, reference);
    add_proxy(variants, nbh, dims, op, ints, proxy_comm, b);
    const auto grid = cartplan::engine::Grid::create(dims, std::vector<bool>(dims.size(), true));
    if (!grid) die("grid: " + grid.error());
    std::string auto_pick;
    if (args_.candidates) auto_pick = add_candidates(variants, nbh, *grid, op, m, ints, carts[2], b, reference);

    if (!args_.only.empty()) {
      std::vector<Variant> kept;
      // Candidates were asked for explicitly: --only does not drop them.
      for (Variant& v : variants)
        if (v.name.find(args_.only) != std::string::npos || v.name == "mpi_neighbor" || v.name.rfind("cand:", 0) == 0)
          kept.push_back(std::move(v));
        else if (v.cleanup) v.cleanup();
      variants = std::move(kept);
    }
    const std::vector<std::string> programs = program_groups(variants);
    // Interleaved repetitions: every rank draws the same order (the variants are collective).
    std::mt19937 rng(args_.seed + static_cast<unsigned>(m) * 7919u);
    const std::size_t nv = variants.size();
    std::vector<std::vector<double>> samples(nv);
    std::vector<double> times(nv), maxed(nv);
    std::vector<std::size_t> order(nv);
    for (std::size_t v = 0; v < nv; ++v) order[v] = v;
    int reps = args_.reps;
    for (int rep = 0; rep < args_.warmup + reps; ++rep) {
      std::shuffle(order.begin(), order.end(), rng);
      for (std::size_t v : order) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        variants[v].run();
        times[v] = (MPI_Wtime() - t0) * 1e6;
      }
      // The time of a collective is the time of its slowest rank.
      MPI_Allreduce(times.data(), maxed.data(), static_cast<int>(nv), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (rep == 0)
        for (Variant& v : variants)
          if (v.check) {
            std::fill(b.recv.begin(), b.recv.end(), -1);
            v.run();
            v.check();
          }
      if (rep >= args_.warmup)
        for (std::size_t v = 0; v < nv; ++v) samples[v].push_back(maxed[v]);
      // After the last warm-up repetition (or the first one), from the time one repetition of
      // every variant took. `maxed` is the same on every rank, so all ranks agree on `reps`.
      if (args_.min_ms > 0 && rep == std::max(args_.warmup - 1, 0)) {
        double round_us = 0;
        for (double t : maxed) round_us += t;
        const double wanted = std::ceil(args_.min_ms * 1000.0 / std::max(round_us, 1e-3));
        reps = static_cast<int>(std::clamp(wanted, static_cast<double>(args_.reps), static_cast<double>(std::max(args_.max_reps, args_.reps))));
      }
    }
    for (Variant& v : variants)
      if (v.cleanup) v.cleanup();

    // Report, with ratios to the blocking MPI_Neighbor_* call.
    double mpi_median = 0;
    std::vector<Summary> sums;
    for (std::size_t v = 0; v < nv; ++v) {
      sums.push_back(summarize(samples[v]));
      if (variants[v].name == "mpi_neighbor") mpi_median = sums.back().median;
    }
    // What the optimizer predicts for this case, for the mean block size (the candidates'
    // predictions use every block's own size, as the backend does).
    cartplan::engine::PlanOptions po;
    po.model = model_;
    po.lowering = cartplan::openmpi::lower_options(model_);  // as the backend lowers
    po.grid = *grid;
    po.block_bytes = gather ? std::int64_t{4} * m : total * 4 / t;
    auto predicted = cartplan::engine::make_plan(gather ? cartplan::ir::Op::kAllgather : cartplan::ir::Op::kAlltoall, nbh, po);
    const double pred_direct = predicted->stats().cost->direct_us, pred_combining = predicted->stats().cost->combining_us;
    const auto comb = cartplan::engine::combining_metrics(cartplan::ir::Op::kAlltoall, nbh, cartplan::engine::auto_dim_order(nbh));
    const auto gath = cartplan::engine::combining_metrics(cartplan::ir::Op::kAllgather, nbh, cartplan::engine::auto_dim_order(nbh));
    if (rank_ == 0) {
      std::string dims_text;
      for (std::size_t k = 0; k < dims.size(); ++k) dims_text += (k ? "x" : "") + std::to_string(dims[k]);
      std::printf("== %s op=%s m=%d np=%d dims=%s (t=%d C=%d; predicted direct %.2f us, combining %.2f us)\n", spec.c_str(),
                  op.c_str(), m, np_, dims_text.c_str(), comb.t, comb.C, pred_direct, pred_combining);
      if (args_.candidates) std::printf("  auto picked: %s\n", auto_pick.c_str());
      for (std::size_t v = 0; v < nv; ++v) {
        const Summary& s = sums[v];
        const double pred = variants[v].predicted_us;
        std::printf("  %-34s median %10.2f us  [%9.2f, %9.2f]  lowq %9.2f  x%.2f", variants[v].name.c_str(), s.median, s.q1, s.q3,
                    s.low_quartile_mean, mpi_median > 0 ? s.median / mpi_median : 0.0);
        if (!std::isnan(pred)) std::printf("  predicted %9.2f us (measured/predicted %.2f)", pred, pred > 0 ? s.median / pred : 0.0);
        std::printf("\n");
        if (csv_)
          csv_ << np_ << ",\"" << spec << "\"," << nbh.ndims() << "," << comb.t << "," << comb.C << "," << comb.V << "," << gath.V
               << "," << op << "," << m << "," << total * 4 << ",\"" << variants[v].name << "\"," << s.n << "," << s.median << ","
               << s.q1 << "," << s.q3 << "," << s.low_quartile_mean << "," << s.tukey_mean << "," << s.outliers << ","
               << (mpi_median > 0 ? s.median / mpi_median : 0.0) << "," << pred_direct << "," << pred_combining << ","
               << dims_text << ",";
        if (!std::isnan(pred)) csv_ << pred;
        const auto runs = runs_.find(variants[v].name);
        csv_ << ",\"" << auto_pick << "\"," << programs[v] << ",\"" << (runs == runs_.end() ? "" : runs->second) << "\"\n";
      }
      std::fflush(stdout);
    }
  }

  void add_mpi_variants(std::vector<Variant>& vs, const std::string& op, int m, MPI_Comm graph, Buffers& b,
                        std::vector<int>& reference) {
    int* sb = b.send.data();
    int* rb = b.recv.data();
    auto blocking = [=, &b]() {
      if (op == "alltoall") MPI_Neighbor_alltoall(sb, m, MPI_INT, rb, m, MPI_INT, graph);
      else if (op == "allgather") MPI_Neighbor_allgather(sb, m, MPI_INT, rb, m, MPI_INT, graph);
      else MPI_Neighbor_alltoallv(sb, b.scounts.data(), b.sdispls.data(), MPI_INT, rb, b.rcounts.data(), b.rdispls.data(), MPI_INT, graph);
    };
    // The reference result for every other variant.
    blocking();
    reference = b.recv;
    vs.push_back({"mpi_neighbor", blocking, nullptr, nullptr});
    vs.push_back({"mpi_ineighbor",
                  [=, &b]() {
                    MPI_Request r;
                    if (op == "alltoall") MPI_Ineighbor_alltoall(sb, m, MPI_INT, rb, m, MPI_INT, graph, &r);
                    else if (op == "allgather") MPI_Ineighbor_allgather(sb, m, MPI_INT, rb, m, MPI_INT, graph, &r);
                    else
                      MPI_Ineighbor_alltoallv(sb, b.scounts.data(), b.sdispls.data(), MPI_INT, rb, b.rcounts.data(),
                                              b.rdispls.data(), MPI_INT, graph, &r);
                    MPI_Wait(&r, MPI_STATUS_IGNORE);
                  },
                  nullptr, nullptr});
    auto req = std::make_shared<MPI_Request>(MPI_REQUEST_NULL);
    int rc = MPI_SUCCESS;
    if (op == "alltoall") rc = MPIX_Neighbor_alltoall_init(sb, m, MPI_INT, rb, m, MPI_INT, graph, MPI_INFO_NULL, req.get());
    else if (op == "allgather") rc = MPIX_Neighbor_allgather_init(sb, m, MPI_INT, rb, m, MPI_INT, graph, MPI_INFO_NULL, req.get());
    else
      rc = MPIX_Neighbor_alltoallv_init(sb, b.scounts.data(), b.sdispls.data(), MPI_INT, rb, b.rcounts.data(), b.rdispls.data(),
                                        MPI_INT, graph, MPI_INFO_NULL, req.get());
    if (rc != MPI_SUCCESS) die("MPIX_Neighbor_*_init failed");
    vs.push_back({"mpix_persistent",
                  [req]() {
                    MPI_Start(req.get());
                    MPI_Wait(req.get(), MPI_STATUS_IGNORE);
                  },
                  nullptr, [req]() { MPI_Request_free(req.get()); }});
  }

  void add_cart_variants(std::vector<Variant>& vs, const std::string& op, int m, MPI_Comm cart, int algo, Buffers& b,
                         const std::vector<int>& reference) {
    const char* names[] = {"direct", "combining", "auto"};
    int* sb = b.send.data();
    int* rb = b.recv.data();
    const std::string algo_name = names[algo];
    auto check = [&b, &reference, algo_name, this]() {
      if (b.recv != reference) die("cartplan " + algo_name + " delivered something else than MPI_Neighbor_* (rank " +
                                   std::to_string(rank_) + ")");
    };
    if (args_.blocking)
      vs.push_back({"cart_" + algo_name + "_blocking",
                    [=, &b]() {
                      if (op == "alltoall") ok(Cart_alltoall(sb, m, MPI_INT, rb, m, MPI_INT, cart), "Cart_alltoall");
                      else if (op == "allgather") ok(Cart_allgather(sb, m, MPI_INT, rb, m, MPI_INT, cart), "Cart_allgather");
                      else
                        ok(Cart_alltoallv(sb, b.scounts.data(), b.sdispls.data(), MPI_INT, rb, b.rcounts.data(), b.rdispls.data(),
                                          MPI_INT, cart),
                           "Cart_alltoallv");
                    },
                    check, nullptr});
    if (args_.blocking)
      vs.push_back({"cart_" + algo_name + "_nonblocking",
                    [=, &b]() {
                      Cart_Request r = CART_REQUEST_NULL;
                      if (op == "alltoall") ok(Cart_ialltoall(sb, m, MPI_INT, rb, m, MPI_INT, cart, &r), "Cart_ialltoall");
                      else if (op == "allgather") ok(Cart_iallgather(sb, m, MPI_INT, rb, m, MPI_INT, cart, &r), "Cart_iallgather");
                      else
                        ok(Cart_ialltoallv(sb, b.scounts.data(), b.sdispls.data(), MPI_INT, rb, b.rcounts.data(), b.rdispls.data(),
                                           MPI_INT, cart, &r),
                           "Cart_ialltoallv");
                      ok(Cart_wait(&r), "Cart_wait");
                    },
                    check, nullptr});
    auto req = std::make_shared<Cart_Request>(CART_REQUEST_NULL);
    if (op == "alltoall") ok(Cart_alltoall_init(sb, m, MPI_INT, rb, m, MPI_INT, cart, MPI_INFO_NULL, req.get()), "init");
    else if (op == "allgather") ok(Cart_allgather_init(sb, m, MPI_INT, rb, m, MPI_INT, cart, MPI_INFO_NULL, req.get()), "init");
    else
      ok(Cart_alltoallv_init(sb, b.scounts.data(), b.sdispls.data(), MPI_INT, rb, b.rcounts.data(), b.rdispls.data(), MPI_INT, cart,
                             MPI_INFO_NULL, req.get()),
         "init");
    int combining = 0;
    Cart_request_algorithm(*req, &combining);
    std::string name = "cart_" + algo_name + "_persistent";
    if (algo == 2) name += combining ? "(combining)" : "(direct)";
    plan_json_[name] = request_plan(*req);
    vs.push_back(persistent_variant(name, req, check));
    if (algo == 2) {
      // Auto in measuring mode (Info cartplan_tune = measure): init times the close candidates
      // and keeps the fastest (backends/mpi/exchange_measure.cc).
      auto measured = std::make_shared<Cart_Request>(CART_REQUEST_NULL);
      MPI_Info info;
      MPI_Info_create(&info);
      MPI_Info_set(info, "cartplan_tune", "measure");
      if (op == "alltoall") ok(Cart_alltoall_init(sb, m, MPI_INT, rb, m, MPI_INT, cart, info, measured.get()), "init (measured)");
      else if (op == "allgather") ok(Cart_allgather_init(sb, m, MPI_INT, rb, m, MPI_INT, cart, info, measured.get()), "init (measured)");
      else
        ok(Cart_alltoallv_init(sb, b.scounts.data(), b.sdispls.data(), MPI_INT, rb, b.rcounts.data(), b.rdispls.data(), MPI_INT,
                               cart, info, measured.get()),
           "init (measured)");
      MPI_Info_free(&info);
      plan_json_["cart_measured_persistent"] = request_plan(*measured);
      vs.push_back(persistent_variant("cart_measured_persistent", measured, check));
    }
    if (algo > 1) return;
    // The same plan lowered otherwise, in the same run: with every multi-block message packed
    // (the lowering before struct datatypes carried forwarded blocks: what zero-copy
    // forwarding gains), with blocks received straight into their recv blocks in every
    // message (by default only up to the model's limit, lower.h: what that limit costs or
    // saves), and, where the model wants trailers, direct and combining without them (what
    // keeping messages off Open MPI's single copy gains).
    std::vector<std::pair<std::string, std::pair<const char*, const char*>>> variants;
    if (algo == 1) {
      variants.push_back({"cart_combining_persistent_packed", {"cartplan_struct_min_bytes", "-1"}});
      variants.push_back({"cart_combining_persistent_homes", {"cartplan_home_max_bytes", "-1"}});
    }
    if (cartplan::openmpi::trailer_min_bytes(model_) >= 0)
      variants.push_back({"cart_" + algo_name + "_persistent_untrailed", {"cartplan_trailer_min_bytes", "-1"}});
    for (const auto& [variant, key_value] : variants) {
      auto req2 = std::make_shared<Cart_Request>(CART_REQUEST_NULL);
      MPI_Info info;
      MPI_Info_create(&info);
      MPI_Info_set(info, key_value.first, key_value.second);
      if (op == "alltoall") ok(Cart_alltoall_init(sb, m, MPI_INT, rb, m, MPI_INT, cart, info, req2.get()), "init");
      else if (op == "allgather") ok(Cart_allgather_init(sb, m, MPI_INT, rb, m, MPI_INT, cart, info, req2.get()), "init");
      else
        ok(Cart_alltoallv_init(sb, b.scounts.data(), b.sdispls.data(), MPI_INT, rb, b.rcounts.data(), b.rdispls.data(), MPI_INT,
                               cart, info, req2.get()),
           "init");
      MPI_Info_free(&info);
      vs.push_back(persistent_variant(variant, req2, check));
    }
  }

  // One persistent request per optimizer candidate, each running the candidate's plan through
  // the Info key cartplan_plan, predicted as the optimizer predicts it. Returns the names of the
  // candidates whose schedule auto's persistent request runs ("a|b" when candidates coincide),
  // and gives the direct/combining/auto persistent variants the prediction of their plan.
  std::string add_candidates(std::vector<Variant>& vs, const cartplan::engine::Neighborhood& nbh,
                             const cartplan::engine::Grid& grid, const std::string& op, int m,
                             const std::vector<std::int64_t>& ints, MPI_Comm cart, Buffers& b,
                             const std::vector<int>& reference) {
    using namespace cartplan;
    engine::PlanOptions o;  // algo auto: every kind of candidate
    o.model = model_;
    o.lowering = openmpi::lower_options(model_);  // as the backend lowers
    o.grid = grid;  // rounds that wrap to the process itself are free, as for the backend
    // The sizes the backend plans with (exchange_settle.cc): one for alltoall and allgather,
    // every block's own for alltoallv.
    if (op == "alltoallv") {
      for (std::int64_t n : ints) o.block_sizes.push_back(n * 4);
    } else {
      o.block_bytes = std::int64_t{4} * m;
    }
    auto cands = engine::plan_candidates(op == "allgather" ? ir::Op::kAllgather : ir::Op::kAlltoall, nbh, o);
    if (!cands) die("plan_candidates: " + cands.error());
    int* sb = b.send.data();
    int* rb = b.recv.data();
    std::vector<std::string> schedules;
    for (std::size_t i = 0; i < cands->size(); ++i) {
      const engine::Candidate& c = (*cands)[i];
      const std::string text = ir::to_json_string(c.plan);
      // Each rank writes its own copy (the plan is rank-independent): no shared filesystem is
      // assumed, and the pid keeps ranks and concurrent runs apart. Init reads it; then it goes.
      const std::string path = (std::filesystem::temp_directory_path() /
                                ("exchange_bench_plan_" + std::to_string(getpid()) + "_" + std::to_string(i) + ".json"))
                                   .string();
      {
        std::ofstream f(path);
        f << text;
        if (!f) die("cannot write the candidate plan " + path);
      }
      MPI_Info info;
      MPI_Info_create(&info);
      MPI_Info_set(info, "cartplan_plan", path.c_str());
      auto req = std::make_shared<Cart_Request>(CART_REQUEST_NULL);
      if (op == "alltoall") ok(Cart_alltoall_init(sb, m, MPI_INT, rb, m, MPI_INT, cart, info, req.get()), "init (candidate)");
      else if (op == "allgather") ok(Cart_allgather_init(sb, m, MPI_INT, rb, m, MPI_INT, cart, info, req.get()), "init (candidate)");
      else
        ok(Cart_alltoallv_init(sb, b.scounts.data(), b.sdispls.data(), MPI_INT, rb, b.rcounts.data(), b.rdispls.data(), MPI_INT, cart,
                               info, req.get()),
           "init (candidate)");
      MPI_Info_free(&info);
      std::filesystem::remove(path);
      schedules.push_back(schedule_of(text));
      // The request must run the candidate, or the row would measure something else.
      if (schedule_of(request_plan(*req)) != schedules.back())
        die("candidate " + c.name + ": the request runs another plan than the one given by cartplan_plan");
      const std::string name = "cand:" + c.name;
      Variant v = persistent_variant(name, req, [&b, &reference, name, this]() {
        if (b.recv != reference)
          die(name + " delivered something else than MPI_Neighbor_* (rank " + std::to_string(rank_) + ")");
      });
      v.predicted_us = c.cost.total_us();
      vs.push_back(std::move(v));
    }
    std::string pick = "none of the candidates";
    for (Variant& v : vs) {
      const auto it = plan_json_.find(v.name);
      if (it == plan_json_.end()) continue;
      const std::string mine = schedule_of(it->second);
      std::string names;
      for (std::size_t i = 0; i < schedules.size(); ++i) {
        if (schedules[i] != mine) continue;
        names += (names.empty() ? "" : "|") + (*cands)[i].name;
        if (std::isnan(v.predicted_us)) v.predicted_us = (*cands)[i].cost.total_us();
      }
      if (v.name.rfind("cart_auto_persistent", 0) == 0 && !names.empty()) pick = names;
      runs_[v.name] = names;
    }
    return pick;
  }

  // The canonical JSON of the plan a request runs.
  static std::string request_plan(Cart_Request r) {
    char* json = nullptr;
    ok(Cart_request_plan(r, &json), "Cart_request_plan");
    std::string text(json);
    Cart_free_plan_json(json);
    return text;
  }

  // A persistent cartplan request as a variant: started and waited for, freed at cleanup, with
  // its program for the CSV's program column.
  static Variant persistent_variant(const std::string& name, const std::shared_ptr<Cart_Request>& req,
                                    std::function<void()> check) {
    Variant v{name,
              [req]() {
                ok(Cart_start(req.get()), "Cart_start");
                ok(Cart_wait(req.get()), "Cart_wait");
              },
              std::move(check), [req]() { Cart_request_free(req.get()); }};
    v.program = program_of(*req);
    return v;
  }

  // The program a request runs on this rank, without what only names its messages
  // (engine::program_without_names).
  static std::string program_of(Cart_Request r) {
    char* json = nullptr;
    ok(Cart_request_program(r, &json), "Cart_request_program");
    std::string text = cartplan::engine::program_without_names(json);
    Cart_free_plan_json(json);
    if (text.empty()) die("a request's program JSON does not parse");
    return text;
  }

  // One label per variant, the same for variants whose programs are equal on every rank ("p1",
  // "p2", .. in order of first appearance; empty for variants without a program). The CSV
  // carries it so that tables can tell a choice between different programs from the spread
  // between two requests running one program (an A/A comparison).
  std::vector<std::string> program_groups(const std::vector<Variant>& vs) const {
    const int nv = static_cast<int>(vs.size());
    std::vector<unsigned long long> mine(nv, 0), all(rank_ == 0 ? static_cast<std::size_t>(nv) * np_ : 0);
    for (int v = 0; v < nv; ++v)
      if (!vs[v].program.empty()) mine[v] = std::hash<std::string>{}(vs[v].program) | 1;  // 0: no program
    MPI_Gather(mine.data(), nv, MPI_UNSIGNED_LONG_LONG, all.data(), nv, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    std::vector<std::string> labels(nv);
    if (rank_ != 0) return labels;
    std::map<std::vector<unsigned long long>, std::string> seen;
    for (int v = 0; v < nv; ++v) {
      std::vector<unsigned long long> key(np_);
      for (int r = 0; r < np_; ++r) key[r] = all[static_cast<std::size_t>(r) * nv + v];
      if (key[0] == 0) continue;
      auto it = seen.find(key);
      if (it == seen.end()) it = seen.emplace(key, "p" + std::to_string(seen.size() + 1)).first;
      labels[v] = it->second;
    }
    return labels;
  }

  // A plan's schedule without its stats and dimension order: make_plan records the combining
  // alternative's order and the predictions in the chosen plan (optimizer.cc), which
  // plan_candidates' plans do not carry, so equal schedules would otherwise compare unequal.
  static std::string schedule_of(const std::string& plan_json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(plan_json, nullptr, false);
    if (j.is_discarded() || !j.is_object()) die("a plan's JSON does not parse");
    j.erase("stats");
    j.erase("dim_order");
    return j.dump();
  }

  // The model the backend plans with (neighborhood_comm.cc): the --cost-model file (passed to it
  // as cartplan_cost_model), else the one it locates; built-in defaults on an oversubscribed node
  // price a phase as a context switch.
  cartplan::engine::CostModel backend_model() const {
    using namespace cartplan;
    std::optional<std::string> path;
    if (!args_.cost_model.empty()) path = args_.cost_model;
    auto found = engine::locate_cost_model(path, np_, [](const char* n) { return std::getenv(n); });
    if (!found) die("cost model: " + found.error());
    engine::CostModel model = found->model;
    if (found->source == engine::ModelSource::kBuiltIn) {
      MPI_Comm node = MPI_COMM_NULL;
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
      int on_node = 1;
      MPI_Comm_size(node, &on_node);
      MPI_Comm_free(&node);
      const long cores = sysconf(_SC_NPROCESSORS_ONLN);
      int mine = cores > 0 && on_node > cores ? 1 : 0, any = 0;
      MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      if (any) model.phase_us = engine::CostModel::kOversubscribedPhaseUs;
    }
    return model;
  }

  // The combining plan's rounds as contiguous, pre-packed messages on plain persistent requests:
  // the same messages cartplan sends, with no packing, unpacking or datatype processing at all.
  void add_proxy(std::vector<Variant>& vs, const cartplan::engine::Neighborhood& nbh, const std::vector<int>& dims,
                 const std::string& op, const std::vector<std::int64_t>& ints, MPI_Comm comm, const Buffers&) {
    using namespace cartplan;
    engine::PlanOptions o;
    o.algo = engine::AlgoChoice::kCombining;
    auto plan = engine::make_plan(op == "allgather" ? ir::Op::kAllgather : ir::Op::kAlltoall, nbh, o);
    auto binder = engine::Binder::create(*plan);
    std::vector<std::int64_t> bytes;
    for (std::int64_t n : ints) bytes.push_back(n * 4);
    std::vector<bool> per(dims.size(), true);
    auto grid = engine::Grid::create(dims, per);
    auto bound = binder->bind(*grid, grid->coords(rank_of(comm)), op == "allgather" ? std::vector<std::int64_t>{bytes[0]} : bytes);
    if (!bound) die("proxy bind: " + bound.error());
    struct State {
      std::vector<std::vector<char>> bufs;
      std::vector<MPI_Request> reqs;
      std::vector<std::size_t> phase_begin;
      std::vector<char> copy_from, copy_to;  // proxy_floor's copies
      bool freed = false;
      void run() {
        for (std::size_t p = 0; p + 1 < phase_begin.size(); ++p) {
          const int n = static_cast<int>(phase_begin[p + 1] - phase_begin[p]);
          if (n == 0) continue;
          MPI_Startall(n, reqs.data() + phase_begin[p]);
          MPI_Waitall(n, reqs.data() + phase_begin[p], MPI_STATUSES_IGNORE);
        }
      }
      void free() {
        if (freed) return;  // the two variants share the requests; either may be cleaned up first
        for (MPI_Request& r : reqs) MPI_Request_free(&r);
        freed = true;
      }
    };
    auto st = std::make_shared<State>();
    // Bytes of the caller's recv blocks, and of them what messages from other processes bring.
    std::int64_t result_bytes = 0, received_bytes = 0;
    if (op == "allgather") result_bytes = static_cast<std::int64_t>(nbh.size()) * bytes[0];
    else
      for (std::int64_t n : bytes) result_bytes += n;
    for (std::size_t p = 0; p + 1 < bound->phase_begin.size(); ++p) {
      st->phase_begin.push_back(st->reqs.size());
      for (int k = bound->phase_begin[p]; k < bound->phase_begin[p + 1]; ++k) {
        const engine::BoundRound& r = bound->rounds[k];
        // Rounds to this rank itself are local copies in cartplan; pre-packed, they cost nothing.
        if (r.send_peer == rank_of(comm)) continue;
        if (r.recv_peer != engine::kNoRank) {
          received_bytes += r.recv_bytes;
          st->bufs.emplace_back(std::max<std::int64_t>(r.recv_bytes, 1));
          st->reqs.emplace_back();
          MPI_Recv_init(st->bufs.back().data(), static_cast<int>(r.recv_bytes), MPI_BYTE, r.recv_peer, r.tag, comm, &st->reqs.back());
        }
        if (r.send_peer != engine::kNoRank) {
          st->bufs.emplace_back(std::max<std::int64_t>(r.send_bytes, 1));
          st->reqs.emplace_back();
          MPI_Send_init(st->bufs.back().data(), static_cast<int>(r.send_bytes), MPI_BYTE, r.send_peer, r.tag, comm, &st->reqs.back());
        }
      }
    }
    st->phase_begin.push_back(st->reqs.size());
    vs.push_back({"packed_proxy", [st]() { st->run(); }, nullptr, [st]() { st->free(); }});
    // proxy_floor: the proxy, then one memcpy of every recv byte that no message from another
    // process brings. Each received byte can land in one place only, so whatever plan sends
    // these messages still writes at least these bytes locally: the self rounds' blocks at
    // np = 2 (2x1x..x1), the zero offset's block, and allgather's copies of one block into
    // several recv blocks. Contiguous memcpy is the cheapest way to write them, so the floor
    // stays near the least a real plan with these messages can do. It copies in pieces of
    // 256 KiB: under mpirun at np = 2 on this VM, glibc 2.36 copied 24.6 MB in one call in
    // 2.2-2.3 ms and in 256-512 KiB pieces in 1.6-1.7 ms (a scratch program, not kept).
    const std::int64_t floor_bytes = std::max<std::int64_t>(result_bytes - received_bytes, 0);
    st->copy_from.assign(std::max<std::int64_t>(floor_bytes, 1), 1);
    st->copy_to.assign(std::max<std::int64_t>(floor_bytes, 1), 0);
    vs.push_back({"proxy_floor",
                  [st, floor_bytes]() {
                    st->run();
                    constexpr std::int64_t kPiece = 256 << 10;
                    for (std::int64_t o = 0; o < floor_bytes; o += kPiece)
                      std::memcpy(st->copy_to.data() + o, st->copy_from.data() + o,
                                  static_cast<std::size_t>(std::min(kPiece, floor_bytes - o)));
                  },
                  nullptr, [st]() { st->free(); }});
  }

  const Args& args_;
  int rank_ = 0, np_ = 1;
  std::ofstream csv_;
  cartplan::engine::CostModel model_;
  std::map<std::string, std::string> plan_json_;  // persistent variant name -> its plan (this case)
  std::map<std::string, std::string> runs_;       // persistent variant name -> the candidates it runs ("a|b")
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die("missing value for " + k);
      return argv[++i];
    };
    auto ints = [&](const std::string& v) {
      auto l = cartplan::bench::parse_int_list(v, 0, 1 << 20);
      if (!l) die("bad integer list for " + k + ": " + v);
      return *l;
    };
    if (k == "--stencil") a.stencils.push_back(value());
    else if (k == "--m") a.ms = ints(value());
    else if (k == "--ops") {
      a.ops.clear();
      std::string v = value();
      for (std::size_t p = 0; p <= v.size();) {
        const std::size_t c = std::min(v.find(',', p), v.size());
        const std::string op = v.substr(p, c - p);
        if (op != "alltoall" && op != "allgather" && op != "alltoallv") die("unknown op " + op);
        a.ops.push_back(op);
        p = c + 1;
      }
    } else if (k == "--reps") a.reps = ints(value()).at(0);
    else if (k == "--warmup") a.warmup = ints(value()).at(0);
    else if (k == "--min-ms") a.min_ms = ints(value()).at(0);
    else if (k == "--max-reps") a.max_reps = ints(value()).at(0);
    else if (k == "--seed") a.seed = static_cast<unsigned>(ints(value()).at(0));
    else if (k == "--csv") a.csv = value();
    else if (k == "--cost-model") a.cost_model = value();
    else if (k == "--max-mb") a.max_bytes = std::int64_t{ints(value()).at(0)} << 20;
    else if (k == "--no-blocking") a.blocking = false;
    else if (k == "--only") a.only = value();
    else if (k == "--candidates") a.candidates = true;
    else if (k == "--dims") {
      const std::string v = value();
      auto l = cartplan::bench::parse_int_list(v, 1, 1 << 20);
      if (!l) die("--dims wants positive integers separated by commas (e.g. 2,2,2), not '" + v + "'");
      a.dims = *l;
    }
    else die("unknown option " + k);
  }
  if (a.stencils.empty()) a.stencils = {"box:d=2,n=3,f=-1", "box:d=3,n=3,f=-1", "box:d=4,n=3,f=-1", "box:d=5,n=3,f=-1"};
  if (a.reps < 1) die("--reps must be at least 1");
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    const Args a = parse(argc, argv);
    Bench b(a);
    for (const std::string& s : a.stencils) b.run_stencil(s);
  }
  MPI_Finalize();
  return 0;
}
