// Planning-time benchmark: combining, direct and auto (make_plan) plans of box:d=D,n=N,f=-1, against t.
//
//   plan_bench [--reps 31] [--warmup 3] [--seed 1] [--verify] [--csv plan_times.csv]
//
// For every (op, D, N) configuration: `warmup` untimed runs of every variant, then `reps`
// repetitions; within a repetition the variants run in a freshly shuffled (seeded) order, so
// slow drift of the machine (frequency, other jobs) hits every variant alike. Each run is timed
// alone with steady_clock and summarized by median, quartiles, min and lowest-quartile mean.
// Exit status: 0 ok, 1 a produced plan does not verify, 2 bad arguments.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_util.h"
#include "engine/neighborhood.h"
#include "engine/optimizer.h"
#include "engine/planner.h"
#include "engine/stencils.h"
#include "ir/plan.h"
#include "ir/verify.h"

namespace {

namespace bench = cartplan::bench;
namespace engine = cartplan::engine;
namespace ir = cartplan::ir;
using bench::Clock;

// Written after every timed call so the compiler cannot drop the work being measured.
volatile std::int64_t g_sink = 0;

struct Options {
  int reps = 31;
  int warmup = 3;
  std::uint64_t seed = 1;
  bool verify = false;
  std::string csv;
};

struct Variant {
  std::string name;
  std::function<double()> run;  // one timed call; returns microseconds
};

struct Row {
  std::string op;
  int d = 0, n = 0, t = 0, C = 0, V = 0;
  std::string auto_choice;  // algorithm make_plan picks at the default block size (8 bytes)
  std::string variant;
  bench::Summary s;
};

int usage(const char* msg) {
  std::cerr << "plan_bench: " << msg << "\n"
            << "usage: plan_bench [--reps N>=1] [--warmup N>=0] [--seed S] [--verify] [--csv PATH]\n";
  return 2;
}

// Fails loudly: a benchmark of a wrong plan would be meaningless.
bool check(const ir::Plan& plan, const std::string& what) {
  const std::vector<std::string> errors = ir::verify(plan);
  if (errors.empty()) return true;
  std::cerr << "plan_bench: " << what << " does not verify: " << errors.front() << "\n";
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--verify") {
      opt.verify = true;
    } else if (a == "--reps" && has_value) {
      const auto v = bench::parse_int(argv[++i], 1, 1000000);
      if (!v) return usage("--reps needs an integer >= 1");
      opt.reps = static_cast<int>(*v);
    } else if (a == "--warmup" && has_value) {
      const auto v = bench::parse_int(argv[++i], 0, 1000000);
      if (!v) return usage("--warmup needs an integer >= 0");
      opt.warmup = static_cast<int>(*v);
    } else if (a == "--seed" && has_value) {
      const auto v = bench::parse_int(argv[++i], 0, INT64_MAX);
      if (!v) return usage("--seed needs a non-negative integer");
      opt.seed = static_cast<std::uint64_t>(*v);
    } else if (a == "--csv" && has_value) {
      opt.csv = argv[++i];
    } else if (a == "--help" || a == "-h") {
      usage("planning time of box:d=D,n=N,f=-1 (D=2..5, N=3..5), alltoall and allgather");
      return 0;
    } else {
      return usage(("unknown or incomplete argument '" + a + "'").c_str());
    }
  }

  std::mt19937_64 rng(opt.seed);
  std::vector<Row> rows;
  for (const ir::Op op : {ir::Op::kAlltoall, ir::Op::kAllgather}) {
    for (int d = 2; d <= 5; ++d) {
      for (int n = 3; n <= 5; ++n) {
        cartplan::Result<engine::Neighborhood> made = engine::stencils::box(d, n, -1);
        if (!made) {
          std::cerr << "plan_bench: box d=" << d << " n=" << n << ": " << made.error() << "\n";
          return 1;
        }
        const engine::Neighborhood& nbh = *made;
        const std::string cfg = std::string(ir::to_string(op)) + " box:d=" + std::to_string(d) +
                                ",n=" + std::to_string(n) + ",f=-1";

        // Reference plans: checked once (untimed), and the inputs of the verify variants.
        const ir::Plan ref_combining = engine::plan_combining(op, nbh, engine::auto_dim_order(nbh));
        const ir::Plan ref_direct = engine::plan_direct(op, nbh);
        cartplan::Result<ir::Plan> ref_auto = engine::make_plan(op, nbh, engine::PlanOptions{});
        if (!ref_auto) {
          std::cerr << "plan_bench: make_plan " << cfg << ": " << ref_auto.error() << "\n";
          return 1;
        }
        if (!check(ref_combining, "combining " + cfg) || !check(ref_direct, "direct " + cfg) ||
            !check(*ref_auto, "auto " + cfg))
          return 1;

        // Each variant stops the clock before its result is destroyed: freeing a plan is not
        // part of planning (a user keeps the plan).
        std::vector<Variant> variants = {
            {"combining",
             [&] {
               const auto t0 = Clock::now();
               const ir::Plan p = engine::plan_combining(op, nbh, engine::auto_dim_order(nbh));
               const auto t1 = Clock::now();
               g_sink = g_sink + p.stats().volume;
               return bench::micros(t1 - t0);
             }},
            {"direct",
             [&] {
               const auto t0 = Clock::now();
               const ir::Plan p = engine::plan_direct(op, nbh);
               const auto t1 = Clock::now();
               g_sink = g_sink + p.stats().volume;
               return bench::micros(t1 - t0);
             }},
            {"auto",
             [&] {
               const auto t0 = Clock::now();
               const cartplan::Result<ir::Plan> p = engine::make_plan(op, nbh, engine::PlanOptions{});
               const auto t1 = Clock::now();
               g_sink = g_sink + p->stats().volume;
               return bench::micros(t1 - t0);
             }},
        };
        if (opt.verify) {
          for (const auto& [name, plan] : {std::pair<const char*, const ir::Plan*>{"verify_combining", &ref_combining},
                                           {"verify_direct", &ref_direct}}) {
            const ir::Plan* p = plan;
            variants.push_back({name, [p] {
                                  const auto t0 = Clock::now();
                                  const std::vector<std::string> errors = ir::verify(*p);
                                  const auto t1 = Clock::now();
                                  g_sink = g_sink + static_cast<std::int64_t>(errors.size());
                                  return bench::micros(t1 - t0);
                                }});
          }
        }

        for (int w = 0; w < opt.warmup; ++w)
          for (Variant& v : variants) v.run();
        std::vector<std::vector<double>> samples(variants.size());
        std::vector<std::size_t> order(variants.size());
        for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
        for (int r = 0; r < opt.reps; ++r) {
          std::shuffle(order.begin(), order.end(), rng);
          for (std::size_t k : order) samples[k].push_back(variants[k].run());
        }

        const ir::Stats& cs = ref_combining.stats();
        for (std::size_t k = 0; k < variants.size(); ++k)
          rows.push_back(Row{ir::to_string(op), d, n, cs.t, cs.rounds, cs.volume,
                             ir::to_string(ref_auto->algorithm()), variants[k].name, bench::summarize(samples[k])});
        std::cerr << "plan_bench: " << cfg << " done\n";  // progress; stdout holds only the table
      }
    }
  }

  std::printf("# plan_bench: reps=%d warmup=%d seed=%llu, times in microseconds; C and V of the combining plan\n",
              opt.reps, opt.warmup, static_cast<unsigned long long>(opt.seed));
  std::printf("%-9s %2s %2s %5s %4s %6s %-6s %-17s %11s %11s %11s %11s %11s\n", "op", "d", "n", "t", "C", "V",
              "auto", "variant", "median", "q1", "q3", "min", "lowq_mean");
  for (const Row& r : rows)
    std::printf("%-9s %2d %2d %5d %4d %6d %-6s %-17s %11.2f %11.2f %11.2f %11.2f %11.2f\n", r.op.c_str(), r.d, r.n,
                r.t, r.C, r.V, r.auto_choice == "combining" ? "comb" : "direct", r.variant.c_str(), r.s.median, r.s.q1,
                r.s.q3, r.s.min, r.s.low_quartile_mean);

  if (!opt.csv.empty()) {
    std::ofstream out(opt.csv);
    out << "op,d,n,t,C,V,auto_choice,variant,reps,warmup,median_us,q1_us,q3_us,min_us,lowq_mean_us,max_us\n";
    char buf[256];
    for (const Row& r : rows) {
      std::snprintf(buf, sizeof buf, "%d,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f", opt.reps, opt.warmup, r.s.median, r.s.q1,
                    r.s.q3, r.s.min, r.s.low_quartile_mean, r.s.max);
      out << r.op << ',' << r.d << ',' << r.n << ',' << r.t << ',' << r.C << ',' << r.V << ',' << r.auto_choice << ','
          << r.variant << ',' << buf << '\n';
    }
    if (!out) {
      std::cerr << "plan_bench: cannot write " << opt.csv << "\n";
      return 2;
    }
  }
  return 0;
}
