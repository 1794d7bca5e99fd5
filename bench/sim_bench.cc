// Simulation benchmark: wall time of sim::simulate for moore:d=D,r=1 on a non-periodic mesh (default 16x16x16).
//
//   sim_bench [--dims 16,16,16] [--reps 3] [--block-bytes 8] [--csv sim_times.csv]
//
// For alltoall and allgather, direct and combining (auto dimension order), times the whole
// simulate() call -- bind every rank, run every round with real bytes, check every recv block --
// `reps` times, and ir::verify of the plan (median of many runs, it is microseconds). The stencil
// dimension follows --dims. Exit status: 0 every simulation reported ok, 1 one did not (or
// failed), 2 bad arguments.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "backends/sim/simulator.h"
#include "bench/bench_util.h"
#include "engine/grid.h"
#include "engine/neighborhood.h"
#include "engine/planner.h"
#include "engine/stencils.h"
#include "ir/plan.h"
#include "ir/verify.h"

namespace {

namespace bench = cartplan::bench;
namespace engine = cartplan::engine;
namespace ir = cartplan::ir;
namespace sim = cartplan::sim;
using bench::Clock;

// The target for p = 4096 ranks, 16x16x16 (checked and printed, never enforced).
constexpr double kTargetSeconds = 30.0;
// verify() is microseconds; this many runs give a stable median at negligible cost.
constexpr int kVerifyReps = 51;
constexpr int kVerifyWarmup = 3;

volatile std::int64_t g_sink = 0;  // keeps timed calls from being optimized away

int usage(const char* msg) {
  std::cerr << "sim_bench: " << msg << "\n"
            << "usage: sim_bench [--dims P,P,..] [--reps N>=1] [--block-bytes N>=0] [--csv PATH]\n";
  return 2;
}

std::string join(const std::vector<int>& v, char sep) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? std::string(1, sep) : "") + std::to_string(v[i]);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> dims = {16, 16, 16};
  int reps = 3;
  std::int64_t block_bytes = 8;
  std::string csv;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--dims" && has_value) {
      const auto v = bench::parse_int_list(argv[++i], 1, 1 << 20);
      if (!v || v->size() > static_cast<std::size_t>(engine::Neighborhood::kMaxDims))
        return usage("--dims needs 1 to 16 comma-separated positive integers");
      dims = *v;
    } else if (a == "--reps" && has_value) {
      const auto v = bench::parse_int(argv[++i], 1, 1000);
      if (!v) return usage("--reps needs an integer in [1, 1000]");
      reps = static_cast<int>(*v);
    } else if (a == "--block-bytes" && has_value) {
      const auto v = bench::parse_int(argv[++i], 0, 1 << 20);
      if (!v) return usage("--block-bytes needs an integer in [0, 1048576]");
      block_bytes = *v;
    } else if (a == "--csv" && has_value) {
      csv = argv[++i];
    } else if (a == "--help" || a == "-h") {
      usage("simulated moore:d=D,r=1 collectives on a non-periodic mesh");
      return 0;
    } else {
      return usage(("unknown or incomplete argument '" + a + "'").c_str());
    }
  }

  const int d = static_cast<int>(dims.size());
  cartplan::Result<engine::Grid> grid = engine::Grid::create(dims, std::vector<bool>(dims.size(), false));
  if (!grid) return usage(grid.error().c_str());
  cartplan::Result<engine::Neighborhood> nbh = engine::stencils::moore(d, 1);
  if (!nbh) return usage(nbh.error().c_str());
  const std::string dims_text = join(dims, 'x');

  std::ofstream out;
  if (!csv.empty()) {
    out.open(csv);
    out << "op,algorithm,stencil,dims,periodic,p,t,rounds,volume,block_bytes,reps,sim_median_s,sim_min_s,sim_max_s,"
           "ok,messages,bytes,copies,model_time_us,verify_median_us,verify_reps\n";
  }
  std::printf("# sim_bench: moore:d=%d,r=1 on a non-periodic %s mesh (p = %d), block %lld bytes, %d reps\n", d,
              dims_text.c_str(), grid->size(), static_cast<long long>(block_bytes), reps);
  std::printf("%-9s %-9s %4s %6s %3s %9s %11s %7s %12s %10s %10s %10s %11s\n", "op", "algorithm", "t", "rounds", "V",
              "messages", "bytes", "ok", "model_us", "median_s", "min_s", "max_s", "verify_us");

  bool all_ok = true;
  double worst = 0;
  for (const ir::Op op : {ir::Op::kAlltoall, ir::Op::kAllgather}) {
    for (const ir::Algorithm algo : {ir::Algorithm::kDirect, ir::Algorithm::kCombining}) {
      const ir::Plan plan = algo == ir::Algorithm::kDirect
                                ? engine::plan_direct(op, *nbh)
                                : engine::plan_combining(op, *nbh, engine::auto_dim_order(*nbh));

      std::vector<double> verify_us;
      std::size_t verify_errors = 0;
      for (int r = 0; r < kVerifyWarmup + kVerifyReps; ++r) {
        const auto t0 = Clock::now();
        const std::vector<std::string> errors = ir::verify(plan);
        const auto t1 = Clock::now();
        verify_errors = errors.size();
        g_sink = g_sink + static_cast<std::int64_t>(errors.size());
        if (r >= kVerifyWarmup) verify_us.push_back(bench::micros(t1 - t0));
      }
      if (verify_errors != 0) {
        std::cerr << "sim_bench: " << ir::to_string(op) << " " << ir::to_string(algo) << " plan does not verify\n";
        all_ok = false;
      }

      sim::SimOptions so;
      so.block_bytes = {block_bytes};
      std::vector<double> seconds;
      sim::SimReport last;
      bool ok = true;
      for (int r = 0; r < reps; ++r) {
        const auto t0 = Clock::now();
        cartplan::Result<sim::SimReport> rep = sim::simulate(plan, *grid, so);
        const auto t1 = Clock::now();
        seconds.push_back(bench::micros(t1 - t0) * 1e-6);
        if (!rep) {
          std::cerr << "sim_bench: simulate failed: " << rep.error() << "\n";
          ok = false;
          break;
        }
        last = std::move(*rep);
        if (!last.ok) {
          for (const std::string& e : last.errors) std::cerr << "sim_bench: " << e << "\n";
          ok = false;
          break;
        }
      }
      all_ok = all_ok && ok;
      const bench::Summary s = bench::summarize(seconds);
      const bench::Summary v = bench::summarize(verify_us);
      worst = std::max(worst, s.max);
      const ir::Stats& st = plan.stats();
      std::printf("%-9s %-9s %4d %6d %3d %9lld %11lld %7s %12.1f %10.3f %10.3f %10.3f %11.2f\n", ir::to_string(op),
                  ir::to_string(algo), st.t, st.rounds, st.volume, static_cast<long long>(last.messages),
                  static_cast<long long>(last.bytes), ok ? "true" : "FALSE", last.model_time_us, s.median, s.min, s.max,
                  v.median);
      std::fflush(stdout);
      if (out.is_open()) {
        char buf[512];
        std::snprintf(buf, sizeof buf, "%d,%.4f,%.4f,%.4f,%s,%lld,%lld,%lld,%.3f,%.3f,%d", reps, s.median, s.min,
                      s.max, ok ? "true" : "false", static_cast<long long>(last.messages),
                      static_cast<long long>(last.bytes), static_cast<long long>(last.copies), last.model_time_us,
                      v.median, kVerifyReps);
        out << ir::to_string(op) << ',' << ir::to_string(algo) << ",\"moore:d=" << d << ",r=1\"," << dims_text
            << ",false," << grid->size() << ',' << st.t << ',' << st.rounds << ',' << st.volume << ',' << block_bytes
            << ',' << buf << '\n';
      }
    }
  }
  const bool target_grid = dims == std::vector<int>{16, 16, 16};
  std::printf("# slowest simulate call: %.3f s; target (16x16x16, < %.0f s): %s; all ok: %s\n", worst, kTargetSeconds,
              !target_grid ? "not applicable to this grid" : worst < kTargetSeconds ? "met" : "NOT met",
              all_ok ? "true" : "FALSE");
  if (out.is_open() && !out) {
    std::cerr << "sim_bench: cannot write " << csv << "\n";
    return 2;
  }
  return all_ok ? 0 : 1;
}
