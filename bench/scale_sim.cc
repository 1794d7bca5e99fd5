// Scale by simulation: box:d=D,n=N,f=-1 collectives on a p-rank periodic torus (default 16384), simulated where they fit, computed from the plan otherwise.
//
//   scale_sim [--p 16384] [--m 1,10,100,1000] [--d 2,3,4,5] [--n 3,4,5] [--cost-model FILE]
//             [--max-gib 8] [--max-seconds 60] [--csv PATH]
//
// Seed 000 ran on Titan with p = 1024x16 = 16384 processes; this reproduces its configurations
// on one machine. For every neighbourhood box:d=D,n=N,f=-1, op (alltoall, allgather), algorithm
// (direct, combining in the auto dimension order) and block size m ints (4*m bytes), on a
// periodic torus whose dims are a balanced factorization of p into D factors:
//  - "simulated": sim::simulate runs every rank with real bytes and checks every recv block;
//    rows report its messages and bytes divided by p, its model time and its wall time.
//  - "computed": the configuration is over budget (estimated simulator memory above --max-gib,
//    or a smaller m of the same configuration took longer than --max-seconds), so the row comes
//    from the plan alone: the bound plan of rank 0 (on a full periodic torus every rank has the
//    same rounds, volume, messages and bytes) with the simulator's formula, sum over rounds of
//    alpha + beta*max(send bytes, recv bytes).
// Every simulated row is also computed; a warning is printed if the two disagree (or if
// engine::predict_us without a grid, the same formula from t/C/V, does). After each
// (neighbourhood, op), the predicted speedup direct/combining (ratio of the rows' model times)
// and make_plan's auto choice are printed per m; the CSV carries the auto choice on every row.
// make_plan is given the grid, as the MPI backend does, so rounds whose shift wraps to the
// process itself are free in its prediction; the simulator and the rows charge them like any
// round. They only occur on small tori (a dimension of size <= 4 with n = 5, e.g. --p 64), and
// are counted in the output. Peak memory of each simulate()
// call is measured (VmHWM after resetting it) and printed next to the estimate.
// Exit status: 0 every simulation reported ok, 1 one did not (or failed), 2 bad arguments.
#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/mpi/openmpi_profile.h"
#include "backends/sim/simulator.h"
#include "bench/bench_util.h"
#include "engine/bind.h"
#include "engine/cost_model.h"
#include "engine/cost_model_file.h"
#include "engine/grid.h"
#include "engine/neighborhood.h"
#include "engine/optimizer.h"
#include "engine/planner.h"
#include "engine/stencils.h"
#include "ir/plan.h"

namespace {

namespace bench = cartplan::bench;
namespace engine = cartplan::engine;
namespace ir = cartplan::ir;
namespace openmpi = cartplan::openmpi;
namespace sim = cartplan::sim;
using bench::Clock;

constexpr std::int64_t kIntBytes = 4;  // blocks are m ints
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

int usage(const char* msg) {
  std::cerr << "scale_sim: " << msg << "\n"
            << "usage: scale_sim [--p N] [--m M,M,..] [--d D,..] [--n N,..] [--cost-model FILE] [--max-gib G]\n"
            << "                 [--max-seconds S] [--csv PATH]\n";
  return 2;
}

std::optional<double> parse_double(const std::string& s, double lo, double hi) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || v < lo || v > hi) return std::nullopt;
  return v;
}

std::string join(const std::vector<int>& v, char sep) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? std::string(1, sep) : "") + std::to_string(v[i]);
  return s;
}

// A balanced factorization of p into d factors: the prime factors of p, largest first, each go
// to the dimension with the smallest product so far (ties: the lowest index). For p = 2^k this
// deals the k factors of 2 round-robin, e.g. 16384 = 2^14 in 5 dims -> 8x8x8x8x4.
std::vector<int> balanced_dims(int p, int d) {
  std::vector<int> primes;
  for (int q = 2, r = p; r > 1;) {
    if (static_cast<long long>(q) * q > r) {
      primes.push_back(r);
      break;
    }
    if (r % q == 0) {
      primes.push_back(q);
      r /= q;
    } else {
      ++q;
    }
  }
  std::sort(primes.rbegin(), primes.rend());
  std::vector<int> dims(d, 1);
  for (int q : primes) *std::min_element(dims.begin(), dims.end()) *= q;
  return dims;
}

