// Measuring mode (Info cartplan_tune = measure): persistent init times the optimizer's close
// candidates and keeps the one that ran fastest, instead of trusting the model's order. Like
// FFTW_MEASURE against FFTW_ESTIMATE: init costs a few milliseconds more, every start after it
// runs the plan that was fastest here. The model still decides what is worth timing.
#include "backends/mpi/exchange_measure.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "backends/mpi/exchange.h"
#include "backends/mpi/measure_trials.h"
#include "backends/mpi/out_of_memory.h"
#include "backends/mpi/predefined.h"
#include "backends/mpi/test_failure.h"

namespace cartplan::mpi {
namespace {

// Receive memory for the trials is scratch, never the caller's: init must not write the receive
// buffer (the caller may still be reading it, or another request may be filling it). The scratch
// covers the span of every receive block this rank uses, one copy with the blocks at their own
// relative addresses, so strided datatypes keep their layout. Beyond kMeasureMaxScratchBytes the
// trials are skipped and the model's pick is kept (every rank learns it in the agreement below).
// So they are under SMPI when a receive block has a derived datatype: SMPI 3.32 misreports the
// bounds of subarray and resized types (docs/smpi.md, quirks), and a span from those bounds is too
// short for where the cells are (the trials wrote past the scratch: a segmentation fault).

struct Span {
  std::uintptr_t lo = std::numeric_limits<std::uintptr_t>::max(), hi = 0;
  bool unknown = false;  // a block whose bounds MPI cannot be trusted to report (SMPI)
  bool empty() const { return hi <= lo; }
};

// The bytes `b` may touch: from the true lower bound of its first element to the true upper
// bound of its last (extents may be negative).
MpiStatus span_of(const BlockSpec& b, Span* s) {
  if (b.count <= 0 || b.type == MPI_DATATYPE_NULL) return {};
#ifdef CARTPLAN_SMPI
  if (!predefined_type(b.type)) {
    s->unknown = true;
    return {};
  }
#endif
  MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
  CARTPLAN_MPI_CALL(MPI_Type_get_extent(b.type, &lb, &extent));
  CARTPLAN_MPI_CALL(MPI_Type_get_true_extent(b.type, &tlb, &textent));
  const auto base = reinterpret_cast<std::intptr_t>(b.addr);
  const std::intptr_t first = base + tlb, last = base + static_cast<std::intptr_t>(b.count - 1) * extent + tlb;
  s->lo = std::min(s->lo, static_cast<std::uintptr_t>(std::min(first, last)));
  s->hi = std::max(s->hi, static_cast<std::uintptr_t>(std::max(first, last) + textent));
  return {};
}

// The trials' spec: the caller's send blocks, its used receive blocks moved into *scratch (at
// their own offsets from span.lo).
ExchangeSpec trial_spec(const ExchangeSpec& spec, const Settlement& agreed, const Span& span, std::uint64_t scratch_bytes,
                        std::unique_ptr<unsigned char[]>* scratch) {
  inject_out_of_memory("measure-trials");
  scratch->reset(new unsigned char[scratch_bytes]);
  ExchangeSpec trial = spec;
  for (std::size_t i = 0; i < trial.recv.size(); ++i)
    if (agreed.recv_used[i] && trial.recv[i].count > 0 && !span.empty())
      trial.recv[i].addr = scratch->get() + (reinterpret_cast<std::uintptr_t>(spec.recv[i].addr) - span.lo);
  return trial;
}

}  // namespace

MpiStatus measure_candidates(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options, const MpiStatus& settled,
                             Settlement* agreed) {
  // Every rank makes the agreement below, also one that failed after settle's agreement and
  // one with fewer than two candidates (the others cannot know which it is).
  std::vector<PlanCache::CandidateEntry> cands;
  MpiStatus s = settled;
  if (s.ok())
    s = out_of_memory_as_error("listing the candidates to measure", [&] {
      return nc.plans().candidate_entries(spec.op, options, agreed->block_bytes, agreed->contiguous, &cands);
    });
  Span span;  // of the receive blocks the trials move into scratch
  for (std::size_t i = 0; i < spec.recv.size() && s.ok() && cands.size() >= 2; ++i)
    if (agreed->recv_used[i]) s = span_of(spec.recv[i], &span);
  const std::uint64_t scratch_bytes = span.empty() ? 1 : span.hi - span.lo;
  const bool too_big = span.unknown || scratch_bytes > kMeasureMaxScratchBytes;
  std::unique_ptr<unsigned char[]> scratch;  // not zeroed: only the trials touch its pages
  std::vector<std::unique_ptr<Exchange>> xs(cands.size());
  // Running out of memory here (the scratch, a trial's staging) is this rank's MPI_ERR_NO_MEM
  // for the agreement below: an exception would leave this rank alone out of it.
  const MpiStatus built = !s.ok() || too_big || cands.size() < 2 ? s : out_of_memory_as_error("building the candidates to measure (scratch, exchanges)", [&] {
    const ExchangeSpec trial = trial_spec(spec, *agreed, span, scratch_bytes, &scratch);
    MpiStatus b;
    for (std::size_t i = 0; i < cands.size() && b.ok(); ++i) {
      Settlement a = *agreed;
      a.entry = cands[i].entry;
      b = Exchange::build(nc, trial, options, a, agreed->lane, &xs[i]);
      if (b.ok()) xs[i]->sizes_agreed_ = true;  // persistent: every rank agreed on the sizes
    }
    return b;
  });
  // One agreement before any trial runs: a rank that could not build a trial, or whose
  // receive span is too large for scratch, would leave its neighbours waiting.
  bool skip = false;
  s = agree_to_measure(nc.internal(), built, too_big, &skip);
  // The list depends only on agreed arguments: every rank has as many candidates.
  if (!s.ok() || skip || cands.size() < 2) return s;  // skip: the model's pick stands
  std::vector<std::string> names;
  std::vector<double> predicted;
  for (const PlanCache::CandidateEntry& c : cands) {
    names.push_back(c.name);
    predicted.push_back(c.predicted_us);
  }
  std::size_t best = 0;  // index 0: the model's pick (candidate_entries)
  s = time_and_pick(xs, nc.internal(), names, predicted, nc.rank() == 0, &best);
  if (!s.ok()) return s;
  agreed->measured = true;
  if (best != 0) agreed->entry = cands[best].entry;  // else keep settle's (cached) entry of the same plan
  return {};
}

}  // namespace cartplan::mpi
