// The timing half of measuring mode (measure_trials.h): the agreement before the trials, the
// synchronized round-robin trials and the choice among their medians.
#include "backends/mpi/measure_trials.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "backends/mpi/test_failure.h"

namespace cartplan::mpi {
namespace {

// Time for all timed trials together (their synchronization included), split over the
// candidates; each is timed at least kMinReps and at most kMaxReps times after two warm-up
// runs. Calls of a few microseconds need hundreds of runs before their median settles on a
// shared machine, so the cap is high; the budget still bounds init. Under SimGrid's SMPI the
// simulated time of a synchronized run is deterministic, so more runs than kMinReps would add
// wall time (a simulated run of 256 ranks takes seconds) and no information.
#ifdef CARTPLAN_SMPI
constexpr double kBudgetUs = 0;
#else
constexpr double kBudgetUs = 20000;
#endif
constexpr int kMinReps = 5, kMaxReps = 1000;
// Another candidate replaces the model's pick only if its median is this much lower. The
// trials are short and share the machine with everything else; a smaller difference is within
// their spread, and keeping the model's pick costs at most this much when it is real.
constexpr double kSwitchRatio = 0.95;

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Times every exchange of `xs` round-robin; samples[i]: the slowest rank's time of each run of
// xs[i], the same on every rank. Every run is timed as bench/exchange_bench times its
// variants: it starts together on every rank, and its time is the slowest rank's. One
// MPI_Allreduce before each run does both: it synchronizes the ranks (without that, a rank's
// time for one candidate includes its peers' lag from the previous one, and round-robin charges
// each candidate part of its predecessor's cost), and it brings every rank the slowest time of
// the previous run. So every rank holds the same samples and picks the same plan without a
// further agreement. (At init only, like the agreement itself: never on a start.)
// A run's error (an MPI error of this rank's exchange) is not returned at once: it rides in the
// next run's MPI_Allreduce (or the last one), so every rank stops at the same run with the
// largest class, instead of the others waiting in a reduction this rank never joins.
MpiStatus time_trials(std::vector<std::unique_ptr<Exchange>>& xs, MPI_Comm comm, std::vector<std::vector<double>>* samples,
                      int* reps) {
  const std::size_t n = xs.size();
  samples->assign(n, {});
  double last[2] = {0, 0};  // this rank's time of the previous run, and its error class (0: none)
  std::size_t last_i = n;   // its candidate; n: none, or a warm-up run
  MpiStatus own;            // this rank's first error
  // Reduces the previous run's time and error: the agreed error, else its sample recorded.
  auto collect = [&](double* slowest) -> MpiStatus {
    double all[2] = {0, 0};
    CARTPLAN_MPI_CALL(MPI_Allreduce(last, all, 2, MPI_DOUBLE, MPI_MAX, comm));
    const int worst = static_cast<int>(all[1]);
    if (worst != 0)
      return agreed_status(mpi_error(worst, own.ok() ? "another rank's exchange failed in a measuring trial (error class " +
                                                            std::to_string(worst) + " there)"
                                                      : own.message));
    if (last_i < n) (*samples)[last_i].push_back(all[0]);
    *slowest = all[0];
    return {};
  };
  // with_sync: the time includes the MPI_Allreduce, for sizing the trials (on many processes the
  // allreduce, not the exchange, can be most of a trial's time, and the budget bounds both).
  auto run = [&](std::size_t i, bool timed, bool with_sync = false) -> MpiStatus {
    double slowest = 0;
    const double t_sync = MPI_Wtime();
    MpiStatus agreed = collect(&slowest);
    if (!agreed.ok()) return agreed;
    const double t0 = with_sync ? t_sync : MPI_Wtime();
    MpiStatus st = xs[i]->start();
    if (st.ok()) st = xs[i]->wait();
    last[0] = (MPI_Wtime() - t0) * 1e6;  // before the check below, which is not the exchange's time
    if (st.ok() && test_failure("measure-trial-run")) st = injected_failure("measure-trial-run");  // after its messages
    if (!st.ok() && own.ok()) own = st;
    last[1] = own.ok() ? 0 : own.code;
    last_i = timed ? i : n;
    return {};
  };
  // Two warm-up runs of each (first touch of the scratch, Open MPI's first use of a peer); the
  // second one's slowest times size the trials, the same count on every rank.
  MpiStatus s;
  for (int pass = 0; pass < 2 && s.ok(); ++pass)
    for (std::size_t i = 0; i < n && s.ok(); ++i) s = run(i, pass == 1, pass == 1);
  if (s.ok()) s = run(0, false);  // collects the last warm-up time (this run is one more warm-up)
  if (!s.ok()) return s;
  double total = 0;
  for (const std::vector<double>& w : *samples) total += std::max(w.back(), 0.01);
  *reps = std::clamp(static_cast<int>(kBudgetUs / total), kMinReps, kMaxReps);
  for (std::vector<double>& w : *samples) w.clear();
  // Round-robin, as bench/calibrate times variants: a drift of the machine during the trials
  // moves every candidate alike instead of favouring whichever ran first.
  for (int r = 0; r < *reps && s.ok(); ++r)
    for (std::size_t i = 0; i < n && s.ok(); ++i) s = run(i, true);
  if (!s.ok()) return s;
  double ignored = 0;  // the last run's slowest time (recorded by collect)
  return collect(&ignored);
}

// The CARTPLAN_VERBOSE line of a measurement: per candidate its median, quartiles and the
// rounds in which it ran faster than the model's pick (runs of one round are adjacent in time,
// so a drift of the machine shows in the quartiles, not here), the prediction, and how long the
// trials took on the reporting rank (the cost of measuring at init, its agreement aside).
void report_trials(const std::vector<std::string>& names, const std::vector<double>& predicted,
                   const std::vector<std::vector<double>>& samples, const std::vector<double>& median, int reps, std::size_t best,
                   double trials_us) {
  std::string line = "cartplan: measured at init (" + std::to_string(reps) + " runs each, median of the slowest rank's times):";
  char buf[256];
  for (std::size_t i = 0; i < names.size(); ++i) {
    std::vector<double> v = samples[i];
    std::sort(v.begin(), v.end());
    std::size_t wins = 0;
    for (std::size_t r = 0; r < std::min(samples[i].size(), samples[0].size()); ++r) wins += samples[i][r] < samples[0][r];
    std::snprintf(buf, sizeof buf, "%s %s %.2f us [%.2f, %.2f]", i ? ";" : "", names[i].c_str(), median[i],
                  v[v.size() / 4], v[3 * v.size() / 4]);
    line += buf;
    if (i > 0) {
      std::snprintf(buf, sizeof buf, ", faster than the pick in %zu of %zu rounds", wins, samples[i].size());
      line += buf;
    }
    std::snprintf(buf, sizeof buf, " (predicted %.2f)", predicted[i]);
    line += buf;
  }
  std::fprintf(stderr, "%s; running %s%s; the trials took %.2f us here\n", line.c_str(), names[best].c_str(),
               best == 0 ? " (the model's pick)" : " (not the model's pick)", trials_us);
}

}  // namespace

std::size_t measured_pick(const std::vector<double>& medians) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < medians.size(); ++i)
    if (medians[i] < medians[best] && medians[i] < kSwitchRatio * medians[0]) best = i;
  return best;
}

