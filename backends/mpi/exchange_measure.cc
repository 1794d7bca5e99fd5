// Measuring mode (Info cartplan_tune = measure): persistent init times the optimizer's close
// candidates and keeps the one that ran fastest, instead of trusting the model's order. Like
// FFTW_MEASURE against FFTW_ESTIMATE: init costs a few milliseconds more, every start after it
// runs the plan that was fastest here. The model still decides what is worth timing.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "backends/mpi/exchange.h"

namespace cartplan::mpi {
namespace {

// Receive memory for the trials is scratch, never the caller's: init must not write the receive
// buffer (the caller may still be reading it, or another request may be filling it). The scratch
// covers the span of every receive block this rank uses, one copy with the blocks at their own
// relative addresses, so strided datatypes keep their layout. Beyond this size the trials are
// skipped and the model's pick is kept (every rank learns it in the agreement below).
constexpr std::uint64_t kMaxScratchBytes = std::uint64_t{256} << 20;
// Time for all timed trials together, split over the candidates; each is timed at least
// kMinReps and at most kMaxReps times after one warm-up run.
constexpr double kBudgetUs = 20000;
constexpr int kMinReps = 5, kMaxReps = 100;

struct Span {
  std::uintptr_t lo = std::numeric_limits<std::uintptr_t>::max(), hi = 0;
  bool empty() const { return hi <= lo; }
};

// The bytes `b` may touch: from the true lower bound of its first element to the true upper
// bound of its last (extents may be negative).
MpiStatus span_of(const BlockSpec& b, Span* s) {
  if (b.count <= 0 || b.type == MPI_DATATYPE_NULL) return {};
  MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
  CARTPLAN_MPI_CALL(MPI_Type_get_extent(b.type, &lb, &extent));
  CARTPLAN_MPI_CALL(MPI_Type_get_true_extent(b.type, &tlb, &textent));
  const auto base = reinterpret_cast<std::intptr_t>(b.addr);
  const std::intptr_t first = base + tlb, last = base + static_cast<std::intptr_t>(b.count - 1) * extent + tlb;
  s->lo = std::min(s->lo, static_cast<std::uintptr_t>(std::min(first, last)));
  s->hi = std::max(s->hi, static_cast<std::uintptr_t>(std::max(first, last) + textent));
  return {};
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

MpiStatus Exchange::measure(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options, Agreement* agreed) {
  std::vector<NeighborhoodComm::CandidateEntry> cands;
  MpiStatus s = nc.candidate_entries(spec.op, options, agreed->block_bytes, agreed->contiguous, &cands);
  if (!s.ok()) return s;
  // The list depends only on agreed arguments, so every rank stops here alike.
  if (cands.size() < 2) return {};

  // The trials' spec: the caller's send blocks, receive blocks moved into the scratch.
  Span span;
  for (std::size_t i = 0; i < spec.recv.size(); ++i)
    if (agreed->recv_used[i]) {
      s = span_of(spec.recv[i], &span);
      if (!s.ok()) return s;
    }
  const std::uint64_t scratch_bytes = span.empty() ? 1 : span.hi - span.lo;
  const bool too_big = scratch_bytes > kMaxScratchBytes;
  std::unique_ptr<unsigned char[]> scratch;  // not zeroed: only the trials touch its pages
  ExchangeSpec trial = spec;
  std::vector<std::unique_ptr<Exchange>> xs(cands.size());
  MpiStatus built;
  if (!too_big) {
    scratch.reset(new unsigned char[scratch_bytes]);
    for (std::size_t i = 0; i < trial.recv.size(); ++i)
      if (agreed->recv_used[i] && trial.recv[i].count > 0 && !span.empty())
        trial.recv[i].addr = scratch.get() + (reinterpret_cast<std::uintptr_t>(spec.recv[i].addr) - span.lo);
    for (std::size_t i = 0; i < cands.size() && built.ok(); ++i) {
      Agreement a = *agreed;
      a.entry = cands[i].entry;
      built = build(nc, trial, options, a, agreed->lane, &xs[i]);
      if (built.ok()) xs[i]->sizes_agreed_ = true;  // persistent: every rank agreed on the sizes
    }
  }
  // One agreement before any trial runs: a rank that could not build a trial, or whose
  // receive span is too large for scratch, would leave its neighbours waiting.
  int flags[2] = {built.ok() ? 0 : built.code, too_big ? 1 : 0}, all[2] = {0, 0};
  CARTPLAN_MPI_CALL(MPI_Allreduce(flags, all, 2, MPI_INT, MPI_MAX, nc.internal()));
  if (all[0] != 0)
    return built.ok() ? mpi_error(all[0], "another rank could not build a candidate to measure (error class " +
                                              std::to_string(all[0]) + " there)")
                      : built;
  if (all[1] != 0) return {};  // the model's pick stands

  // A warm-up run of each (first touch of the scratch, Open MPI's first use of a peer), timed to
  // size the trials: the same count on every rank from the slowest rank's times.
  auto run = [](Exchange& x, double* us) -> MpiStatus {
    const double t0 = MPI_Wtime();
    MpiStatus st = x.start();
    if (st.ok()) st = x.wait();
    *us = (MPI_Wtime() - t0) * 1e6;
    return st;
  };
  const std::size_t n = cands.size();
  std::vector<double> warm(n), warm_all(n);
  for (std::size_t i = 0; i < n; ++i) {
    s = run(*xs[i], &warm[i]);
    if (!s.ok()) return s;
  }
  CARTPLAN_MPI_CALL(MPI_Allreduce(warm.data(), warm_all.data(), static_cast<int>(n), MPI_DOUBLE, MPI_MAX, nc.internal()));
  double total = 0;
  for (double w : warm_all) total += std::max(w, 0.01);
  const int reps = std::clamp(static_cast<int>(kBudgetUs / total), kMinReps, kMaxReps);
  // Round-robin, as bench/calibrate times variants: a drift of the machine during the trials
  // moves every candidate alike instead of favouring whichever ran first.
  std::vector<std::vector<double>> samples(n);
  for (int r = 0; r < reps; ++r)
    for (std::size_t i = 0; i < n; ++i) {
      double us = 0;
      s = run(*xs[i], &us);
      if (!s.ok()) return s;
      samples[i].push_back(us);
    }
  // Each rank's median, then the slowest rank's: an exchange takes as long as its slowest
  // process. One reduction, so every rank picks the same plan.
  std::vector<double> mine(n), slowest(n);
  for (std::size_t i = 0; i < n; ++i) mine[i] = median_of(samples[i]);
  CARTPLAN_MPI_CALL(MPI_Allreduce(mine.data(), slowest.data(), static_cast<int>(n), MPI_DOUBLE, MPI_MAX, nc.internal()));
  std::size_t best = 0;
  for (std::size_t i = 1; i < n; ++i)
    if (slowest[i] < slowest[best]) best = i;
  if (best != 0) agreed->entry = cands[best].entry;  // else keep settle's (cached) entry of the same plan

  const char* verbose = std::getenv("CARTPLAN_VERBOSE");
  if (verbose && std::string(verbose) == "1" && nc.rank() == 0) {
    std::string line = "cartplan: measured at init (" + std::to_string(reps) + " runs each, median of the slowest rank):";
    char buf[160];
    for (std::size_t i = 0; i < n; ++i) {
      std::snprintf(buf, sizeof buf, "%s %s %.2f us (predicted %.2f)", i ? ";" : "", cands[i].name.c_str(), slowest[i],
                    cands[i].predicted_us);
      line += buf;
    }
    std::fprintf(stderr, "%s; running %s%s\n", line.c_str(), cands[best].name.c_str(),
                 best == 0 ? " (the model's pick)" : " (not the model's pick)");
  }
  return {};
}

}  // namespace cartplan::mpi