// glibc's chunk size for malloc(n), and std::vector's capacity after n push_backs (or n
// equal-sized range inserts): what the simulator's containers really occupy.
std::int64_t heap(std::int64_t n) { return n <= 0 ? 0 : std::max<std::int64_t>(32, (n + 8 + 15) / 16 * 16); }
std::int64_t grown(std::int64_t n) {
  std::int64_t c = n > 0 ? 1 : 0;
  while (c < n) c *= 2;
  return c;
}

// What one rank does, from its bound plan (identical on every rank of a full periodic torus).
struct PerRank {
  std::int64_t messages = 0;  // rounds with a send peer
  int self_rounds = 0;        // rounds whose shift wraps around to the rank itself
  std::int64_t bytes = 0;     // bytes sent
  double model_us = 0;        // sum over rounds of alpha + beta*max(send bytes, recv bytes), as sim::simulate
  double sim_bytes = 0;       // estimated memory of sim::simulate for all p ranks
};

PerRank per_rank(const ir::Plan& plan, const engine::BoundPlan& b, const engine::CostModel& model, int p) {
  PerRank r;
  for (const engine::BoundRound& br : b.rounds) {
    if (br.send_peer != engine::kNoRank || br.recv_peer != engine::kNoRank)
      r.model_us += model.message_us(std::max(br.send_bytes, br.recv_bytes));
    if (br.send_peer == b.rank) ++r.self_rounds;
    if (br.send_peer != engine::kNoRank) {
      ++r.messages;
      r.bytes += br.send_bytes;
    }
  }

  // Memory of simulator.cc's containers per rank. Its private types: Slot = {vector<uint8_t>,
  // Label{int,int}, bool} (40 bytes), RankState = 3 vectors of Slot (72), an in-flight message is
  // a std::map node (32-byte header + tuple<int,int,int> padded to 16 + Message = 2 vectors) = 96.
  constexpr std::int64_t kSlot = 40, kRankState = 72, kMapNode = 96;
  const std::int64_t t = plan.num_blocks(), temps = static_cast<std::int64_t>(b.temp_slot_bytes.size());
  std::int64_t bound = static_cast<std::int64_t>(sizeof(engine::BoundPlan)) +
                       heap(grown(static_cast<std::int64_t>(b.rounds.size())) *
                            static_cast<std::int64_t>(sizeof(engine::BoundRound))) +
                       heap(4 * grown(static_cast<std::int64_t>(b.phase_begin.size()))) +
                       heap(4 * grown(static_cast<std::int64_t>(b.copies.size()))) + heap(8 * t) + heap(8 * grown(temps));
  for (const engine::BoundRound& br : b.rounds)
    bound += heap(4 * grown(static_cast<std::int64_t>(br.send_entries.size()))) +
             heap(4 * grown(static_cast<std::int64_t>(br.recv_entries.size())));
  std::int64_t state = kRankState + heap(kSlot * plan.num_send_blocks()) + heap(kSlot * t) + heap(kSlot * temps) +
                       8 /* time_us */;
  for (int i = 0; i < plan.num_send_blocks(); ++i) state += heap(b.block_bytes[i]);
  for (int i = 0; i < t; ++i) state += heap(b.block_bytes[i]);
  for (std::int64_t s : b.temp_slot_bytes) state += heap(s);
  std::int64_t flight = 0;  // the largest phase: all its messages are in flight at once
  for (std::size_t ph = 0; ph + 1 < b.phase_begin.size(); ++ph) {
    std::int64_t f = 0;
    for (int k = b.phase_begin[ph]; k < b.phase_begin[ph + 1]; ++k) {
      const engine::BoundRound& br = b.rounds[k];
      if (br.send_peer == engine::kNoRank) continue;
      const std::int64_t n = static_cast<std::int64_t>(br.send_entries.size());
      f += heap(kMapNode) + heap(n ? grown(n) * (br.send_bytes / n) : 0) + heap(8 * grown(n));
    }
    flight = std::max(flight, f);
  }
  r.sim_bytes = static_cast<double>(p) * static_cast<double>(bound + state + flight);
  return r;
}