MpiStatus agree_to_measure(MPI_Comm comm, const MpiStatus& built, bool too_big, bool* skip) {
  // A rank that could not build a trial, or whose scratch is too large, would otherwise leave
  // its neighbours waiting in the trials.
  int flags[2] = {built.ok() ? 0 : built.code, too_big ? 1 : 0}, all[2] = {0, 0};
  CARTPLAN_MPI_CALL(MPI_Allreduce(flags, all, 2, MPI_INT, MPI_MAX, comm));
  if (all[0] != 0)  // the largest class on every rank, with this rank's own message if it failed
    return agreed_status(mpi_error(all[0], built.ok() ? "another rank could not plan or build the candidates to measure (error class " +
                                                            std::to_string(all[0]) + " there)"
                                                      : built.message));
  *skip = all[1] != 0;
  return {};
}

MpiStatus agree_on_kept(MPI_Comm comm, const MpiStatus& built) {
  const int mine = built.ok() ? 0 : built.code;
  int worst = 0;
  CARTPLAN_MPI_CALL(MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, comm));
  if (worst == 0) return {};
  return agreed_status(mpi_error(worst, built.ok() ? "another rank could not build the measured plan it keeps (error class " +
                                                         std::to_string(worst) + " there)"
                                                   : built.message));
}

MpiStatus time_and_pick(std::vector<std::unique_ptr<Exchange>>& xs, MPI_Comm comm, const std::vector<std::string>& names,
                        const std::vector<double>& predicted_us, bool reporter, std::size_t* best) {
  std::vector<std::vector<double>> samples;
  int reps = 0;
  const double t0 = MPI_Wtime();
  const MpiStatus s = time_trials(xs, comm, &samples, &reps);
  const double trials_us = (MPI_Wtime() - t0) * 1e6;
  if (!s.ok()) return s;
  std::vector<double> median(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) median[i] = median_of(samples[i]);
  *best = measured_pick(median);
  const char* verbose = std::getenv("CARTPLAN_VERBOSE");
  if (verbose && std::string(verbose) == "1" && reporter) report_trials(names, predicted_us, samples, median, reps, *best, trials_us);
  return {};
}

}  // namespace cartplan::mpi