// Peak resident memory of the process since the last reset, and the reset itself (Linux >= 4.0:
// writing 5 to clear_refs sets VmHWM to the current RSS). -1 where unavailable.
double status_gib(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return std::strtod(line.c_str() + std::string(key).size(), nullptr) * 1024.0 / kGiB;
  return -1;
}
bool reset_peak() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

struct Row {
  std::int64_t m = 0;
  PerRank computed;
  bool simulated = false;
  bool sim_ok = true;
  std::int64_t messages = 0;
  std::int64_t bytes = 0;
  double model_us = 0;
  double seconds = 0;
  double rss_gib = -1;  // measured peak of a simulate() call above the RSS before it
  std::string why;      // why it was computed rather than simulated
};

}  // namespace

int main(int argc, char** argv) {
  int p = 16384;
  std::vector<int> ms = {1, 10, 100, 1000};
  std::vector<int> ds = {2, 3, 4, 5};
  std::vector<int> ns = {3, 4, 5};
  std::string csv, cost_model_path;
  double max_gib = 8, max_seconds = 60;
  engine::CostModel model;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--p" && has_value) {
      const auto v = bench::parse_int(argv[++i], 1, 1 << 24);
      if (!v) return usage("--p needs an integer in [1, 16777216]");
      p = static_cast<int>(*v);
    } else if (a == "--m" && has_value) {
      const auto v = bench::parse_int_list(argv[++i], 0, 1 << 24);
      if (!v) return usage("--m needs comma-separated block sizes in ints, each in [0, 16777216]");
      ms = *v;
      std::sort(ms.begin(), ms.end());  // the time budget assumes increasing m
      ms.erase(std::unique(ms.begin(), ms.end()), ms.end());
    } else if (a == "--d" && has_value) {
      const auto v = bench::parse_int_list(argv[++i], 1, engine::Neighborhood::kMaxDims);
      if (!v) return usage("--d needs comma-separated dimensions in [1, 16]");
      ds = *v;
    } else if (a == "--n" && has_value) {
      const auto v = bench::parse_int_list(argv[++i], 1, 64);
      if (!v) return usage("--n needs comma-separated box widths in [1, 64]");
      ns = *v;
    } else if (a == "--cost-model" && has_value) {
      cost_model_path = argv[++i];
      cartplan::Result<engine::CostModel> m = engine::load_cost_model(cost_model_path);
      if (!m) return usage(m.error().c_str());
      model = *m;
    } else if (a == "--max-gib" && has_value) {
      const auto v = parse_double(argv[++i], 0, 1 << 20);
      if (!v) return usage("--max-gib needs a non-negative number");
      max_gib = *v;
    } else if (a == "--max-seconds" && has_value) {
      const auto v = parse_double(argv[++i], 0, 1e9);
      if (!v) return usage("--max-seconds needs a non-negative number");
      max_seconds = *v;
    } else if (a == "--csv" && has_value) {
      csv = argv[++i];
    } else if (a == "--help" || a == "-h") {
      usage("box:d=D,n=N,f=-1 collectives on a p-rank periodic torus, simulated or computed");
      return 0;
    } else {
      return usage(("unknown or incomplete argument '" + a + "'").c_str());
    }
  }

  std::ofstream out;
  if (!csv.empty()) {
    out.open(csv);
    if (!out) return usage(("cannot write " + csv).c_str());
    out << "p,stencil,d,n,t,op,algorithm,m,rounds,volume,messages_per_rank,bytes_per_rank,model_us,source,seconds,"
           "auto_choice\n";
  }
  std::printf("# scale_sim: box:d=D,n=N,f=-1 on a periodic torus of p = %d ranks; alpha = %g us, beta = %g us/byte (%s)\n",
              p, model.alpha_us, model.beta_us_per_byte,
              cost_model_path.empty() ? "default CostModel" : cost_model_path.c_str());
  std::printf("# blocks of m ints (4m bytes); simulate when the estimate is <= %.3g GiB and no smaller m took > %.3g s\n",
              max_gib, max_seconds);
  const bool can_measure = reset_peak() && status_gib("VmHWM:") >= 0;

  struct Speedup {
    std::string stencil;
    ir::Op op;
    std::int64_t m;
    double direct_us, combining_us;
    std::string choice;
  };
  std::vector<Speedup> speedups;
  int n_simulated = 0, n_computed = 0, warnings = 0, self_round_rows = 0;
  bool all_ok = true;
  double sim_seconds_total = 0, slowest = 0;
  std::string slowest_what;
  const auto run_start = Clock::now();

  for (int d : ds) {
    const std::vector<int> dims = balanced_dims(p, d);
    cartplan::Result<engine::Grid> grid = engine::Grid::create(dims, std::vector<bool>(dims.size(), true));
    if (!grid) return usage(grid.error().c_str());
    const engine::Coords origin = grid->coords(0);
    for (int n : ns) {
      cartplan::Result<engine::Neighborhood> nbh = engine::stencils::box(d, n, -1);
      if (!nbh) return usage(nbh.error().c_str());
      const std::string stencil = "box:d=" + std::to_string(d) + ",n=" + std::to_string(n) + ",f=-1";
      const std::vector<int> order = engine::auto_dim_order(*nbh);
      std::printf("\n# %s on %s (t = %d, combining dim order %s)\n", stencil.c_str(), join(dims, 'x').c_str(),
                  nbh->nonzero_count(), join(order, ',').c_str());
      std::printf("%-9s %-9s %6s %6s %6s %9s %12s %14s %-9s %9s %8s %8s  %s\n", "op", "algorithm", "m", "rounds", "V",
                  "msgs/rank", "bytes/rank", "model_us", "source", "seconds", "est_GiB", "rss_GiB", "note");
      std::fflush(stdout);

      for (const ir::Op op : {ir::Op::kAlltoall, ir::Op::kAllgather}) {
        // make_plan's pick per m on this grid (it predicts from the plans' rounds and entries;
        // the rows below come from the bound plan).
        std::vector<std::string> choice(ms.size());
        for (std::size_t mi = 0; mi < ms.size(); ++mi) {
          engine::PlanOptions po;
          po.block_bytes = kIntBytes * ms[mi];
          po.model = model;
          po.lowering = openmpi::lower_options(model);  // as the backend lowers
          po.grid = *grid;
          cartplan::Result<ir::Plan> chosen = engine::make_plan(op, *nbh, po);
          if (!chosen) return usage(chosen.error().c_str());
          choice[mi] = ir::to_string(chosen->algorithm());
        }

        std::vector<Row> rows[2];
        for (int a = 0; a < 2; ++a) {
          const ir::Algorithm algo = a == 0 ? ir::Algorithm::kDirect : ir::Algorithm::kCombining;
          const ir::Plan plan =
              algo == ir::Algorithm::kDirect ? engine::plan_direct(op, *nbh) : engine::plan_combining(op, *nbh, order);
          cartplan::Result<engine::Binder> binder = engine::Binder::create(plan);
          if (!binder) {
            std::cerr << "scale_sim: " << stencil << " " << ir::to_string(op) << " " << ir::to_string(algo) << ": "
                      << binder.error() << "\n";
            return 1;
          }
          const ir::Stats& st = plan.stats();
          std::string slow_m;  // the smaller m that went over the time budget
          for (std::size_t mi = 0; mi < ms.size(); ++mi) {
            Row row;
            row.m = ms[mi];
            const std::int64_t block = kIntBytes * row.m;
            const auto c0 = Clock::now();
            cartplan::Result<engine::BoundPlan> b0 = binder->bind(*grid, origin, {block});
            if (!b0) {
              std::cerr << "scale_sim: bind: " << b0.error() << "\n";
              return 1;
            }
            row.computed = per_rank(plan, *b0, model, p);
            row.seconds = bench::micros(Clock::now() - c0) * 1e-6;
            row.messages = row.computed.messages;
            row.bytes = row.computed.bytes;
            row.model_us = row.computed.model_us;

            char why[160];
            if (!slow_m.empty()) {
              std::snprintf(why, sizeof why, "m=%s took > %.3g s", slow_m.c_str(), max_seconds);
              row.why = why;
            } else if (row.computed.sim_bytes > max_gib * kGiB) {
              std::snprintf(why, sizeof why, "estimate > %.3g GiB", max_gib);
              row.why = why;
            } else {
              sim::SimOptions so;
              so.block_bytes = {block};
              so.model = model;
              malloc_trim(0);
              const double rss0 = can_measure ? status_gib("VmRSS:") : -1;
              if (can_measure) reset_peak();
              const auto t0 = Clock::now();
              cartplan::Result<sim::SimReport> rep = sim::simulate(plan, *grid, so);
              row.seconds = bench::micros(Clock::now() - t0) * 1e-6;
              if (can_measure) row.rss_gib = status_gib("VmHWM:") - rss0;
              row.simulated = true;
              sim_seconds_total += row.seconds;
              if (row.seconds > slowest) {
                slowest = row.seconds;
                slowest_what = stencil + " " + ir::to_string(op) + " " + ir::to_string(algo) + " m=" +
                               std::to_string(row.m);
              }
              if (!rep) {
                std::cerr << "scale_sim: simulate failed: " << rep.error() << "\n";
                row.sim_ok = false;
              } else {
                if (!rep->ok) {
                  for (const std::string& e : rep->errors) std::cerr << "scale_sim: " << e << "\n";
                  row.sim_ok = false;
                }
                if (rep->messages % p != 0 || rep->bytes % p != 0) {
                  std::printf("# WARNING: %s %s %s m=%lld: %lld messages / %lld bytes are not the same on every rank\n",
                              stencil.c_str(), ir::to_string(op), ir::to_string(algo), static_cast<long long>(row.m),
                              static_cast<long long>(rep->messages), static_cast<long long>(rep->bytes));
                  ++warnings;
                }
                row.messages = rep->messages / p;
                row.bytes = rep->bytes / p;
                row.model_us = rep->model_time_us;
                const double diff = std::abs(row.model_us - row.computed.model_us);
                if (diff > 1e-9 * std::max(1.0, row.model_us) || row.messages != row.computed.messages ||
                    row.bytes != row.computed.bytes) {
                  std::printf("# WARNING: %s %s %s m=%lld: simulated %.6f us, %lld msgs, %lld bytes per rank; "
                              "computed %.6f us, %lld msgs, %lld bytes\n",
                              stencil.c_str(), ir::to_string(op), ir::to_string(algo), static_cast<long long>(row.m),
                              row.model_us, static_cast<long long>(row.messages), static_cast<long long>(row.bytes),
                              row.computed.model_us, static_cast<long long>(row.computed.messages),
                              static_cast<long long>(row.computed.bytes));
                  ++warnings;
                }
              }
              rep = cartplan::fail("released");  // free the report before trimming
              malloc_trim(0);
              all_ok = all_ok && row.sim_ok;
              if (row.seconds > max_seconds) slow_m = std::to_string(row.m);
            }
            (row.simulated ? n_simulated : n_computed) += 1;

            // Against the optimizer's formula without a grid (every round charged, as here), on
            // the per-message terms the simulator charges (no phase or copy terms).
            engine::CostModel per_message = model;
            per_message.phase_us = 0;
            per_message.copy_us_per_byte = 0;
            const double pred = engine::predict_us(plan, block, per_message, std::nullopt);
            if (std::abs(pred - row.computed.model_us) > 1e-6 * std::max(1.0, pred)) {
              std::printf("# WARNING: %s %s %s m=%lld: predict_us gives %.6f us, the bound plan %.6f us\n",
                          stencil.c_str(), ir::to_string(op), ir::to_string(algo), static_cast<long long>(row.m), pred,
                          row.computed.model_us);
              ++warnings;
            }

            char rss[32] = "-";
            if (row.rss_gib >= 0) std::snprintf(rss, sizeof rss, "%.3f", row.rss_gib);
            std::string note = !row.simulated ? row.why : row.sim_ok ? "ok" : "FAILED";
            if (row.computed.self_rounds > 0) {
              note += "; " + std::to_string(row.computed.self_rounds) + " rounds to self";
              ++self_round_rows;
            }
            std::printf("%-9s %-9s %6lld %6d %6d %9lld %12lld %14.2f %-9s %9.3f %8.3f %8s  %s\n", ir::to_string(op),
                        ir::to_string(algo), static_cast<long long>(row.m), st.rounds, st.volume,
                        static_cast<long long>(row.messages), static_cast<long long>(row.bytes), row.model_us,
                        row.simulated ? "simulated" : "computed", row.seconds, row.computed.sim_bytes / kGiB, rss,
                        note.c_str());
            std::fflush(stdout);
            if (out.is_open()) {
              char buf[256];
              std::snprintf(buf, sizeof buf, "%lld,%d,%d,%lld,%lld,%.6f,%s,%.4f,%s",
                            static_cast<long long>(row.m), st.rounds, st.volume, static_cast<long long>(row.messages),
                            static_cast<long long>(row.bytes), row.model_us, row.simulated ? "simulated" : "computed",
                            row.seconds, choice[mi].c_str());
              out << p << ",\"" << stencil << "\"," << d << ',' << n << ',' << st.t << ',' << ir::to_string(op) << ','
                  << ir::to_string(algo) << ',' << buf << '\n';
              out.flush();
            }
            rows[a].push_back(std::move(row));
          }
        }
        for (std::size_t mi = 0; mi < ms.size(); ++mi) {
          const double du = rows[0][mi].model_us, cu = rows[1][mi].model_us;
          speedups.push_back({stencil, op, ms[mi], du, cu, choice[mi]});
          std::printf("#   %-9s m=%-6d direct/combining = %7.3f  auto: %s\n", ir::to_string(op), ms[mi],
                      cu > 0 ? du / cu : 0.0, choice[mi].c_str());
        }
        std::fflush(stdout);
      }
    }
  }

  std::printf("\n# predicted speedup direct/combining (model time ratio) and make_plan's auto choice, p = %d\n", p);
  std::printf("%-18s %-9s %6s %14s %14s %8s %s\n", "stencil", "op", "m", "direct_us", "combining_us", "speedup", "auto");
  for (const Speedup& s : speedups)
    std::printf("%-18s %-9s %6lld %14.2f %14.2f %8.3f %s\n", s.stencil.c_str(), ir::to_string(s.op),
                static_cast<long long>(s.m), s.direct_us, s.combining_us,
                s.combining_us > 0 ? s.direct_us / s.combining_us : 0.0, s.choice.c_str());
  const double total = bench::micros(Clock::now() - run_start) * 1e-6;
  if (self_round_rows > 0)
    std::printf("# %d rows have rounds that wrap to the rank itself: charged in model_us, free in make_plan's "
                "choice\n",
                self_round_rows);
  std::printf("# %d rows simulated (%.1f s in simulate; slowest %.1f s: %s), %d computed; %d warnings; "
              "total %.1f s; all simulations ok: %s\n",
              n_simulated, sim_seconds_total, slowest, slowest_what.empty() ? "none" : slowest_what.c_str(),
              n_computed, warnings, total, all_ok ? "true" : "FALSE");
  if (out.is_open() && !out) {
    std::cerr << "scale_sim: cannot write " << csv << "\n";
    return 2;
  }
  return all_ok ? 0 : 1;
}
